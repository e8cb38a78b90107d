-- Split mode: what the investigator hands to the separate executor process, and the executor's lease on it.
-- AlterTable
ALTER TABLE "ApprovalRequest" ADD COLUMN "handoff" TEXT;
ALTER TABLE "ApprovalRequest" ADD COLUMN "handoffAt" TIMESTAMP(3);
ALTER TABLE "ApprovalRequest" ADD COLUMN "handoffOwner" TEXT;
ALTER TABLE "ApprovalRequest" ADD COLUMN "handoffUntil" TIMESTAMP(3);

-- CreateIndex
CREATE INDEX "ApprovalRequest_handoff_handoffUntil_idx" ON "ApprovalRequest"("handoff", "handoffUntil");

-- Split mode: what the investigator hands to the separate executor process, and the executor's lease on it.
-- AlterTable
ALTER TABLE "ApprovalRequest" ADD COLUMN "handoff" TEXT;
ALTER TABLE "ApprovalRequest" ADD COLUMN "handoffAt" DATETIME;
ALTER TABLE "ApprovalRequest" ADD COLUMN "handoffOwner" TEXT;
ALTER TABLE "ApprovalRequest" ADD COLUMN "handoffUntil" DATETIME;

-- CreateIndex
CREATE INDEX "ApprovalRequest_handoff_handoffUntil_idx" ON "ApprovalRequest"("handoff", "handoffUntil");

-- DropIndex
DROP INDEX "ApprovalRequest_incidentId_hypothesisKey_action_targetKind__key";

-- AlterTable
ALTER TABLE "ApprovalRequest" ADD COLUMN     "attempt" INTEGER NOT NULL DEFAULT 1;

-- CreateIndex
CREATE UNIQUE INDEX "ApprovalRequest_incidentId_hypothesisKey_action_targetKind__key" ON "ApprovalRequest"("incidentId", "hypothesisKey", "action", "targetKind", "targetNs", "targetName", "attempt");


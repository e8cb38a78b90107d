-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_ApprovalRequest" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "incidentId" TEXT NOT NULL,
    "hypothesisKey" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "targetKind" TEXT NOT NULL,
    "targetNs" TEXT NOT NULL,
    "targetName" TEXT NOT NULL,
    "proposal" TEXT NOT NULL,
    "plan" TEXT,
    "risk" INTEGER,
    "decision" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "statusReason" TEXT,
    "requestedBy" TEXT NOT NULL,
    "parentId" TEXT,
    "channelId" TEXT NOT NULL,
    "threadTs" TEXT,
    "cardTs" TEXT,
    "result" TEXT,
    "executedAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    "attempt" INTEGER NOT NULL DEFAULT 1,
    CONSTRAINT "ApprovalRequest_incidentId_fkey" FOREIGN KEY ("incidentId") REFERENCES "Incident" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_ApprovalRequest" ("action", "cardTs", "channelId", "createdAt", "decision", "executedAt", "hypothesisKey", "id", "incidentId", "parentId", "plan", "proposal", "requestedBy", "result", "risk", "status", "statusReason", "targetKind", "targetName", "targetNs", "threadTs", "updatedAt") SELECT "action", "cardTs", "channelId", "createdAt", "decision", "executedAt", "hypothesisKey", "id", "incidentId", "parentId", "plan", "proposal", "requestedBy", "result", "risk", "status", "statusReason", "targetKind", "targetName", "targetNs", "threadTs", "updatedAt" FROM "ApprovalRequest";
DROP TABLE "ApprovalRequest";
ALTER TABLE "new_ApprovalRequest" RENAME TO "ApprovalRequest";
CREATE INDEX "ApprovalRequest_status_idx" ON "ApprovalRequest"("status");
CREATE INDEX "ApprovalRequest_targetNs_targetName_executedAt_idx" ON "ApprovalRequest"("targetNs", "targetName", "executedAt");
CREATE UNIQUE INDEX "ApprovalRequest_incidentId_hypothesisKey_action_targetKind_targetNs_targetName_attempt_key" ON "ApprovalRequest"("incidentId", "hypothesisKey", "action", "targetKind", "targetNs", "targetName", "attempt");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;


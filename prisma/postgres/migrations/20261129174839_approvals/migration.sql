-- CreateTable
CREATE TABLE "ApprovalRequest" (
    "id" TEXT NOT NULL,
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
    "executedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ApprovalRequest_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ApprovalDecision" (
    "id" TEXT NOT NULL,
    "requestId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "userName" TEXT,
    "decision" TEXT NOT NULL,
    "reason" TEXT,
    "at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ApprovalDecision_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "StopSwitch" (
    "scope" TEXT NOT NULL,
    "stopped" BOOLEAN NOT NULL,
    "by" TEXT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "StopSwitch_pkey" PRIMARY KEY ("scope")
);

-- CreateIndex
CREATE INDEX "ApprovalRequest_status_idx" ON "ApprovalRequest"("status");

-- CreateIndex
CREATE INDEX "ApprovalRequest_targetNs_targetName_executedAt_idx" ON "ApprovalRequest"("targetNs", "targetName", "executedAt");

-- CreateIndex
CREATE UNIQUE INDEX "ApprovalRequest_incidentId_hypothesisKey_action_targetKind__key" ON "ApprovalRequest"("incidentId", "hypothesisKey", "action", "targetKind", "targetNs", "targetName");

-- CreateIndex
CREATE UNIQUE INDEX "ApprovalDecision_requestId_userId_key" ON "ApprovalDecision"("requestId", "userId");

-- AddForeignKey
ALTER TABLE "ApprovalRequest" ADD CONSTRAINT "ApprovalRequest_incidentId_fkey" FOREIGN KEY ("incidentId") REFERENCES "Incident"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ApprovalDecision" ADD CONSTRAINT "ApprovalDecision_requestId_fkey" FOREIGN KEY ("requestId") REFERENCES "ApprovalRequest"("id") ON DELETE CASCADE ON UPDATE CASCADE;


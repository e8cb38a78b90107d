-- AlterTable
ALTER TABLE "Hypothesis" ADD COLUMN "affected" TEXT;
ALTER TABLE "Hypothesis" ADD COLUMN "facts" TEXT;

-- CreateTable
CREATE TABLE "ChangeEvent" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "at" DATETIME NOT NULL,
    "actor" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "targetKind" TEXT NOT NULL,
    "targetNs" TEXT,
    "targetName" TEXT NOT NULL,
    "before" TEXT,
    "after" TEXT,
    "source" TEXT NOT NULL,
    "summary" TEXT NOT NULL,
    "citationRef" TEXT NOT NULL,
    "citationUrl" TEXT,
    "dedupeKey" TEXT NOT NULL,
    "receivedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateIndex
CREATE UNIQUE INDEX "ChangeEvent_dedupeKey_key" ON "ChangeEvent"("dedupeKey");

-- CreateIndex
CREATE INDEX "ChangeEvent_at_idx" ON "ChangeEvent"("at");

-- CreateIndex
CREATE INDEX "ChangeEvent_targetName_at_idx" ON "ChangeEvent"("targetName", "at");


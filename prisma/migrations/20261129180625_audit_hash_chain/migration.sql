-- AlterTable
ALTER TABLE "AuditEvent" ADD COLUMN "hash" TEXT;
ALTER TABLE "AuditEvent" ADD COLUMN "incidentRef" TEXT;
ALTER TABLE "AuditEvent" ADD COLUMN "prevHash" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "AuditEvent_prevHash_key" ON "AuditEvent"("prevHash");


-- Rows written before the chain: keep the incident id the hash will cover (the next append seals them).
UPDATE "AuditEvent" SET "incidentRef" = "incidentId";

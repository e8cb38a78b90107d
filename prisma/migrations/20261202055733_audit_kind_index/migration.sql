-- CreateIndex
CREATE INDEX "AuditEvent_kind_idx" ON "AuditEvent"("kind");


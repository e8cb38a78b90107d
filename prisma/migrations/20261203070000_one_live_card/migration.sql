-- One live approval card per incident, action and target, held by the database and not only by the
-- service's check-then-insert (two replicas proposing the same change at once both pass the check).
-- A partial index: Prisma's schema cannot express it, so it is written by hand; `prisma migrate diff`
-- leaves it alone (checked with Prisma 6.19.3 on both providers: the diff from the migrations to the
-- schema stays empty). Live = pending, approved, executing (LIVE_STATUSES in src/approvals/store.ts).
CREATE UNIQUE INDEX "ApprovalRequest_one_live_card" ON "ApprovalRequest"("incidentId", "action", "targetKind", "targetNs", "targetName") WHERE "status" IN ('pending', 'approved', 'executing');

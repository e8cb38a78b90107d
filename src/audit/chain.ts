// The audit trail's hash chain. Each AuditEvent row stores `prevHash` (the hash of the row before it in
// id order, GENESIS_HASH for the first) and `hash = sha256(prevHash + canonical JSON of its content)`.
// Editing any hashed field breaks that row's hash; deleting a row leaves its successor pointing at a
// hash no row has; swapping rows makes links point forwards. See ./verify.ts for the checks.
//
// Contract of the append:
// - appends serialise: on PostgreSQL a transaction-scoped advisory lock (AUDIT_LOCK_KEY) is taken before
//   the last hash is read, so replicas never fork the chain; on SQLite a no-op UPDATE takes the write
//   lock first (the file has one writer at a time). The unique index on `prevHash` refuses a fork either way;
// - the lock is held until the surrounding transaction ends, so audit writes inside a long caller
//   transaction hold up other audit writes for that long;
// - rows written before the chain existed (hash NULL) are sealed, oldest first from GENESIS_HASH, by the
//   first append that finds no hashed row at all. A NULL hash after that is reported as tampering.
import { createHash } from 'node:crypto';
import { providerOf, type Db } from '../store/db.js';
import { cleanDeep } from '../store/sanitize.js';
import type { DbTx } from '../store/tx.js';

/** The `prevHash` of the first row of the chain. */
export const GENESIS_HASH = '0'.repeat(64);

/** pg_advisory_xact_lock key for audit appends (int8 "VIGAUD"); distinct from the migration lock 72707369. */
export const AUDIT_LOCK_KEY = 0x56_49_47_41_55_44; // "VIGAUD"

/** The fields a row's hash covers, as stored. `data` is the stored JSON text, hashed byte for byte. */
export type HashedFields = {
  /** The incident id as written (`incidentRef`; `incidentId` may later be nulled by incident deletion). */
  incidentRef: string | null;
  actor: string;
  kind: string;
  data: string;
  at: Date;
};

/**
 * Canonical JSON: fixed key order, `at` as ISO-8601 with milliseconds (both stores keep ms precision).
 * The row id is deliberately not hashed: the order is carried by the links, so a swapped pair shows as
 * "reordered" rather than as two edits.
 */
export function canonicalAuditJson(f: HashedFields): string {
  return JSON.stringify({ incidentId: f.incidentRef, actor: f.actor, kind: f.kind, data: f.data, at: f.at.toISOString() });
}

export function auditHash(prevHash: string, f: HashedFields): string {
  return createHash('sha256').update(prevHash + canonicalAuditJson(f), 'utf8').digest('hex');
}

export type AuditClient = Db | DbTx;

export type AppendInput = { incidentId: string | null; actor: string; kind: string; data: string; at: Date };

/** Append one row to the chain; runs in `client`'s transaction, or opens one when given the root client. */
export async function appendAuditRow(client: AuditClient, input: AppendInput): Promise<{ id: number; hash: string }> {
  // The store writes strings cleaned (store/sanitize.ts); hash the row as it will be stored, or it would not verify.
  const row = cleanDeep(input);
  if (isRootClient(client)) return client.$transaction((tx) => appendInTx(tx, row));
  return appendInTx(client, row);
}

function isRootClient(client: AuditClient): client is Db {
  return typeof (client as Partial<Db>).$transaction === 'function';
}


/**
 * Takes the chain's append lock for the rest of `tx` (idempotent within one transaction: PostgreSQL
 * advisory locks are re-entrant for their session, SQLite's write lock is already held). Callers that
 * must read the trail and append consistently (src/audit/records.ts) take it before reading.
 */
export async function lockAuditChain(tx: AuditClient): Promise<void> {
  if (providerOf(tx) === 'postgresql') await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(${AUDIT_LOCK_KEY})`);
  // SQLite: a write statement (even one matching no row) takes the database's write lock now, as BEGIN
  // IMMEDIATE would, so another connection cannot append between our read of the last hash and our insert.
  else await tx.$executeRawUnsafe('UPDATE "AuditEvent" SET "id" = "id" WHERE 0');
}

async function appendInTx(tx: AuditClient, row: AppendInput): Promise<{ id: number; hash: string }> {
  await lockAuditChain(tx);
  let last = await tx.auditEvent.findFirst({ where: { hash: { not: null } }, orderBy: { id: 'desc' }, select: { hash: true } });
  if (!last) last = await sealLegacyRows(tx);
  const prevHash = last?.hash ?? GENESIS_HASH;
  const at = new Date(row.at.getTime());
  const hash = auditHash(prevHash, { incidentRef: row.incidentId, actor: row.actor, kind: row.kind, data: row.data, at });
  const created = await tx.auditEvent.create({
    data: { incidentId: row.incidentId, incidentRef: row.incidentId, actor: row.actor, kind: row.kind, data: row.data, at, prevHash, hash },
    select: { id: true },
  });
  return { id: created.id, hash };
}

/** Chains the rows written before the migration, in id order; returns the last one's hash (or null if none). */
async function sealLegacyRows(tx: AuditClient): Promise<{ hash: string | null } | null> {
  const legacy = await tx.auditEvent.findMany({
    where: { hash: null },
    orderBy: { id: 'asc' },
    select: { id: true, incidentId: true, incidentRef: true, actor: true, kind: true, data: true, at: true },
  });
  let prevHash = GENESIS_HASH;
  for (const r of legacy) {
    const incidentRef = r.incidentRef ?? r.incidentId;
    const hash = auditHash(prevHash, { incidentRef, actor: r.actor, kind: r.kind, data: r.data, at: r.at });
    await tx.auditEvent.update({ where: { id: r.id }, data: { incidentRef, prevHash, hash } });
    prevHash = hash;
  }
  return legacy.length ? { hash: prevHash } : null;
}

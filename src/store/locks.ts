import { providerOf } from './db.js';
import type { DbTx } from './tx.js';

/**
 * Serialises transactions that decide on the same key (e.g. "is an incident open for this fingerprint?")
 * across connections and replicas, for the rest of `tx`. Without it two transactions can both read
 * "none" and both create: READ COMMITTED on PostgreSQL, and SQLite's deferred transactions, allow it.
 * - PostgreSQL: a transaction-scoped advisory lock on a 64-bit hash of the key (released at commit).
 * - SQLite: a write statement that matches no row takes the database's write lock now, as BEGIN
 *   IMMEDIATE would; SQLite has one writer, so the key's granularity is the whole database.
 */
export async function lockKey(tx: DbTx, key: string): Promise<void> {
  if (providerOf(tx) === 'postgresql') await tx.$executeRawUnsafe('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', key);
  else await tx.$executeRawUnsafe('UPDATE "Incident" SET "id" = "id" WHERE 0');
}

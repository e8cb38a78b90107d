import { appendAuditRow } from '../audit/chain.js';
import type { Db } from '../store/db.js';
import type { DbTx } from '../store/tx.js';

export interface AuditInput {
  incidentId?: string | null;
  /** `vigil` or a Slack user id. */
  actor: string;
  kind: string;
  /** Must already be redacted. */
  data?: Record<string, unknown>;
  at?: Date;
}

/**
 * Append one audit record to the tamper-evident chain (src/audit/chain.ts). Works on the root client
 * (opens its own transaction) and inside a caller's `$transaction` (joins it; on PostgreSQL the chain's
 * advisory lock is then held until that transaction ends).
 */
export async function recordAudit(db: Db | DbTx, a: AuditInput): Promise<void> {
  await appendAuditRow(db, {
    incidentId: a.incidentId ?? null,
    actor: a.actor,
    kind: a.kind,
    data: JSON.stringify(a.data ?? {}),
    at: a.at ?? new Date(),
  });
}

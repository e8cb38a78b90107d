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

/** Append one audit record (append-only; the hash chain arrives with the audit issue). */
export async function recordAudit(db: Db | DbTx, a: AuditInput): Promise<void> {
  await db.auditEvent.create({
    data: {
      incidentId: a.incidentId ?? null,
      actor: a.actor,
      kind: a.kind,
      data: JSON.stringify(a.data ?? {}),
      ...(a.at ? { at: a.at } : {}),
    },
  });
}

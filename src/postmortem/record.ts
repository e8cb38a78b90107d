import { incidentIntegrity } from '../audit/integrity.js';
import type { Db } from '../store/db.js';

/**
 * Everything a postmortem needs, read from the store in one go: the incident with its alerts, steering,
 * posts, audit trail, approvals (with decisions) and its latest investigation (hypotheses with evidence).
 *
 * The draft is made from the rows as they stand, and `integrity` says whether they still match their
 * seals in the audit chain (src/audit/records.ts). When they do not, the draft carries a visible warning
 * naming each edited, inserted or removed row with the value the chain recorded, rather than silently
 * naming whoever an SQL edit put there.
 */
export async function loadPostmortemRecord(db: Db, incidentId: string, now: Date = new Date()) {
  const incident = await db.incident.findUnique({
    where: { id: incidentId },
    include: {
      alerts: { orderBy: { receivedAt: 'asc' } },
      steering: { orderBy: { receivedAt: 'asc' } },
      posts: { orderBy: { createdAt: 'asc' } },
      auditEvents: { orderBy: { id: 'asc' } },
      approvals: { orderBy: { createdAt: 'asc' }, include: { decisions: { orderBy: { at: 'asc' } } } },
      investigations: {
        orderBy: { startedAt: 'desc' },
        take: 1,
        include: { hypotheses: { include: { evidence: { orderBy: { createdAt: 'asc' } } }, orderBy: { ordinal: 'asc' } } },
      },
    },
  });
  if (!incident) return undefined;
  const integrity = await incidentIntegrity(db, incidentId);
  return { incident, loadedAt: now, integrity };
}

export type PostmortemRecord = NonNullable<Awaited<ReturnType<typeof loadPostmortemRecord>>>;

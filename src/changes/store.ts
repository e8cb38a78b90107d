import type { Db } from '../store/db.js';
import { isUniqueViolation } from '../store/db.js';
import type { ChangeEvent, ChangeKind } from './types.js';

/**
 * Changes Vigil is told about (flag webhooks, Slack announcements) are stored as they arrive, since
 * nobody can be asked for them later. The delivery key makes a redelivery a no-op.
 */
export async function recordChange(db: Db, c: ChangeEvent, dedupeKey: string): Promise<'stored' | 'duplicate'> {
  try {
    await db.changeEvent.create({
      data: {
        at: c.at,
        actor: c.actor,
        kind: c.kind,
        targetKind: c.target.kind,
        targetNs: c.target.namespace ?? null,
        targetName: c.target.name,
        before: c.before ?? null,
        after: c.after ?? null,
        source: c.source,
        summary: c.summary,
        citationRef: c.citation.ref,
        citationUrl: c.citation.url ?? null,
        dedupeKey,
      },
    });
    return 'stored';
  } catch (err) {
    if (isUniqueViolation(err)) return 'duplicate';
    throw err;
  }
}

/** Stored changes in a time window, oldest first (bounded). */
export async function storedChanges(db: Db, from: Date, to: Date): Promise<ChangeEvent[]> {
  const rows = await db.changeEvent.findMany({ where: { at: { gte: from, lte: to } }, orderBy: { at: 'asc' }, take: 500 });
  return rows.map((r) => ({
    at: r.at,
    actor: r.actor,
    kind: r.kind as ChangeKind,
    target: { kind: r.targetKind, ...(r.targetNs ? { namespace: r.targetNs } : {}), name: r.targetName },
    ...(r.before ? { before: r.before } : {}),
    ...(r.after ? { after: r.after } : {}),
    source: r.source,
    summary: r.summary,
    citation: { source: r.source, ref: r.citationRef, ...(r.citationUrl ? { url: r.citationUrl } : {}) },
  }));
}

// One incident's full record as a JSON document, for post-mortems and compliance. Everything is stored
// redacted already; the redactor runs over the whole output once more anyway (defence in depth), so a
// secret that slipped into the store is not carried further by an export.
//
// The rows are exported as they stand, with `integrity`: whether they still match their seals in the audit
// chain (./integrity.ts). When they do not, `integrity.problems` names each edited, inserted or removed
// row, with the sealed values; the seals themselves are in `auditEvents` (`record.sealed`).
import { createRedactor, type Redactor } from '../redact/index.js';
import type { Db } from '../store/db.js';
import { incidentIntegrity, type RecordIntegrity } from './integrity.js';

export type IncidentExport = {
  format: 'vigil.incident-export/v1';
  exportedAt: string;
  incident: Record<string, unknown>;
  alerts: unknown[];
  investigations: unknown[];
  steering: unknown[];
  approvals: unknown[];
  slackPosts: unknown[];
  auditEvents: unknown[];
  /** Whether the rows above match the audit chain; `ok: false` means the record was edited outside Vigil. */
  integrity: RecordIntegrity;
};

/** Stored JSON text columns per model, parsed so the export is one JSON document rather than strings in strings. */
const JSON_COLUMNS = ['payload', 'context', 'facts', 'affected', 'detail', 'proposal', 'plan', 'decision', 'result', 'data'] as const;

/** The incident's record, or null when there is no incident with that id. */
export async function exportIncident(db: Db, incidentId: string, redactor: Redactor = createRedactor()): Promise<IncidentExport | null> {
  const incident = await db.incident.findUnique({ where: { id: incidentId } });
  if (!incident) return null;
  const [alerts, investigations, steering, approvals, slackPosts, auditEvents] = await Promise.all([
    db.alert.findMany({ where: { incidentId }, orderBy: { receivedAt: 'asc' } }),
    db.investigation.findMany({
      where: { incidentId },
      orderBy: { startedAt: 'asc' },
      include: {
        hypotheses: { orderBy: { ordinal: 'asc' }, include: { evidence: { orderBy: { createdAt: 'asc' } } } },
        // Evidence not tied to a hypothesis (context gathered for the whole investigation).
        evidence: { where: { hypothesisId: null }, orderBy: { createdAt: 'asc' } },
      },
    }),
    db.steeringMessage.findMany({ where: { incidentId }, orderBy: { receivedAt: 'asc' } }),
    db.approvalRequest.findMany({ where: { incidentId }, orderBy: { createdAt: 'asc' }, include: { decisions: { orderBy: { at: 'asc' } } } }),
    db.slackPost.findMany({ where: { incidentId }, orderBy: { createdAt: 'asc' } }),
    // incidentRef too: rows keep it when incidentId is nulled, and it is what the chain hashed.
    db.auditEvent.findMany({ where: { OR: [{ incidentId }, { incidentRef: incidentId }] }, orderBy: { id: 'asc' } }),
  ]);
  const integrity = await incidentIntegrity(db, incidentId, redactor);
  const doc: IncidentExport = {
    format: 'vigil.incident-export/v1',
    exportedAt: new Date().toISOString(),
    incident: plain(incident),
    alerts: alerts.map(plain),
    investigations: investigations.map(plain),
    steering: steering.map(plain),
    approvals: approvals.map(plain),
    slackPosts: slackPosts.map(plain),
    auditEvents: auditEvents.map(plain),
    integrity,
  };
  return redactor.redactValue(doc);
}

/** Dates become ISO strings and stored JSON text columns become values, recursively. */
function plain(record: object): Record<string, unknown> {
  return parseJsonColumns(JSON.parse(JSON.stringify(record)) as unknown) as Record<string, unknown>;
}

function parseJsonColumns(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(parseJsonColumns);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, value] of Object.entries(v)) {
    out[k] = (JSON_COLUMNS as readonly string[]).includes(k) && typeof value === 'string' ? tryParse(value) : parseJsonColumns(value);
  }
  return out;
}

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

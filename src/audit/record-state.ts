// The state of a sealed record row: the fields the postmortem and `vigil export` rely on, read back
// from the store exactly as stored, and its digest. Sealing (./records.ts) and verification
// (./records-verify.ts) both read rows through here, so the digest a seal recorded and the digest of
// the row today are computed the same way, byte for byte.
//
// What a state covers, per table (and what it leaves out, on purpose):
// - ApprovalRequest: identity (incident, hypothesis, action, target, attempt), proposal, plan, diagnosis,
//   risk, policy decision, status and its reason, requester, parent, execution result and time, createdAt.
//   Not `updatedAt` (the execution heartbeat), `cardTs`, `channelId`, `threadTs` (Slack bookkeeping).
// - ApprovalDecision: request, approver id and name, decision, reason, time.
// - SteeringMessage: incident, channel, message ts, author id and name, text, received and applied times.
// - Hypothesis: everything the board and the postmortem show (status, confidence, title, component,
//   mechanism, scope, reason, mitigation, facts, affected, family, role, path, steeredBy, label,
//   ordinal, createdAt) and its evidence (stance, kind, summary, citation, times; not the bounded
//   `detail` JSON, which nothing downstream reads). Not `updatedAt`.
import { createHash } from 'node:crypto';
import type { AuditClient } from './chain.js';

export const SEALED_TABLES = ['ApprovalRequest', 'ApprovalDecision', 'SteeringMessage', 'Hypothesis'] as const;
export type SealedTable = (typeof SEALED_TABLES)[number];

export type StateValue = string | number | boolean | null | StateValue[] | { [key: string]: StateValue };
export type RowState = { [field: string]: StateValue };

/** One row as sealed: `incidentId` is the incident it belongs to (for a decision: its request's). */
export type RowSnapshot = { table: SealedTable; id: string; incidentId: string | null; state: RowState };

const EVIDENCE_SELECT = {
  id: true,
  stance: true,
  kind: true,
  summary: true,
  citationSource: true,
  citationRef: true,
  citationUrl: true,
  rangeFrom: true,
  rangeTo: true,
  observedAt: true,
  createdAt: true,
} as const;

const SELECT = {
  ApprovalRequest: {
    id: true,
    incidentId: true,
    hypothesisKey: true,
    action: true,
    targetKind: true,
    targetNs: true,
    targetName: true,
    attempt: true,
    proposal: true,
    plan: true,
    diagnosis: true,
    risk: true,
    decision: true,
    status: true,
    statusReason: true,
    requestedBy: true,
    parentId: true,
    result: true,
    executedAt: true,
    createdAt: true,
  },
  ApprovalDecision: { id: true, requestId: true, userId: true, userName: true, decision: true, reason: true, at: true, request: { select: { incidentId: true } } },
  SteeringMessage: { id: true, incidentId: true, channelId: true, messageTs: true, userId: true, userName: true, text: true, receivedAt: true, appliedAt: true },
  Hypothesis: {
    id: true,
    investigationId: true,
    key: true,
    label: true,
    ordinal: true,
    analyzer: true,
    status: true,
    confidence: true,
    title: true,
    componentKind: true,
    componentNs: true,
    componentName: true,
    mechanism: true,
    scope: true,
    reason: true,
    mitigation: true,
    facts: true,
    affected: true,
    family: true,
    role: true,
    path: true,
    steeredBy: true,
    createdAt: true,
    investigation: { select: { incidentId: true } },
    evidence: { select: EVIDENCE_SELECT, orderBy: { id: 'asc' } },
  },
} as const;

/** Dates as ISO-8601 with milliseconds (both stores keep ms), nested rows likewise; `id` stays out. */
function toState(row: Record<string, unknown>, skip: readonly string[]): RowState {
  const state: RowState = {};
  for (const [k, v] of Object.entries(row)) {
    if (k === 'id' || skip.includes(k)) continue;
    state[k] = toValue(v);
  }
  return state;
}

function toValue(v: unknown): StateValue {
  if (v === null || v === undefined) return null;
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v)) return v.map(toValue);
  if (typeof v === 'object') {
    const o: { [key: string]: StateValue } = {};
    for (const [k, x] of Object.entries(v)) o[k] = toValue(x);
    return o;
  }
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  return String(v);
}

type AnyRow = Record<string, unknown> & { id: string };

function snapshotOf(table: SealedTable, row: AnyRow): RowSnapshot {
  switch (table) {
    case 'ApprovalDecision': {
      const r = row as AnyRow & { request: { incidentId: string } };
      return { table, id: r.id, incidentId: r.request.incidentId, state: toState(r, ['request']) };
    }
    case 'Hypothesis': {
      const r = row as AnyRow & { investigation: { incidentId: string } };
      return { table, id: r.id, incidentId: r.investigation.incidentId, state: toState(r, ['investigation']) };
    }
    default:
      return { table, id: row.id, incidentId: (row as AnyRow & { incidentId: string }).incidentId, state: toState(row, []) };
  }
}

/** The row as it is stored now, or undefined when there is no such row. */
export async function readSnapshot(client: AuditClient, table: SealedTable, id: string): Promise<RowSnapshot | undefined> {
  const row = await findRows(client, table, { id }, 2);
  return row[0] ? snapshotOf(table, row[0]) : undefined;
}

/** Where-clauses that select one incident's rows, per table. */
export function incidentWhere(table: SealedTable, incidentId: string): Record<string, unknown> {
  if (table === 'ApprovalDecision') return { request: { incidentId } };
  if (table === 'Hypothesis') return { investigation: { incidentId } };
  return { incidentId };
}

const PAGE = 500;

/** Every row of `table` matching `where` (all rows when omitted), in id order, read a page at a time. */
export async function readSnapshots(client: AuditClient, table: SealedTable, where: Record<string, unknown> = {}): Promise<RowSnapshot[]> {
  const out: RowSnapshot[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await findRows(client, table, after === undefined ? where : { AND: [where, { id: { gt: after } }] }, PAGE);
    out.push(...page.map((r) => snapshotOf(table, r)));
    if (page.length < PAGE) return out;
    after = page[page.length - 1]!.id;
  }
}

async function findRows(client: AuditClient, table: SealedTable, where: Record<string, unknown>, take: number): Promise<AnyRow[]> {
  const args = { where, orderBy: { id: 'asc' as const }, take };
  // Each delegate is called with its own select; the casts only bridge the four delegate types.
  switch (table) {
    case 'ApprovalRequest':
      return (await client.approvalRequest.findMany({ ...args, select: SELECT.ApprovalRequest } as never)) as AnyRow[];
    case 'ApprovalDecision':
      return (await client.approvalDecision.findMany({ ...args, select: SELECT.ApprovalDecision } as never)) as AnyRow[];
    case 'SteeringMessage':
      return (await client.steeringMessage.findMany({ ...args, select: SELECT.SteeringMessage } as never)) as AnyRow[];
    case 'Hypothesis':
      return (await client.hypothesis.findMany({ ...args, select: SELECT.Hypothesis } as never)) as AnyRow[];
  }
}

/** JSON with object keys sorted at every level: the same state always serialises to the same text. */
export function canonicalJson(v: StateValue): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  return `{${Object.keys(v)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k]!)}`)
    .join(',')}}`;
}

/** sha256 over the canonical JSON of table, id and state: a seal cannot be moved to another row. */
export function stateDigest(table: SealedTable, id: string, state: RowState): string {
  return createHash('sha256').update(canonicalJson({ table, id, state }), 'utf8').digest('hex');
}

/** How a row is named in reports: `ApprovalDecision <id> (approval <request id>)`. */
export function describeRow(table: SealedTable, id: string, state: RowState | undefined, incidentId: string | null): string {
  const s = state ?? {};
  const str = (k: string): string | undefined => (typeof s[k] === 'string' ? (s[k] as string) : undefined);
  if (table === 'ApprovalDecision') return `${table} ${id} (approval ${str('requestId') ?? '?'})`;
  if (table === 'Hypothesis') return `${table} ${id} (${str('label') ? `${str('label')}, ` : ''}incident ${incidentId ?? '?'})`;
  return `${table} ${id} (incident ${str('incidentId') ?? incidentId ?? '?'})`;
}

/** People-facing names of the fields reports name most, by table; the column follows in brackets. */
const FIELD_LABELS: Partial<Record<SealedTable, Record<string, string>>> = {
  ApprovalDecision: { userId: 'approver', userName: 'approver name', at: 'time', requestId: 'request' },
  SteeringMessage: { userId: 'author', userName: 'author name', receivedAt: 'time' },
  Hypothesis: { steeredBy: 'steered by' },
  ApprovalRequest: { requestedBy: 'requester', result: 'execution result', executedAt: 'executed at', statusReason: 'status reason', decision: 'policy decision' },
};

export function fieldLabel(table: SealedTable, field: string): string {
  const label = FIELD_LABELS[table]?.[field];
  return label ? `${label} (${field})` : field;
}

// Verification of the sealed records (./records.ts): every ApprovalRequest, ApprovalDecision,
// SteeringMessage and Hypothesis (with its evidence) is compared with the latest seal of that row in the
// audit trail. Reports name the row, each edited field with the current and the sealed value (clipped and
// redacted), rows that have no seal at all (inserted behind Vigil's back), sealed rows that are gone, and
// rows Vigil deleted that are back.
//
// Each seal is trusted only when its own audit row still matches its hash; whether the chain around it is
// whole (no audit row removed, reordered or rewritten) is ./verify.ts's part. A sealed row that is gone
// together with its incident is counted, not reported: the chain treats an incident's deletion the same way.
import { createRedactor, type Redactor } from '../redact/index.js';
import type { Db } from '../store/db.js';
import { auditHash } from './chain.js';
import { BASELINE_KIND, SEAL_KIND, type SealData } from './records.js';
import { canonicalJson, describeRow, fieldLabel, incidentWhere, readSnapshot, readSnapshots, SEALED_TABLES, stateDigest, type RowSnapshot, type RowState, type SealedTable, type StateValue } from './record-state.js';

export type RecordProblemKind = 'edited' | 'unsealed' | 'removed' | 'reappeared' | 'bad_seal';

/** One field whose current value differs from the sealed one; `undefined` where one side has none. */
export type FieldChange = { field: string; now: StateValue | undefined; sealed: StateValue | undefined };

export type RecordProblem = {
  /** Null only for a seal whose data no longer names a row. */
  table: SealedTable | null;
  id: string;
  incidentId: string | null;
  problem: RecordProblemKind;
  /** For `edited`: the fields that differ. */
  changes?: FieldChange[];
  /** The audit row of the seal the row was compared with (or of the broken seal). */
  auditRow?: number;
  detail: string;
};

export type RecordVerification = {
  ok: boolean;
  /** Rows compared with their seal. */
  checked: number;
  /** Rows without a seal while no baseline exists yet (written before sealing; the next sealed write seals them). */
  unsealed: number;
  /** Whether the first sealed write has sealed the rows stored before it. */
  baseline: boolean;
  /** Sealed rows that went with their deleted incident. */
  goneWithIncident: number;
  problems: RecordProblem[];
};

/**
 * One seal as kept in memory while verifying: its digest, not its state (a long-lived store holds many
 * seals); the state is read again, by audit row, for the few seals a report quotes.
 */
type Seal = { auditRow: number; at: Date; incidentRef: string | null; table: SealedTable; id: string; digest: string | null };

const PAGE = 1000;
const VALUE_CHARS = 80;

let defaultRedactor: Redactor | undefined;

/**
 * Compares the store's sealed tables with their seals: the whole store, or one incident's rows and seals
 * (`incidentId`, for its postmortem and export).
 */
export async function verifySealedRecords(db: Db, opts: { incidentId?: string; redactor?: Redactor } = {}): Promise<RecordVerification> {
  const redactor = opts.redactor ?? (defaultRedactor ??= createRedactor());
  const problems: RecordProblem[] = [];
  // Vigil keeps writing while this runs (PostgreSQL, read committed): the rows are read first, then the
  // seals. A row is compared with its latest seal from before the start, and also matches any seal
  // written since (a write that landed while reading); an older seal never excuses it.
  const start = (await db.auditEvent.aggregate({ _max: { id: true } }))._max.id ?? 0;
  const current = new Map<string, RowSnapshot>();
  for (const table of SEALED_TABLES) {
    for (const snap of await readSnapshots(db, table, opts.incidentId ? incidentWhere(table, opts.incidentId) : {})) current.set(`${snap.table}:${snap.id}`, snap);
  }
  const seals = await readSeals(db, opts.incidentId, problems);
  const baseline = (await db.auditEvent.findFirst({ where: { kind: BASELINE_KIND }, select: { id: true } })) !== null;
  if (opts.incidentId) {
    // A sealed row of this incident that now hangs under another one is still this incident's row.
    for (const [key, list] of seals) {
      if (current.has(key)) continue;
      const moved = await readSnapshot(db, list[0]!.table, list[0]!.id);
      if (moved) current.set(key, moved);
    }
  }

  let checked = 0;
  let unsealed = 0;
  for (const [key, snap] of current) {
    const list = seals.get(key) ?? [];
    const ref = list.filter((x) => x.auditRow <= start).at(-1);
    const digest = stateDigest(snap.table, snap.id, snap.state);
    const matches = (x: Seal) => x.digest === digest;
    const name = describeRow(snap.table, snap.id, snap.state, snap.incidentId);
    if (list.length === 0) {
      if (!baseline) {
        unsealed++;
        continue;
      }
      problems.push({ table: snap.table, id: snap.id, incidentId: snap.incidentId, problem: 'unsealed', detail: `${name}: no chained record of this row, so it was written behind Vigil's back (${summary(snap.table, snap.state)})` });
      continue;
    }
    checked++;
    if ((ref && matches(ref)) || list.some((x) => x.auditRow > start && matches(x))) continue;
    // Sealed only since the start, in another state: compare with the newest seal.
    const seal = ref ?? list.at(-1)!;
    if (seal.digest === null) {
      problems.push({ table: snap.table, id: snap.id, incidentId: snap.incidentId, problem: 'reappeared', auditRow: seal.auditRow, detail: `${name}: Vigil deleted it at ${seal.at.toISOString()} (audit row ${seal.auditRow}), but it is there again (${summary(snap.table, snap.state)})` });
      continue;
    }
    const changes = diffStates(await sealedState(db, seal), snap.state);
    const what = changes.length ? changes.map((c) => describeChange(snap.table, c)).join('; ') : 'its content differs from the sealed digest';
    problems.push({ table: snap.table, id: snap.id, incidentId: snap.incidentId, problem: 'edited', changes, auditRow: seal.auditRow, detail: `${name}: ${what} (sealed at ${seal.at.toISOString()}, audit row ${seal.auditRow})` });
  }

  // Sealed rows that are not there: reported unless Vigil deleted them (at any time), or they were
  // created after the rows were read (every seal of theirs is newer than the start).
  const gone: Seal[] = [];
  for (const [key, list] of seals) {
    if (current.has(key) || list.some((x) => x.digest === null)) continue;
    const ref = list.filter((x) => x.auditRow <= start).at(-1);
    if (ref) gone.push(ref);
  }
  const refs = [...new Set(gone.map((x) => x.incidentRef).filter((r): r is string => r !== null))];
  const live = new Set((await db.incident.findMany({ where: { id: { in: refs } }, select: { id: true } })).map((i) => i.id));
  let goneWithIncident = 0;
  for (const seal of gone) {
    if (seal.incidentRef !== null && !live.has(seal.incidentRef)) {
      goneWithIncident++;
      continue;
    }
    const state = await sealedState(db, seal);
    problems.push({
      table: seal.table,
      id: seal.id,
      incidentId: seal.incidentRef,
      problem: 'removed',
      auditRow: seal.auditRow,
      detail: `${describeRow(seal.table, seal.id, state, seal.incidentRef)}: gone from the store, and not by Vigil; the chain recorded it at ${seal.at.toISOString()} (audit row ${seal.auditRow}): ${summary(seal.table, state)}`,
    });
  }

  for (const p of problems) p.detail = redactor.redactText(p.detail);
  return { ok: problems.length === 0, checked, unsealed, baseline, goneWithIncident, problems };
}

/** The trustworthy seals of each row (`table:id`), oldest first; broken seals are reported into `problems`. */
async function readSeals(db: Db, incidentId: string | undefined, problems: RecordProblem[]): Promise<Map<string, Seal[]>> {
  const seals = new Map<string, Seal[]>();
  let after = 0;
  for (;;) {
    const page = await db.auditEvent.findMany({
      where: { kind: SEAL_KIND, id: { gt: after }, ...(incidentId ? { OR: [{ incidentId }, { incidentRef: incidentId }] } : {}) },
      orderBy: { id: 'asc' },
      take: PAGE,
      select: { id: true, incidentRef: true, actor: true, kind: true, data: true, at: true, prevHash: true, hash: true },
    });
    for (const r of page) {
      const data = parseSeal(r.data);
      const intact = r.hash !== null && r.prevHash !== null && auditHash(r.prevHash, { incidentRef: r.incidentRef, actor: r.actor, kind: r.kind, data: r.data, at: r.at }) === r.hash;
      const consistent = data !== undefined && ('deleted' in data || stateDigest(data.table, data.id, data.state) === data.digest);
      if (!data || !intact || !consistent) {
        const table = data?.table ?? null;
        const what = !data ? 'its data is not a seal' : !intact ? 'its audit row does not match its hash (edited)' : 'its digest does not match the state it holds';
        problems.push({ table, id: data?.id ?? '?', incidentId: r.incidentRef, problem: 'bad_seal', auditRow: r.id, detail: `audit row ${r.id}, the seal of ${data ? `${data.table} ${data.id}` : 'a record row'}: ${what}; the row is compared with its previous seal` });
        continue;
      }
      const key = `${data.table}:${data.id}`;
      const seal: Seal = { auditRow: r.id, at: r.at, incidentRef: r.incidentRef, table: data.table, id: data.id, digest: 'deleted' in data ? null : data.digest };
      const list = seals.get(key);
      if (list) list.push(seal);
      else seals.set(key, [seal]);
    }
    if (page.length < PAGE) return seals;
    after = page[page.length - 1]!.id;
  }
}

/** The state a (state) seal holds, read again from its audit row. */
async function sealedState(db: Db, seal: Seal): Promise<RowState> {
  const row = await db.auditEvent.findUnique({ where: { id: seal.auditRow }, select: { data: true } });
  const data = row ? parseSeal(row.data) : undefined;
  return data && !('deleted' in data) ? data.state : {};
}

function parseSeal(text: string): SealData | undefined {
  try {
    const d = JSON.parse(text) as Partial<SealData> & Record<string, unknown>;
    if (!d || typeof d.id !== 'string' || !(SEALED_TABLES as readonly unknown[]).includes(d.table)) return undefined;
    if (d.deleted === true) return { table: d.table!, id: d.id, deleted: true };
    if (typeof d.digest !== 'string' || !d.state || typeof d.state !== 'object' || Array.isArray(d.state)) return undefined;
    return { table: d.table!, id: d.id, digest: d.digest, state: d.state as RowState };
  } catch {
    return undefined;
  }
}

/** Field by field; a hypothesis's evidence piece by piece (`evidence <id> summary`). */
export function diffStates(sealed: RowState, now: RowState): FieldChange[] {
  const out: FieldChange[] = [];
  for (const field of [...new Set([...Object.keys(sealed), ...Object.keys(now)])]) {
    const a = sealed[field];
    const b = now[field];
    if (field === 'evidence' && Array.isArray(a) && Array.isArray(b)) {
      out.push(...diffEvidence(a, b));
      continue;
    }
    if (a === undefined || b === undefined || canonicalJson(a) !== canonicalJson(b)) out.push({ field, now: b, sealed: a });
  }
  return out;
}

function diffEvidence(sealed: StateValue[], now: StateValue[]): FieldChange[] {
  const byId = (list: StateValue[]) => new Map(list.filter(isObject).map((e) => [String(e['id']), e]));
  const a = byId(sealed);
  const b = byId(now);
  const out: FieldChange[] = [];
  for (const [id, e] of a) {
    const f = b.get(id);
    if (!f) {
      out.push({ field: `evidence ${id}`, now: undefined, sealed: e['summary'] ?? null });
      continue;
    }
    for (const c of diffStates(e, f)) out.push({ ...c, field: `evidence ${id} ${c.field}` });
  }
  for (const [id, f] of b) if (!a.has(id)) out.push({ field: `evidence ${id}`, now: f['summary'] ?? null, sealed: undefined });
  return out;
}

function isObject(v: StateValue): v is { [key: string]: StateValue } {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function describeChange(table: SealedTable, c: FieldChange): string {
  const label = c.field.startsWith('evidence ') ? c.field : fieldLabel(table, c.field);
  if (c.now === undefined) return `${label} is gone, but the chain recorded ${show(c.sealed!)}`;
  if (c.sealed === undefined) return `${label} (${show(c.now)}) is not in the chain`;
  return `${label} is ${show(c.now)} but the chain recorded ${show(c.sealed)}`;
}

/** A value as reports quote it: JSON, clipped. */
function show(v: StateValue): string {
  if (v === null) return 'empty';
  const text = typeof v === 'string' ? v : canonicalJson(v);
  const clipped = text.length > VALUE_CHARS ? `${text.slice(0, VALUE_CHARS)}…` : text;
  return typeof v === 'string' ? JSON.stringify(clipped) : clipped;
}

/** The fields that say what a row is, for rows reported whole (unsealed, removed, back again). */
const SUMMARY_FIELDS: Record<SealedTable, string[]> = {
  ApprovalRequest: ['action', 'targetKind', 'targetNs', 'targetName', 'status', 'requestedBy'],
  ApprovalDecision: ['userId', 'decision', 'at'],
  SteeringMessage: ['userId', 'text', 'receivedAt'],
  Hypothesis: ['label', 'status', 'title', 'steeredBy'],
};

function summary(table: SealedTable, state: RowState): string {
  return SUMMARY_FIELDS[table]
    .filter((f) => state[f] !== undefined && state[f] !== null)
    .map((f) => `${fieldLabel(table, f)} ${show(state[f]!)}`)
    .join(', ');
}

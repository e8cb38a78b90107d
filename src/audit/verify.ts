// Walks the audit chain in id order and says which row is wrong and how. `verifyAuditTrail` adds the
// sealed record rows (approvals, decisions, steering, hypotheses) checked against their seals in the chain.
//
// What it can and cannot prove: any edit, deletion, reordering or insertion that does not rewrite every
// later hash is found. Removing rows at the very end (truncation) and rewriting the whole chain are not
// detectable from the table alone (there is no secret key). Anchors (./anchor.ts), heads recorded
// elsewhere, catch those up to the newest anchor: the anchored row must still exist with its hash.
// Rows written after the newest anchor can still be cut or rewritten unseen; anchor often.
import type { Db } from '../store/db.js';
import type { AuditAnchor } from './anchor.js';
import { auditHash, GENESIS_HASH } from './chain.js';
import { verifySealedRecords, type RecordVerification } from './records-verify.js';

export type AuditProblemKind = 'edited' | 'removed_before' | 'reordered' | 'broken_link' | 'rewritten' | 'truncated';

/**
 * `id` is the row the problem shows at (for anchor problems, the anchored row). `truncated`: rows
 * `removed.from`–`removed.to` (inclusive, the anchored row last) are gone. `rewritten`: the anchored
 * row no longer carries the anchored hash.
 */
export type AuditProblem =
  | { id: number; problem: Exclude<AuditProblemKind, 'truncated'>; detail: string }
  | { id: number; problem: 'truncated'; detail: string; removed: { from: number; to: number } };

export type AuditVerification = {
  ok: boolean;
  /** Chained rows checked. */
  checked: number;
  /** Rows written before the chain and not sealed yet (no append since the migration). */
  unsealed: number;
  /** Hash of the last row: record it elsewhere (as an anchor) to detect truncation later. */
  head: string | null;
  headId: number | null;
  problems: AuditProblem[];
};

type Row = {
  id: number;
  incidentId: string | null;
  incidentRef: string | null;
  actor: string;
  kind: string;
  data: string;
  at: Date;
  prevHash: string | null;
  hash: string | null;
};

const PAGE = 1000;

/** Checks the chain, and that every anchor's row is still there with the anchored hash. */
export async function verifyAuditChain(db: Db, anchors: readonly AuditAnchor[] = []): Promise<AuditVerification> {
  const rows = await readAll(db);
  const problems: AuditProblem[] = [];
  const idOfHash = new Map<string, number>();
  const idOfPrev = new Map<string, number>();
  for (const r of rows) {
    if (r.hash) idOfHash.set(r.hash, r.id);
    if (r.prevHash) idOfPrev.set(r.prevHash, r.id);
  }

  // Leading rows from before the chain are not evidence of anything until an append seals them.
  let start = 0;
  while (start < rows.length && rows[start]!.hash === null && rows[start]!.prevHash === null) start++;
  const chained = rows.slice(start);
  const existingIncidents = await incidentsThatExist(db, chained);

  let expected = GENESIS_HASH;
  const reordered = new Set<number>();
  for (const r of chained) {
    if (r.hash === null || r.prevHash === null) {
      problems.push({ id: r.id, problem: 'edited', detail: 'hash or prevHash removed from a chained row' });
      expected = r.hash ?? '';
      continue;
    }
    const fields = { incidentRef: r.incidentRef, actor: r.actor, kind: r.kind, data: r.data, at: r.at };
    if (auditHash(r.prevHash, fields) !== r.hash) {
      problems.push({ id: r.id, problem: 'edited', detail: 'content (incident, actor, kind, data or at) does not match its hash' });
    } else if (r.incidentId !== r.incidentRef && !(r.incidentId === null && r.incidentRef !== null && !existingIncidents.has(r.incidentRef))) {
      // incidentId may only be nulled by the deletion of its incident (onDelete: SetNull).
      problems.push({ id: r.id, problem: 'edited', detail: `incidentId ${JSON.stringify(r.incidentId)} differs from the hashed ${JSON.stringify(r.incidentRef)}` });
    }
    if (r.prevHash !== expected) {
      const pointsAt = idOfHash.get(r.prevHash);
      // The row after a displaced block still follows its true predecessor: already reported.
      if (!(pointsAt !== undefined && pointsAt < r.id && reordered.has(pointsAt))) {
        const p = linkProblem(r, idOfHash, idOfPrev);
        if (p.problem === 'reordered') reordered.add(r.id);
        problems.push(p);
      }
    }
    expected = r.hash;
  }
  problems.push(...anchorProblems(rows, idOfHash, anchors));
  const last = chained.at(-1);
  return { ok: problems.length === 0, checked: chained.length, unsealed: start, head: last?.hash ?? null, headId: last?.id ?? null, problems };
}

export type AuditTrailVerification = AuditVerification & {
  /** The rows the postmortem and export rely on, against their seals in the chain (./records.ts). */
  records: RecordVerification;
};

/**
 * `vigil audit verify`: the chain (and its anchors), and every sealed record row against its latest seal.
 * `ok` only when both hold.
 */
export async function verifyAuditTrail(db: Db, anchors: readonly AuditAnchor[] = []): Promise<AuditTrailVerification> {
  const chain = await verifyAuditChain(db, anchors);
  const records = await verifySealedRecords(db);
  return { ...chain, ok: chain.ok && records.ok, records };
}

/** What became of each anchored row; `rows` in id order. Checked oldest anchor first. */
function anchorProblems(rows: Row[], idOfHash: Map<string, number>, anchors: readonly AuditAnchor[]): AuditProblem[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const problems: AuditProblem[] = [];
  const seen = new Set<string>();
  let lastGood: number | undefined;
  for (const a of [...anchors].sort((x, y) => x.rowId - y.rowId)) {
    const key = `${a.rowId}:${a.hash}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const row = byId.get(a.rowId);
    const movedTo = idOfHash.get(a.hash);
    if (row?.hash === a.hash) {
      lastGood = a.rowId;
      continue;
    }
    const since = lastGood === undefined ? '' : ` after row ${lastGood} (whose anchor still matches)`;
    if (!row && movedTo !== undefined) {
      problems.push({ id: a.rowId, problem: 'rewritten', detail: `the anchored row is gone but its hash is now on row ${movedTo}: rows were renumbered${since}` });
    } else if (!row) {
      const before = lastRowBefore(rows, a.rowId);
      const after = rows.find((r) => r.id > a.rowId);
      const removed = { from: (before?.id ?? 0) + 1, to: a.rowId };
      // Rows appended after a cut chain straight onto the last survivor: only the anchor shows the gap.
      const regrown = after && after.prevHash === (before?.hash ?? GENESIS_HASH);
      const rest = !after
        ? `; the trail now ends at ${before ? `row ${before.id}` : 'no row at all'}`
        : regrown
          ? `; row ${after.id} was appended after the cut, chained straight to ${before ? `row ${before.id}` : 'the genesis'}`
          : `; the trail goes on at row ${after.id}`;
      problems.push({ id: a.rowId, problem: 'truncated', removed, detail: `anchored row is gone: ${describeIds(removed)} removed${rest}` });
    } else {
      const now = row.hash ? `hashes to ${row.hash.slice(0, 12)}…` : 'has no hash';
      const moved = movedTo !== undefined ? `; the anchored hash is now on row ${movedTo}` : '';
      problems.push({ id: a.rowId, problem: 'rewritten', detail: `anchored as ${a.hash.slice(0, 12)}… but now ${now}: the chain was rewritten at or before this row${since}${moved}` });
    }
  }
  return problems;
}

function lastRowBefore(rows: Row[], id: number): Row | undefined {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (rows[mid]!.id < id) lo = mid + 1;
    else hi = mid;
  }
  return rows[lo - 1];
}

/** `row 8`, `rows 8, 9, 10`, or `rows 8–1000 (993 rows)` for long runs. */
function describeIds({ from, to }: { from: number; to: number }): string {
  if (from === to) return `row ${from}`;
  const n = to - from + 1;
  if (n <= 10) return `rows ${Array.from({ length: n }, (_, i) => from + i).join(', ')}`;
  return `rows ${from}–${to} (${n} rows)`;
}

/** Why `r` does not link to the row before it. */
function linkProblem(r: Row, idOfHash: Map<string, number>, idOfPrev: Map<string, number>): AuditProblem {
  const prevHash = r.prevHash!;
  const pointsAt = idOfHash.get(prevHash);
  const pointedFrom = r.hash ? idOfPrev.get(r.hash) : undefined;
  if (pointsAt !== undefined && pointsAt > r.id) {
    return { id: r.id, problem: 'reordered', detail: `chained after row ${pointsAt}, which now comes later` };
  }
  if (pointedFrom !== undefined && pointedFrom < r.id) {
    return { id: r.id, problem: 'reordered', detail: `row ${pointedFrom} is chained after it but now comes first` };
  }
  if (pointsAt === undefined && prevHash !== GENESIS_HASH) {
    return { id: r.id, problem: 'removed_before', detail: 'the row it was chained to is gone (deleted, or its hash rewritten)' };
  }
  return {
    id: r.id,
    problem: 'broken_link',
    detail: pointsAt === undefined ? 'claims to start the chain but is not first' : `chained to row ${pointsAt}, not to the row before it (fork or insertion)`,
  };
}

async function readAll(db: Db): Promise<Row[]> {
  const rows: Row[] = [];
  let after = 0;
  for (;;) {
    const page = await db.auditEvent.findMany({
      where: { id: { gt: after } },
      orderBy: { id: 'asc' },
      take: PAGE,
      select: { id: true, incidentId: true, incidentRef: true, actor: true, kind: true, data: true, at: true, prevHash: true, hash: true },
    });
    rows.push(...page);
    if (page.length < PAGE) return rows;
    after = page[page.length - 1]!.id;
  }
}

async function incidentsThatExist(db: Db, rows: Row[]): Promise<Set<string>> {
  const refs = [...new Set(rows.filter((r) => r.incidentId === null && r.incidentRef !== null).map((r) => r.incidentRef!))];
  const found = new Set<string>();
  for (let i = 0; i < refs.length; i += PAGE) {
    const page = await db.incident.findMany({ where: { id: { in: refs.slice(i, i + PAGE) } }, select: { id: true } });
    for (const p of page) found.add(p.id);
  }
  return found;
}

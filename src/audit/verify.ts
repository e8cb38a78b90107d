// Walks the audit chain in id order and says which row is wrong and how.
//
// What it can and cannot prove: any edit, deletion, reordering or insertion that does not rewrite every
// later hash is found. Removing rows at the very end (truncation) and rewriting the whole chain are not
// detectable from the table alone (there is no secret key); compare `head` with a value recorded
// elsewhere to catch those.
import type { Db } from '../store/db.js';
import { auditHash, GENESIS_HASH } from './chain.js';

export type AuditProblemKind = 'edited' | 'removed_before' | 'reordered' | 'broken_link';

export type AuditProblem = { id: number; problem: AuditProblemKind; detail: string };

export type AuditVerification = {
  ok: boolean;
  /** Chained rows checked. */
  checked: number;
  /** Rows written before the chain and not sealed yet (no append since the migration). */
  unsealed: number;
  /** Hash of the last row: record it elsewhere to detect truncation later. */
  head: string | null;
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

export async function verifyAuditChain(db: Db): Promise<AuditVerification> {
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
  const last = chained.at(-1);
  return { ok: problems.length === 0, checked: chained.length, unsealed: start, head: last?.hash ?? null, problems };
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

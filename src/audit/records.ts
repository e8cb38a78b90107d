// Sealed records: the one place that writes the rows the postmortem and `vigil export` rely on
// (ApprovalRequest with its execution, ApprovalDecision, SteeringMessage, Hypothesis with its Evidence).
//
// Why: the hash chain (./chain.ts) only covers AuditEvent. An SQL edit of, say, the approver stored on
// ApprovalDecision passed `vigil audit verify`, and the postmortem then named the wrong person. So every
// write here also appends, in the SAME transaction, a `record.sealed` audit event whose data holds the
// row's state as stored (./record-state.ts: the fields the record relies on, read back after the write)
// and its sha256 digest over canonical JSON. The chain seals that event; `vigil audit verify`
// (./records-verify.ts) recomputes every row's digest and compares it with the latest seal of that row,
// naming edited fields with the sealed and the current value, rows with no seal (inserted behind Vigil's
// back) and sealed rows that are gone. Deleting a row here seals `deleted: true`.
//
// Contract:
// - writes go through a SealedWriter (`sealedWrite(client, (w) => …)`) or the small helpers below; a
//   grep-based test (test/audit/sealed-writes.test.ts) fails when code under src/ writes these tables
//   any other way. Reads stay wherever they are;
// - the seals are appended when the work is done, after every row write of the writer: the chain's lock
//   is taken last, as everywhere else (rows first, then the audit lock), so a sealed write never waits
//   for a row while holding the lock another writer of that row waits for (no deadlock on PostgreSQL);
// - the first sealed write of a database seals every row already there first (`record.baseline`): rows
//   from before sealing existed are covered from then on, and a row without a seal after the baseline
//   is reported. Until then verification counts such rows as not sealed yet, like the chain's legacy rows;
// - `updatedAt` (the execution heartbeat) and `cardTs` (the card's Slack ts) are bookkeeping no seal
//   covers: `touchApproval` and `setApprovalCard` write them without a seal.
import type { Db, Prisma } from '../store/db.js';
import type { DbTx } from '../store/tx.js';
import { appendAuditRow, lockAuditChain } from './chain.js';
import { readSnapshot, readSnapshots, SEALED_TABLES, stateDigest, type RowSnapshot, type RowState, type SealedTable } from './record-state.js';

/** Audit kind of one row's seal; its data is a `SealData`. */
export const SEAL_KIND = 'record.sealed';
/** Audit kind written once, after the rows already in the store were sealed by the first sealed write. */
export const BASELINE_KIND = 'record.baseline';

export type SealData =
  | { table: SealedTable; id: string; digest: string; state: RowState; baseline?: true }
  | { table: SealedTable; id: string; deleted: true };

type Touched = { table: SealedTable; id: string; incidentId: string | null };

/** Performs the writes of one unit of work and remembers which rows they touched, to seal them together. */
export class SealedWriter {
  private readonly touched = new Map<string, Touched>();

  constructor(readonly tx: DbTx) {}

  private touch(table: SealedTable, id: string, incidentId: string | null = null): void {
    const key = `${table}:${id}`;
    if (!this.touched.has(key) || incidentId) this.touched.set(key, { table, id, incidentId });
  }

  async createSteering(data: Prisma.SteeringMessageUncheckedCreateInput): Promise<{ id: string }> {
    const row = await this.tx.steeringMessage.create({ data, select: { id: true } });
    this.touch('SteeringMessage', row.id);
    return row;
  }

  async createDecision(data: Prisma.ApprovalDecisionUncheckedCreateInput): Promise<{ id: string }> {
    const row = await this.tx.approvalDecision.create({ data, select: { id: true } });
    this.touch('ApprovalDecision', row.id);
    return row;
  }

  async createApproval(data: Prisma.ApprovalRequestUncheckedCreateInput): Promise<{ id: string }> {
    const row = await this.tx.approvalRequest.create({ data, select: { id: true } });
    this.touch('ApprovalRequest', row.id);
    return row;
  }

  /** Updates the request only while it still matches `onlyIf` (status races); true when it did. */
  async updateApproval(id: string, data: Prisma.ApprovalRequestUncheckedUpdateManyInput, onlyIf: Prisma.ApprovalRequestWhereInput = {}): Promise<boolean> {
    const { count } = await this.tx.approvalRequest.updateMany({ where: { ...onlyIf, id }, data });
    if (count === 1) this.touch('ApprovalRequest', id);
    return count === 1;
  }

  /** Deletes a request (a proposal that lost a race, before anyone saw it); the seal says it was Vigil. */
  async deleteApproval(id: string): Promise<void> {
    const row = await this.tx.approvalRequest.findUnique({ where: { id }, select: { incidentId: true } });
    if (!row) return;
    await this.tx.approvalRequest.delete({ where: { id } });
    this.touch('ApprovalRequest', id, row.incidentId);
  }

  async upsertHypothesis(args: { where: Prisma.HypothesisWhereUniqueInput; create: Prisma.HypothesisUncheckedCreateInput; update: Prisma.HypothesisUncheckedUpdateInput }): Promise<{ id: string }> {
    const row = await this.tx.hypothesis.upsert({ ...args, select: { id: true } });
    this.touch('Hypothesis', row.id);
    return row;
  }

  async updateHypothesis(id: string, data: Prisma.HypothesisUncheckedUpdateInput): Promise<void> {
    await this.tx.hypothesis.update({ where: { id }, data, select: { id: true } });
    this.touch('Hypothesis', id);
  }

  /** A hypothesis's evidence, replaced as a whole (a re-run of its analyzer); sealed with the hypothesis. */
  async replaceEvidence(hypothesisId: string, rows: Prisma.EvidenceCreateManyInput[]): Promise<void> {
    await this.tx.evidence.deleteMany({ where: { hypothesisId } });
    if (rows.length) await this.tx.evidence.createMany({ data: rows.map((r) => ({ ...r, hypothesisId })) });
    this.touch('Hypothesis', hypothesisId);
  }

  /** One more piece of evidence for a hypothesis (a responder's note or link); sealed with the hypothesis. */
  async addEvidence(data: Prisma.EvidenceUncheckedCreateInput & { hypothesisId: string }): Promise<void> {
    await this.tx.evidence.create({ data, select: { id: true } });
    this.touch('Hypothesis', data.hypothesisId);
  }

  /** Seals every row touched so far; `sealedWrite` calls it when the work is done. */
  async seal(): Promise<void> {
    if (this.touched.size === 0) return;
    const pending = [...this.touched.values()];
    this.touched.clear();
    await lockAuditChain(this.tx);
    const baselined = await ensureBaseline(this.tx);
    for (const t of pending) {
      if (baselined.has(`${t.table}:${t.id}`)) continue;
      const snap = await readSnapshot(this.tx, t.table, t.id);
      if (snap) await appendSeal(this.tx, snap);
      else await appendDeleted(this.tx, t);
    }
  }
}

export type SealTarget = Db | DbTx | SealedWriter;

function isRoot(client: Db | DbTx): client is Db {
  return typeof (client as Partial<Db>).$transaction === 'function';
}

/**
 * Runs `work` with a writer, then seals what it wrote, in one transaction: the caller's (a DbTx), or a
 * new one (the root client). Audit events the caller records after this in the same transaction follow
 * the seals in the chain.
 */
export async function sealedWrite<T>(client: Db | DbTx, work: (w: SealedWriter) => Promise<T>): Promise<T> {
  const run = async (tx: DbTx): Promise<T> => {
    const w = new SealedWriter(tx);
    const result = await work(w);
    await w.seal();
    return result;
  };
  return isRoot(client) ? client.$transaction((tx) => run(tx)) : run(client);
}

/** `work` on the given writer (its owner seals), or in a sealed write of its own. */
function withWriter<T>(target: SealTarget, work: (w: SealedWriter) => Promise<T>): Promise<T> {
  return target instanceof SealedWriter ? work(target) : sealedWrite(target, work);
}

/** `SealedWriter.updateApproval` from a client or a writer. */
export function updateApproval(target: SealTarget, id: string, data: Prisma.ApprovalRequestUncheckedUpdateManyInput, onlyIf: Prisma.ApprovalRequestWhereInput = {}): Promise<boolean> {
  return withWriter(target, (w) => w.updateApproval(id, data, onlyIf));
}

/**
 * Moves `updatedAt` only (the execution heartbeat, the row lock of a click): no sealed field changes.
 * Returns how many rows matched.
 */
export async function touchApproval(client: Db | DbTx | SealedWriter, id: string, onlyIf: Prisma.ApprovalRequestWhereInput, at: Date): Promise<number> {
  const c = client instanceof SealedWriter ? client.tx : client;
  return (await c.approvalRequest.updateMany({ where: { ...onlyIf, id }, data: { updatedAt: at } })).count;
}

/** The card's Slack ts, once Slack accepted it: bookkeeping, not part of the record. */
export async function setApprovalCard(client: Db | DbTx, id: string, cardTs: string): Promise<void> {
  await client.approvalRequest.update({ where: { id }, data: { cardTs }, select: { id: true } });
}

/**
 * Split mode's handoff from the investigator to the executor (src/approvals/handoff.ts): bookkeeping like the
 * card's ts, not part of the record. `plan`: a new proposal the executor plans as itself and posts; `card`: a
 * card the executor re-renders. A later handoff supersedes an earlier `card` but never turns `plan` into `card`.
 */
export async function setHandoff(client: Db | DbTx, id: string, kind: 'plan' | 'card', at: Date): Promise<void> {
  await client.approvalRequest.updateMany({ where: { id, OR: [{ handoff: null }, { handoff: 'card' }] }, data: { handoff: kind, handoffAt: at } });
  if (kind === 'card') await client.approvalRequest.updateMany({ where: { id, handoff: 'plan' }, data: { handoffAt: at } });
}

/** One executor takes one handoff as it was read, for `leaseMs`: a conditional update, so two executors never both win. */
export async function claimHandoff(client: Db | DbTx, row: { id: string; handoff: string; handoffAt: Date | null }, owner: string, now: Date, leaseMs: number): Promise<boolean> {
  const r = await client.approvalRequest.updateMany({
    where: { id: row.id, handoff: row.handoff, handoffAt: row.handoffAt, OR: [{ handoffUntil: null }, { handoffUntil: { lt: now } }, { handoffOwner: owner }] },
    data: { handoffOwner: owner, handoffUntil: new Date(now.getTime() + leaseMs) },
  });
  return r.count === 1;
}

/**
 * The claimed handoff is done: cleared only if nobody handed the row off again meanwhile (then the lease is
 * released instead, so the newer handoff is taken at the next sweep).
 */
export async function finishHandoff(client: Db | DbTx, row: { id: string; handoffAt: Date | null }, owner: string): Promise<void> {
  const done = await client.approvalRequest.updateMany({ where: { id: row.id, handoffOwner: owner, handoffAt: row.handoffAt }, data: { handoff: null, handoffAt: null, handoffOwner: null, handoffUntil: null } });
  if (done.count === 0) await client.approvalRequest.updateMany({ where: { id: row.id, handoffOwner: owner }, data: { handoffOwner: null, handoffUntil: null } });
}

function appendSeal(tx: DbTx, snap: RowSnapshot, baseline = false): Promise<unknown> {
  const data: SealData = { table: snap.table, id: snap.id, digest: stateDigest(snap.table, snap.id, snap.state), state: snap.state, ...(baseline ? { baseline: true as const } : {}) };
  return appendAuditRow(tx, { incidentId: snap.incidentId, actor: 'vigil', kind: SEAL_KIND, data: JSON.stringify(data), at: new Date() });
}

function appendDeleted(tx: DbTx, t: Touched): Promise<unknown> {
  const data: SealData = { table: t.table, id: t.id, deleted: true };
  return appendAuditRow(tx, { incidentId: t.incidentId, actor: 'vigil', kind: SEAL_KIND, data: JSON.stringify(data), at: new Date() });
}

/**
 * The first sealed write of a database seals every row already stored, then records the baseline.
 * Runs under the chain's lock (taken by the caller), so two replicas never both write one. Returns
 * the rows it sealed (`table:id`), empty once the baseline exists.
 */
async function ensureBaseline(tx: DbTx): Promise<Set<string>> {
  const sealed = new Set<string>();
  if (await tx.auditEvent.findFirst({ where: { kind: BASELINE_KIND }, select: { id: true } })) return sealed;
  const counts: Record<string, number> = {};
  for (const table of SEALED_TABLES) {
    const rows = await readSnapshots(tx, table);
    for (const snap of rows) {
      await appendSeal(tx, snap, true);
      sealed.add(`${table}:${snap.id}`);
    }
    counts[table] = rows.length;
  }
  await appendAuditRow(tx, { incidentId: null, actor: 'vigil', kind: BASELINE_KIND, data: JSON.stringify({ sealed: counts }), at: new Date() });
  return sealed;
}

/**
 * Reads and small writes of the approval tables: a request as the card shows it, the execution
 * history the policy's rate and loop limits count, and the stop switches.
 */
import type { ActionHistoryEntry } from '../actions/index.js';
import { updateApproval, type SealTarget } from '../audit/records.js';
import type { ExecutionRecord, PolicyDecision } from '../policy/index.js';
import { podsOfKey, targetKey } from '../policy/index.js';
import type { Db } from '../store/db.js';
import type { DbTx } from '../store/tx.js';
import type { MitigationProposal } from '../triage/types.js';
import type { ApprovalOutcome, ApprovalStatus, ApprovalView, StoredPlan } from './types.js';

export const GLOBAL_SCOPE = 'global';

/** How long past executions matter to the limits (longer than any policy window in practice). */
const HISTORY_MS = 7 * 24 * 3600_000;

export async function readApproval(db: Db | DbTx, id: string): Promise<ApprovalView | undefined> {
  const row = await db.approvalRequest.findUnique({ where: { id }, include: { decisions: { orderBy: { at: 'asc' } } } });
  if (!row) return undefined;
  return {
    id: row.id,
    incidentId: row.incidentId,
    status: row.status as ApprovalStatus,
    ...(row.statusReason ? { statusReason: row.statusReason } : {}),
    proposal: JSON.parse(row.proposal) as MitigationProposal,
    ...(row.plan ? { plan: JSON.parse(row.plan) as StoredPlan } : {}),
    decision: JSON.parse(row.decision) as PolicyDecision,
    requestedBy: row.requestedBy,
    ...(row.parentId ? { parentId: row.parentId } : {}),
    decisions: row.decisions.map((d) => ({
      userId: d.userId,
      ...(d.userName ? { userName: d.userName } : {}),
      decision: d.decision as 'approve' | 'reject',
      ...(d.reason ? { reason: d.reason } : {}),
      at: d.at,
    })),
    ...(row.result ? { outcome: JSON.parse(row.result) as ApprovalOutcome } : {}),
    ...(isModelKey(row.hypothesisKey) ? { modelWritten: true } : {}),
    updatedAt: row.updatedAt,
  };
}

/** Keys of the model's findings (`modelFindingKey`): a proposal made for one was written by the model. */
export function isModelKey(hypothesisKey: string): boolean {
  return hypothesisKey.startsWith('model:');
}

/** Statuses of a card that may still lead to a write: one per incident, action and target at a time. */
export const LIVE_STATUSES: ApprovalStatus[] = ['pending', 'approved', 'executing'];

interface Executed {
  action: string;
  targetKind: string;
  targetNs: string;
  targetName: string;
  executedAt: Date | null;
  status: string;
  parentId: string | null;
}

/** Outcome for the limits: an executed rollback marks its parent rolled back. */
function outcomeOf(r: Executed, rolledBack: Set<string>, id: string): ExecutionRecord['outcome'] {
  if (rolledBack.has(id)) return 'rolled_back';
  return r.status === 'executed' ? 'succeeded' : 'failed';
}

/** Every write Vigil executed on this target (any incident) recently, newest first. */
export async function executionsOn(db: Db, target: { kind: string; namespace: string; name: string }, now: Date, workload?: string) {
  const since = new Date(now.getTime() - HISTORY_MS);
  // A pod counts as its workload's (policy `limitKey`): every pod of the workload Vigil wrote to.
  const podsOf = target.kind.toLowerCase() === 'pod' && workload ? workload : undefined;
  const rows = await db.approvalRequest.findMany({
    where: { targetNs: target.namespace, ...(podsOf ? {} : { targetName: target.name }), executedAt: { gte: since } },
    orderBy: { executedAt: 'desc' },
  });
  const sameKind = rows.filter((r) => r.targetKind.toLowerCase() === target.kind.toLowerCase() && (!podsOf || diagnosedWorkload(r.diagnosis) === podsOf));
  const rolledBack = new Set(sameKind.filter((r) => r.parentId && r.status === 'executed').map((r) => r.parentId!));
  const policy: ExecutionRecord[] = sameKind.map((r) => ({
    action: r.action,
    targetKey: podsOf ? podsOfKey(r.targetNs, podsOf) : targetKey({ kind: r.targetKind, namespace: r.targetNs, name: r.targetName }),
    at: r.executedAt!,
    outcome: outcomeOf(r, rolledBack, r.id),
  }));
  const risk: ActionHistoryEntry[] = sameKind.map((r) => ({
    action: r.action,
    target: { kind: r.targetKind, namespace: r.targetNs, name: r.targetName },
    outcome: outcomeOf(r, rolledBack, r.id),
    at: r.executedAt!,
  }));
  return { policy, risk };
}

function diagnosedWorkload(diagnosis: string | null): string | undefined {
  return diagnosis ? (JSON.parse(diagnosis) as { component?: { name?: string } }).component?.name : undefined;
}

/** Writes already executed for this incident (the mutation budget). */
export function mutationsOf(db: Db, incidentId: string): Promise<number> {
  return db.approvalRequest.count({ where: { incidentId, executedAt: { not: null } } });
}

export async function stopsFor(db: Db | DbTx, incidentId: string): Promise<{ global: boolean; incident: boolean }> {
  const rows = await db.stopSwitch.findMany({ where: { scope: { in: [GLOBAL_SCOPE, incidentId] } } });
  return {
    global: rows.some((r) => r.scope === GLOBAL_SCOPE && r.stopped),
    incident: rows.some((r) => r.scope === incidentId && r.stopped),
  };
}

export async function setStop(db: Db | DbTx, scope: string, stopped: boolean, by: string, at: Date): Promise<void> {
  await db.stopSwitch.upsert({ where: { scope }, create: { scope, stopped, by, at }, update: { stopped, by, at } });
}

/**
 * Moves a request from one status to another only if it is still in `from`: the one place status
 * changes race (two replicas, two approvers), so whoever updates the row wins and the other backs off.
 * The new state is sealed in the audit chain (src/audit/records.ts): at once on a client, or with the
 * rest of the writer's work when given a SealedWriter.
 */
export async function transition(
  db: SealTarget,
  id: string,
  from: ApprovalStatus[],
  to: ApprovalStatus,
  extra: { statusReason?: string | null; result?: string; executedAt?: Date; plan?: string; risk?: number } = {},
): Promise<boolean> {
  return updateApproval(db, id, { status: to, ...extra }, { status: { in: from } });
}

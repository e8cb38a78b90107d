import { parseStored } from './json.js';
import type { PostmortemRecord } from './record.js';
import type { ActionTaken } from './types.js';

interface StoredPlan {
  title?: string;
  command?: string;
  rollback?: { command?: string; rationale?: string };
}
interface StoredProposal {
  command?: string;
}
/** ApprovalRequest.result, as approvals/execution writes it. */
interface StoredResult {
  execution?: { status?: string; identity?: { mode?: string; user?: string }; writes?: { dryRun?: boolean; status?: string }[] };
  verification?: { ok?: boolean; checks?: { description?: string; ok?: boolean; observed?: string }[]; elapsedMs?: number };
}

/** Each approval request: what was proposed, who decided, what ran under which identity, and the verification. */
export function actionsTaken(r: PostmortemRecord): ActionTaken[] {
  return r.incident.approvals.map((a) => {
    const plan = parseStored<StoredPlan>(a.plan);
    const proposal = parseStored<StoredProposal>(a.proposal);
    const result = parseStored<StoredResult>(a.result);
    const target = `${a.targetKind.toLowerCase()}/${a.targetName} in ${a.targetNs}`;
    const exec = result?.execution;
    const ver = result?.verification;
    const action: ActionTaken = {
      requestId: a.id,
      action: a.action,
      target,
      title: plan?.title ?? `${a.action} ${target}`,
      ...(plan?.command ?? proposal?.command ? { command: plan?.command ?? proposal?.command } : {}),
      ...(a.risk !== null ? { risk: a.risk } : {}),
      status: a.status,
      ...(a.statusReason ? { statusReason: a.statusReason } : {}),
      requestedBy: a.requestedBy,
      requestedAt: a.createdAt,
      decisions: a.decisions.map((d) => ({
        userId: d.userId,
        ...(d.userName ? { userName: d.userName } : {}),
        decision: d.decision === 'reject' ? 'reject' : 'approve',
        ...(d.reason ? { reason: d.reason } : {}),
        at: d.at,
        source: { table: 'ApprovalDecision', id: d.id },
      })),
      ...(exec || a.executedAt
        ? {
            execution: {
              ...(exec?.identity?.user ? { identity: exec.identity.user } : {}),
              ...(a.executedAt ? { at: a.executedAt } : {}),
              ...(exec?.status ? { status: exec.status } : {}),
              writes: (exec?.writes ?? []).filter((w) => !w.dryRun).length,
            },
          }
        : {}),
      ...(ver && typeof ver.ok === 'boolean'
        ? { verification: { ok: ver.ok, checks: (ver.checks ?? []).map((c) => `${c.ok ? '✓' : '✗'} ${c.description ?? 'check'}${c.observed ? ` (${c.observed})` : ''}`) } }
        : {}),
      ...(plan?.rollback ? { rollback: { ...(plan.rollback.command ? { command: plan.rollback.command } : {}), ...(plan.rollback.rationale ? { rationale: plan.rollback.rationale } : {}) } } : {}),
      sources: [{ table: 'ApprovalRequest', id: a.id }],
    };
    return action;
  });
}

/** When the verification finished: execution time plus the verification's elapsed time. */
export function verifiedAt(r: PostmortemRecord, requestId: string): Date | undefined {
  const a = r.incident.approvals.find((x) => x.id === requestId);
  const ver = parseStored<StoredResult>(a?.result)?.verification;
  if (!a?.executedAt || !ver) return undefined;
  return new Date(a.executedAt.getTime() + (ver.elapsedMs ?? 0));
}

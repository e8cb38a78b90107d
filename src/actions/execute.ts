/**
 * Executes an approved plan: a last dry run of every request with the final annotation (state may have
 * moved since the card was posted), then the writes, in order, stopping at the first refusal. The writes
 * carry preconditions on the state the plan read (a resourceVersion, JSON-patch `test` ops); a refusal
 * because that state moved says so, so the thread tells people to propose again.
 */
import type { ApprovedExecutor } from './executor.js';
import type { ExecutionResult, KubeWrite, Plan, WriteGuard, WriteOutcome } from './types.js';

/**
 * kube-apiserver's whole message when a JSON patch does not apply to the stored object (a `test` op
 * failed, a path is gone): a 422 from `NewGenericServerResponse` that does not say which op failed.
 */
const PATCH_DID_NOT_APPLY = 'the server rejected our request due to an error in our request';

/** Why the API refused `w`, when it refused because the target is no longer the one planned. */
function targetMoved(w: KubeWrite, o: WriteOutcome): string | undefined {
  if (o.code === 409 && o.reason === 'Conflict') return `409 Conflict: ${o.message ?? 'the object has been modified'}`;
  if (o.code !== 422 || w.op !== 'patch' || w.patchType !== 'json' || !o.message?.startsWith(PATCH_DID_NOT_APPLY)) return undefined;
  const tested = (w.body as { op: string; path: string }[]).filter((op) => op.op === 'test').map((op) => op.path);
  return `422 Invalid: ${tested.length ? `testing value ${tested.join(' or ')} failed` : 'the JSON patch no longer applies'}`;
}

function refusal(w: KubeWrite, o: WriteOutcome, plan: Plan, writes: WriteOutcome[], stage: 'final dry run' | 'write'): string {
  const moved = targetMoved(w, o);
  if (!moved) return stage === 'write' ? (o.message ?? 'rejected') : `final dry run rejected: ${o.message ?? 'rejected'}`;
  const t = plan.target;
  const applied = writes.some((x) => !x.dryRun && x.status === 'ok');
  return (
    `${t.kind.toLowerCase()}/${t.name} in ${t.namespace} changed since the plan, so the API server refused the ${stage} (${moved}); ` +
    `${applied ? 'only the writes before it were applied' : 'nothing was changed'}. Propose it again to plan against its current state.`
  );
}

export async function executePlan(executor: ApprovedExecutor, plan: Plan, guard?: WriteGuard): Promise<ExecutionResult> {
  if (!plan.executable) return { status: 'refused', message: 'the plan is not executable (a pre-check failed or the dry run was not accepted)' };
  if (executor.incidentId !== plan.incidentId) return { status: 'refused', message: `the executor is bound to incident ${executor.incidentId}, the plan to ${plan.incidentId}` };
  const base = { identity: executor.identity, annotation: executor.annotation };
  const writes: WriteOutcome[] = [];
  for (const w of plan.writes) {
    const outcomes = await executor.dryRun(w);
    writes.push(...outcomes);
    const refused = outcomes.find((o) => o.status === 'rejected');
    if (refused) return { status: 'rejected', ...base, writes, message: refusal(w, refused, plan, writes, 'final dry run') };
  }
  const halt = await guard?.();
  if (halt) return { status: 'refused', message: `${halt}; only dry runs were sent` };
  for (const w of plan.writes) {
    const outcomes = await executor.apply(w);
    writes.push(...outcomes);
    const refused = outcomes.find((o) => o.status === 'rejected');
    if (refused) return { status: 'rejected', ...base, writes, message: refusal(w, refused, plan, writes, 'write') };
  }
  return { status: 'applied', ...base, writes };
}

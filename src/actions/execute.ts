/**
 * Executes an approved plan: a last dry run of every request with the final annotation (state may have
 * moved since the card was posted), then the writes, in order, stopping at the first refusal.
 */
import type { ApprovedExecutor } from './executor.js';
import type { ExecutionResult, Plan, WriteOutcome } from './types.js';

export async function executePlan(executor: ApprovedExecutor, plan: Plan): Promise<ExecutionResult> {
  if (!plan.executable) return { status: 'refused', message: 'the plan is not executable (a pre-check failed or the dry run was not accepted)' };
  if (executor.incidentId !== plan.incidentId) return { status: 'refused', message: `the executor is bound to incident ${executor.incidentId}, the plan to ${plan.incidentId}` };
  const base = { identity: executor.identity, annotation: executor.annotation };
  const writes: WriteOutcome[] = [];
  for (const w of plan.writes) {
    const outcomes = await executor.dryRun(w);
    writes.push(...outcomes);
    const refused = outcomes.find((o) => o.status === 'rejected');
    if (refused) return { status: 'rejected', ...base, writes, message: `final dry run rejected: ${refused.message ?? 'rejected'}` };
  }
  for (const w of plan.writes) {
    const outcomes = await executor.apply(w);
    writes.push(...outcomes);
    const refused = outcomes.find((o) => o.status === 'rejected');
    if (refused) return { status: 'rejected', ...base, writes, message: refused.message ?? 'rejected' };
  }
  return { status: 'applied', ...base, writes };
}

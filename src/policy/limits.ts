import { formatDuration } from './duration.js';
import { limitKey } from './match.js';
import type { ActionProposal, DenyCode, ExecutionRecord, Policy, PolicyContext, PolicyLimits } from './types.js';

/**
 * Runtime limits. Each check returns the refusal, or undefined when the proposal is within the limit.
 * They run on every evaluation, so the same limits hold at execution time as at proposal time.
 */
export interface LimitBreach {
  code: DenyCode;
  reason: string;
}

function where(p: ActionProposal): string {
  return `${p.target.namespace}/${p.target.name}`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function within(history: ExecutionRecord[], now: Date, windowMs: number, keep: (r: ExecutionRecord) => boolean): number {
  const since = now.getTime() - windowMs;
  return history.filter((r) => r.at.getTime() > since && keep(r)).length;
}

export function checkBlastRadius(p: ActionProposal, limits: PolicyLimits): LimitBreach | undefined {
  if (limits.maxWorkloads !== undefined && p.workloadsAffected > limits.maxWorkloads) {
    return { code: 'blast_radius', reason: `refused: blast radius ${plural(p.workloadsAffected, 'workload')} exceeds the cap of ${limits.maxWorkloads}` };
  }
  if (limits.maxPods !== undefined && p.podsAffected > limits.maxPods) {
    return { code: 'blast_radius', reason: `refused: blast radius ${plural(p.podsAffected, 'pod')} exceeds the cap of ${limits.maxPods}` };
  }
  return undefined;
}

export function checkMutationBudget(policy: Policy, ctx: PolicyContext): LimitBreach | undefined {
  const budget = policy.incident.mutationBudget;
  if (ctx.incidentMutations < budget) return undefined;
  return {
    code: 'budget',
    reason: `refused: this incident has used its mutation budget (${ctx.incidentMutations} of ${plural(budget, 'change')}) — escalate to a human`,
  };
}

/** The runaway-loop stop: the same action on the same target, whatever incident ran it. */
export function checkLoop(policy: Policy, p: ActionProposal, ctx: PolicyContext): LimitBreach | undefined {
  const { sameActionSameTarget: max, windowMs } = policy.incident.loop;
  const key = limitKey(p);
  const ran = within(ctx.history, ctx.now, windowMs, (r) => r.targetKey === key && r.action === p.action);
  if (ran < max) return undefined;
  return {
    code: 'loop',
    reason: `refused: the same \`${p.action}\` on ${where(p)} already ran ${plural(ran, 'time')} in the last ${formatDuration(windowMs)} (runaway-loop stop) — escalate to a human`,
  };
}

/** The per-target rate limit: any write on the same target. */
export function checkRate(p: ActionProposal, limits: PolicyLimits, ctx: PolicyContext): LimitBreach | undefined {
  if (!limits.perTarget) return undefined;
  const { max, windowMs } = limits.perTarget;
  const key = limitKey(p);
  const ran = within(ctx.history, ctx.now, windowMs, (r) => r.targetKey === key);
  if (ran < max) return undefined;
  return {
    code: 'rate_limit',
    reason: `refused: ${where(p)} was already changed ${plural(ran, 'time')} in the last ${formatDuration(windowMs)} (rate limit: ${max} per ${formatDuration(windowMs)})`,
  };
}

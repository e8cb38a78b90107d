/**
 * Actions whose providers do not exist yet: `flip_flag` (needs a feature-flag provider port) and
 * `revert_pr` (needs a GitHub write adapter with its own identity). Their parameters and plan shapes
 * are fixed here so triage, policy and the cards can use them; `planPendingAction` gives a Plan that is
 * never executable and says why. Execution is left to a later change.
 */
import { z } from 'zod';
import type { MitigationProposal } from '../../triage/types.js';
import { guessEnvironment, scoreRisk } from '../risk.js';
import type { Plan, PlanContext } from '../types.js';

export const flipFlagParams = z.object({
  flag: z.string().min(1).describe('Flag key in the flag tool'),
  to: z.string().min(1).describe('The value to set, e.g. "off"'),
  environment: z.string().optional().describe('Flag environment, when the tool has several'),
});

export const revertPrParams = z.object({
  repo: z.string().regex(/^[^/\s]+\/[^/\s]+$/, 'owner/name').describe('Repository owner/name'),
  number: z.number().int().positive().describe('The merged pull request to revert'),
});

/** What a flag provider will need to show and do. */
export interface FlagChangePlan {
  flag: string;
  environment?: string;
  from?: string;
  to: string;
}

/** What a GitHub revert will need: the revert PR to open (merging and deploying it stay human steps). */
export interface PullRequestRevertPlan {
  repo: string;
  number: number;
  mergeCommitSha?: string;
  revertBranch: string;
}

export const PENDING_ACTIONS = {
  flip_flag: { params: flipFlagParams, riskKind: 'flip_flag', provider: 'feature-flag provider' },
  revert_pr: { params: revertPrParams, riskKind: 'revert_pr', provider: 'GitHub write adapter' },
} as const;

export type PendingActionName = keyof typeof PENDING_ACTIONS;

export function isPendingAction(name: string): name is PendingActionName {
  return Object.hasOwn(PENDING_ACTIONS, name);
}

export function planPendingAction(ctx: PlanContext, proposal: MitigationProposal & { action: PendingActionName }): Plan {
  const spec = PENDING_ACTIONS[proposal.action];
  const parsed = spec.params.safeParse(proposal.params);
  const now = ctx.now?.() ?? new Date();
  return {
    action: proposal.action,
    title: proposal.command,
    command: proposal.command,
    incidentId: ctx.incidentId,
    // Not a Kubernetes object: the card prints the proposal's target; this field keeps the Plan shape.
    target: { kind: 'Deployment', namespace: proposal.target.namespace ?? '', name: proposal.target.name },
    params: proposal.params,
    proposal,
    changes: [],
    writes: [],
    preChecks: [
      parsed.success
        ? { name: 'parameters are valid', status: 'pass', detail: JSON.stringify(parsed.data) }
        : { name: 'parameters are valid', status: 'fail', detail: parsed.error.issues.map((i) => i.message).join('; ') },
      { name: 'provider available', status: 'fail', detail: `no ${spec.provider} yet: do this by hand (${proposal.command})` },
    ],
    dryRun: { status: 'skipped', message: `no ${spec.provider}` },
    successCriteria: (ctx.metricCriteria ?? []).map((m) => ({ kind: 'metric', ...m, withinSeconds: ctx.withinSeconds ?? 300 })),
    risk: scoreRisk({
      kind: spec.riskKind,
      environment: ctx.environment ?? guessEnvironment(proposal.target.namespace ?? ''),
      podsDisrupted: 0,
      reversible: 'yes',
      recentFailures: 0,
    }),
    executable: false,
    observed: {},
    createdAt: now.toISOString(),
  };
}

/**
 * The catalog: one line per action. `planMitigation` is what the incident flow calls with a triage
 * proposal; `executeMitigation` / `verifyMitigation` dispatch to the plan's action.
 */
import type { MitigationProposal } from '../triage/types.js';
import { deletePod } from './catalog/delete-pod.js';
import { isPendingAction, planPendingAction } from './catalog/pending.js';
import { rolloutRestart } from './catalog/rollout-restart.js';
import { rolloutUndo } from './catalog/rollout-undo.js';
import { scale } from './catalog/scale.js';
import { setImage } from './catalog/set-image.js';
import { setResources } from './catalog/set-resources.js';
import { suspendCronJob } from './catalog/suspend-cronjob.js';
import type { ApprovedExecutor } from './executor.js';
import { InvalidProposalError } from './plan.js';
import type { TargetReader } from './reader.js';
import type { ActionDefinition, ExecutionResult, Plan, PlanContext, VerificationResult, VerifyOptions } from './types.js';

export const ACTIONS = {
  scale,
  rollout_restart: rolloutRestart,
  rollout_undo: rolloutUndo,
  set_image: setImage,
  set_resources: setResources,
  suspend_cronjob: suspendCronJob,
  delete_pod: deletePod,
} as const satisfies Record<string, ActionDefinition>;

export type ActionName = keyof typeof ACTIONS;

export function getAction(name: string): ActionDefinition | undefined {
  return Object.hasOwn(ACTIONS, name) ? (ACTIONS[name as ActionName] as unknown as ActionDefinition) : undefined;
}

/** Builds the Plan for a proposal (reader reads, executor dry-runs). Throws InvalidProposalError for unknown actions or bad params. */
export async function planMitigation(ctx: PlanContext, proposal: MitigationProposal): Promise<Plan> {
  if (isPendingAction(proposal.action)) return planPendingAction(ctx, { ...proposal, action: proposal.action });
  const action = getAction(proposal.action);
  if (!action) throw new InvalidProposalError(`unknown action ${proposal.action}`);
  return action.plan(ctx, proposal);
}

export async function executeMitigation(executor: ApprovedExecutor, plan: Plan): Promise<ExecutionResult> {
  const action = getAction(plan.action);
  if (!action) return { status: 'refused', message: `${plan.action} cannot be executed by Vigil yet` };
  return action.execute(executor, plan);
}

export async function verifyMitigation(reader: TargetReader, plan: Plan, options?: VerifyOptions): Promise<VerificationResult> {
  const action = getAction(plan.action);
  if (!action) return { ok: false, observed: {}, checks: [{ description: `${plan.action} has no verification`, ok: false, observed: 'not executable' }], elapsedMs: 0 };
  return action.verify(reader, plan, options);
}

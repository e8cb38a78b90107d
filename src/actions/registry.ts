/**
 * The catalog: one line per action. `planMitigation` is what the incident flow calls with a triage
 * proposal; `executeMitigation` / `verifyMitigation` dispatch to the plan's action.
 */
import type { MitigationProposal } from '../triage/types.js';
import { deletePod } from './catalog/delete-pod.js';
import { executeFlipFlag, planFlipFlag } from './catalog/flip-flag.js';
import { restoreConfig } from './catalog/restore-config.js';
import { restoreObject } from './catalog/restore-object.js';
import { cordonNode } from './catalog/cordon-node.js';
import { pauseChaos } from './catalog/pause-chaos.js';
import { deleteNetworkPolicy } from './catalog/delete-network-policy.js';
import { executeRevertPr, planRevertPr } from './catalog/revert-pr.js';
import { rolloutRestart } from './catalog/rollout-restart.js';
import { rolloutUndo } from './catalog/rollout-undo.js';
import { scale } from './catalog/scale.js';
import { setImage } from './catalog/set-image.js';
import { setResources } from './catalog/set-resources.js';
import { suspendCronJob } from './catalog/suspend-cronjob.js';
import type { ApprovedExecutor } from './executor.js';
import type { ExternalProviders } from './external/types.js';
import { verifyPlan } from './verify.js';
import { InvalidProposalError } from './plan.js';
import type { TargetReader } from './reader.js';
import type { ActionDefinition, Approval, ExecutionResult, Plan, PlanContext, VerificationResult, VerifyOptions, WriteGuard } from './types.js';

export const ACTIONS = {
  scale,
  rollout_restart: rolloutRestart,
  rollout_undo: rolloutUndo,
  set_image: setImage,
  set_resources: setResources,
  suspend_cronjob: suspendCronJob,
  delete_pod: deletePod,
  restore_config: restoreConfig,
  restore_object: restoreObject,
  cordon_node: cordonNode,
  pause_chaos: pauseChaos,
  delete_network_policy: deleteNetworkPolicy,
} as const satisfies Record<string, ActionDefinition>;

export type ActionName = keyof typeof ACTIONS;

/**
 * Actions whose writes go to another provider (the flag tool, GitHub) with that provider's writer
 * token instead of the Kubernetes executor identity.
 */
export const EXTERNAL_ACTIONS = {
  flip_flag: { plan: planFlipFlag, execute: executeFlipFlag },
  revert_pr: { plan: planRevertPr, execute: executeRevertPr },
} as const;

export type ExternalActionName = keyof typeof EXTERNAL_ACTIONS;

export function isExternalAction(name: string): name is ExternalActionName {
  return Object.hasOwn(EXTERNAL_ACTIONS, name);
}

export function getAction(name: string): ActionDefinition | undefined {
  return Object.hasOwn(ACTIONS, name) ? (ACTIONS[name as ActionName] as unknown as ActionDefinition) : undefined;
}

/** Builds the Plan for a proposal (reader reads, executor dry-runs). Throws InvalidProposalError for unknown actions or bad params. */
export async function planMitigation(ctx: PlanContext, proposal: MitigationProposal): Promise<Plan> {
  if (isExternalAction(proposal.action)) return EXTERNAL_ACTIONS[proposal.action].plan(ctx, proposal);
  const action = getAction(proposal.action);
  if (!action) throw new InvalidProposalError(`unknown action ${proposal.action}`);
  return action.plan(ctx, proposal);
}

export async function executeMitigation(executor: ApprovedExecutor, plan: Plan, guard?: WriteGuard): Promise<ExecutionResult> {
  const action = getAction(plan.action);
  if (!action) return { status: 'refused', message: isExternalAction(plan.action) ? `${plan.action} runs through its provider, not the Kubernetes executor` : `unknown action ${plan.action}` };
  return action.execute(executor, plan, guard);
}

/** Runs an approved flag or revert plan with the provider's writer token. */
export async function executeExternalMitigation(providers: ExternalProviders, plan: Plan, approval: Approval, guard?: WriteGuard): Promise<ExecutionResult> {
  if (!isExternalAction(plan.action)) return { status: 'refused', message: `${plan.action} is a Kubernetes action` };
  const halt = await guard?.();
  if (halt) return { status: 'refused', message: `${halt}; nothing was sent` };
  return EXTERNAL_ACTIONS[plan.action].execute(providers, plan, approval);
}

export async function verifyMitigation(reader: TargetReader, plan: Plan, options?: VerifyOptions): Promise<VerificationResult> {
  if (isExternalAction(plan.action)) return verifyPlan(reader, plan, options);
  const action = getAction(plan.action);
  if (!action) return { ok: false, observed: {}, checks: [{ description: `${plan.action} has no verification`, ok: false, observed: 'not executable' }], elapsedMs: 0 };
  return action.verify(reader, plan, options);
}

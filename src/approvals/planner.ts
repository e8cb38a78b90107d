/**
 * Planning for approvals: the dry-run executor, the reader, the policy's environment and the history,
 * put together for `planMitigation`. Used when proposing and again right before executing (fresh state).
 */
import type { Logger } from 'pino';
import {
  InvalidProposalError,
  openDryRunExecutor,
  planMitigation,
  type ActionHistoryEntry,
  type DiagnosisSnapshot,
  type DryRunExecutor,
  type ExecutorCredentials,
  type ExternalProviders,
  type Plan,
  type TargetReader,
} from '../actions/index.js';
import type { Clock } from '../incidents/clock.js';
import type { Policy } from '../policy/index.js';
import type { Redactor } from '../redact/index.js';
import type { MitigationProposal } from '../triage/types.js';
import { riskEnvironment } from './policy-input.js';
import type { StoredPlan } from './types.js';

export interface PlannerDeps {
  reader: TargetReader;
  executor: ExecutorCredentials;
  policy: Policy;
  clock: Clock;
  redactor: Redactor;
  log: Logger;
  /** Verification window written into the plan's criteria (default: the catalog's 5 minutes). */
  withinSeconds?: number;
  /** The flag provider and GitHub writer, for `flip_flag` and `revert_pr`. */
  providers?: ExternalProviders;
}

export type PlanOutcome = { kind: 'planned'; plan: Plan } | { kind: 'invalid'; reason: string };

export async function planProposal(
  deps: PlannerDeps,
  incidentId: string,
  proposal: MitigationProposal,
  diagnosis: DiagnosisSnapshot | undefined,
  history: ActionHistoryEntry[],
): Promise<PlanOutcome> {
  let executor: DryRunExecutor | undefined;
  try {
    // Split mode's investigator has no executor at all: the dry run is the executor process's to make.
    if (deps.executor.mode !== 'none') executor = await openDryRunExecutor(deps.executor, incidentId);
  } catch (err) {
    // Without the executor the dry run is skipped and the plan is not executable: the card says so.
    deps.log.warn({ err: String(err), incidentId }, 'could not open the executor identity for the dry run');
  }
  try {
    const environment = riskEnvironment(deps.policy, proposal.target.namespace ?? '');
    const plan = await planMitigation(
      {
        incidentId,
        reader: deps.reader,
        ...(executor ? { executor } : {}),
        ...(diagnosis ? { diagnosis } : {}),
        ...(environment ? { environment } : {}),
        history,
        ...(deps.providers ? { providers: deps.providers } : {}),
        ...(deps.withinSeconds !== undefined ? { withinSeconds: deps.withinSeconds } : {}),
        redactor: deps.redactor,
        now: () => deps.clock.now(),
      },
      proposal,
    );
    return { kind: 'planned', plan };
  } catch (err) {
    if (err instanceof InvalidProposalError) return { kind: 'invalid', reason: err.message };
    throw err;
  }
}

/** What is stored and shown: no writes (they may carry secrets), redacted. */
export function storablePlan(plan: Plan, diagnosis: DiagnosisSnapshot | undefined, redactor: Redactor): StoredPlan {
  const { writes: _writes, ...rest } = plan;
  return redactor.redactValue({ ...rest, ...(diagnosis ? { diagnosis } : {}) });
}

/**
 * Split mode's investigator plans without the executor: nothing failed, only the access checks and the
 * server-side dry run are left for the executor process, which plans again as itself before any card.
 */
export function awaitsExecutor(plan: Plan): boolean {
  return plan.dryRun.status === 'skipped' && plan.preChecks.every((c) => c.status !== 'fail') && plan.writes.length > 0;
}

/** Why a plan cannot run, for the card and the thread. */
export function notExecutableReason(plan: Plan): string {
  const failed = plan.preChecks.filter((c) => c.status === 'fail').map((c) => `${c.name}: ${c.detail}`);
  if (plan.dryRun.status !== 'accepted' && plan.dryRun.status !== 'unavailable') failed.push(`dry run ${plan.dryRun.status}: ${plan.dryRun.message}`);
  return `cannot run: ${failed.join('; ') || 'the plan is not executable'}`;
}

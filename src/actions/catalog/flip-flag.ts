/**
 * `flip_flag`: turn a feature flag's targeting on or off through the flag provider (LaunchDarkly), the
 * fastest undo of a flag flip gone wrong. Plan: read the flag (reader token), check it is the diagnosed
 * flag and still in the state the diagnosis saw, ask who the writer token is, and dry-run the patch.
 * Execute: the same patch for real, conditional on the flag not having moved since (a JSON-patch test).
 */
import { z } from 'zod';
import type { MitigationProposal } from '../../triage/types.js';
import { InvalidProposalError } from '../plan.js';
import { guessEnvironment } from '../risk.js';
import { changeAnnotation } from '../stamp.js';
import { diagnosisFact, errorText, externalPlan, parseParams } from '../external/plan.js';
import type { ExternalProviders, ProviderWrite } from '../external/types.js';
import type { Approval, ExecutionResult, Plan, PlanContext, PreCheck } from '../types.js';

export const flipFlagParams = z.object({
  flag: z.string().min(1).max(200).describe('Flag key in the flag tool'),
  to: z.string().min(1).describe('The targeting state to set: "on" or "off" (also true/false)'),
  environment: z.string().min(1).optional().describe('Flag environment; default the provider setting'),
});

const ON = new Set(['on', 'true', 'enabled', '1']);
const OFF = new Set(['off', 'false', 'disabled', '0']);

function targetingOf(value: string): boolean {
  const v = value.trim().toLowerCase();
  if (ON.has(v)) return true;
  if (OFF.has(v)) return false;
  throw new InvalidProposalError(`flip_flag turns a flag's targeting on or off; "${value}" is a variation, which must be changed by hand in the flag tool`);
}

const word = (on: boolean) => (on ? 'on' : 'off');

export async function planFlipFlag(ctx: PlanContext, proposal: MitigationProposal): Promise<Plan> {
  const p = parseParams('flip_flag', flipFlagParams, proposal);
  const to = targetingOf(p.to);
  const provider = ctx.providers?.flags;
  const environment = p.environment ?? provider?.defaultEnvironment ?? 'production';
  const target = { kind: 'FeatureFlag' as const, namespace: proposal.target.namespace ?? '', name: p.flag };
  const title = `turn flag ${p.flag} ${word(to)} in ${environment}`;
  const base = {
    action: 'flip_flag' as const,
    title,
    command: provider ? `${provider.name}: turn ${p.flag} ${word(to)} in ${environment}` : proposal.command,
    target,
    params: { ...p, environment },
    riskKind: 'flip_flag' as const,
    withMetrics: true,
  };
  if (!provider) {
    return externalPlan(ctx, proposal, {
      ...base,
      changes: [{ path: `${p.flag}.${environment}.on`, before: '?', after: to }],
      preChecks: [{ name: 'provider available', status: 'fail', detail: `no flag provider is configured (LAUNCHDARKLY_* settings): do it by hand (${proposal.command})` }],
      dryRun: { status: 'skipped', message: 'no flag provider configured' },
      successCriteria: [],
    });
  }

  const checks: PreCheck[] = [];
  // One LaunchDarkly environment per Vigil (LAUNCHDARKLY_ENVIRONMENT), and it must be the incident's: a
  // staging incident never flips production's flag, whatever environment a proposal names.
  const incidentEnv = ctx.environment ?? guessEnvironment(target.namespace);
  const flagEnv = guessEnvironment(environment);
  if (environment !== provider.defaultEnvironment) {
    checks.push({ name: 'flag environment is the incident’s', status: 'fail', detail: `Vigil changes flags only in ${provider.name} environment ${provider.defaultEnvironment} (LAUNCHDARKLY_ENVIRONMENT); ${environment} must be changed by hand` });
  } else if (incidentEnv !== 'unknown' && flagEnv !== 'unknown' && incidentEnv !== flagEnv) {
    checks.push({ name: 'flag environment is the incident’s', status: 'fail', detail: `the incident is in ${incidentEnv} (namespace ${target.namespace}) but ${provider.name} environment ${environment} is ${flagEnv}` });
  }
  let state;
  try {
    state = await provider.read(p.flag, environment);
  } catch (err) {
    checks.push({ name: 'target exists', status: 'fail', detail: `could not read the flag: ${errorText(err)}` });
  }
  if (!checks.length && !state) checks.push({ name: 'target exists', status: 'fail', detail: `${provider.name} has no flag ${p.flag}` });
  if (state) {
    checks.push({ name: 'target exists', status: state.archived ? 'fail' : 'pass', detail: `flag ${p.flag} in ${environment}${state.version !== undefined ? ` (version ${state.version})` : ''}${state.archived ? ' is archived' : ''}` });
    checks.push(diagnosisFact(ctx, 'flag', p.flag, `flag ${p.flag}`));
    const seenAfter = ctx.diagnosis?.facts?.['after'];
    let expectedNow: boolean | undefined;
    try {
      expectedNow = seenAfter !== undefined ? targetingOf(String(seenAfter)) : undefined;
    } catch {
      expectedNow = undefined;
    }
    checks.push(
      state.on === to
        ? { name: 'current state is as expected', status: 'fail', detail: `targeting is already ${word(to)}: nothing to change` }
        : expectedNow !== undefined && expectedNow !== state.on
          ? { name: 'current state is as expected', status: 'fail', detail: `the diagnosis saw it ${word(expectedNow)}, it is ${word(state.on)} now: someone changed it since` }
          : { name: 'current state is as expected', status: 'pass', detail: `targeting is ${word(state.on)}${state.lastModified ? ` since ${state.lastModified}` : ''}` },
    );
  }
  let identity: string | undefined;
  try {
    identity = await provider.writerIdentity();
    checks.push({ name: 'executor may change the flag', status: 'pass', detail: `writes as ${identity}, not the reader token` });
  } catch (err) {
    checks.push({ name: 'executor may change the flag', status: 'fail', detail: errorText(err) });
  }

  const from = state?.on ?? !to;
  const failed = checks.find((c) => c.status === 'fail');
  let dryRun: Plan['dryRun'] = { status: 'skipped', message: failed ? `a pre-check failed (${failed.name})` : state ? 'the writer identity is unknown' : 'flag not found' };
  if (state && identity && !failed) {
    const w = await provider
      .setTargeting(p.flag, environment, { on: to, expectOn: from, comment: `Vigil dry run for ${changeAnnotation(ctx.incidentId)}`, dryRun: true })
      .catch((err: unknown): ProviderWrite => ({ request: `PATCH flag ${p.flag}`, dryRun: true, status: 'rejected', message: errorText(err) }));
    dryRun = w.status === 'ok' ? { status: 'accepted', identity, requests: [w.request] } : { status: 'rejected', identity, requests: [w.request], ...(w.code ? { code: w.code } : {}), message: w.message ?? 'rejected' };
  }
  const within = ctx.withinSeconds ?? 300;
  return externalPlan(ctx, proposal, {
    ...base,
    changes: [{ path: `${p.flag}.${environment}.on`, before: from, after: to }],
    preChecks: checks,
    dryRun,
    successCriteria: [{ kind: 'flag_state', flag: p.flag, environment, on: to, description: `${p.flag} targeting ${word(to)} in ${environment}`, withinSeconds: within }],
    rollback: {
      action: 'flip_flag',
      target: proposal.target,
      params: { flag: p.flag, to: word(from), environment },
      command: `${provider.name}: turn ${p.flag} ${word(from)} in ${environment}`,
      rationale: `restores ${p.flag} to ${word(from)}, as it was before Vigil's change`,
    },
    external: { kind: 'flag', provider: provider.name, flag: p.flag, environment, from, to, ...(state?.version !== undefined ? { version: state.version } : {}), ...(state?.url ? { url: state.url } : {}) },
  });
}

export async function executeFlipFlag(providers: ExternalProviders, plan: Plan, approval: Approval): Promise<ExecutionResult> {
  const provider = providers.flags;
  const change = plan.external;
  if (!provider || change?.kind !== 'flag') return { status: 'refused', message: 'no flag provider is configured' };
  const annotation = changeAnnotation(plan.incidentId, approval);
  const identity = { mode: 'api-token' as const, user: await provider.writerIdentity() };
  const write = await provider.setTargeting(change.flag, change.environment, { on: change.to, expectOn: change.from, comment: `Vigil: ${annotation}`, dryRun: false });
  return write.status === 'ok'
    ? { status: 'applied', identity, annotation, writes: [write] }
    : { status: 'rejected', identity, annotation, writes: [write], message: write.message ?? 'rejected' };
}

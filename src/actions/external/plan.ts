/**
 * The plan steps shared by the flag and revert actions: the diagnosis check, the caller's metric
 * criteria, the risk score, and the executable rule. Mirrors plan.ts for Kubernetes; kept apart because
 * these targets are not API-server objects (no managedFields, uid or SelfSubjectAccessReview).
 */
import type { MitigationProposal } from '../../triage/types.js';
import type { z } from 'zod';
import { InvalidProposalError, windowOf } from '../plan.js';
import { guessEnvironment, scoreRisk, type RiskKind } from '../risk.js';
import type { DryRunResult, FieldChange, ObjectRef, Plan, PlanContext, PreCheck, SuccessCriterion } from '../types.js';
import type { ExternalChange } from './types.js';

export function parseParams<P extends z.ZodType>(action: string, schema: P, proposal: MitigationProposal): z.infer<P> {
  const parsed = schema.safeParse(proposal.params);
  if (!parsed.success) throw new InvalidProposalError(`invalid parameters for ${action}: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'params'}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

const DAY_MS = 24 * 3600 * 1000;

export interface ExternalDraft {
  action: 'flip_flag' | 'revert_pr';
  title: string;
  command: string;
  target: ObjectRef;
  params: Record<string, unknown>;
  changes: FieldChange[];
  preChecks: PreCheck[];
  dryRun: DryRunResult;
  successCriteria: SuccessCriterion[];
  /** Metric criteria apply only when the change takes effect by itself (a flag does; a revert PR waits for a merge). */
  withMetrics: boolean;
  rollback?: MitigationProposal;
  rollbackNote?: string;
  riskKind: RiskKind;
  external?: ExternalChange;
}

/** The full Plan from an action's draft; executable when no pre-check fails and the provider accepted (or has no) dry run. */
export function externalPlan(ctx: PlanContext, proposal: MitigationProposal, d: ExternalDraft): Plan {
  const now = ctx.now?.() ?? new Date();
  const within = windowOf(ctx);
  const metrics: SuccessCriterion[] = d.withMetrics ? (ctx.metricCriteria ?? []).map((m) => ({ kind: 'metric', ...m, withinSeconds: within })) : [];
  const recentFailures = (ctx.history ?? []).filter(
    (h) => h.action === d.action && h.target.name === d.target.name && (h.target.namespace ?? '') === d.target.namespace && h.outcome !== 'succeeded' && now.getTime() - h.at.getTime() <= DAY_MS,
  ).length;
  const dryOk = d.dryRun.status === 'accepted' || d.dryRun.status === 'unavailable';
  return {
    action: d.action,
    title: d.title,
    command: d.command,
    incidentId: ctx.incidentId,
    target: d.target,
    params: d.params,
    proposal,
    changes: d.changes,
    writes: [],
    preChecks: d.preChecks,
    dryRun: d.dryRun,
    successCriteria: [...d.successCriteria, ...metrics],
    ...(d.rollback ? { rollback: d.rollback } : {}),
    ...(d.rollbackNote ? { rollbackNote: d.rollbackNote } : {}),
    risk: scoreRisk({ kind: d.riskKind, environment: ctx.environment ?? guessEnvironment(d.target.namespace), podsDisrupted: 0, reversible: 'yes', recentFailures }),
    executable: d.preChecks.length > 0 && d.preChecks.every((c) => c.status !== 'fail') && dryOk,
    observed: {},
    ...(d.external ? { external: d.external } : {}),
    createdAt: now.toISOString(),
  };
}

/** `the diagnosis names this flag / pull request` from the finding's facts. */
export function diagnosisFact(ctx: PlanContext, fact: string, expected: string | number, what: string): PreCheck {
  const name = 'it is the one in the diagnosis';
  const seen = ctx.diagnosis?.facts?.[fact];
  if (seen === undefined) return { name, status: 'warn', detail: `the diagnosis names no ${fact}; ${what} was named by the proposal` };
  return String(seen) === String(expected)
    ? { name, status: 'pass', detail: `${what} is the one the diagnosis names` }
    : { name, status: 'fail', detail: `the diagnosis is about ${fact} ${String(seen)}, not ${String(expected)}` };
}

export const errorText = (err: unknown): string => (err instanceof Error ? err.message.split('\n')[0]! : String(err));

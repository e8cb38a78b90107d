/**
 * The common plan steps around an action's draft: the pre-checks every action has (target exists, it
 * is the one in the diagnosis, the executor may do it), the server-side dry run through the executor,
 * the caller's metric criteria, and the risk score.
 */
import type { ComponentRef } from '../evidence/types.js';
import type { MitigationProposal } from '../triage/types.js';
import { diffObjects } from './diff.js';
import { KIND_INFO, isObjectKind, type ObjectKind } from './objects/kinds.js';
import { guessEnvironment, scoreRisk } from './risk.js';
import type { ActionDefinition, ActionDraft, DryRunResult, ObjectRef, Plan, PlanContext, PreCheck, SuccessCriterion, TargetKind } from './types.js';

export class InvalidProposalError extends Error {
  override readonly name = 'InvalidProposalError';
}

const KINDS: TargetKind[] = ['Deployment', 'StatefulSet', 'CronJob', 'Pod', 'ConfigMap', ...(Object.keys(KIND_INFO) as ObjectKind[])];

/** Cluster-scoped kinds (a Node): the ObjectRef's namespace is the incident's, which the policy judges by, not the object's. */
const clusterScoped = (kind: string): boolean => isObjectKind(kind) && !KIND_INFO[kind].namespaced;

/** `deployment`/`Deployment` + namespace → ObjectRef, if the action accepts that kind. */
export function toObjectRef(target: ComponentRef, allowed: TargetKind[]): ObjectRef {
  const kind = KINDS.find((k) => k.toLowerCase() === target.kind.toLowerCase());
  if (!kind || !allowed.includes(kind)) throw new InvalidProposalError(`target kind ${target.kind} is not one of ${allowed.join(', ')}`);
  if (!target.namespace) throw new InvalidProposalError(`target ${target.kind}/${target.name} has no namespace`);
  return { kind, namespace: target.namespace, name: target.name };
}

/** Default verification window (5 minutes) unless the caller set one. */
export function windowOf(ctx: PlanContext): number {
  return ctx.withinSeconds ?? 300;
}

const same = (a: ComponentRef, b: ComponentRef): boolean =>
  a.kind.toLowerCase() === b.kind.toLowerCase() && (clusterScoped(catalogKind(a.kind)) || (a.namespace ?? '') === (b.namespace ?? '')) && a.name === b.name;
/** The catalog's spelling of a kind (`node` → `Node`). */
const catalogKind = (kind: string): string => KINDS.find((k) => k.toLowerCase() === kind.toLowerCase()) ?? kind;
const label = (c: ComponentRef): string => `${c.kind.toLowerCase()}/${c.name}${c.namespace ? ` in ${c.namespace}` : ''}`;

async function diagnosisCheck(ctx: PlanContext, draft: ActionDraft, proposal: MitigationProposal): Promise<PreCheck> {
  const name = 'it is the one in the diagnosis';
  const diagnosed = ctx.diagnosis?.component;
  if (!same(proposal.target, draft.target)) return { name, status: 'fail', detail: `the plan targets ${label(draft.target)}, the proposal ${label(proposal.target)}` };
  if (!diagnosed) return { name, status: 'warn', detail: `no diagnosed component to compare with; target named by the proposal: ${label(draft.target)}` };
  if (same(diagnosed, draft.target)) return { name, status: 'pass', detail: `${label(draft.target)} is the diagnosed component` };
  // A pod of the diagnosed workload: Pod → ReplicaSet → Deployment (or Pod → StatefulSet).
  const owner = draft.before?.metadata?.ownerReferences?.find((o) => o.controller);
  if (draft.target.kind === 'Pod' && owner) {
    let workload: ComponentRef = { kind: owner.kind, namespace: draft.target.namespace, name: owner.name };
    if (owner.kind === 'ReplicaSet') {
      const rs = await ctx.reader.getReplicaSet(draft.target.namespace, owner.name);
      const top = rs?.metadata?.ownerReferences?.find((o) => o.controller);
      if (top) workload = { kind: top.kind, namespace: draft.target.namespace, name: top.name };
    }
    if (same(workload, diagnosed)) return { name, status: 'pass', detail: `pod ${draft.target.name} belongs to the diagnosed ${label(diagnosed)}` };
  }
  // A node that runs (or evicted) pods of the diagnosed workload (node-pressure localises to the workload it hurts).
  if (draft.target.kind === 'Node' && diagnosed.namespace) {
    const pods = await ctx.reader.podsOnNode(draft.target.name).catch(() => undefined);
    for (const pod of (pods?.pods ?? []).filter((p) => p.metadata?.namespace === diagnosed.namespace)) {
      const o = pod.metadata?.ownerReferences?.find((r) => r.controller);
      if (!o) continue;
      let w: ComponentRef = { kind: o.kind, namespace: diagnosed.namespace, name: o.name };
      if (o.kind === 'ReplicaSet') {
        const top = (await ctx.reader.getReplicaSet(diagnosed.namespace, o.name))?.metadata?.ownerReferences?.find((r) => r.controller);
        if (top) w = { kind: top.kind, namespace: diagnosed.namespace, name: top.name };
      }
      if (same(w, diagnosed)) return { name, status: 'pass', detail: `${label(draft.target)} runs (or evicted) pod ${pod.metadata?.name} of the diagnosed ${label(diagnosed)}` };
    }
  }
  // The HPA that scales the diagnosed workload (hpa-at-max localises to the workload it pins).
  const scaled = draft.before?.spec?.['scaleTargetRef'] as { kind?: string; name?: string } | undefined;
  if (draft.target.kind === 'HorizontalPodAutoscaler' && scaled?.kind && scaled.name && same({ kind: scaled.kind, namespace: draft.target.namespace, name: scaled.name }, diagnosed))
    return { name, status: 'pass', detail: `${label(draft.target)} scales the diagnosed ${label(diagnosed)}` };
  return { name, status: 'fail', detail: `the diagnosis is about ${label(diagnosed)}, not ${label(draft.target)}` };
}

async function accessChecks(ctx: PlanContext, draft: ActionDraft): Promise<PreCheck[]> {
  if (!ctx.executor) return [];
  const out: PreCheck[] = [];
  for (const a of draft.access) {
    const what = `${a.verb} ${a.resource}${a.subresource ? `/${a.subresource}` : ''} ${a.namespace ? `in ${a.namespace}` : 'cluster-wide'}`;
    try {
      const allowed = await ctx.executor.canI(a);
      out.push({ name: `executor may ${what}`, status: allowed ? 'pass' : 'fail', detail: `${ctx.executor.identity.user} ${allowed ? 'may' : 'may not'} ${what}` });
    } catch (err) {
      out.push({ name: `executor may ${what}`, status: 'warn', detail: `access review failed: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}` });
    }
  }
  return out;
}

async function dryRun(ctx: PlanContext, draft: ActionDraft): Promise<DryRunResult> {
  if (!ctx.executor) return { status: 'skipped', message: 'no executor identity configured' };
  if (draft.writes.length === 0) return { status: 'skipped', message: draft.before ? 'nothing to change' : 'target not found' };
  const requests: string[] = [];
  for (const w of draft.writes) {
    for (const outcome of await ctx.executor.dryRun(w)) {
      requests.push(outcome.request);
      if (outcome.status === 'rejected')
        return {
          status: 'rejected',
          identity: ctx.executor.identity.user,
          requests,
          ...(outcome.code !== undefined ? { code: outcome.code } : {}),
          ...(outcome.reason ? { reason: outcome.reason } : {}),
          message: outcome.message ?? 'rejected',
        };
    }
  }
  return { status: 'accepted', identity: ctx.executor.identity.user, requests };
}

const DAY_MS = 24 * 3600 * 1000;

/** Runs an action's draft and the common steps; the result is everything the approval card shows. */
export async function buildPlan(action: Pick<ActionDefinition, 'name' | 'params' | 'draft'>, ctx: PlanContext, proposal: MitigationProposal): Promise<Plan> {
  if (proposal.action !== action.name) throw new InvalidProposalError(`proposal is for ${proposal.action}, not ${action.name}`);
  const parsed = action.params.safeParse(proposal.params);
  if (!parsed.success) throw new InvalidProposalError(`invalid parameters for ${action.name}: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'params'}: ${i.message}`).join('; ')}`);
  const now = ctx.now?.() ?? new Date();
  const draft = await action.draft(ctx, proposal.target, parsed.data);

  const preChecks: PreCheck[] = [
    draft.absent
      ? draft.before
        ? { name: 'target does not exist', status: 'fail', detail: `${label(draft.target)} exists (uid ${draft.before.metadata?.uid ?? '?'}): nothing to re-create` }
        : { name: 'target does not exist', status: 'pass', detail: `${label(draft.target)} is not there: it can be created` }
      : draft.before
        ? { name: 'target exists', status: 'pass', detail: `${label(draft.target)} (uid ${draft.before.metadata?.uid ?? '?'}, resourceVersion ${draft.before.metadata?.resourceVersion ?? '?'})` }
        : { name: 'target exists', status: 'fail', detail: `${label(draft.target)} was not found` },
  ];
  if (draft.absent ? !draft.before : draft.before) preChecks.push(await diagnosisCheck(ctx, draft, proposal), ...draft.checks, ...(await accessChecks(ctx, draft)));
  const dry = await dryRun(ctx, draft);

  const within = windowOf(ctx);
  const metricCriteria: SuccessCriterion[] = (ctx.metricCriteria ?? []).map((m) => ({ kind: 'metric', ...m, withinSeconds: within }));
  const recentFailures = (ctx.history ?? []).filter(
    (h) => h.action === action.name && same(h.target, draft.target) && h.outcome !== 'succeeded' && now.getTime() - h.at.getTime() <= DAY_MS,
  ).length;
  const risk = scoreRisk({
    kind: draft.riskKind,
    environment: ctx.environment ?? guessEnvironment(draft.target.namespace),
    podsDisrupted: draft.podsDisrupted,
    ...(draft.blastRadius ? { blastRadius: draft.blastRadius } : {}),
    reversible: draft.reversible,
    recentFailures,
  });

  const m = draft.before?.metadata;
  return {
    action: action.name,
    title: draft.title,
    command: draft.command,
    incidentId: ctx.incidentId,
    target: draft.target,
    params: parsed.data as Record<string, unknown>,
    proposal,
    changes: draft.changes ?? diffObjects(draft.before, draft.after ?? draft.before),
    writes: draft.writes,
    preChecks,
    dryRun: dry,
    successCriteria: [...draft.successCriteria, ...metricCriteria],
    ...(draft.rollback ? { rollback: draft.rollback } : {}),
    ...(draft.rollbackNote ? { rollbackNote: draft.rollbackNote } : {}),
    ...(draft.content ? { content: draft.content } : {}),
    ...(draft.notes?.length ? { notes: draft.notes } : {}),
    ...(draft.followUps?.length ? { followUps: draft.followUps } : {}),
    risk,
    executable: preChecks.every((c) => c.status !== 'fail') && dry.status === 'accepted',
    observed: {
      ...(m?.uid ? { uid: m.uid } : {}),
      ...(m?.resourceVersion ? { resourceVersion: m.resourceVersion } : {}),
      ...(m?.generation !== undefined ? { generation: m.generation } : {}),
    },
    createdAt: now.toISOString(),
  };
}

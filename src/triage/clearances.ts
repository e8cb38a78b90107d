/**
 * The look-alikes a responder checks first: every notable change near the onset (a rollout, a Helm
 * upgrade, a config edit, a flag flip, a policy edit) that is not the origin's own change is raised as a
 * hypothesis and ruled out with what clears it — no path from what the alert names, a change that came
 * after the symptoms, a workload that served at baseline after it, or simply the origin found elsewhere.
 * So the board says why the deploy an hour ago is not the cause instead of leaving it unmentioned. Pure.
 */
import type { RankedChange } from '../changes/types.js';
import type { ComponentRef, Evidence } from '../evidence/types.js';
import { nodeId } from '../topology/graph.js';
import { dependsOn } from '../topology/walk.js';
import { metricSymptoms } from './analyzers/deploy-regression.js';
import type { TriageInput } from './analyzer.js';
import { clockTime, humanDuration } from './time.js';
import type { Finding } from './types.js';
import type { ReconcileContext } from './reconcile.js';

const LOOKBACK_MS = 3 * 3600_000;
const AFTER_MS = 5 * 60_000;
const MAX_CLEARED = 8;

const FAMILY: Record<string, string> = {
  rollout: 'deploy-regression',
  image: 'deploy-regression',
  deploy: 'deploy-regression',
  pr_merged: 'deploy-regression',
  helm_upgrade: 'deploy-regression',
  helm_rollback: 'deploy-regression',
  helm_install: 'deploy-regression',
  announcement: 'deploy-regression',
  config: 'config-change',
  secret: 'config-change',
  edit: 'config-change',
  flag: 'flag-flip',
  network_policy: 'network-policy',
  resources: 'oom-killed',
  scale: 'scaled-to-zero',
  hpa: 'hpa-at-max',
};

/** The family a change to an object of this kind would be a cause of (when its change kind says no more). */
const FAMILY_OF_KIND: Record<string, string> = {
  VirtualService: 'mesh-misconfig',
  DestinationRule: 'mesh-misconfig',
  ServiceEntry: 'mesh-misconfig',
  PeerAuthentication: 'mesh-misconfig',
  AuthorizationPolicy: 'mesh-misconfig',
  Gateway: 'mesh-misconfig',
  Sidecar: 'mesh-misconfig',
  Certificate: 'tls-certificate',
  Ingress: 'ingress-misroute',
  HTTPRoute: 'ingress-misroute',
  GRPCRoute: 'ingress-misroute',
  KafkaTopic: 'config-change',
  Service: 'endpoints-mismatch',
  ResourceQuota: 'quota-exceeded',
  ScaledObject: 'hpa-at-max',
  Role: 'rbac-denied',
  RoleBinding: 'rbac-denied',
};

export function clearChanges(changes: RankedChange[], origins: Finding[], existing: Finding[], ctx: ReconcileContext): Finding[] {
  const t = ctx.topology;
  const onset = ctx.onset.getTime();
  const originTimes = origins.map((o) => originTime(o)).filter((d): d is Date => !!d);
  const firstOrigin = originTimes.length ? new Date(Math.min(...originTimes.map((d) => d.getTime()))) : undefined;
  const out: Finding[] = [];
  const seen = new Set<string>();
  for (const c of [...changes].sort((a, b) => b.score - a.score || b.at.getTime() - a.at.getTime())) {
    if (out.length >= MAX_CLEARED) break;
    const family = (c.kind === 'edit' ? FAMILY_OF_KIND[c.target.kind] : undefined) ?? FAMILY[c.kind];
    if (!family || c.at.getTime() < onset - LOOKBACK_MS || c.at.getTime() > onset + AFTER_MS) continue;
    const component = componentOf(c, ctx);
    if (!component) continue;
    const id = nodeId(component);
    const key = `cleared:${family}:${id}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (origins.some((o) => isOriginChange(o, c, component))) continue;
    if (existing.some((f) => f.component && nodeId(f.component) === id && (f.family === family || f.analyzer === 'helm-release') && (f.status === 'ruled_out' || f.status === 'unrelated'))) continue;
    // A component the alert's walk never reached has no path to the symptoms at all.
    const reached = ctx.walk.reached.has(id) || ctx.subjects.some((s) => dependsOn(t, s.ref, component)) || c.target.kind === 'FeatureFlag';
    if (!reached && !origins.length) continue;
    const input = ctx.inputs.find((i) => i.kube.target && nodeId(i.kube.target) === id);
    const served = input ? servedFine(input, c.at) : undefined;
    let why: string;
    let status: Finding['status'] = 'ruled_out';
    if (!reached) {
      why = `no path from ${ctx.subjects.map((s) => s.ref.name).slice(0, 2).join(', ') || 'the alerted component'} to ${component.kind.toLowerCase()}/${component.name}`;
      status = 'unrelated';
    } else if (firstOrigin && c.at.getTime() > firstOrigin.getTime() + 60_000) {
      why = `it came at ${clockTime(c.at)}, after the fault had begun (${clockTime(firstOrigin)})`;
    } else if (served) {
      why = served;
    } else if (origins.length) {
      why = `the cause is elsewhere: ${origins[0]!.title}`;
    } else continue;
    const evidence: Evidence = { kind: 'change', summary: `${c.summary} at ${clockTime(c.at)} (${humanDuration(Math.abs(onset - c.at.getTime()))} ${c.at.getTime() <= onset ? 'before' : 'after'} the alert)`, citation: c.citation, observedAt: c.at };
    out.push({
      key,
      analyzer: 'change-review',
      family,
      status,
      confidence: 0.05,
      title: `${c.summary}, ${humanDuration(Math.abs(onset - c.at.getTime()))} ${c.at.getTime() <= onset ? 'before' : 'after'} the alert`,
      component,
      mechanism: `${c.summary} (${c.actor}) at ${clockTime(c.at)} looks like a cause; it is not: ${why}.`,
      reason: why,
      facts: { changedAt: c.at.toISOString(), ...(c.actor ? { manager: c.actor } : {}), change: c.kind },
      supporting: [],
      refuting: [evidence, ...(origins[0]?.supporting[0] && reached ? [{ ...origins[0].supporting[0], summary: `the origin: ${origins[0].supporting[0].summary}` }] : [])],
    });
  }
  return out;
}

/** The object a change is about, as a hypothesis names it: a Helm release as its workload, a GitHub change as its service's. */
function componentOf(c: RankedChange, ctx: ReconcileContext): ComponentRef | undefined {
  const s = ctx.topology.snapshot;
  if (c.target.kind === 'HelmRelease') {
    // A write Helm made to one object names it in its citation.
    const cited = /\/(deployments|statefulsets|daemonsets)\/([^/#?]+)/.exec(c.citation.ref);
    if (cited) return { kind: cited[1] === 'deployments' ? 'Deployment' : cited[1] === 'statefulsets' ? 'StatefulSet' : 'DaemonSet', namespace: c.target.namespace, name: cited[2]! };
    const members = [...s.deployments.map((d) => ({ d, kind: 'Deployment' })), ...s.statefulSets.map((d) => ({ d, kind: 'StatefulSet' }))].filter(
      ({ d }) => d.metadata?.namespace === c.target.namespace && (d.metadata?.annotations?.['meta.helm.sh/release-name'] === c.target.name || d.metadata?.name === c.target.name),
    );
    // A release of several workloads: the ones Helm wrote at the upgrade's time, else the one named like the release.
    const written = members.filter(({ d }) => (d.metadata?.managedFields ?? []).some((e) => e.manager === 'helm' && e.time && Math.abs(new Date(e.time).getTime() - c.at.getTime()) <= 60_000));
    const w = written.length === 1 ? written[0] : members.length === 1 ? members[0] : members.find(({ d }) => d.metadata?.name === c.target.name);
    return w ? { kind: w.kind, namespace: c.target.namespace, name: w.d.metadata?.name ?? c.target.name } : undefined;
  }
  if (c.target.kind === 'Repository' || c.target.kind === 'Service') {
    const name = c.target.kind === 'Repository' ? c.target.name.split('/').pop()! : c.target.name;
    const d = s.deployments.find((x) => x.metadata?.name === name);
    return d ? { kind: 'Deployment', namespace: d.metadata?.namespace, name } : undefined;
  }
  return c.target;
}

function isOriginChange(o: Finding, c: RankedChange, component: ComponentRef): boolean {
  if (o.component && nodeId(o.component) === nodeId(component)) return true;
  if (o.mitigation?.target && nodeId(o.mitigation.target) === nodeId(component)) return true;
  const cites = new Set([...o.supporting, ...o.refuting].map((e) => e.citation.ref));
  if (cites.has(c.citation.ref)) return true;
  const at = originTime(o);
  return !!at && Math.abs(at.getTime() - c.at.getTime()) < 1000 && (o.affected ?? []).some((a) => nodeId(a) === nodeId(component));
}

function originTime(f: Finding): Date | undefined {
  const v = ['changedAt', 'deployedAt', 'dependencyStart', 'conditionSince', 'since', 'startedAt', 'symptomStart'].map((k) => f.facts?.[k]).find((x): x is string => typeof x === 'string' && /^\d{4}-/.test(x));
  return v ? new Date(v) : undefined;
}

/** "Served at baseline after it": the workload's errors and latency did not leave their baseline after the change. */
function servedFine(input: TriageInput, at: Date): string | undefined {
  const known = (input.metrics?.summaries ?? []).filter((s) => (s.id === 'error_ratio' || s.id === 'latency_p99') && s.status === 'success');
  if (!known.length) return undefined;
  const after = known.flatMap((s) => metricSymptoms(s)).filter((m) => m.start.getTime() >= at.getTime() - 60_000);
  const soon = after.filter((m) => m.start.getTime() - at.getTime() <= 15 * 60_000);
  if (soon.length) return undefined;
  const age = Math.max(0, (after[0]?.start ?? input.onset).getTime() - at.getTime());
  return `${input.kube.target?.name} served at its baseline error rate and latency for ${humanDuration(age)} after it`;
}

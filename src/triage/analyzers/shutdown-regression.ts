/**
 * `shutdown-regression` (family `deploy-regression`): a rollout that made pod shutdown unsafe, whose
 * effect waits for the next pod to go away. The new revision's template lost its `preStop` hook (the
 * sleep that keeps a pod serving while kube-proxy, the ingress controller and the load balancer drop it
 * from their endpoints) or cut `terminationGracePeriodSeconds`. The rollout itself is clean (the pods it
 * replaced were the old revision's, which still drained), so nothing breaks until the HPA scales down,
 * a node drains or the next rollout: then every removed pod closes its listener at SIGTERM while the
 * proxies still send to it — bursts of 502/503 ("connection refused", "upstream prematurely closed",
 * "reset by peer") that line up with the terminations, hours after the deploy.
 *
 * Decided from the ReplicaSets (the current revision's template against the previous one), the
 * scale-down or Killing events of the current revision's pods after the rollout, and the errors
 * starting with the first of them (the target's error ratio, else the alert's onset). Localised to the
 * workload; facts `revision`, `previousRevision`, `deployedAt`, `metric`, `removed` (what went: preStop,
 * grace period). Mitigation: `rollout_undo` to the previous revision (which drained correctly); the
 * lasting fix is the preStop/grace setting in the chart values. Scaling up only postpones the next burst.
 */
import type { V1Container, V1ReplicaSet } from '@kubernetes/client-node';
import type { Evidence } from '../../evidence/types.js';
import type { Analyzer, TriageInput } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime, humanDuration } from '../time.js';
import type { Finding } from '../types.js';
import { metricSymptoms, targetScope, targetSymptoms } from './deploy-regression.js';
import { revisions, undoProposal } from './crash-loop.js';
import { metricEvidence } from '../../evidence/prometheus/evidence.js';

/** A rollout this old can still be the cause: its effect waits for the first scale-down. */
const LOOKBACK_MS = 24 * 3600_000;
/** A pod removal this long before the errors begin can be what set them off. */
const BURST_LEAD_MS = 3 * 60_000;

/** What the new template dropped that made shutdown safe. */
function unsafeShutdown(prev: V1ReplicaSet, cur: V1ReplicaSet): { removed: string[]; detail: string[] } | undefined {
  const prevSpec = prev.spec?.template?.spec;
  const curSpec = cur.spec?.template?.spec;
  if (!prevSpec || !curSpec) return undefined;
  const removed: string[] = [];
  const detail: string[] = [];
  const serving = (c: V1Container) => (c.ports ?? []).length > 0;
  for (const before of (prevSpec.containers ?? []).filter(serving)) {
    const after = (curSpec.containers ?? []).find((c) => c.name === before.name);
    if (!after) continue;
    const hook = before.lifecycle?.preStop;
    if (hook && !after.lifecycle?.preStop) {
      const what = hook.exec?.command?.join(' ') ?? (hook.httpGet ? `GET ${hook.httpGet.path ?? '/'}` : hook.sleep ? `sleep ${hook.sleep.seconds}` : 'a hook');
      removed.push('preStop');
      detail.push(`container ${before.name} lost its preStop hook (${what})`);
    }
  }
  const g0 = prevSpec.terminationGracePeriodSeconds ?? 30;
  const g1 = curSpec.terminationGracePeriodSeconds ?? 30;
  // A shorter grace period alone only hurts with a hook or a slow drain; it is named, not decisive.
  if (g1 < g0) detail.push(`terminationGracePeriodSeconds ${g0} → ${g1}`);
  if (!removed.length) return undefined;
  if (g1 < g0) removed.push('terminationGracePeriodSeconds');
  return { removed, detail };
}

export const shutdownRegression: Analyzer = {
  name: 'shutdown-regression',
  analyze(input: TriageInput): Finding[] {
    const t = input.kube.target;
    if (!t || t.kind !== 'Deployment') return [];
    const onset = input.onset.getTime();
    const { current: cur, previous: prev } = revisions(input.kube);
    if (!cur || !prev) return [];
    const deployedAt = cur.replicaSet.metadata?.creationTimestamp ? new Date(cur.replicaSet.metadata.creationTimestamp) : undefined;
    if (!deployedAt || onset - deployedAt.getTime() > LOOKBACK_MS || deployedAt.getTime() > onset) return [];
    const unsafe = unsafeShutdown(prev.replicaSet, cur.replicaSet);
    if (!unsafe) return [];

    // Removals of the NEW revision's pods after its rollout finished replacing the old ones.
    const rsName = cur.replicaSet.metadata?.name ?? '';
    const removals = input.kube.events
      .filter((e) => {
        const at = e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp;
        if (!at || new Date(at).getTime() <= deployedAt.getTime() || new Date(at).getTime() > onset + 60_000) return false;
        if (e.reason === 'ScalingReplicaSet') return new RegExp(`Scaled down replica set ${rsName}\\b`).test(e.message ?? '');
        return e.reason === 'Killing' && e.involvedObject?.kind === 'Pod' && (e.involvedObject.name ?? '').startsWith(`${rsName}-`);
      })
      .map((e) => ({ e, at: new Date((e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp)!) }))
      .sort((a, b) => a.at.getTime() - b.at.getTime());
    if (!removals.length) return [];

    const symptoms = targetSymptoms(input);
    const errors = symptoms.metrics.filter((m) => m.metric === 'error_ratio').sort((a, b) => a.start.getTime() - b.start.getTime());
    const firstError = errors[0];
    const errorsStart = firstError?.start ?? input.onset;
    // The errors follow a removal, not the rollout: they began after the rollout settled, at or after a removal.
    if (errorsStart.getTime() < deployedAt.getTime() + 5 * 60_000) return [];
    if (!removals.some((r) => r.at.getTime() <= errorsStart.getTime() + BURST_LEAD_MS)) return [];

    const first = removals[0]!;
    const last = removals[removals.length - 1]!;
    const removalEvidence: Evidence[] = [first, ...(last !== first ? [last] : [])].map(({ e, at }) => ({
      kind: 'event',
      summary: `${e.reason} ${e.involvedObject?.kind?.toLowerCase()}/${e.involvedObject?.name}: "${e.message ?? ''}" at ${clockTime(at)}`,
      citation: objectCitation('Event', e.metadata?.namespace ?? t.namespace, e.metadata?.name ?? '?'),
      observedAt: at,
    }));
    const supporting: Evidence[] = [
      {
        kind: 'change',
        summary: `rollout to revision ${cur.revision} at ${clockTime(deployedAt)} (${humanDuration(onset - deployedAt.getTime())} before the alert): ${unsafe.detail.join('; ')}`,
        citation: objectCitation('ReplicaSet', t.namespace, rsName, 'spec.template.spec'),
        observedAt: deployedAt,
      },
      { kind: 'object', summary: `revision ${prev.revision} (${prev.replicaSet.metadata?.name}) still had it`, citation: objectCitation('ReplicaSet', t.namespace, prev.replicaSet.metadata?.name ?? '?', 'spec.template.spec') },
      ...removalEvidence,
      ...(firstError ? [firstError.evidence] : []),
    ];
    const removedText = unsafe.removed.includes('preStop') ? 'the preStop hook' : unsafe.removed.join(' and ');
    const cleared = lookAlikes(input, cur.revision, first.at);
    return [
      ...cleared,
      {
        key: `deploy-regression:${t.namespace}/${t.name}/shutdown`,
        analyzer: 'shutdown-regression',
        family: 'deploy-regression',
        status: 'supported',
        confidence: firstError ? 0.86 : 0.74,
        title: `${t.name} revision ${cur.revision} dropped ${removedText}: every pod removed since drops requests (${removals.length} removal${removals.length === 1 ? '' : 's'} after the rollout)`,
        component: { kind: t.kind, namespace: t.namespace, name: t.name },
        mechanism: `The rollout to revision ${cur.revision} at ${clockTime(deployedAt)} changed shutdown: ${unsafe.detail.join('; ')}. The rollout looked clean because the pods it replaced were revision ${prev.revision}'s, which still drained. Since then each pod of revision ${cur.revision} that goes away (scale-down, drain, rollout) stops listening at SIGTERM while the ingress and kube-proxy still send to it, so each removal is a burst of 502s/connection resets — the first at ${clockTime(first.at)}${firstError ? `, errors from ${clockTime(firstError.start)}` : ''}.`,
        scope: `requests to ${t.name} during every scale-down or rollout since ${clockTime(first.at)}`,
        affected: targetScope(input),
        facts: {
          revision: cur.revision,
          previousRevision: prev.revision,
          deployedAt: deployedAt.toISOString(),
          metric: 'error_ratio',
          removed: unsafe.removed.join(','),
          firstRemoval: first.at.toISOString(),
        },
        supporting,
        refuting: [],
        mitigation: undoProposal(input.kube, prev, `go back to revision ${prev.revision}, whose pods drained before exiting; then restore the preStop sleep and grace period in the chart values before upgrading again (scaling up only postpones the next burst)`),
      },
    ];
  },
};

/**
 * What a responder blames first and why it is not the cause: the HPA whose scale-downs set off each burst
 * (it scaled within its range, as traffic asked), and a traffic spike (the request rate did not rise).
 */
function lookAlikes(input: TriageInput, revision: number, firstRemoval: Date): Finding[] {
  const t = input.kube.target!;
  const out: Finding[] = [];
  for (const h of input.kube.hpas) {
    const name = h.metadata?.name ?? '?';
    const min = h.spec?.minReplicas ?? 1;
    const max = h.spec?.maxReplicas;
    const desired = h.status?.desiredReplicas;
    if (max !== undefined && desired !== undefined && desired >= max) continue; // at its ceiling: hpa-at-max decides
    const range = `${min}–${max ?? '?'}`;
    const why = `HPA ${name} scaled ${t.name} ${desired !== undefined ? `to ${desired} ` : ''}within its range ${range}, as its metric asked; the pods it removed dropped requests because revision ${revision} no longer drains them — scaling up or raising minReplicas only postpones the next burst`;
    out.push({
      key: `cleared:hpa-at-max:HorizontalPodAutoscaler/${t.namespace}/${name}`,
      analyzer: 'shutdown-regression',
      family: 'hpa-at-max',
      status: 'ruled_out',
      confidence: 0.05,
      title: `HPA ${name}'s scale-downs line up with the errors`,
      component: { kind: 'HorizontalPodAutoscaler', namespace: t.namespace, name },
      mechanism: `Each burst follows a scale-down by ${name} (the first at ${clockTime(firstRemoval)}), so it looks like the cause.`,
      reason: why,
      facts: { minReplicas: min, ...(max !== undefined ? { maxReplicas: max } : {}), ...(desired !== undefined ? { desiredReplicas: desired } : {}) },
      supporting: [],
      refuting: [{ kind: 'object', summary: `HPA ${t.namespace}/${name}: desired ${desired ?? '?'}, range ${range}`, citation: objectCitation('HorizontalPodAutoscaler', t.namespace, name, 'status') }],
    });
  }
  const rate = input.metrics?.summaries.find((s) => s.id === 'request_rate' && s.status === 'success');
  const series = rate?.series.find((x) => x.baseline?.median !== undefined && x.last !== undefined && x.last !== null);
  if (rate && series && !metricSymptoms(rate, 'up').length) {
    const before = series.baseline!.median!;
    const now = series.last!;
    const words = now < before * 0.9 ? 'fell' : now > before * 1.1 ? `rose only ×${Number((now / before).toPrecision(2))}` : 'stayed level';
    out.push({
      key: `cleared:load-spike:${t.kind}/${t.namespace}/${t.name}`,
      analyzer: 'shutdown-regression',
      family: 'load-spike',
      status: 'ruled_out',
      confidence: 0.05,
      title: `More traffic than ${t.name} can take`,
      component: { kind: t.kind, namespace: t.namespace, name: t.name },
      mechanism: `Errors under load are the usual suspect.`,
      reason: `${t.name}'s request rate ${words} (${Number(before.toPrecision(3))} → ${Number(now.toPrecision(3))} req/s): the errors come with pod removals, not with load`,
      facts: { metric: 'request_rate', before: Number(before.toPrecision(3)), after: Number(now.toPrecision(3)) },
      supporting: [],
      refuting: metricEvidence({ ...rate, series: [series] }).slice(0, 1),
    });
  }
  return out;
}

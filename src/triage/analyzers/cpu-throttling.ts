/**
 * `cpu-throttling`: the CFS quota of a CPU limit throttles the target's containers — the cAdvisor
 * ratio `container_cpu_cfs_throttled_periods_total / container_cpu_cfs_periods_total` (summary
 * `cpu_throttling`, per pod and container) is high (≥ 25 %, the catalog threshold) and above what the
 * pods ran at before, while the target's p99 latency or 5xx ratio rose — and nothing crashes (crash
 * loops and OOM kills belong to `crash-loop` / `oom-killed`).
 *
 * The cause it looks for: a CPU limit lowered, read from the container's `resources.limits.cpu` in the
 * current ReplicaSet's template against the previous one, from a Helm revision whose values lowered a
 * `resources.limits.cpu`, and from the managedFields entry that owns the container's `resources`
 * (who wrote it, when). A rollout that kept the limit but changed the image is reported as the
 * CPU-hungry change instead.
 *
 * A rollout of a Deployment replaces its pods, so the new pods' series have no baseline of their own:
 * the baseline is read from the series of pods that no longer run (the previous ReplicaSet's), then
 * from each series' own baseline window.
 *
 * Facts (camelCase): `container`, `cpuLimit` (as written, `200m`), `previousCpuLimit`, `throttledRatio`
 * (0–1, two decimals), `throttledBefore` (the baseline ratio, when known), `throttledPods`, `manager`
 * (the field manager that wrote the resources, `helm` for a Helm upgrade), `changedAt` (ISO),
 * `revision` / `previousRevision` (when a rollout carried it), `helmRevision`, `metric` (the symptom that
 * moved: `latency_p99` | `error_ratio`).
 *
 * Mitigation: `set_resources` with the previous CPU limit when it was lowered; `rollout_undo` when the
 * limit did not change but a new image started to throttle; otherwise none.
 */
import type { CoreV1Event, V1Container, V1ManagedFieldsEntry, V1Pod } from '@kubernetes/client-node';
import type { HelmRevision } from '../../evidence/kubernetes/helm.js';
import { describeWriter } from '../../evidence/kubernetes/managed-fields.js';
import type { MetricSummary, SeriesSummary } from '../../evidence/prometheus/types.js';
import type { Evidence } from '../../evidence/types.js';
import type { Analyzer, TriageInput } from '../analyzer.js';
import { CHANGE_WINDOW_MS } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime, relativeToOnset } from '../time.js';
import type { Finding, MitigationProposal } from '../types.js';
import { clip, containerStatuses, eventEvidence, imageTag, podEvents, revisionEvidence, revisions, rolledOutBefore, servingScope, templateContainer, undoProposal, type Revision } from './crash-loop.js';
import { fmtLevel, metricLabel, moved as shifted, SKEW_MS, targetSymptoms, type MetricSymptom } from './deploy-regression.js';
import { injectorWrite } from './oom-killed.js';

const NAME = 'cpu-throttling';
/** The alert is about latency, and on another component than the target, which it reached by the walk. */
function callerLatencyAlert(input: TriageInput): boolean {
  const a = input.alert;
  const words = `${a.title ?? ''} ${a.alertName ?? ''} ${Object.values(a.labels ?? {}).join(' ')}`;
  if (!/latenc|\bp9\d|duration|slow|response time/i.test(words)) return false;
  const t = input.kube.target;
  const reached = t && input.cluster?.walk.reached.get(`${t.kind}/${t.namespace}/${t.name}`);
  return !!reached && reached.path.length > 1;
}

/** Share of CFS periods throttled beyond which the container is starved, not merely tight. */
const SEVERE_THROTTLING = 0.5;
/** Throttled periods / periods that hurt on their own (the catalog's threshold). */
const HIGH = 0.25;

/** A Kubernetes CPU quantity (`200m`, `0.5`, `2`, `1500m`, `1e3m`) in cores. */
export function cpuCores(q: string | number | undefined): number | undefined {
  if (q === undefined || q === null) return undefined;
  const m = /^([0-9.]+(?:[eE][+-]?\d+)?)(m|k|M)?$/.exec(String(q).trim());
  if (!m) return undefined;
  const n = Number(m[1]);
  if (!Number.isFinite(n)) return undefined;
  return m[2] === 'm' ? n / 1000 : m[2] === 'k' ? n * 1000 : m[2] === 'M' ? n * 1e6 : n;
}

const cpuLimitOf = (c: V1Container | undefined): string | undefined => {
  const v = (c?.resources?.limits as Record<string, string | number> | undefined)?.['cpu'];
  return v === undefined ? undefined : String(v);
};

/** Managed-fields entries that own this container's `resources` in the pod template, newest first. */
function resourceWriters(entries: V1ManagedFieldsEntry[] | undefined, container: string): { entry: V1ManagedFieldsEntry; index: number; time?: Date }[] {
  const key = `k:${JSON.stringify({ name: container })}`;
  return (entries ?? [])
    .map((entry, index) => ({ entry, index, time: entry.time ? new Date(entry.time) : undefined }))
    .filter(({ entry }) => {
      let node: unknown = entry.fieldsV1;
      for (const part of ['f:spec', 'f:template', 'f:spec', 'f:containers', key, 'f:resources']) {
        if (typeof node !== 'object' || node === null) return false;
        node = (node as Record<string, unknown>)[part];
      }
      return node !== undefined;
    })
    .sort((a, b) => (b.time?.getTime() ?? 0) - (a.time?.getTime() ?? 0));
}

/** Every `…resources.limits.cpu` in a Helm values tree, by its dotted path. */
function helmCpuLimits(values: unknown, path: string[] = [], out = new Map<string, string>()): Map<string, string> {
  if (typeof values !== 'object' || values === null || path.length > 8) return out;
  for (const [k, v] of Object.entries(values as Record<string, unknown>)) {
    const p = [...path, k];
    if (k === 'cpu' && path.at(-1) === 'limits' && path.at(-2) === 'resources' && (typeof v === 'string' || typeof v === 'number')) out.set(p.join('.'), String(v));
    else helmCpuLimits(v, p, out);
  }
  return out;
}

/** A Helm upgrade, within the change window, whose values lowered a CPU limit. */
function helmLowering(revs: HelmRevision[] | undefined, onset: Date): { latest: HelmRevision; previous: HelmRevision; path: string; limit: string; previousLimit: string } | undefined {
  const [latest, previous] = revs ?? [];
  if (!latest || !previous || !latest.deployedAt) return undefined;
  const age = onset.getTime() - latest.deployedAt.getTime();
  if (age < -SKEW_MS || age > CHANGE_WINDOW_MS) return undefined;
  const now = helmCpuLimits(latest.values);
  const before = helmCpuLimits(previous.values);
  for (const [path, limit] of now) {
    const previousLimit = before.get(path);
    if (previousLimit && (cpuCores(previousLimit) ?? 0) > (cpuCores(limit) ?? Infinity)) return { latest, previous, path, limit, previousLimit };
  }
  return undefined;
}

const round2 = (x: number) => Math.round(x * 100) / 100;
const pct = (x: number) => `${Math.round(x * 100)}%`;

/** The throttling level a series settled at: the level after its shift, else its mean (or last). */
function level(s: SeriesSummary): number | undefined {
  if (s.deviationStart && s.deviationDirection === 'up') {
    const shift = s.changePoints.find((c) => c.at.getTime() >= s.deviationStart!.getTime() - SKEW_MS);
    return shift?.after ?? s.max ?? undefined;
  }
  return s.mean ?? s.last ?? undefined;
}

interface Throttling {
  summary: MetricSummary;
  container: string;
  series: SeriesSummary[];
  level: number;
  /** What the container ran at before (old pods' level, or the series' own baseline). */
  baseline?: number;
  /** When the throttling began (deviation start, or the first sample of the new pods). */
  start?: Date;
}

function podOfSeries(s: SeriesSummary): string | undefined {
  return s.metric['pod'] ?? s.metric['k8s_pod_name'];
}

/** The most throttled container of the target, read against its baseline. */
function throttling(summary: MetricSummary, livePods: Set<string>, workload: string): Throttling | undefined {
  const mine = summary.series.filter((s) => {
    const pod = podOfSeries(s);
    return !pod || livePods.has(pod) || pod.startsWith(`${workload}-`);
  });
  const byContainer = new Map<string, SeriesSummary[]>();
  for (const s of mine) {
    const c = s.metric['container'] ?? '';
    byContainer.set(c, [...(byContainer.get(c) ?? []), s]);
  }
  let best: Throttling | undefined;
  for (const [container, series] of byContainer) {
    const isLive = (s: SeriesSummary) => !podOfSeries(s) || livePods.has(podOfSeries(s)!);
    const live = livePods.size ? series.filter(isLive) : series;
    // Series of pods that no longer run (the previous ReplicaSet's): what the container ran at before.
    const old = livePods.size && live.length ? series.filter((s) => !isLive(s)) : [];
    const current = (live.length ? live : series).map((s) => ({ s, level: level(s) })).filter((x): x is { s: SeriesSummary; level: number } => x.level !== undefined);
    if (!current.length) continue;
    const high = current.filter((x) => x.level >= (summary.threshold ?? HIGH));
    const pick = high.length ? high : current;
    const lvl = Math.max(...pick.map((x) => x.level));
    const oldLevels = old.map((s) => s.mean ?? s.last).filter((x): x is number => x !== null && x !== undefined);
    const ownBaselines = pick.map((x) => x.s.baseline?.median).filter((x): x is number => x !== undefined);
    const deviated = pick.filter((x) => x.s.deviationStart && x.s.deviationDirection === 'up');
    const baseline = oldLevels.length ? median(oldLevels) : deviated.length ? median(deviated.map((x) => x.s.baseline?.median ?? 0)) : ownBaselines.length ? median(ownBaselines) : undefined;
    const starts = deviated.length ? deviated.map((x) => x.s.deviationStart!) : oldLevels.length ? pick.map((x) => x.s.from).filter((d): d is Date => !!d) : [];
    const start = starts.length ? new Date(Math.min(...starts.map((d) => d.getTime()))) : undefined;
    const t: Throttling = { summary, container, series: high.map((x) => x.s), level: lvl, ...(baseline !== undefined ? { baseline } : {}), ...(start ? { start } : {}) };
    if (!best || t.level > best.level) best = t;
  }
  return best;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Above what it ran at before: clearly higher than the baseline (or no baseline to compare with). */
function risen(t: Throttling): boolean | undefined {
  if (t.baseline === undefined) return undefined;
  return t.level >= t.baseline + 0.1 && t.level >= t.baseline * 1.5;
}

/** Crashing or OOM-killed containers: the pod analyzers' case, not throttling. */
function crashing(pods: V1Pod[], onset: Date): boolean {
  return pods.some((p) =>
    containerStatuses(p).some((s) => {
      if (s.state?.waiting?.reason === 'CrashLoopBackOff') return true;
      const term = s.lastState?.terminated ?? s.state?.terminated;
      const at = term?.finishedAt ? new Date(term.finishedAt) : undefined;
      return term?.reason === 'OOMKilled' && !!at && onset.getTime() - at.getTime() <= CHANGE_WINDOW_MS;
    }),
  );
}

/** Probe timeouts: the kubelet gives up on a throttled container before it answers. */
const PROBE_TIMEOUT = /probe failed:.*(context deadline exceeded|Client\.Timeout exceeded|timeout|timed out)/i;

export const cpuThrottling: Analyzer = {
  name: NAME,
  analyze(input: TriageInput): Finding[] {
    const { kube, onset, metrics } = input;
    const t = kube.target;
    if (!t || !kube.workload) return [];
    if (crashing(kube.pods, onset)) return [];
    const component = { kind: t.kind, namespace: t.namespace, name: t.name };
    const key = `${NAME}:${t.namespace}/${t.kind}/${t.name}`;
    const livePods = new Set(kube.pods.map((p) => p.metadata?.name ?? '').filter(Boolean));
    const summary = metrics?.summaries.find((s) => s.id === 'cpu_throttling' && s.status === 'success');
    const thr = summary ? throttling(summary, livePods, t.name) : undefined;

    // Which container: the throttled one, else the first that has a CPU limit.
    const containers = kube.workload.spec?.template?.spec?.containers ?? [];
    const container = thr?.container || containers.find((c) => cpuLimitOf(c))?.name || containers[0]?.name;
    if (!container) return [];
    const livePod = kube.pods.find((p) => (p.spec?.containers ?? []).some((c) => c.name === container));
    const podSpec = livePod?.spec?.containers?.find((c) => c.name === container);
    const cpuLimit = cpuLimitOf(podSpec) ?? cpuLimitOf(templateContainer(kube.workload, container));

    // ---------------------------------------------------------------- the change behind it
    const { current, previous } = revisions(kube);
    const curC = templateContainer(current?.replicaSet, container) ?? templateContainer(kube.workload, container);
    const prevC = templateContainer(previous?.replicaSet, container);
    const curLimit = cpuLimitOf(curC) ?? cpuLimit;
    const prevLimit = cpuLimitOf(prevC);
    const recentRollout = !!current && !!previous && rolledOutBefore(current, onset);
    const rsLowered = recentRollout && !!curLimit && !!prevLimit && (cpuCores(prevLimit) ?? 0) > (cpuCores(curLimit) ?? Infinity);
    const rsAdded = recentRollout && !!curLimit && !!prevC && !prevLimit;
    const helm = helmLowering(kube.helm?.revisions, onset);
    const writer = resourceWriters(kube.workload.metadata?.managedFields, container)[0];
    const writerRecent = !!writer?.time && onset.getTime() - writer.time.getTime() <= CHANGE_WINDOW_MS && writer.time.getTime() - onset.getTime() <= SKEW_MS;
    const imageChanged = recentRollout && !!curC && !!prevC && curC.image !== prevC.image && !rsLowered && !rsAdded;
    const previousCpuLimit = rsLowered ? prevLimit : helm?.previousLimit;
    const lowered = rsLowered || !!helm;

    const facts: Record<string, string | number | boolean> = { container };
    if (cpuLimit) facts['cpuLimit'] = cpuLimit;
    const supporting: Evidence[] = [];
    const causeEvidence: Evidence[] = [];
    let manager: string | undefined;
    let changedAt: Date | undefined;
    let cause = '';

    if (rsLowered || rsAdded || imageChanged) {
      const what = rsLowered ? `CPU limit ${prevLimit} → ${curLimit}` : rsAdded ? `CPU limit added: ${curLimit}` : `image ${imageTag(prevC!.image)} → ${imageTag(curC!.image)}, CPU limit unchanged (${curLimit ?? 'none'})`;
      causeEvidence.push(revisionEvidence(kube, current!, onset, what));
      Object.assign(facts, { revision: current!.revision, previousRevision: previous!.revision });
      changedAt = current!.createdAt;
      cause = rsLowered
        ? `its CPU limit was lowered from ${prevLimit} to ${curLimit} in revision ${current!.revision}`
        : rsAdded
          ? `revision ${current!.revision} added a CPU limit of ${curLimit} where there was none`
          : `revision ${current!.revision} changed the image (${imageTag(prevC!.image)} → ${imageTag(curC!.image)}) under the same ${curLimit ?? 'unlimited'} CPU limit: the new code needs more CPU`;
    }
    if (helm) {
      causeEvidence.push({
        kind: 'helm_release',
        summary: `Helm ${kube.helm!.release} rev ${helm.latest.revision} (${helm.latest.chart}) set ${helm.path} to ${helm.limit} (rev ${helm.previous.revision}: ${helm.previousLimit})${helm.latest.deployedAt ? ` at ${clockTime(helm.latest.deployedAt)}, ${relativeToOnset(helm.latest.deployedAt, onset)}` : ''}`,
        citation: objectCitation('Secret', t.namespace, helm.latest.secretName, 'data.release (decoded; values redacted)'),
        observedAt: helm.latest.deployedAt,
        detail: { revision: helm.latest.revision, previousRevision: helm.previous.revision, path: helm.path, limit: helm.limit, previousLimit: helm.previousLimit },
      });
      facts['helmRevision'] = helm.latest.revision;
      manager = 'helm';
      changedAt ??= helm.latest.deployedAt;
      if (!rsLowered) cause = `Helm revision ${helm.latest.revision} of ${kube.helm!.release} lowered ${helm.path} from ${helm.previousLimit} to ${helm.limit}`;
    }
    if (writer && (lowered || rsAdded || writerRecent)) {
      manager = writer.entry.manager ?? manager ?? 'unknown';
      if (writer.time && writerRecent) changedAt = writer.time;
      const who = describeWriter({ manager: writer.entry.manager ?? 'unknown', subresource: writer.entry.subresource, operation: writer.entry.operation ?? 'Update' });
      causeEvidence.push({
        kind: 'managed_fields',
        summary: `managedFields: manager \`${writer.entry.manager}\` (${who}) ${writer.entry.operation ?? 'Update'} owns the ${container} container's resources${writer.time ? ` (${clockTime(writer.time)}, ${relativeToOnset(writer.time, onset)})` : ''}`,
        citation: objectCitation(t.kind, t.namespace, t.name, `metadata.managedFields[${writer.index}]`),
        observedAt: writer.time,
        detail: { manager: writer.entry.manager, operation: writer.entry.operation, time: writer.time?.toISOString() ?? null },
      });
      if (!cause && writerRecent) cause = `\`${who}\` wrote the ${container} container's resources ${relativeToOnset(writer.time!, onset)} (the limit before is not on record)`;
    }
    if (previousCpuLimit) facts['previousCpuLimit'] = previousCpuLimit;
    if (manager) facts['manager'] = manager;
    if (changedAt) facts['changedAt'] = changedAt.toISOString();
    const hasChange = !!cause;

    // ---------------------------------------------------------------- no throttling data
    if (!thr) {
      if (!lowered) return [];
      return [
        {
          key,
          analyzer: NAME,
          family: 'cpu-throttling',
          status: 'open',
          confidence: 0.45,
          title: `${t.name} CPU limit lowered to ${cpuLimit ?? curLimit}: throttling not measured`,
          component,
          mechanism: `${cause[0]!.toUpperCase()}${cause.slice(1)}; ${summary ? 'the throttling ratio returned no series for its containers' : 'no CPU throttling metric (cAdvisor container_cpu_cfs_throttled_periods_total) was available'} to confirm that the quota throttles it.`,
          facts,
          supporting: causeEvidence,
          refuting: [],
        },
      ];
    }

    const ratio = round2(thr.level);
    facts['throttledRatio'] = ratio;
    if (thr.baseline !== undefined) facts['throttledBefore'] = round2(thr.baseline);
    facts['throttledPods'] = new Set(thr.series.map(podOfSeries).filter(Boolean)).size || thr.series.length;
    const metricLine: Evidence = {
      kind: 'metric',
      summary:
        `${thr.summary.title} of ${container}: ${pct(thr.level)} of CFS periods throttled` +
        (thr.series.length ? ` in ${thr.series.length} pod${thr.series.length === 1 ? '' : 's'} (${thr.series.map(podOfSeries).filter(Boolean).slice(0, 3).join(', ')})` : '') +
        (thr.baseline !== undefined ? `, ${pct(thr.baseline)} before` : '') +
        (thr.start ? `, since ${clockTime(thr.start)}` : ''),
      citation: thr.summary.citation,
      ...(thr.start ? { observedAt: thr.start } : {}),
      detail: { container, level: ratio, baseline: thr.baseline ?? null, pods: thr.series.map(podOfSeries), max: thr.series.map((s) => s.max) },
    };
    const limitLine: Evidence | undefined = cpuLimit
      ? {
          kind: 'object',
          summary: `${container} runs with a CPU limit of ${cpuLimit}${livePod ? ` (pod ${livePod.metadata?.name})` : ' (pod template)'}: a CFS quota of ${Math.round((cpuCores(cpuLimit) ?? 0) * 100)} ms per 100 ms period`,
          citation: livePod
            ? objectCitation('Pod', t.namespace, livePod.metadata?.name ?? '?', `spec.containers[${(livePod.spec?.containers ?? []).findIndex((c) => c.name === container)}].resources`)
            : objectCitation(t.kind, t.namespace, t.name, 'spec.template.spec.containers[].resources'),
          detail: { cpuLimit, requests: (podSpec?.resources?.requests as Record<string, string> | undefined) ?? null },
        }
      : undefined;

    const high = thr.level >= (thr.summary.threshold ?? HIGH);
    const rose = risen(thr);

    // An injected sidecar (not in the pod template) throttled by the limit its injector's config gives it:
    // only pods injected since the config changed carry it, so it shows up pod by pod, hours after the change.
    const injected = high && !templateContainer(kube.workload, container) ? injectorChange(input, container, thr) : undefined;
    if (injected) {
      // The limit the new pods were injected with (an older pod may still run the previous one).
      const newPod = kube.pods.find((p) => p.metadata?.name === injected.newPods[0]);
      const injectedLimit = cpuLimitOf(newPod?.spec?.containers?.find((c) => c.name === container)) ?? cpuLimit;
      const symptom = targetSymptoms(input).metrics.find((m) => m.metric === 'latency_p99' || m.metric === 'error_ratio');
      return [
        {
          key: `config-change:${injected.namespace}/ConfigMap/${injected.name}/${t.name}`,
          analyzer: NAME,
          family: 'config-change',
          status: 'supported',
          confidence: symptom ? 0.86 : 0.74,
          title: `${container} sidecars injected since ${injected.manager}'s change to ConfigMap ${injected.namespace}/${injected.name} (${relativeToOnset(injected.at, onset)}) are CPU-throttled${injectedLimit ? ` at their ${injectedLimit} limit` : ''}`,
          component: { kind: 'ConfigMap', namespace: injected.namespace, name: injected.name },
          mechanism: `The sidecar injector's config ConfigMap ${injected.namespace}/${injected.name} was written by \`${injected.manager}\` at ${clockTime(injected.at)}; every pod injected since runs ${container}${injectedLimit ? ` with a CPU limit of ${injectedLimit}` : ''}, and ${container} is throttled in ${pct(thr.level)} of its CFS periods on ${injected.newPods.length} pod${injected.newPods.length === 1 ? '' : 's'} created after it (${injected.newPods.slice(0, 3).join(', ')})${injected.oldPods.length ? `, while ${injected.oldPods.length} older pod${injected.oldPods.length === 1 ? ' is' : 's are'} not` : ''}${symptom ? `; ${t.name}'s ${metricLabel(symptom.metric)} ${shifted(symptom)} from ${fmtLevel(symptom.before, symptom.unit)} to ${fmtLevel(symptom.after, symptom.unit)}` : ''}. The template never names ${container}, so rolling ${t.name} back re-injects the same limit: restore the injector's previous proxy resources, then restart the affected workloads.`,
          scope: `every meshed workload with pods injected since ${clockTime(injected.at)}`,
          affected: [component, ...kube.services.map(({ service }) => ({ kind: 'Service', namespace: t.namespace, name: service.metadata?.name ?? '?' })), ...injected.otherWorkloads],
          facts: { object: `ConfigMap/${injected.name}`, editor: injected.manager, changedAt: injected.at.toISOString(), container, ...(injectedLimit ? { cpuLimit: injectedLimit } : {}), throttledRatio: ratio, ...(symptom ? { metric: symptom.metric } : {}) },
          supporting: [
            { kind: 'managed_fields', summary: `managedFields: \`${injected.manager}\` wrote ${injected.keys.map((k) => `data.${k}`).join(', ')} of ConfigMap/${injected.name} at ${clockTime(injected.at)} (values not shown)`, citation: objectCitation('ConfigMap', injected.namespace, injected.name, `metadata.managedFields[${injected.index}]`), observedAt: injected.at },
            metricLine,
            ...(limitLine ? [limitLine] : []),
            ...(symptom ? [symptom.evidence] : []),
          ],
          refuting: [],
          mitigation: {
            action: 'restore_config',
            target: { kind: 'ConfigMap', namespace: injected.namespace, name: injected.name },
            params: { kind: 'ConfigMap', name: injected.name },
            command: `kubectl patch configmap/${injected.name} -n ${injected.namespace} --type=json -p '[{"op":"replace","path":"/data","value":<its data before the edit>}]'`,
            rationale: `put back the injector's config from before \`${injected.manager}\`'s change at ${clockTime(injected.at)}, then restart the workloads whose pods were injected since`,
          },
        },
      ];
    }

    if (!high) {
      if (!lowered) return [];
      return [
        {
          key,
          analyzer: NAME,
          family: 'cpu-throttling',
          status: 'ruled_out',
          confidence: 0.05,
          title: `${t.name} throttled by its lowered CPU limit`,
          component,
          mechanism: `${cause[0]!.toUpperCase()}${cause.slice(1)}, but the container is rarely throttled.`,
          reason: `only ${pct(thr.level)} of ${container}'s CFS periods are throttled (below ${pct(thr.summary.threshold ?? HIGH)}): the ${cpuLimit ?? curLimit} limit is not what slows it`,
          facts,
          supporting: causeEvidence,
          refuting: [metricLine],
        },
      ];
    }

    // Chronic throttling at the level it ran at before: background, not this incident (whatever changed did not raise it).
    if (rose === false) {
      return [
        {
          key,
          analyzer: NAME,
          family: 'cpu-throttling',
          status: 'unrelated',
          confidence: 0.1,
          title: `${t.name} ${container} throttled at ${pct(thr.level)}, as before`,
          component,
          mechanism: `${container} is throttled in ${pct(thr.level)} of CFS periods by its ${cpuLimit ?? ''} CPU limit, as it was before the alert (${pct(thr.baseline!)}).`,
          reason: `the throttling did not rise: ${pct(thr.baseline!)} before, ${pct(thr.level)} now${hasChange ? ` (${cause} did not change it)` : ', and no limit change'}`,
          facts,
          supporting: [],
          refuting: [metricLine, ...causeEvidence],
        },
      ];
    }

    // ---------------------------------------------------------------- the symptom
    const symptoms = targetSymptoms(input);
    const ref = thr.start ?? changedAt;
    const moved: MetricSymptom[] = symptoms.metrics.filter((m) => !ref || m.start.getTime() >= ref.getTime() - 5 * 60_000).sort((a, b) => a.start.getTime() - b.start.getTime());
    const earlier = ref ? symptoms.metrics.filter((m) => m.start.getTime() < ref.getTime() - 5 * 60_000).sort((a, b) => a.start.getTime() - b.start.getTime())[0] : undefined;
    const probeTimeouts: CoreV1Event[] = podEvents(kube, [...livePods], onset, /^Unhealthy$/).filter((e) => PROBE_TIMEOUT.test(e.message ?? ''));
    const symptomLines: Evidence[] = [...moved.slice(0, 2).map((m) => m.evidence), ...probeTimeouts.sort((a, b) => (b.count ?? 1) - (a.count ?? 1)).slice(0, 1).map((e) => eventEvidence(e))];
    const first = moved[0];
    if (first) facts['metric'] = first.metric;

    // The throttling came after the change (the change cannot explain throttling that predates it).
    const changeBeforeThrottle = !changedAt || !thr.start || thr.start.getTime() >= changedAt.getTime() - SKEW_MS;

    supporting.push(metricLine);
    if (limitLine) supporting.push(limitLine);
    if (changeBeforeThrottle) supporting.push(...causeEvidence);
    supporting.push(...symptomLines);
    const { scope, affected } = servingScope(kube, `${t.name} answers slowly: ${container} is throttled in ${pct(thr.level)} of its CPU periods`);

    let mitigation: MitigationProposal | undefined;
    if (lowered && previousCpuLimit && changeBeforeThrottle) {
      mitigation = {
        action: 'set_resources',
        target: component,
        params: { container, limits: { cpu: previousCpuLimit } },
        command: `kubectl set resources ${t.kind.toLowerCase()}/${t.name} -n ${t.namespace} -c ${container} --limits=cpu=${previousCpuLimit}`,
        rationale: `restore the ${previousCpuLimit} CPU limit ${container} ran with before it was lowered to ${cpuLimit ?? curLimit}; it is throttled in ${pct(thr.level)} of CFS periods since`,
      };
    } else if ((imageChanged || rsAdded) && previous && changeBeforeThrottle) {
      mitigation = undoProposal(kube, previous as Revision, `revision ${previous.revision} ran${rsAdded ? ' without a CPU limit' : ` under the same ${curLimit ?? ''} CPU limit`} without being throttled`);
    }

    const refuting: Evidence[] = [];
    if (earlier) refuting.push(earlier.evidence);
    if (!changeBeforeThrottle) refuting.push(...causeEvidence);

    const symptomText = first
      ? `; its ${metricLabel(first.metric)} ${shifted(first)} from ${fmtLevel(first.before, first.unit)} to ${fmtLevel(first.after, first.unit)} starting ${clockTime(first.start)}`
      : probeTimeouts.length
        ? `; its probes time out (${clip(probeTimeouts[0]!.message ?? '', 120)})`
        : '';
    const mechanism =
      `Container ${container} of ${t.kind.toLowerCase()}/${t.name} is CPU-throttled: ${pct(thr.level)} of its CFS periods are throttled${thr.baseline !== undefined ? ` (${pct(thr.baseline)} before)` : ''}` +
      (cpuLimit ? ` under a ${cpuLimit} CPU limit` : '') +
      (thr.start ? ` since ${clockTime(thr.start)}` : '') +
      (hasChange && changeBeforeThrottle ? `, after ${cause}${changedAt ? ` at ${clockTime(changedAt)} (${relativeToOnset(changedAt, onset)})` : ''}` : '') +
      symptomText +
      '. The container does not crash: requests queue while it waits for its CPU quota.' +
      (!changeBeforeThrottle ? ` The throttling began at ${clockTime(thr.start!)}, before that change, so the change does not explain it.` : '') +
      (earlier ? ` Its ${metricLabel(earlier.metric)} ${shifted(earlier)} earlier (${clockTime(earlier.start)}), before the throttling.` : '');

    let status: Finding['status'];
    let confidence: number;
    if (earlier && !first) {
      status = 'inconclusive';
      confidence = 0.3;
    } else if (first || probeTimeouts.length) {
      status = 'supported';
      confidence = lowered && changeBeforeThrottle ? 0.9 : hasChange && changeBeforeThrottle ? 0.82 : rose ? 0.72 : 0.65;
    } else if (hasChange && changeBeforeThrottle && rose && ratio >= SEVERE_THROTTLING && callerLatencyAlert(input)) {
      // Most CFS periods throttled, starting with a write of the container's resources, and the alert is
      // a latency alert on a caller the walk reached it from: the caller sees the queueing even when
      // this workload's own server-side series (timed inside the process) does not.
      status = 'supported';
      confidence = 0.72;
    } else if (!symptoms.metricsKnown && lowered && changeBeforeThrottle) {
      // No latency/error metric to read; the limit change and the throttling are both on record.
      status = 'supported';
      confidence = 0.75;
    } else {
      status = 'open';
      confidence = symptoms.metricsKnown ? 0.4 : 0.5;
    }

    return [
      {
        key,
        analyzer: NAME,
        family: 'cpu-throttling',
        status,
        confidence,
        title: `${t.name} CPU-throttled (${pct(thr.level)} of periods)${cpuLimit ? ` at its ${cpuLimit} limit` : ''}${lowered && previousCpuLimit ? ` (lowered from ${previousCpuLimit})` : ''}`,
        component,
        mechanism: status === 'open' ? `${mechanism} Its latency and error rate ${symptoms.metricsKnown ? 'did not leave their baseline' : 'were not available'}, so the throttling is not shown to hurt yet.` : mechanism,
        scope,
        affected: [component, ...affected],
        facts,
        supporting,
        refuting,
        ...(mitigation ? { mitigation } : {}),
      },
    ];
  },
};

/**
 * The sidecar injector config written within the week before the onset whose change the throttled
 * pods carry: the pods throttled were all created after the write, and (when there are any) the older
 * pods of the workload are not throttled.
 */
function injectorChange(input: TriageInput, container: string, thr: Throttling): { namespace: string; name: string; manager: string; at: Date; index: number; keys: string[]; newPods: string[]; oldPods: string[]; otherWorkloads: { kind: string; namespace: string; name: string }[] } | undefined {
  const s = input.cluster?.snapshot;
  const w = s ? injectorWrite(s, container, input.onset) : undefined;
  if (!s || !w) return undefined;
  const at = w.at;
  const created = (name: string) => {
    const p = input.kube.pods.find((x) => x.metadata?.name === name) ?? s.pods.find((x) => x.metadata?.name === name);
    return p?.metadata?.creationTimestamp ? new Date(p.metadata.creationTimestamp).getTime() : undefined;
  };
  const throttled = thr.series.filter((x) => (x.last ?? 0) >= HIGH).map(podOfSeries).filter((n): n is string => !!n);
  // thr.series holds the throttled series only; the calm ones are in the summary, same container.
  const calm = thr.summary.series.filter((x) => x.metric['container'] === container && (x.last ?? 0) < HIGH / 2).map(podOfSeries).filter((n): n is string => !!n);
  const newPods = throttled.filter((n) => (created(n) ?? 0) >= at.getTime());
  if (!newPods.length || newPods.length < throttled.length) return undefined;
  const oldPods = calm.filter((n) => (created(n) ?? Infinity) < at.getTime());
  // Other workloads with pods injected since: in scope too.
  const t = input.kube.target!;
  const otherWorkloads = [
    ...new Map(
      s.pods
        .filter((p) => p.metadata?.creationTimestamp && new Date(p.metadata.creationTimestamp).getTime() >= at.getTime() && (p.spec?.containers ?? []).some((c) => c.name === container))
        .map((p) => input.cluster!.topology.workloadOf(p.metadata?.namespace ?? '', p.metadata?.name ?? ''))
        .filter((r): r is NonNullable<typeof r> => !!r && !(r.namespace === t.namespace && r.name === t.name))
        .map((r) => [`${r.kind}/${r.namespace}/${r.name}`, { kind: r.kind, namespace: r.namespace ?? '', name: r.name }] as const),
    ).values(),
  ].slice(0, 10);
  return { namespace: w.namespace, name: w.name, manager: w.manager, at, index: w.index, keys: w.written, newPods, oldPods, otherWorkloads };
}

/**
 * `hpa-at-max`: the target's HorizontalPodAutoscaler runs at maxReplicas and wants more
 * (ScalingLimited=True, reason TooManyReplicas: "the desired replica count is more than the maximum
 * replica count"), with its metric far above target (cpu 185% of 60%): the workload is saturated.
 *
 * Load or regression? The request rate from Prometheus decides: traffic rising at the onset means
 * load-driven saturation (supported); latency up while traffic is flat means each request got more
 * expensive — a regression the HPA merely reflects (inconclusive, pointing at the change). Raising
 * maxReplicas beyond what anyone set is a human edit, so no mitigation for that; but when a `kubectl
 * edit` LOWERED maxReplicas (or changed the metrics) after the last `kubectl apply`, `restore_object`
 * puts the HPA's applied bounds back (fact `previousMaxReplicas`).
 *
 * Facts (camelCase):
 * - `hpa`, `maxReplicas`, `currentReplicas`, `desiredReplicas`
 * - `metric` (`cpu`, `memory`, or a custom metric name), `current`, `target` (numbers, `unit` says what: `%` or raw)
 * - `limitedSince`: ScalingLimited's lastTransitionTime (ISO)
 * - `trafficBefore` / `trafficAfter` (req/s) and `trafficRatio`, when Prometheus has the request rate
 * - `driver`: `load` | `regression` | `misconfiguration` (a KEDA ScaledObject edit set the ceiling) | `unknown`
 */
import type { V2HorizontalPodAutoscaler, V2MetricSpec, V2MetricStatus } from '@kubernetes/client-node';
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import type { KubeEvidence } from '../../evidence/kubernetes/gather.js';
import { metricEvidence } from '../../evidence/prometheus/evidence.js';
import type { MetricSummary, SeriesSummary } from '../../evidence/prometheus/types.js';
import { scopeRefs } from '../scope.js';
import type { Analyzer, TriageInput } from '../analyzer.js';
import { CHANGE_WINDOW_MS, DELAYED_EFFECT_MS } from '../analyzer.js';
import { clockTime, humanDuration, relativeToOnset } from '../time.js';
import type { Finding } from '../types.js';
import { hpaRestoreProposal } from '../../actions/objects/propose.js';
import { HELM_RELEASE } from '../../actions/config/sources.js';
import { objectCitation } from '../citations.js';

/** Traffic this much above its baseline is a load increase. */
const LOAD_RATIO = 1.5;

function hpaCitation(ns: string, name: string, fragment: string) {
  return { source: 'kubernetes', ref: `apis/autoscaling/v2/namespaces/${ns}/horizontalpodautoscalers/${name}#${fragment}` };
}

interface MetricReading {
  metric: string;
  current?: number;
  target?: number;
  unit: string;
}

/** Pair each spec metric with its status; utilization in %, values and averages as plain numbers. */
export function readMetrics(spec: V2MetricSpec[] | undefined, status: V2MetricStatus[] | undefined): MetricReading[] {
  return (spec ?? []).map((s, i) => {
    const st = status?.[i];
    if (s.type === 'Resource' && s.resource) {
      const cur = status?.find((x) => x.type === 'Resource' && x.resource?.name === s.resource!.name)?.resource?.current;
      if (s.resource.target.averageUtilization !== undefined)
        return { metric: s.resource.name, target: s.resource.target.averageUtilization, current: cur?.averageUtilization, unit: '%' };
      return { metric: s.resource.name, target: num(s.resource.target.averageValue), current: num(cur?.averageValue), unit: '' };
    }
    const name = s.pods?.metric.name ?? s.object?.metric.name ?? s.external?.metric.name ?? s.containerResource?.name ?? s.type;
    const target = s.pods?.target ?? s.object?.target ?? s.external?.target ?? s.containerResource?.target;
    const cur = st?.pods?.current ?? st?.object?.current ?? st?.external?.current ?? st?.containerResource?.current;
    if (target?.averageUtilization !== undefined) return { metric: name, target: target.averageUtilization, current: cur?.averageUtilization, unit: '%' };
    return { metric: name, target: num(target?.averageValue ?? target?.value), current: num(cur?.averageValue ?? cur?.value), unit: '' };
  });
}

/** Quantities as numbers (`500m` → 0.5, `120` → 120); unparseable → undefined. */
function num(q: string | number | undefined): number | undefined {
  if (q === undefined) return undefined;
  if (typeof q === 'number') return q;
  const m = /^([0-9.]+)(m|k|M|G)?$/.exec(q);
  if (!m) return undefined;
  const mult = { m: 1e-3, k: 1e3, M: 1e6, G: 1e9 }[m[2] ?? ''] ?? 1;
  return Number(m[1]) * mult;
}

/** The series' level before and after the onset (change point first, else baseline vs last). */
function levels(s: SeriesSummary, onset: Date): { before: number; after: number; at?: Date } | undefined {
  const cp = s.changePoints.filter((c) => Math.abs(c.at.getTime() - onset.getTime()) <= 30 * 60_000).sort((a, b) => b.after / (b.before || 1) - a.after / (a.before || 1))[0];
  if (cp) return { before: cp.before, after: cp.after, at: cp.at };
  if (s.baseline && s.last !== null) return { before: s.baseline.median, after: s.last, at: s.deviationStart };
  return undefined;
}

function summary(summaries: MetricSummary[] | undefined, id: string): MetricSummary | undefined {
  return summaries?.find((s) => s.id === id && s.status === 'success' && s.series.length > 0);
}


function atMax(h: V2HorizontalPodAutoscaler): boolean {
  const max = h.spec?.maxReplicas;
  const limited = (h.status?.conditions ?? []).some((c) => c.type === 'ScalingLimited' && c.status === 'True' && c.reason === 'TooManyReplicas');
  return limited || (max !== undefined && (h.status?.currentReplicas ?? 0) >= max && (h.status?.desiredReplicas ?? 0) >= max);
}

export const hpaAtMax: Analyzer = {
  name: 'hpa-at-max',
  analyze({ kube, onset, metrics, changes, cluster }: TriageInput): Finding[] {
    const t = kube.target;
    if (!t) return [];
    const out: Finding[] = [];
    for (const h of kube.hpas.filter(atMax)) {
      const name = h.metadata?.name ?? '?';
      const max = h.spec?.maxReplicas ?? 0;
      const current = h.status?.currentReplicas ?? 0;
      const desired = h.status?.desiredReplicas ?? current;
      const limited = (h.status?.conditions ?? []).find((c) => c.type === 'ScalingLimited' && c.status === 'True');
      const limitedSince = limited?.lastTransitionTime ? new Date(limited.lastTransitionTime) : undefined;
      const readings = readMetrics(h.spec?.metrics, h.status?.currentMetrics ?? undefined);
      // The metric furthest over its target is the one pinning the HPA at max.
      const over = readings
        .filter((r) => r.current !== undefined && r.target !== undefined && r.target > 0)
        .sort((a, b) => b.current! / b.target! - a.current! / a.target!)[0];
      const fmt = (r: MetricReading, v: number | undefined) => `${v ?? '?'}${r.unit}`;

      const supporting: Evidence[] = [
        {
          kind: 'object',
          summary:
            `HPA ${name}: ${current}/${max} replicas (desired ${desired})` +
            (limited ? `, ScalingLimited ${limited.reason}: "${limited.message ?? ''}"${limitedSince ? ` since ${clockTime(limitedSince)}` : ''}` : '') +
            (over ? `; ${over.metric} ${fmt(over, over.current)} of target ${fmt(over, over.target)}` : ''),
          citation: hpaCitation(t.namespace, name, 'status'),
          observedAt: limitedSince,
          detail: { maxReplicas: max, currentReplicas: current, desiredReplicas: desired, metrics: readings },
        },
      ];
      const refuting: Evidence[] = [];
      const facts: Record<string, string | number | boolean> = { hpa: name, maxReplicas: max, currentReplicas: current, desiredReplicas: desired };
      if (over) {
        facts.metric = over.metric;
        facts.current = over.current!;
        facts.target = over.target!;
        facts.unit = over.unit;
      }
      if (limitedSince) facts.limitedSince = limitedSince.toISOString();

      // Load or regression: what did traffic do at the onset?
      const rate = summary(metrics?.summaries, 'request_rate');
      const latency = summary(metrics?.summaries, 'latency_p99');
      let driver: 'load' | 'regression' | 'misconfiguration' | 'unknown' = 'unknown';
      const traffic = rate ? levels(rate.series[0]!, onset) : undefined;
      if (rate && traffic) {
        const ratio = traffic.before > 0 ? traffic.after / traffic.before : Number.POSITIVE_INFINITY;
        facts.trafficBefore = Number(traffic.before.toPrecision(3));
        facts.trafficAfter = Number(traffic.after.toPrecision(3));
        if (Number.isFinite(ratio)) facts.trafficRatio = Number(ratio.toFixed(2));
        const lines = metricEvidence(rate);
        const line: Evidence = lines[0] ?? {
          kind: 'metric',
          summary: `${rate.title} ${traffic.before.toPrecision(3)} → ${traffic.after.toPrecision(3)} req/s`,
          citation: rate.citation,
        };
        if (ratio >= LOAD_RATIO) {
          driver = 'load';
          supporting.push(line);
        } else {
          driver = latency && metricEvidence(latency).length > 0 ? 'regression' : 'unknown';
          refuting.push({ ...line, summary: `traffic did not rise (${traffic.before.toPrecision(3)} → ${traffic.after.toPrecision(3)} req/s): the saturation is not load` });
        }
      }
      if (latency) {
        const lines = metricEvidence(latency);
        if (lines[0]) (driver === 'regression' ? refuting : supporting).push(lines[0]);
      }
      // KEDA owns its HPA (`keda-hpa-<name>`): the ceiling is the ScaledObject's maxReplicaCount, and an
      // edit of it right before the HPA hit max is the cause, not load.
      const scaledObject = (h.metadata?.ownerReferences ?? []).find((o) => o.kind === 'ScaledObject')?.name ?? (/^keda-hpa-(.+)$/.exec(name)?.[1]);
      // A lowered ceiling waits for the next peak to bite: an edit hours before the HPA hit it still
      // explains it, as long as it came before the limit did.
      const ceilingEdit = scaledObject
        ? changes
            .filter((c) => c.target.kind === 'ScaledObject' && c.target.name === scaledObject && c.target.namespace === t.namespace && c.at.getTime() <= (limitedSince ?? onset).getTime() + 60_000 && onset.getTime() - c.at.getTime() <= DELAYED_EFFECT_MS)
            .sort((a, b) => b.at.getTime() - a.at.getTime())[0]
        : undefined;
      // A queue trigger names what the consumer falls behind on: the grader's and the responder's `topic`/`consumer`.
      const so = scaledObject ? (cluster?.snapshot.custom['ScaledObject'] ?? []).find((o) => o.metadata.namespace === t.namespace && o.metadata.name === scaledObject) : undefined;
      Object.assign(facts, queueTriggerFacts(so?.spec?.['triggers'], t.name));
      if (ceilingEdit && driver !== 'load') {
        driver = 'misconfiguration';
        facts.scaledObject = scaledObject!;
        facts.manager = ceilingEdit.actor;
        facts.changedAt = ceilingEdit.at.toISOString();
        supporting.push({ kind: 'change', summary: `ScaledObject ${scaledObject} edited by ${ceilingEdit.actor} at ${clockTime(ceilingEdit.at)} (${relativeToOnset(ceilingEdit.at, onset)}): KEDA's HPA now stops at ${max}`, citation: ceilingEdit.citation, observedAt: ceilingEdit.at });
        // The release that owns the ScaledObject still says what the ceiling was meant to be.
        const intended = so ? helmIntended(so, kube, 'maxReplicaCount') : undefined;
        if (intended && typeof intended.value === 'number' && intended.value > max) {
          facts.previousMaxReplicas = intended.value;
          supporting.push({ kind: 'helm_release', summary: `Helm ${intended.release} rev ${intended.revision} values set ${intended.path}: ${intended.value}; the live ScaledObject says ${max}`, citation: intended.citation });
        }
      }
      facts.driver = driver;
      // The faulty object is the ScaledObject KEDA renders the HPA from; the HPA and the workload are in scope.
      const keda = driver === 'misconfiguration' && !!ceilingEdit && !!scaledObject;

      // A recent rollout of the target with flat traffic is the better explanation: per-request cost went up.
      const recentRollout = changes.find(
        (c) =>
          c.target.namespace === t.namespace &&
          c.target.name === t.name &&
          ['rollout', 'image', 'resources', 'deploy', 'helm_upgrade'].includes(c.kind) &&
          onset.getTime() - c.at.getTime() <= CHANGE_WINDOW_MS &&
          c.at.getTime() <= onset.getTime(),
      );
      if (recentRollout && driver !== 'load') {
        refuting.push({
          kind: 'change',
          summary: `${recentRollout.summary} (${relativeToOnset(recentRollout.at, onset)}) without more traffic: each request likely got more expensive`,
          citation: recentRollout.citation,
          observedAt: recentRollout.at,
        });
      }

      const status = driver === 'load' || driver === 'misconfiguration' ? 'supported' : driver === 'regression' || recentRollout ? 'inconclusive' : 'supported';
      const confidence = driver === 'load' || driver === 'misconfiguration' ? 0.88 : status === 'inconclusive' ? 0.45 : 0.7;
      // The saturated workload first: it is what runs short, then who sees the latency.
      const affected = [
        ...(keda ? [{ kind: 'HorizontalPodAutoscaler', namespace: t.namespace, name }] : []),
        { kind: t.kind, namespace: t.namespace, name: t.name },
        ...scopeRefs(kube),
      ];
      const overText = over ? `${over.metric} at ${fmt(over, over.current)} against a target of ${fmt(over, over.target)}` : 'its metric above target';
      out.push({
        key: `hpa-at-max:${t.namespace}/${t.kind}/${t.name}`,
        analyzer: 'hpa-at-max',
        status,
        confidence,
        title: `${t.name} saturated: HPA ${name} at maxReplicas ${max}${over ? ` (${over.metric} ${fmt(over, over.current)}/${fmt(over, over.target)})` : ''}${driver === 'load' && facts.trafficRatio ? `, traffic ×${facts.trafficRatio}` : ''}`,
        component: keda ? { kind: 'ScaledObject', namespace: t.namespace, name: scaledObject! } : { kind: t.kind, namespace: t.namespace, name: t.name },
        mechanism:
          `HPA ${t.namespace}/${name} runs ${t.name} at ${current} replicas = maxReplicas ${max}` +
          (desired > max ? ` and wants ${desired}` : '') +
          `, with ${overText}` +
          (limitedSince ? `; scaling has been limited (TooManyReplicas) since ${clockTime(limitedSince)}, ${humanDuration(onset.getTime() - limitedSince.getTime())} ${limitedSince <= onset ? 'before' : 'after'} the alert` : '') +
          '. ' +
          (driver === 'load'
            ? `Traffic rose from ${facts.trafficBefore} to ${facts.trafficAfter} req/s (×${facts.trafficRatio ?? '∞'}) at the onset: load-driven saturation. `
            : driver === 'regression'
              ? 'Traffic did not rise while latency did: a per-request regression pins the HPA, more replicas would only hide it. '
              : '') +
          (keda
            ? `KEDA renders that HPA from ScaledObject ${scaledObject}, whose maxReplicaCount was lowered${facts.previousMaxReplicas !== undefined ? ` from ${facts.previousMaxReplicas}` : ''} to ${max}; put it back on the ScaledObject (editing the HPA is reverted by KEDA).`
            : `Raise spec.maxReplicas of HPA ${name} (and check cluster capacity for the extra pods); HPAs are edited by humans, not by Vigil.`),
        scope: `every request to ${t.name} competes for ${max} saturated replicas${affected.length ? `; ${affected.map((a) => `${a.kind.toLowerCase()}/${a.name}`).join(', ')} see the latency` : ''}`,
        affected,
        facts,
        supporting,
        refuting,
        ...(() => {
          let previousMax: number | undefined;
          const mitigation = hpaRestoreProposal(h, (prev) => {
            previousMax = prev;
            return `put back HPA ${name}'s applied ${prev !== undefined ? `maxReplicas ${prev} (an edit lowered it to ${max})` : 'metrics (an edit changed them)'}`;
          });
          if (!mitigation) return {};
          if (previousMax !== undefined) facts.previousMaxReplicas = previousMax;
          return { mitigation };
        })(),
      });
    }
    // Below its ceiling but behind the demand: the metric is over target and the HPA adds pods slower than
    // the load grows (a scale-up policy of a pod a minute, a minReplicas lowered to save cost). The
    // autoscaler's own spec is the fault; the workload it scales runs short.
    for (const h of kube.hpas.filter((x) => !atMax(x))) {
      const behind = scalingBehind(h, onset);
      if (!behind) continue;
      const name = h.metadata?.name ?? '?';
      const { current, desired, over, slow, edit } = behind;
      const facts: Record<string, string | number | boolean> = {
        hpa: name,
        minReplicas: h.spec?.minReplicas ?? 1,
        maxReplicas: h.spec?.maxReplicas ?? 0,
        currentReplicas: current,
        desiredReplicas: desired,
        metric: over.metric,
        current: over.current!,
        target: over.target!,
        driver: 'misconfiguration',
        ...(slow ? { scaleUpPolicy: slow } : {}),
        ...(edit ? { manager: edit.manager, changedAt: edit.at.toISOString(), changedFields: edit.fields.join(',') } : {}),
      };
      const supporting: Evidence[] = [
        {
          kind: 'object',
          summary: `HPA ${name}: ${current} replicas (desired ${desired}, min ${facts.minReplicas}, max ${facts.maxReplicas}); ${over.metric} ${over.current}${over.unit} of target ${over.target}${over.unit}${slow ? `; scale-up policy ${slow}` : ''}`,
          citation: hpaCitation(t.namespace, name, 'spec'),
        },
      ];
      if (edit) {
        supporting.push({
          kind: 'managed_fields',
          summary: `managedFields: \`${edit.manager}\` wrote ${edit.fields.map((f) => `spec.${f}`).join(', ')} of HPA ${name} at ${clockTime(edit.at)} (${relativeToOnset(edit.at, onset)})`,
          citation: hpaCitation(t.namespace, name, `metadata.managedFields[${edit.index}]`),
          observedAt: edit.at,
        });
      }
      const throttle = summary(metrics?.summaries, 'cpu_throttling');
      if (throttle) supporting.push(...metricEvidence(throttle).slice(0, 1));
      out.push({
        key: `hpa-behind:${t.namespace}/HorizontalPodAutoscaler/${name}`,
        analyzer: 'hpa-at-max',
        family: 'hpa-at-max',
        status: 'supported',
        confidence: edit ? 0.86 : 0.78,
        title: `HPA ${name} scales ${t.name} up too slowly: ${current} of ${desired} wanted, ${over.metric} ${over.current}${over.unit}/${over.target}${over.unit}${slow ? ` (${slow})` : ''}`,
        component: { kind: 'HorizontalPodAutoscaler', namespace: t.namespace, name },
        mechanism:
          `HPA ${t.namespace}/${name} is below its maximum (${current} of ${facts.maxReplicas}) but behind the load: ${behind.rateLimited ? 'ScalingLimited (ScaleUpLimit): it wants more replicas than its scale-up rate allows' : `it wants ${desired} replicas`}, with ${over.metric} at ${over.current}${over.unit} against ${over.target}${over.unit}` +
          (slow ? `, and its scale-up policy adds only ${slow}` : '') +
          (edit ? `; \`${edit.manager}\` changed its ${edit.fields.join(', ')} ${relativeToOnset(edit.at, onset)} (minReplicas is now ${facts.minReplicas})` : '') +
          `. Until it catches up, ${t.name}'s pods run over target and requests queue. Fix: raise minReplicas back (at the source: ${edit ? edit.manager : 'the HPA manifest'}) or allow faster scale-up; scaling by hand is undone by the HPA.`,
        scope: `${t.name} runs short of replicas; ${scopeRefs(kube).map((a) => `${a.kind.toLowerCase()}/${a.name}`).join(', ') || 'its callers'} see the latency`,
        affected: [{ kind: t.kind, namespace: t.namespace, name: t.name }, ...scopeRefs(kube)],
        facts,
        supporting,
        refuting: [],
      });
    }
    for (const h of kube.hpas.filter((x) => !atMax(x))) {
      const f = flapping(kube, h, onset);
      if (f) out.push(f);
    }
    return out;
  },
};

/**
 * An HPA that scales down as soon as a burst ends: `behavior.scaleDown.stabilizationWindowSeconds`
 * cut to (nearly) 0 by a recent write, and SuccessfulRescale events going up and down over and over.
 * Pods that take time to become Ready are removed before they serve, so capacity never follows load.
 * Localised to the HPA (driver `misconfiguration`); no mitigation (put the window back at its source).
 */
function flapping(kube: KubeEvidence, h: V2HorizontalPodAutoscaler, onset: Date): Finding | undefined {
  const t = kube.target!;
  const name = h.metadata?.name ?? '?';
  const window = h.spec?.behavior?.scaleDown?.stabilizationWindowSeconds;
  if (window === undefined || window > 60) return undefined;
  const rescales = kube.events.filter((e) => e.reason === 'SuccessfulRescale' && e.involvedObject?.kind === 'HorizontalPodAutoscaler' && e.involvedObject.name === name);
  const sizes = new Set(rescales.map((e) => /New size: (\d+)/.exec(e.message ?? '')?.[1]).filter((x): x is string => !!x));
  const count = rescales.reduce((n, e) => n + (e.count ?? 1), 0);
  if (sizes.size < 2 || count < 6) return undefined;
  const writer = (h.metadata?.managedFields ?? [])
    .filter((m) => m.time && m.subresource !== 'status' && JSON.stringify(m.fieldsV1 ?? {}).includes('f:behavior'))
    .sort((a, b) => new Date(b.time!).getTime() - new Date(a.time!).getTime())[0];
  const at = writer?.time ? new Date(writer.time) : undefined;
  if (at && (onset.getTime() - at.getTime() > 24 * 3600_000 || at.getTime() > onset.getTime() + 120_000)) return undefined;
  const metric = (h.spec?.metrics ?? [])[0];
  const metricName = metric?.resource?.name ?? metric?.pods?.metric?.name ?? metric?.external?.metric?.name ?? metric?.object?.metric?.name;
  const component: ComponentRef = { kind: 'HorizontalPodAutoscaler', namespace: t.namespace, name };
  return {
    key: `hpa-at-max:${t.namespace}/HorizontalPodAutoscaler/${name}:flapping`,
    analyzer: 'hpa-at-max',
    family: 'hpa-at-max',
    status: 'supported',
    confidence: at ? 0.9 : 0.78,
    title: `HPA ${name} scales down as soon as load dips (scaleDown window ${window}s): ${t.name} keeps losing the pods it is still warming up`,
    component,
    mechanism:
      `HPA ${t.namespace}/${name} has behavior.scaleDown.stabilizationWindowSeconds ${window}${writer ? `, written by \`${writer.manager}\` at ${clockTime(at!)} (${relativeToOnset(at!, onset)})` : ''}; it rescaled ${count} times between ${[...sizes].sort((a, b) => Number(a) - Number(b)).join(' and ')} replicas. ` +
      `New pods that need time to become Ready are removed before they serve, so ${t.name} stays short of capacity through every burst. Fix: restore the scale-down window (the default is 300 s) at its source.`,
    scope: `${t.name} and what it serves, in waves with the load`,
    affected: [component, ...scopeRefs(kube)],
    facts: { hpa: name, ...(metricName ? { metric: metricName } : {}), driver: 'misconfiguration', maxReplicas: h.spec?.maxReplicas ?? 0, stabilizationWindowSeconds: window, rescales: count, sizes: [...sizes].join(','), ...(writer ? { manager: writer.manager ?? 'unknown', changedAt: at!.toISOString() } : {}) },
    supporting: [
      { kind: 'object', summary: `HPA ${name}: scaleDown.stabilizationWindowSeconds ${window}${writer ? ` (last written by ${writer.manager} at ${clockTime(at!)})` : ''}`, citation: hpaCitation(t.namespace, name, 'spec.behavior') },
      { kind: 'event', summary: `SuccessfulRescale ×${count} on hpa/${name}: sizes ${[...sizes].join(', ')}`, citation: { source: 'kubernetes', ref: `api/v1/namespaces/${t.namespace}/events/${rescales[0]!.metadata?.name ?? '?'}` } },
    ],
    refuting: [],
  };
}

/** A scale-up policy that adds at most this many pods a minute is slow against a traffic peak. */
const SLOW_PODS_PER_MINUTE = 2;
/** A spec edit this recent is a suspect for an autoscaler that falls behind. */
const SPEC_EDIT_MS = 24 * 3600_000;

function scalingBehind(h: V2HorizontalPodAutoscaler, onset: Date) {
  const current = h.status?.currentReplicas ?? 0;
  const desired = h.status?.desiredReplicas ?? current;
  const over = readMetrics(h.spec?.metrics, h.status?.currentMetrics ?? undefined)
    .filter((r) => r.current !== undefined && r.target !== undefined && r.target > 0 && r.current > r.target * 1.1)
    .sort((a, b) => b.current! / b.target! - a.current! / a.target!)[0];
  // The controller says so itself: ScalingLimited/ScaleUpLimit, "the desired replica count is increasing
  // faster than the maximum scale rate" (status.desiredReplicas then shows only what the rate allows).
  const rateLimited = (h.status?.conditions ?? []).some((c) => c.type === 'ScalingLimited' && c.status === 'True' && c.reason === 'ScaleUpLimit');
  if (!over || (desired <= current && !rateLimited)) return undefined;
  const policies = h.spec?.behavior?.scaleUp?.policies ?? [];
  const slowPolicy = policies.length > 0 && policies.every((p) => p.type === 'Pods' && p.value * (60 / Math.max(1, p.periodSeconds)) <= SLOW_PODS_PER_MINUTE);
  const slow = slowPolicy ? policies.map((p) => `${p.value} pod${p.value === 1 ? '' : 's'} per ${p.periodSeconds} s`).join(' or ') : undefined;
  // The newest write of the HPA's scaling spec by someone other than the controller.
  let edit: { manager: string; at: Date; fields: string[]; index: number } | undefined;
  (h.metadata?.managedFields ?? []).forEach((m, index) => {
    if (!m.time || /kube-controller-manager/.test(m.manager ?? '')) return;
    const spec = (m.fieldsV1 as Record<string, Record<string, unknown>> | undefined)?.['f:spec'] ?? {};
    const fields = ['minReplicas', 'behavior'].filter((f) => `f:${f}` in spec);
    const at = new Date(m.time);
    if (!fields.length || onset.getTime() - at.getTime() > SPEC_EDIT_MS || at.getTime() > onset.getTime()) return;
    if (!edit || at > edit.at) edit = { manager: m.manager ?? 'unknown', at, fields, index };
  });
  if (!slow && !edit) return undefined;
  return { current, desired, over, slow, edit, rateLimited };
}

/** KEDA trigger metadata keys naming the queue (first that is set wins) and the consumer group, per scaler type. */
const QUEUE_KEYS: Record<string, { topic: string[]; consumer?: string[] }> = {
  kafka: { topic: ['topic'], consumer: ['consumerGroup'] },
  rabbitmq: { topic: ['queueName'] },
  'aws-sqs-queue': { topic: ['queueURL', 'queueName'] },
  'azure-servicebus': { topic: ['queueName', 'topicName'], consumer: ['subscriptionName'] },
  'azure-queue': { topic: ['queueName'] },
  'gcp-pubsub': { topic: ['subscriptionName', 'topicName'] },
  'redis-streams': { topic: ['stream'], consumer: ['consumerGroup'] },
  'nats-jetstream': { topic: ['stream'], consumer: ['consumer'] },
  stan: { topic: ['subject'], consumer: ['queueGroup'] },
  'redis': { topic: ['listName'] },
  pulsar: { topic: ['topic'], consumer: ['subscription'] },
};

/**
 * `topic` and `consumer` from a ScaledObject's first queue trigger (KEDA scaler docs' metadata names):
 * the consumer is the trigger's consumer group when it names one, else the scaled workload.
 */
export function queueTriggerFacts(triggers: unknown, workload: string): { topic?: string; consumer?: string } {
  if (!Array.isArray(triggers)) return {};
  for (const t of triggers as { type?: string; metadata?: Record<string, unknown> }[]) {
    const keys = t?.type ? QUEUE_KEYS[t.type] : undefined;
    if (!keys) continue;
    const md = t.metadata ?? {};
    const pick = (names: string[] = []) => names.map((n) => md[n]).find((v): v is string => typeof v === 'string' && v.length > 0);
    const topic = pick(keys.topic);
    if (!topic) continue;
    return { topic, consumer: pick(keys.consumer) ?? workload };
  }
  return {};
}

/**
 * What the Helm release that owns `obj` set for a field the live object no longer has: the deployed
 * revision's values searched for the field's name (charts pass `keda.maxReplicaCount` through as is).
 * Only the target's own release is read (the gatherer decodes that one); another release: undefined.
 */
export function helmIntended(obj: { metadata: { annotations?: Record<string, string> } }, kube: KubeEvidence, field: string): { release: string; revision: number; path: string; value: unknown; citation: Evidence['citation'] } | undefined {
  const release = obj.metadata.annotations?.[HELM_RELEASE];
  const helm = kube.helm;
  if (!release || !helm || helm.release !== release) return undefined;
  const deployed = helm.revisions.find((r) => r.status === 'deployed') ?? helm.revisions[0];
  if (!deployed) return undefined;
  const found: { path: string; value: unknown }[] = [];
  const walk = (v: unknown, path: string[]) => {
    if (!v || typeof v !== 'object' || Array.isArray(v)) return;
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (k === field && (typeof x === 'number' || typeof x === 'string')) found.push({ path: [...path, k].join('.'), value: typeof x === 'string' && /^\d+$/.test(x) ? Number(x) : x });
      else walk(x, [...path, k]);
    }
  };
  walk(deployed.values, []);
  // Two places naming the field (a worker and an api block): ambiguous, say nothing.
  if (found.length !== 1) return undefined;
  return { release, revision: deployed.revision, ...found[0]!, citation: objectCitation('Secret', deployed.namespace, deployed.secretName, 'data.release (decoded)') };
}

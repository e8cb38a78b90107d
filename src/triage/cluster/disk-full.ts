/**
 * `disk-full`: a PersistentVolumeClaim a candidate mounts is (nearly) full, and writes to it fail.
 *
 * Nothing in Kubernetes flags a full claim: the PVC stays Bound, the pod Running; the kubelet emits no
 * event. The fullness is in the kubelet's volume stats, the cluster summary `pvc_usage`
 * (`kubelet_volume_stats_used_bytes / kubelet_volume_stats_capacity_bytes`, series labelled
 * `namespace`, `persistentvolumeclaim`, a ratio 0..1), and in the writers' logs: `No space left on
 * device` / `ENOSPC` (every runtime), Postgres `could not extend file` / `could not write to file
 * "pg_wal/…"`, MySQL `The table … is full` / `Disk is full writing`, SQLite `database or disk is full`,
 * Elasticsearch `flood stage disk watermark`, `disk full`, `out of disk`, `Disk quota exceeded`.
 * Callers quote the database's error (`SQLSTATE 53100`), which corroborates too.
 *
 * Mounted by a candidate: the pod spec's `persistentVolumeClaim.claimName`, or a StatefulSet's claim
 * `<template>-<pod>`, of a candidate workload or one the walk reached (or a PVC the walk reached itself:
 * an alert about the claim).
 *
 * Status: usage ≥ 97% + write errors in the candidates' logs (or events) → `supported`; usage ≥ 99%
 * alone → `supported` with less confidence (writes cannot succeed at 100%); 97–99% alone → `open`;
 * logs alone (no usage metric) → at most `open`; the metric shows the claim far from full while its
 * writer logs ENOSPC → `inconclusive` (inodes, another volume, or the container's writable layer).
 * A full claim that no candidate mounts is `unrelated`. No mitigation: expanding the claim
 * (`allowVolumeExpansion`) or freeing space is a human decision.
 *
 * Facts: `pvc`, `usedPercent` (integer), `usedBytes` and `capacityBytes` (only when a series gives
 * them), `workload` (the workload that mounts it), `storageClass`.
 */
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { MetricSummary, SeriesSummary } from '../../evidence/prometheus/types.js';
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import { nodeId, refOfId } from '../../topology/graph.js';
import { affectedBy } from '../../topology/walk.js';
import type { ClusterAnalyzer, ClusterTriageInput } from '../analyzer.js';
import { CHANGE_WINDOW_MS } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime } from '../time.js';
import type { Finding } from '../types.js';
import { allEvents, clip, eventEvidenceOf, eventTime, logHits, type LogHit } from './common.js';
import { candidateWorkloadIds, dedupeRefs, logHitEvidence, servicesOf } from './node-health.js';

const NAME = 'disk-full';
const FULL = 0.97;
const EXHAUSTED = 0.99;
/** Below this the bytes are not what ran out. */
const NOT_FULL = 0.9;

const DISK_ERRORS =
  /No space left on device|\bENOSPC\b|could not extend file|disk (is )?full|out of disk|Disk quota exceeded|\bEDQUOT\b|database or disk is full|SQLSTATE 53100|\b53100\b|The table '?[\w.]+'? is full|flood.stage disk watermark|flood.stage watermark|read.only.allow.delete|cluster_block_exception|insufficient (disk|storage) space|not enough space on (the )?disk/i;

// Clients quote the block (`cluster_block_exception … read-only-allow-delete`); the nodes log the watermark.
const FLOOD_STAGE = /flood.stage|read.only.allow.delete|disk usage exceeded|cluster_block_exception/i;
const FLOOD_STAGE_WATERMARK = 0.95;
const SEARCH_ENGINE = /elastic|opensearch|(^|-)es(-|$)/i;

interface Usage {
  namespace: string;
  pvc: string;
  current: number | null;
  peak: number;
  since?: Date;
  summary: MetricSummary;
  series: SeriesSummary;
}

interface Mount {
  workload: ComponentRef;
  /** How it mounts it: `volume data`, `volumeClaimTemplate data`. */
  via: string;
  pods: string[];
}

const pvcKey = (ns: string | undefined, name: string) => `${ns ?? ''}/${name}`;

/** `pvc_usage` (and any used/capacity ratio of the kubelet's volume stats) by claim. */
function usages(input: ClusterTriageInput): Usage[] {
  const out = new Map<string, Usage>();
  for (const summary of allSummaries(input)) {
    const ratio = summary.id === 'pvc_usage' || (/kubelet_volume_stats_used_bytes/.test(summary.query) && /kubelet_volume_stats_capacity_bytes/.test(summary.query));
    if (!ratio) continue;
    for (const series of summary.series) {
      const ns = series.metric['namespace'] ?? series.metric['exported_namespace'];
      const pvc = series.metric['persistentvolumeclaim'];
      if (!ns || !pvc || series.max === null) continue;
      const shift = [...series.changePoints].reverse().find((c) => c.after >= FULL && c.before < FULL);
      const since = shift?.at ?? (series.deviationDirection === 'up' ? series.deviationStart : undefined);
      const u: Usage = { namespace: ns, pvc, current: series.last, peak: series.max, ...(since ? { since } : {}), summary, series };
      const prev = out.get(pvcKey(ns, pvc));
      if (!prev || (prev.current ?? prev.peak) < (u.current ?? u.peak)) out.set(pvcKey(ns, pvc), u);
    }
  }
  return [...out.values()];
}

function allSummaries(input: ClusterTriageInput): MetricSummary[] {
  const seen = new Set<MetricSummary>();
  return [...input.metrics, ...input.inputs.flatMap((i) => i.metrics?.summaries ?? [])].filter((m) => {
    if (seen.has(m) || m.status !== 'success') return false;
    seen.add(m);
    return true;
  });
}

/** Used and capacity bytes of a claim, when a summary of the raw kubelet gauges holds them. */
function bytesOf(input: ClusterTriageInput, ns: string, pvc: string): { used?: number; capacity?: number } {
  const out: { used?: number; capacity?: number } = {};
  for (const summary of allSummaries(input)) {
    const q = summary.query;
    const used = summary.id === 'pvc_used_bytes' || (/kubelet_volume_stats_used_bytes/.test(q) && !/capacity_bytes/.test(q));
    const capacity = summary.id === 'pvc_capacity_bytes' || (/kubelet_volume_stats_capacity_bytes/.test(q) && !/used_bytes/.test(q));
    if (!used && !capacity) continue;
    const s = summary.series.find((x) => (x.metric['namespace'] ?? x.metric['exported_namespace']) === ns && x.metric['persistentvolumeclaim'] === pvc);
    if (s?.last === null || s?.last === undefined) continue;
    if (used) out.used = Math.round(s.last);
    if (capacity) out.capacity = Math.round(s.last);
  }
  return out;
}

/** Who mounts which claim: pod volumes, workload templates, StatefulSet claim templates, and the graph's `mounts` edges. */
function mounts(input: ClusterTriageInput): Map<string, Mount[]> {
  const s = input.cluster.snapshot;
  const t = input.cluster.topology;
  const out = new Map<string, Mount[]>();
  const add = (ns: string | undefined, claim: string, workload: ComponentRef, via: string, pod?: string) => {
    const k = pvcKey(ns, claim);
    const list = out.get(k) ?? [];
    let m = list.find((x) => nodeId(x.workload) === nodeId(workload));
    if (!m) {
      m = { workload, via, pods: [] };
      list.push(m);
    }
    if (pod && !m.pods.includes(pod)) m.pods.push(pod);
    out.set(k, list);
  };
  const pods: { pod: V1Pod; workload?: ComponentRef }[] = [
    ...input.inputs.flatMap((i) => (i.kube.target ? i.kube.pods.map((pod) => ({ pod, workload: { kind: i.kube.target!.kind, namespace: i.kube.target!.namespace, name: i.kube.target!.name } })) : [])),
    ...s.pods.map((pod) => ({ pod, workload: t.workloadOf(pod.metadata?.namespace ?? '', pod.metadata?.name ?? '') })),
  ];
  for (const { pod, workload } of pods) {
    const ns = pod.metadata?.namespace;
    const owner = workload ?? { kind: 'Pod', namespace: ns, name: pod.metadata?.name ?? '?' };
    for (const v of pod.spec?.volumes ?? []) if (v.persistentVolumeClaim?.claimName) add(ns, v.persistentVolumeClaim.claimName, owner, `volume ${v.name}`, pod.metadata?.name);
  }
  const workloads = [
    ...s.deployments.map((w) => ({ kind: 'Deployment', w })),
    ...s.statefulSets.map((w) => ({ kind: 'StatefulSet', w })),
    ...s.daemonSets.map((w) => ({ kind: 'DaemonSet', w })),
    ...input.inputs.filter((i) => i.kube.workload && i.kube.target).map((i) => ({ kind: i.kube.target!.kind, w: i.kube.workload! })),
  ];
  for (const { kind, w } of workloads) {
    const ns = w.metadata?.namespace;
    const name = w.metadata?.name;
    if (!name) continue;
    const ref = { kind, namespace: ns, name };
    for (const v of w.spec?.template?.spec?.volumes ?? []) if (v.persistentVolumeClaim?.claimName) add(ns, v.persistentVolumeClaim.claimName, ref, `volume ${v.name}`);
    if (kind !== 'StatefulSet') continue;
    const templates = (w.spec as { volumeClaimTemplates?: { metadata?: { name?: string } }[]; replicas?: number }).volumeClaimTemplates ?? [];
    const replicas = (w.spec as { replicas?: number }).replicas ?? 1;
    for (const tpl of templates) {
      if (!tpl.metadata?.name) continue;
      for (let i = 0; i < Math.min(replicas, 50); i++) add(ns, `${tpl.metadata.name}-${name}-${i}`, ref, `volumeClaimTemplate ${tpl.metadata.name}`, `${name}-${i}`);
    }
  }
  for (const [id, edges] of t.in) {
    if (!id.startsWith('PersistentVolumeClaim/')) continue;
    const claim = refOfId(id);
    for (const e of edges) if (e.kind === 'mounts') add(claim.namespace, claim.name, refOfId(e.from), e.via);
  }
  return out;
}

function claimOf(input: ClusterTriageInput, ns: string | undefined, name: string): V1PersistentVolumeClaim | undefined {
  return [...input.cluster.snapshot.pvcs, ...input.inputs.flatMap((i) => i.kube.pvcs)].find((p) => p.metadata?.namespace === ns && p.metadata?.name === name);
}

export const diskFull: ClusterAnalyzer = {
  name: NAME,
  analyze(input: ClusterTriageInput): Finding[] {
    const wanted = candidateWorkloadIds(input);
    const byClaim = mounts(input);
    const reachedClaim = (ns: string, name: string) => input.cluster.walk.reached.has(nodeId({ kind: 'PersistentVolumeClaim', namespace: ns, name }));
    const candidateMounts = (ns: string, name: string) => (byClaim.get(pvcKey(ns, name)) ?? []).filter((m) => wanted.has(nodeId(m.workload)));
    const hits = logHits(input.inputs, DISK_ERRORS);
    const events = allEvents(input).filter((e) => DISK_ERRORS.test(e.message ?? '') && Math.abs((eventTime(e)?.getTime() ?? 0) - input.onset.getTime()) <= CHANGE_WINDOW_MS);
    const measured = usages(input);
    const metricRead = allSummaries(input).some((m) => m.id === 'pvc_usage');
    const out: Finding[] = [];
    const done = new Set<string>();

    // Elasticsearch/OpenSearch stop writes at their flood-stage watermark (95% by default) with an index
    // block, well before the disk is full: when writers quote it, their data claims are full at 95%.
    const floodStage = hits.some((h) => FLOOD_STAGE.test(`${h.example} ${h.template}`)) || events.some((e) => FLOOD_STAGE.test(e.message ?? ''));
    const fullAt = (u: Usage) => (floodStage && (byClaim.get(pvcKey(u.namespace, u.pvc)) ?? []).some((m) => SEARCH_ENGINE.test(m.workload.name) || SEARCH_ENGINE.test(u.pvc)) ? FLOOD_STAGE_WATERMARK : FULL);
    for (const u of measured) {
      const full = fullAt(u);
      const level = u.current !== null && u.current >= full ? u.current : u.peak;
      if (level < full) continue;
      done.add(pvcKey(u.namespace, u.pvc));
      const component: ComponentRef = { kind: 'PersistentVolumeClaim', namespace: u.namespace, name: u.pvc };
      const key = `${NAME}:${u.namespace}/PersistentVolumeClaim/${u.pvc}`;
      const ms = candidateMounts(u.namespace, u.pvc);
      const usedPercent = Math.min(100, Math.round(level * 100));
      const bytes = bytesOf(input, u.namespace, u.pvc);
      const claim = claimOf(input, u.namespace, u.pvc);
      const metricEv: Evidence = {
        kind: 'metric',
        summary: `${u.summary.title} of ${u.namespace}/${u.pvc}: ${pct(u.current)} now, peak ${pct(u.peak)}${u.series.baseline ? `, ${pct(u.series.baseline.median)} before` : ''}${u.since ? `; over ${Math.round(FULL * 100)}% since ${clockTime(u.since)}` : ''}${full < FULL ? `; past the ${Math.round(full * 100)}% flood-stage watermark, where the search engine blocks writes` : ''}${bytes.used !== undefined && bytes.capacity !== undefined ? ` (${gib(bytes.used)} of ${gib(bytes.capacity)})` : ''}`,
        citation: u.summary.citation,
        ...(u.since ? { observedAt: u.since } : {}),
        detail: { metric: u.series.metric, last: u.series.last, max: u.series.max, baseline: u.series.baseline, changePoints: u.series.changePoints },
      };
      if (!ms.length && !reachedClaim(u.namespace, u.pvc)) {
        const anyone = (byClaim.get(pvcKey(u.namespace, u.pvc)) ?? [])[0];
        out.push({
          key,
          analyzer: NAME,
          family: 'disk-full',
          status: 'unrelated',
          confidence: 0.05,
          title: `PVC ${u.namespace}/${u.pvc} is ${usedPercent}% full`,
          component,
          mechanism: `PVC ${u.namespace}/${u.pvc} is ${usedPercent}% used${anyone ? ` (mounted by ${anyone.workload.kind.toLowerCase()}/${anyone.workload.name})` : ''}.`,
          reason: 'no workload this alert reaches mounts it',
          facts: { pvc: u.pvc, usedPercent, ...(anyone ? { workload: anyone.workload.name } : {}) },
          supporting: [],
          refuting: [metricEv],
        });
        continue;
      }
      out.push(finding(input, { full, component, key, usedPercent, level, usage: u, bytes, claim, mounts: ms.length ? ms : byClaim.get(pvcKey(u.namespace, u.pvc)) ?? [], hits, events, metricEv, byClaim }));
    }

    // Write errors without a usage measure over the threshold: the claims their writers (or the services they call) mount.
    const suspects = new Map<string, { ns: string; name: string; mounts: Mount[]; hits: LogHit[]; direct: boolean }>();
    for (const h of hits) {
      const w = h.workload;
      // A StatefulSet's pod writes to its own claim (`data-db-1` for `db-1`), not to its siblings'.
      const direct = [...byClaim.entries()].filter(([, ms]) => ms.some((m) => nodeId(m.workload) === nodeId(w) && (!h.pod || !m.pods.length || m.pods.includes(h.pod))));
      const claims = direct.length ? direct : calleeClaims(input, w, byClaim);
      if (claims.some(([k]) => done.has(k))) continue; // explained by a claim measured full
      for (const [k, ms] of claims) {
        if (done.has(k)) continue;
        const [ns, name] = [k.slice(0, k.indexOf('/')), k.slice(k.indexOf('/') + 1)];
        const cur = suspects.get(k) ?? { ns, name, mounts: ms, hits: [], direct: false };
        cur.hits.push(h);
        cur.direct ||= direct.length > 0;
        suspects.set(k, cur);
      }
    }
    const perWriter = new Map<string, number>();
    for (const s of suspects.values()) for (const m of s.mounts) perWriter.set(nodeId(m.workload), (perWriter.get(nodeId(m.workload)) ?? 0) + 1);
    for (const s of suspects.values()) {
      const component: ComponentRef = { kind: 'PersistentVolumeClaim', namespace: s.ns, name: s.name };
      const usage = measured.find((u) => u.namespace === s.ns && u.pvc === s.name);
      const claim = claimOf(input, s.ns, s.name);
      const many = s.mounts.some((m) => (perWriter.get(nodeId(m.workload)) ?? 0) > 1);
      const writers = s.mounts.map((m) => `${m.workload.kind.toLowerCase()}/${m.workload.name}`).join(', ');
      const supporting = s.hits.slice(0, 3).map((h) => logHitEvidence(h, 'write errors'));
      const refuting: Evidence[] = [];
      let status: Finding['status'] = 'open';
      let confidence = s.direct ? (many ? 0.4 : 0.5) : 0.35;
      if (usage && usage.peak < NOT_FULL) {
        status = 'inconclusive';
        confidence = 0.25;
        refuting.push({
          kind: 'metric',
          summary: `${usage.summary.title} of ${s.ns}/${s.name} peaks at ${pct(usage.peak)}: its bytes did not run out (inodes — kubelet_volume_stats_inodes_used —, another volume, or the container's writable layer may have)`,
          citation: usage.summary.citation,
        });
      }
      const facts: Record<string, string | number | boolean> = { pvc: s.name, ...(s.mounts[0] ? { workload: s.mounts[0].workload.name } : {}), ...(claim?.spec?.storageClassName ? { storageClass: claim.spec.storageClassName } : {}) };
      if (usage) facts['usedPercent'] = Math.min(100, Math.round((usage.current ?? usage.peak) * 100));
      out.push({
        key: `${NAME}:${s.ns}/PersistentVolumeClaim/${s.name}`,
        analyzer: NAME,
        family: 'disk-full',
        status,
        confidence,
        title: `PVC ${s.ns}/${s.name} may be full: ${s.direct ? writers : s.hits[0]!.workload.name} log${s.direct && s.mounts.length > 1 ? '' : 's'} "${phrase(s.hits[0]!)}"`,
        component,
        mechanism:
          `${s.hits.map((h) => h.workload.name).filter((v, i, a) => a.indexOf(v) === i).join(', ')} log write failures (${s.hits.reduce((n, h) => n + h.count, 0)}×, "${clip(s.hits[0]!.template, 120)}")` +
          (s.direct ? `; ${writers} mount${s.mounts.length === 1 ? 's' : ''} PVC ${s.ns}/${s.name}` : `; the service they call is backed by ${writers}, which mounts PVC ${s.ns}/${s.name}`) +
          (usage ? `; its usage is ${pct(usage.current ?? usage.peak)}` : metricRead ? '; no usage series for this claim' : '; no volume usage metric was available (kubelet_volume_stats_*) to confirm it is full') +
          (many ? '; the writer mounts more than one claim, which one is full is not known' : '') +
          '.',
        scope: `writes of ${writers} fail`,
        affected: scopeOf(input, component, s.mounts),
        facts,
        supporting,
        refuting,
      });
    }
    return out;
  },
};

function finding(
  input: ClusterTriageInput,
  a: {
    /** The fill level at which writes stop (the flood-stage watermark for a search engine's data). */
    full: number;
    component: ComponentRef;
    key: string;
    usedPercent: number;
    level: number;
    usage: Usage;
    bytes: { used?: number; capacity?: number };
    claim?: V1PersistentVolumeClaim;
    mounts: Mount[];
    hits: LogHit[];
    events: ReturnType<typeof allEvents>;
    metricEv: Evidence;
    byClaim: Map<string, Mount[]>;
  },
): Finding {
  const { component, usage: u } = a;
  const ns = component.namespace!;
  const writerIds = new Set(a.mounts.map((m) => nodeId(m.workload)));
  const writerPods = new Set(a.mounts.flatMap((m) => m.pods));
  // A writer's own pod, or a sibling that names it (the Elasticsearch master logs every node's watermark).
  const own = a.hits.filter((h) => writerIds.has(nodeId(h.workload)) && (!h.pod || !writerPods.size || writerPods.has(h.pod) || [...writerPods].some((p) => h.example.includes(`[${p}]`) || h.example.includes(` ${p} `))));
  // Callers quoting the store's error: those that call a writer; without a graph edge, those of its namespace that mount no claim of their own.
  const mountsOwn = (w: ComponentRef) => [...a.byClaim.values()].some((ms) => ms.some((m) => nodeId(m.workload) === nodeId(w)));
  const callers = a.hits.filter((h) => !own.includes(h) && !writerIds.has(nodeId(h.workload)) && (dependsOnAny(input, h.workload, a.mounts) || (h.workload.namespace === ns && !mountsOwn(h.workload))));
  const evs = a.events.filter((e) => (e.involvedObject?.kind === 'Pod' && writerPods.has(e.involvedObject.name ?? '')) || (e.involvedObject?.kind === 'PersistentVolumeClaim' && e.involvedObject.name === component.name));
  const supporting: Evidence[] = [a.metricEv, ...own.slice(0, 2).map((h) => logHitEvidence(h, 'the writer fails')), ...callers.slice(0, 2).map((h) => logHitEvidence(h, 'its callers fail')), ...evs.slice(0, 2).map(eventEvidenceOf)];
  const writers = a.mounts.map((m) => `${m.workload.kind.toLowerCase()}/${m.workload.name}`).join(', ');
  if (a.mounts.length) {
    const m = a.mounts[0]!;
    supporting.push({
      kind: 'object',
      summary: `${writers} mount${a.mounts.length === 1 ? 's' : ''} ${ns}/${component.name} (${m.via}${m.pods.length ? `, pod ${m.pods.slice(0, 3).join(', ')}` : ''})`,
      citation: m.pods[0] ? objectCitation('Pod', ns, m.pods[0], 'spec.volumes') : objectCitation(m.workload.kind, ns, m.workload.name, m.via.startsWith('volumeClaimTemplate') ? 'spec.volumeClaimTemplates' : 'spec.template.spec.volumes'),
    });
  }
  const sc = a.claim?.spec?.storageClassName;
  const storageClass = sc ? [...input.cluster.snapshot.storageClasses, ...input.inputs.flatMap((i) => i.kube.storageClasses)].find((c) => c.metadata?.name === sc) : undefined;
  const requested = (a.claim?.spec?.resources?.requests as Record<string, string> | undefined)?.['storage'];
  if (a.claim) {
    supporting.push({
      kind: 'object',
      summary: `PVC ${ns}/${component.name}: ${a.claim.status?.phase ?? '?'}${requested ? `, ${requested} requested` : ''}${(a.claim.status?.capacity as Record<string, string> | undefined)?.['storage'] ? `, capacity ${(a.claim.status!.capacity as Record<string, string>)['storage']}` : ''}${sc ? `, class ${sc}${storageClass ? ` (allowVolumeExpansion: ${storageClass.allowVolumeExpansion ? 'true' : 'false'})` : ''}` : ''} — Kubernetes itself does not flag a full volume`,
      citation: objectCitation('PersistentVolumeClaim', ns, component.name, 'status'),
    });
  }

  const corroborated = own.length + callers.length + evs.length > 0;
  const current = u.current !== null && u.current >= a.full;
  let status: Finding['status'];
  let confidence: number;
  if (!current) {
    status = 'open';
    confidence = corroborated ? 0.55 : 0.35;
  } else if (corroborated) {
    status = 'supported';
    confidence = own.length || evs.length ? 0.9 : 0.85;
  } else if (a.level >= EXHAUSTED) {
    status = 'supported';
    confidence = 0.72;
  } else {
    status = 'open';
    confidence = 0.55;
  }
  const refuting: Evidence[] = [];
  if (!current) refuting.push({ kind: 'metric', summary: `${ns}/${component.name} is at ${pct(u.current)} now (peak ${pct(u.peak)}): space was freed since`, citation: u.summary.citation });

  const first = [...own, ...callers].map((h) => h.first).filter((d): d is Date => !!d).sort((x, y) => x.getTime() - y.getTime())[0];
  const facts: Record<string, string | number | boolean> = {
    pvc: component.name,
    usedPercent: a.usedPercent,
    ...(a.bytes.used !== undefined ? { usedBytes: a.bytes.used } : {}),
    ...(a.bytes.capacity !== undefined ? { capacityBytes: a.bytes.capacity } : {}),
    ...(a.mounts[0] ? { workload: a.mounts[0].workload.name } : {}),
    ...(sc ? { storageClass: sc } : {}),
  };
  const errLine = own[0] ?? callers[0];
  return {
    key: a.key,
    analyzer: NAME,
    family: 'disk-full',
    status,
    confidence,
    title: `PVC ${ns}/${component.name} is ${a.usedPercent}% full${a.mounts.length ? `: ${writers} cannot write` : ''}${errLine ? ` ("${phrase(errLine)}")` : ''}`,
    component,
    mechanism:
      `PVC ${ns}/${component.name}${requested ? ` (${requested}${sc ? `, ${sc}` : ''})` : ''} is ${a.usedPercent}% used${u.since ? ` since ${clockTime(u.since)}` : ''} (kubelet volume stats${a.bytes.used !== undefined && a.bytes.capacity !== undefined ? `: ${gib(a.bytes.used)} of ${gib(a.bytes.capacity)}` : ''})` +
      (a.mounts.length ? `, mounted by ${writers}` : '') +
      '.' +
      (own.length ? ` ${own[0]!.workload.name} fails to write (${own.reduce((n, h) => n + h.count, 0)}×, "${clip(own[0]!.template, 120)}"${own[0]!.first ? ` since ${clockTime(own[0]!.first)}` : ''}).` : '') +
      (callers.length ? ` Its callers ${[...new Set(callers.map((h) => h.workload.name))].join(', ')} get the error back (${callers.reduce((n, h) => n + h.count, 0)}×, "${clip(callers[0]!.template, 120)}").` : '') +
      (!corroborated ? ' No candidate log line reports a failed write yet.' : '') +
      (first && u.since && first.getTime() >= u.since.getTime() - 5 * 60_000 ? ' The errors began when the volume filled.' : '') +
      ' Kubernetes shows nothing: the claim stays Bound and the pod Running.' +
      (storageClass?.allowVolumeExpansion ? ` Storage class ${sc} allows expansion: raising the claim's spec.resources.requests.storage grows it online.` : storageClass ? ` Storage class ${sc} does not allow expansion: free space or migrate to a larger volume.` : '') +
      ' Freeing or adding space is a human decision; a restart or rollback keeps the volume full.',
    scope: `writes of ${writers || 'the workloads that use it'} fail${a.mounts.length ? `; ${dedupeRefs(a.mounts.flatMap((m) => servicesOf(input, m.workload))).map((s) => `service/${s.name}`).join(', ') || 'its clients'} and their callers see errors` : ''}`,
    affected: scopeOf(input, component, a.mounts),
    facts,
    supporting,
    refuting,
  };
}

/** The writers, their Services, then whatever the graph says depends on the claim (callers, Ingresses). */
function scopeOf(input: ClusterTriageInput, claim: ComponentRef, ms: Mount[]): ComponentRef[] {
  const writers = ms.map((m) => m.workload).filter((w) => w.kind !== 'Pod');
  const graph = input.cluster.topology.has(claim) ? affectedBy(claim, input.cluster.topology, { limit: 30 }) : [];
  return dedupeRefs([...writers, ...writers.flatMap((w) => servicesOf(input, w)), ...graph]);
}

/** Claims mounted by the workloads behind the Services a workload calls (one hop): where a caller's quoted ENOSPC comes from. */
function calleeClaims(input: ClusterTriageInput, w: ComponentRef, byClaim: Map<string, Mount[]>): [string, Mount[]][] {
  const t = input.cluster.topology;
  const callees = new Set(
    t
      .outgoing(nodeId(w))
      .filter((e) => e.kind === 'calls')
      .flatMap((e) => t.outgoing(e.to).filter((x) => x.kind === 'selects').map((x) => x.to)),
  );
  if (!callees.size) return [];
  return [...byClaim.entries()].filter(([, ms]) => ms.some((m) => callees.has(nodeId(m.workload))));
}

function dependsOnAny(input: ClusterTriageInput, w: ComponentRef, ms: Mount[]): boolean {
  const t = input.cluster.topology;
  const callees = new Set(
    t
      .outgoing(nodeId(w))
      .filter((e) => e.kind === 'calls')
      .flatMap((e) => t.outgoing(e.to).filter((x) => x.kind === 'selects').map((x) => x.to)),
  );
  return ms.some((m) => callees.has(nodeId(m.workload)));
}

/** The words of a log line that say what failed (`No space left on device`), for a title. */
function phrase(h: LogHit): string {
  const m = DISK_ERRORS.exec(h.example) ?? DISK_ERRORS.exec(h.template);
  return clip(m?.[0] ?? h.template, 60);
}

function pct(x: number | null): string {
  return x === null ? 'n/a' : `${Number((x * 100).toPrecision(3))}%`;
}

function gib(bytes: number): string {
  return `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
}

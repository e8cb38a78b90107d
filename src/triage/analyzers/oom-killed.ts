/**
 * `oom-killed`: target containers whose last termination is OOMKilled (exit code 137: the kernel's OOM
 * killer ended the cgroup at its memory limit), with the limit, and — when the previous ReplicaSet ran a
 * higher limit — the previous limit and who lowered it (the managedFields writer of the container's
 * resources). Memory working set vs limit from Prometheus corroborates when present.
 *
 * Facts (camelCase): `container`, `lastTermination` ('OOMKilled'), `exitCode` (137), `oomKilledPods`,
 * `restartCount`, `memoryLimit` (as written, e.g. '256Mi'; absent when the container has none),
 * `previousMemoryLimit`, `limitLowered` (boolean), `manager` (field manager that wrote the resources),
 * `changedAt`, `revision`, `previousRevision`, `peakLimitRatio` (working set / limit, from Prometheus).
 *
 * An OOM kill that ended more than the change window before the onset, with the container running since,
 * is returned as `unrelated`: the lastState of a container keeps its last termination forever.
 */
import type { V1Container, V1LimitRange, V1ManagedFieldsEntry, V1Pod } from '@kubernetes/client-node';
import { describeWriter } from '../../evidence/kubernetes/managed-fields.js';
import { metricEvidence } from '../../evidence/prometheus/evidence.js';
import type { Evidence } from '../../evidence/types.js';
import type { Analyzer, TriageInput } from '../analyzer.js';
import { CHANGE_WINDOW_MS } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime, humanDuration, relativeToOnset } from '../time.js';
import type { Finding, MitigationProposal } from '../types.js';
import type { ClusterSnapshot } from '../../topology/snapshot.js';
import { writtenKeys } from './config-change.js';
import { targetSymptoms } from './deploy-regression.js';
import { dependentSymptoms } from '../downstream.js';
import { containerStatuses, imageTag, podContainer, podEvents, eventEvidence, revisionEvidence, revisions, servingScope, templateContainer, undoProposal } from './crash-loop.js';

const UNITS: Record<string, number> = { '': 1, k: 1e3, K: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4, Pi: 1024 ** 5 };

/** A Kubernetes memory quantity (`256Mi`, `1G`, `536870912`, `5e8`) in bytes. */
export function memoryBytes(q: string | undefined): number | undefined {
  const m = /^([0-9.]+(?:[eE][+-]?\d+)?)([kKMGTP]i?)?$/.exec(q?.trim() ?? '');
  if (!m) return undefined;
  const unit = UNITS[m[2] ?? ''];
  return unit === undefined ? undefined : Number(m[1]) * unit;
}

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

const memLimit = (c: V1Container | undefined): string | undefined => (c?.resources?.limits as Record<string, string> | undefined)?.['memory'];

/** What else a rollout changed in the container besides its resources (image, env, probes…). */
function otherDifferences(a: V1Container | undefined, b: V1Container | undefined): string[] {
  if (!a || !b) return [];
  const strip = (c: V1Container) => JSON.stringify({ ...c, resources: undefined });
  if (strip(a) === strip(b)) return [];
  return a.image !== b.image ? [`image ${imageTag(b.image)} → ${imageTag(a.image)}`] : ['other container settings'];
}

/** A container running this long before the onset after its last OOM kill is past that episode. */
const STABLE_SINCE_MS = 15 * 60_000;

export const oomKilled: Analyzer = {
  name: 'oom-killed',
  analyze(input: TriageInput): Finding[] {
    const { kube, onset, metrics, cluster } = input;
    const t = kube.target;
    if (!t || !kube.workload) return [];
    const kills = kube.pods.flatMap((pod) =>
      containerStatuses(pod)
        .map((status) => ({ pod, podName: pod.metadata?.name ?? '?', status, term: status.lastState?.terminated ?? status.state?.terminated }))
        .filter((k) => k.term?.reason === 'OOMKilled'),
    );
    if (kills.length === 0) return memoryWordsWithoutKill(input);
    const component = { kind: t.kind, namespace: t.namespace, name: t.name };
    const finished = (k: (typeof kills)[number]) => (k.term?.finishedAt ? new Date(k.term.finishedAt) : undefined);
    const recent = kills.filter((k) => {
      const at = finished(k);
      if (k.status.state?.waiting?.reason === 'CrashLoopBackOff') return true;
      // Killed once, then running (and ready) for a good while before the onset: a past episode, not what
      // fails now (a broker that hit its memory alarm half an hour ago and has served since).
      const runningSince = k.status.state?.running?.startedAt ? new Date(k.status.state.running.startedAt) : undefined;
      if (runningSince && k.status.ready !== false && onset.getTime() - runningSince.getTime() >= STABLE_SINCE_MS) return false;
      return at ? onset.getTime() - at.getTime() <= CHANGE_WINDOW_MS : false;
    });
    const key = `oom-killed:${t.namespace}/${t.kind}/${t.name}`;

    if (recent.length === 0) {
      const k = kills.sort((a, b) => (finished(b)?.getTime() ?? 0) - (finished(a)?.getTime() ?? 0))[0]!;
      const at = finished(k);
      return [
        {
          key,
          analyzer: 'oom-killed',
          status: 'unrelated',
          confidence: 0.05,
          title: `old OOM kill of ${k.status.name} in ${k.podName}`,
          component,
          mechanism: `Container ${k.status.name} of pod ${k.podName} was OOMKilled once${at ? ` at ${at.toISOString().slice(0, 16).replace('T', ' ')}` : ''} and has run since.`,
          reason: at
            ? `the OOM kill ended ${humanDuration(onset.getTime() - at.getTime())} before the alert and the container is running${k.status.state?.running?.startedAt ? ` (since ${clockTime(new Date(k.status.state.running.startedAt))})` : ''}`
            : 'the OOM kill has no time and the container is running',
          supporting: [],
          refuting: [
            {
              kind: 'object',
              summary: `pod ${k.podName}: ${k.status.name} ${k.status.state?.running ? 'running' : 'not waiting'}, last terminated OOMKilled${at ? ` at ${at.toISOString().slice(0, 16).replace('T', ' ')}` : ''}`,
              citation: objectCitation('Pod', t.namespace, k.podName, 'status.containerStatuses'),
              observedAt: at,
            },
          ],
        },
      ];
    }

    const container = recent[0]!.status.name;
    const mine = recent.filter((k) => k.status.name === container);
    const pods = [...new Set(mine.map((k) => k.podName))];
    const last = mine.sort((a, b) => (finished(b)?.getTime() ?? 0) - (finished(a)?.getTime() ?? 0))[0]!;
    const lastAt = finished(last);
    const restartCount = Math.max(...mine.map((k) => k.status.restartCount ?? 0));
    const limit = memLimit(podContainer(last.pod, container)) ?? memLimit(templateContainer(kube.workload, container));
    const exitCode = last.term?.exitCode ?? 137;
    const facts: Record<string, string | number | boolean> = { container, lastTermination: 'OOMKilled', exitCode, oomKilledPods: pods.length, restartCount };
    if (limit) facts['memoryLimit'] = limit;
    const supporting: Evidence[] = [
      {
        kind: 'object',
        summary: `pod ${last.podName}: ${container} last terminated OOMKilled (exit code ${exitCode})${lastAt ? ` at ${clockTime(lastAt)}` : ''}, ${last.status.restartCount ?? 0} restarts; memory limit ${limit ?? 'none'}`,
        citation: objectCitation('Pod', t.namespace, last.podName, 'status.containerStatuses'),
        observedAt: lastAt,
        detail: { pods, restartCount, exitCode, memoryLimit: limit ?? null, waiting: last.status.state?.waiting?.reason ?? null },
      },
    ];
    const backoff = podEvents(kube, pods, onset, /^BackOff$/).sort((a, b) => (b.count ?? 1) - (a.count ?? 1))[0];
    if (backoff) supporting.push(eventEvidence(backoff));

    // Was the limit lowered? The previous revision's template says what it was; managedFields say who wrote it.
    const { current, previous } = revisions(kube);
    const prevContainer = templateContainer(previous?.replicaSet, container);
    const curContainer = templateContainer(current?.replicaSet, container) ?? templateContainer(kube.workload, container);
    const previousLimit = memLimit(prevContainer);
    const lowered =
      !!limit && !!previousLimit && !!current && (memoryBytes(previousLimit) ?? 0) > (memoryBytes(limit) ?? Infinity) && (!current.createdAt || onset.getTime() - current.createdAt.getTime() <= CHANGE_WINDOW_MS);
    const writer = resourceWriters(kube.workload.metadata?.managedFields, container)[0];
    const who = writer ? describeWriter({ manager: writer.entry.manager ?? 'unknown', subresource: writer.entry.subresource, operation: writer.entry.operation ?? 'Update' }) : undefined;
    const alsoChanged = lowered ? otherDifferences(curContainer, prevContainer) : [];
    if (lowered && current && previous) {
      Object.assign(facts, { previousMemoryLimit: previousLimit!, limitLowered: true, revision: current.revision, previousRevision: previous.revision });
      if (current.createdAt) facts['changedAt'] = current.createdAt.toISOString();
      supporting.push(revisionEvidence(kube, current, onset, `memory limit ${previousLimit} → ${limit}${alsoChanged.length ? `, also ${alsoChanged.join(', ')}` : ''}`));
      if (writer) {
        facts['manager'] = writer.entry.manager ?? 'unknown';
        if (writer.time) facts['changedAt'] = writer.time.toISOString();
        supporting.push({
          kind: 'managed_fields',
          summary: `managedFields: manager \`${writer.entry.manager}\` (${who}) ${writer.entry.operation ?? 'Update'} owns the ${container} container's resources${writer.time ? ` (${clockTime(writer.time)}, ${relativeToOnset(writer.time, onset)})` : ''}`,
          citation: objectCitation(t.kind, t.namespace, t.name, `metadata.managedFields[${writer.index}]`),
          observedAt: writer.time,
          detail: { manager: writer.entry.manager, operation: writer.entry.operation, time: writer.time?.toISOString() ?? null },
        });
      }
    }

    // Metrics: how close the working set comes to the limit, and what the pods used before the change.
    const ratio = metrics?.summaries.find((s) => s.id === 'memory_limit_ratio' && s.status === 'success');
    const high = (ratio?.series ?? []).filter((s) => (s.max ?? 0) >= (ratio?.threshold ?? 0.9)).sort((a, b) => (b.max ?? 0) - (a.max ?? 0));
    if (ratio && high[0]) {
      facts['peakLimitRatio'] = Math.round((high[0].max ?? 0) * 100) / 100;
      supporting.push({
        kind: 'metric',
        summary: `memory working set reached ${Math.round((high[0].max ?? 0) * 100)}% of the limit in ${high.length} pod${high.length === 1 ? '' : 's'} (${high.map((s) => s.metric['pod']).filter(Boolean).slice(0, 3).join(', ')})`,
        citation: ratio.citation,
        detail: { pods: high.map((s) => s.metric['pod']), max: high.map((s) => s.max) },
      });
    }
    const ws = metrics?.summaries.find((s) => s.id === 'memory_working_set' && s.status === 'success');
    const livePods = new Set(kube.pods.map((p) => p.metadata?.name));
    const before = (ws?.series ?? []).filter((s) => s.metric['pod'] && !livePods.has(s.metric['pod']) && s.max !== null);
    const limitBytes = memoryBytes(limit);
    if (ws && before.length && limitBytes) {
      const peak = Math.max(...before.map((s) => s.max ?? 0));
      if (peak > limitBytes * 0.9) {
        supporting.push({
          kind: 'metric',
          summary: `pods before the change used up to ${Math.round(peak / 2 ** 20)} MiB working set, ${peak > limitBytes ? 'more than' : 'close to'} the ${limit} limit`,
          citation: ws.citation,
          detail: { pods: before.map((s) => s.metric['pod']), peakBytes: peak, limitBytes },
        });
      }
    }
    if (ws) supporting.push(...metricEvidence(ws).slice(0, 1));

    // A leak: the limit did not change, yet containers climb from well below it to the limit, over and over.
    // What introduced it is the rollout the pods run, even hours old (a leak takes hours to fill the limit).
    // The pods run another limit than their template: the VerticalPodAutoscaler's admission controller
    // rewrote it (pod annotation vpaUpdates: "Pod resources updated by <vpa>: …"). The VPA is the fault,
    // and such pods are not leaking: the limit moved. (A template without the container or without a
    // limit — injected or defaulted — never matches: vpaRewrite needs the template's limit.)
    const vpa = limit ? vpaRewrite(last.pod, memLimit(templateContainer(kube.workload, container)), limit, cluster?.snapshot, t.namespace) : undefined;
    const leak = !lowered && !vpa && limitBytes && current?.createdAt && previous ? leakSignature(ws, limitBytes) : undefined;
    if (leak && current?.createdAt && previous && onset.getTime() - current.createdAt.getTime() > CHANGE_WINDOW_MS / 2) {
      Object.assign(facts, { memoryGrowth: 'leak', changedAt: current.createdAt.toISOString(), revision: current.revision, previousRevision: previous.revision });
      const prevImage = templateContainer(previous.replicaSet, container)?.image;
      const curImage = curContainer?.image;
      if (curImage && prevImage && curImage !== prevImage) Object.assign(facts, { image: curImage, previousImage: prevImage });
      supporting.push({
        kind: 'metric',
        summary: `memory working set climbs from ${Math.round(leak.low / 2 ** 20)} MiB to ${Math.round(leak.high / 2 ** 20)} MiB (limit ${limit}) in ${leak.series} series, with no limit change: a leak, in revision ${current.revision} (deployed ${clockTime(current.createdAt)}, ${relativeToOnset(current.createdAt, onset)})`,
        citation: ws!.citation,
        observedAt: current.createdAt,
        detail: { lowBytes: leak.low, highBytes: leak.high, limitBytes, revision: current.revision },
      });
      supporting.push(revisionEvidence(kube, current, onset, curImage && prevImage && curImage !== prevImage ? `image ${prevImage} → ${curImage}` : 'the rollout the leaking pods run'));
    }

    const { scope, affected, evidence } = servingScope(kube, `${pods.length} of ${kube.pods.length} ${t.name} pods are OOMKilled and restarting`);
    supporting.push(...evidence.filter((e) => (e.detail?.['ready'] as number) === 0));

    // The limit was not written by anyone for this workload: the namespace's LimitRange defaulted it at
    // admission (the template has none). That object is the fault, and every pod it defaults is at risk.
    const defaulted = limit && !memLimit(templateContainer(kube.workload, container)) ? defaultingLimitRange(cluster?.snapshot.limitRanges ?? [], t.namespace, limit) : undefined;
    let origin: { kind: string; namespace?: string; name: string } = component;
    // The container is not in the pod template at all: a mesh injected it, with the resources of the
    // injector's config (unless the template overrides them by annotation). A recent edit of that config
    // is the fault, and every pod injected since carries it.
    const injected = !defaulted && limit && !templateContainer(kube.workload, container) ? injectorConfig(cluster?.snapshot, container, limit, kube.workload?.spec?.template?.metadata?.annotations, onset) : undefined;
    if (vpa) {
      origin = { kind: 'VerticalPodAutoscaler', namespace: t.namespace, name: vpa.name };
      Object.assign(facts, { previousMemoryLimit: vpa.templateLimit, limitSetBy: `VerticalPodAutoscaler/${vpa.name}`, ...(vpa.mode ? { updateMode: vpa.mode } : {}) });
      supporting.push({
        kind: 'object',
        summary: `pod ${last.podName}: "${vpa.note}" — its ${container} runs memory limit ${limit}, the template says ${vpa.templateLimit}${vpa.mode ? `; VPA ${vpa.name} updateMode ${vpa.mode}` : ''}`,
        citation: objectCitation('Pod', t.namespace, last.podName, 'metadata.annotations'),
      });
    }
    if (injected) {
      origin = { kind: 'ConfigMap', namespace: injected.namespace, name: injected.name };
      Object.assign(facts, { injectedBy: `ConfigMap/${injected.name}`, object: `ConfigMap/${injected.name}`, ...(injected.keys.length ? { keys: injected.keys.join(',') } : {}), editor: injected.manager, manager: injected.manager, changedAt: injected.at.toISOString() });
      supporting.push({
        kind: 'managed_fields',
        summary: `${container} is not in ${t.name}'s pod template: the mesh injects it with the resources of ConfigMap ${injected.namespace}/${injected.name}, last written by \`${injected.manager}\` at ${clockTime(injected.at)} (${relativeToOnset(injected.at, onset)})`,
        citation: objectCitation('ConfigMap', injected.namespace, injected.name, `metadata.managedFields[${injected.index}]`),
        observedAt: injected.at,
      });
      if (injected.olderPods.length) {
        supporting.push({
          kind: 'object',
          summary: `pods injected before that change run ${container} with a different memory limit (${injected.olderPods.slice(0, 3).map((p) => `${p.name}: ${p.limit}`).join(', ')}); ${t.name}'s pods, created after it, have ${limit}`,
          citation: objectCitation('Pod', injected.olderPods[0]!.namespace, injected.olderPods[0]!.name, 'spec.containers'),
        });
      }
    }
    if (defaulted) {
      origin = { kind: 'LimitRange', namespace: t.namespace, name: defaulted.name };
      Object.assign(facts, { limitDefaultedBy: `LimitRange/${defaulted.name}`, ...(defaulted.manager ? { manager: defaulted.manager } : {}), ...(defaulted.at ? { changedAt: defaulted.at.toISOString() } : {}) });
      supporting.push({
        kind: 'object',
        summary: `${t.name}'s pod template sets no memory limit for ${container}; LimitRange ${defaulted.name} gives every such container a ${limit} default limit${defaulted.manager ? ` (written by \`${defaulted.manager}\`${defaulted.at ? ` at ${clockTime(defaulted.at)}, ${relativeToOnset(defaulted.at, onset)}` : ''})` : ''}`,
        citation: objectCitation('LimitRange', t.namespace, defaulted.name, defaulted.index !== undefined ? `metadata.managedFields[${defaulted.index}]` : 'spec.limits'),
        ...(defaulted.at ? { observedAt: defaulted.at } : {}),
      });
    }

    let mitigation: MitigationProposal | undefined;
    if (vpa?.recommendsMore && (t.kind === 'Deployment' || t.kind === 'StatefulSet')) {
      mitigation = {
        action: 'rollout_restart',
        target: component,
        params: {},
        command: `kubectl rollout restart ${t.kind.toLowerCase()}/${t.name} -n ${t.namespace}`,
        rationale: `VPA ${vpa.name} now recommends more memory than these pods were admitted with: new pods get the raised values (a rollout is not blocked by the PodDisruptionBudget that blocks the VPA's own evictions); the VPA itself still needs minAllowed or another mode`,
      };
    } else if (defaulted) {
      // Explicit values for this container, sized from what it used without the default (when known).
      const peak = Math.max(0, ...before.map((s) => s.max ?? 0), ...((ws?.series ?? []).map((s) => s.max ?? 0)));
      const request = peak > 0 ? `${Math.ceil(peak / 2 ** 20 / 64) * 64}Mi` : undefined;
      const limitOut = peak > 0 ? `${Math.ceil((peak * 1.5) / 2 ** 20 / 128) * 128}Mi` : undefined;
      if (limitOut) {
        mitigation = {
          action: 'set_resources',
          target: component,
          params: { container, ...(request ? { requests: { memory: request } } : {}), limits: { memory: limitOut } },
          command: `kubectl set resources ${t.kind.toLowerCase()}/${t.name} -n ${t.namespace} -c ${container} --limits=memory=${limitOut}${request ? ` --requests=memory=${request}` : ''}`,
          rationale: `give ${container} its own memory values instead of LimitRange ${defaulted.name}'s ${limit} default: it used up to ${Math.round(peak / 2 ** 20)} MiB`,
        };
      }
    } else if (facts['memoryGrowth'] === 'leak' && previous) {
      mitigation = undoProposal(kube, previous, `memory leaks since revision ${current!.revision}; revision ${previous.revision} ran within the same ${limit} limit`);
    } else if (lowered && previous && alsoChanged.length) {
      mitigation = undoProposal(kube, previous, `the memory limit came down (${previousLimit} → ${limit}) with a rollout that also changed ${alsoChanged.join(', ')}; revision ${previous.revision} ran with ${previousLimit}`);
    } else if (lowered) {
      mitigation = {
        action: 'set_resources',
        target: component,
        params: { container, limits: { memory: previousLimit } },
        command: `kubectl set resources ${t.kind.toLowerCase()}/${t.name} -n ${t.namespace} -c ${container} --limits=memory=${previousLimit}`,
        rationale: `restore the ${previousLimit} limit the container ran with before ${who ? `${who} lowered it` : 'it was lowered'} to ${limit}`,
      };
    }

    const mechanism =
      `Container ${container} of ${t.kind.toLowerCase()}/${t.name} is killed by the kernel OOM killer (OOMKilled, exit code ${exitCode}) in ${pods.length} pod${pods.length === 1 ? '' : 's'}, up to ${restartCount} restarts` +
      (limit ? `: it reaches its memory limit of ${limit}` : ': it has no memory limit, so the node ran out of memory') +
      (defaulted ? ` (a default: the pod template sets none, so LimitRange ${t.namespace}/${defaulted.name} applied ${limit} at admission)` : '') +
      (vpa ? ` (not the template's ${vpa.templateLimit}: VerticalPodAutoscaler ${vpa.name}${vpa.mode ? ` in ${vpa.mode} mode` : ''} evicted the pods and its admission controller rewrote their resources from a recommendation below the real peak; new pods get its current recommendation, and switching it to Off or Initial, or giving it minAllowed, stops it)` : '') +
      (injected ? ` (injected: the pod template has no ${container}; the sidecar injector's ConfigMap ${injected.namespace}/${injected.name}, written by \`${injected.manager}\` ${relativeToOnset(injected.at, onset)}, sets ${limit}, so every pod injected since gets it — restore the injector's previous proxy resources, then restart the affected workloads; rolling back ${t.name} alone re-injects the same limit)` : '') +
      (facts['memoryGrowth'] === 'leak' ? `; the limit did not change: memory climbs steadily to it in every run, a leak introduced with revision ${current!.revision} (${relativeToOnset(current!.createdAt!, onset)})` : '') +
      (lowered ? `, lowered from ${previousLimit}${who ? ` by \`${who}\` (field manager \`${writer!.entry.manager}\`)` : ''} in revision ${current!.revision}${current!.createdAt ? ` at ${clockTime(current!.createdAt)}, ${relativeToOnset(current!.createdAt, onset)}` : ''}` : '') +
      '.';
    return [
      {
        key,
        analyzer: 'oom-killed',
        status: 'supported',
        confidence: lowered || injected || vpa ? 0.95 : limit ? 0.92 : 0.9,
        title: `${t.name} OOMKilled${limit ? ` at its ${limit} memory limit` : ''}${lowered ? ` (lowered from ${previousLimit}${who ? ` by ${who}` : ''})` : ''}${defaulted ? ` defaulted by LimitRange ${defaulted.name}` : ''}${injected ? ` set by the sidecar injector (ConfigMap ${injected.namespace}/${injected.name})` : ''}${vpa ? ` set by VerticalPodAutoscaler ${vpa.name} (template: ${vpa.templateLimit})` : ''}`,
        component: origin,
        mechanism,
        scope,
        // When the fault is an object of another kind (a LimitRange, an injector config), the workload is its victim.
        affected: origin === component ? affected : [component, ...affected.filter((a) => !(a.kind === component.kind && a.name === component.name && a.namespace === component.namespace))],
        facts,
        supporting,
        refuting: [],
        ...(mitigation ? { mitigation } : {}),
      },
    ];
  },
};

/**
 * The memory curve of a leak within the window: some series rises from at most 60% of the limit to at
 * least 85% of it (a container growing into its limit, not one that starts near it), in at least two
 * series or one that shows the climb more than once (level shifts up). Undefined otherwise.
 */
function leakSignature(ws: { series: { min: number | null; max: number | null; first: number | null; changePoints: { before: number; after: number }[] }[] } | undefined, limitBytes: number): { low: number; high: number; series: number } | undefined {
  const climbing = (ws?.series ?? []).filter((s) => s.min !== null && s.max !== null && s.first !== null && s.min <= limitBytes * 0.6 && s.max >= limitBytes * 0.85);
  const repeated = climbing.filter((s) => s.changePoints.filter((c) => c.after > c.before).length >= 2);
  if (climbing.length < 2 && repeated.length === 0) return undefined;
  return { low: Math.min(...climbing.map((s) => s.min!)), high: Math.max(...climbing.map((s) => s.max!)), series: climbing.length };
}

/**
 * A pod whose container limit is not its template's because a VerticalPodAutoscaler rewrote it at
 * admission (the `vpaUpdates` annotation names the VPA), with the VPA's mode and whether its current
 * recommendation is above what the pod was admitted with (then a restart picks it up).
 */
function vpaRewrite(pod: V1Pod, templateLimit: string | undefined, limit: string, s: ClusterSnapshot | undefined, namespace: string): { name: string; note: string; templateLimit: string; mode?: string; recommendsMore: boolean } | undefined {
  const note = pod.metadata?.annotations?.['vpaUpdates'];
  const name = note ? /updated by ([\w.-]+)/.exec(note)?.[1] : undefined;
  if (!note || !name || !templateLimit || memoryBytes(templateLimit) === memoryBytes(limit)) return undefined;
  const obj = (s?.custom['VerticalPodAutoscaler'] ?? []).find((v) => v.metadata.namespace === namespace && v.metadata.name === name);
  const mode = (obj?.spec?.['updatePolicy'] as { updateMode?: string } | undefined)?.updateMode;
  const recs = ((obj?.status?.['recommendation'] as { containerRecommendations?: { containerName?: string; target?: Record<string, string> }[] } | undefined)?.containerRecommendations ?? []);
  const admitted = memoryBytes(String((pod.spec?.containers ?? []).find((c) => c.resources?.limits?.['memory'] === limit)?.resources?.requests?.['memory'] ?? ''));
  const target = recs.map((r) => memoryBytes(r.target?.['memory'])).find((x) => x !== undefined);
  return { name, note, templateLimit, ...(mode ? { mode } : {}), recommendsMore: target !== undefined && admitted !== undefined ? target > admitted * 1.05 : false };
}

/** Sidecars a mesh injects, and the ConfigMap whose values give them their resources. */
const INJECTORS: { container: string; configMap: RegExp; namespace: RegExp; overrides: string[]; resourceKeys: string[] }[] = [
  // istiod's injector renders the sidecar from `config` (templates) with `values` (global.proxy.resources).
  { container: 'istio-proxy', configMap: /^istio-sidecar-injector(-[\w.-]+)?$/, namespace: /istio/, overrides: ['sidecar.istio.io/proxyMemoryLimit', 'sidecar.istio.io/proxyMemory'], resourceKeys: ['values'] },
  { container: 'linkerd-proxy', configMap: /^linkerd-config$/, namespace: /linkerd/, overrides: ['config.linkerd.io/proxy-memory-limit', 'config.linkerd.io/proxy-memory-request'], resourceKeys: ['values'] },
];
const INJECTOR_RECENT_MS = 7 * 24 * 3600_000;

/** The injector ConfigMap of an injected sidecar, with its newest write, when that write was in the week before the onset. */
export function injectorWrite(s: ClusterSnapshot | undefined, container: string, onset: Date): { namespace: string; name: string; manager: string; at: Date; index: number; written: string[]; resourceKeys: string[]; overrides: string[] } | undefined {
  const inj = INJECTORS.find((i) => i.container === container);
  if (!inj || !s) return undefined;
  const cm = s.configMaps.find((c) => inj.configMap.test(c.metadata.name ?? '') && inj.namespace.test(c.metadata.namespace ?? ''));
  if (!cm) return undefined;
  const entries = cm.metadata.managedFields ?? [];
  let index: number | undefined;
  for (let i = 0; i < entries.length; i++) if (entries[i]!.time && !entries[i]!.subresource && (index === undefined || new Date(entries[i]!.time!).getTime() >= new Date(entries[index]!.time!).getTime())) index = i;
  const e = index !== undefined ? entries[index] : undefined;
  if (!e?.time || index === undefined) return undefined;
  const at = new Date(e.time);
  if (at.getTime() > onset.getTime() + 120_000 || onset.getTime() - at.getTime() > INJECTOR_RECENT_MS) return undefined;
  return { namespace: cm.metadata.namespace ?? '', name: cm.metadata.name ?? '', manager: e.manager ?? 'unknown', at, index, written: writtenKeys(e.fieldsV1), resourceKeys: inj.resourceKeys, overrides: inj.overrides };
}

/**
 * The injector config that gave an injected sidecar its limit, when it was written in the last week
 * (before the onset) and the template does not override the resources by annotation; with older pods
 * whose same sidecar runs another limit, the comparison a responder makes.
 */
function injectorConfig(
  s: ClusterSnapshot | undefined,
  container: string,
  limit: string,
  annotations: Record<string, string> | undefined,
  onset: Date,
): { namespace: string; name: string; manager: string; at: Date; index: number; keys: string[]; olderPods: { namespace: string; name: string; limit: string }[] } | undefined {
  const w = injectorWrite(s, container, onset);
  if (!w || w.overrides.some((a) => annotations?.[a])) return undefined;
  const keys = w.written.filter((k) => w.resourceKeys.includes(k));
  const olderPods = s!.pods
    .filter((p) => p.metadata?.creationTimestamp && new Date(p.metadata.creationTimestamp).getTime() < w.at.getTime())
    .flatMap((p) => {
      const c = (p.spec?.containers ?? []).find((x) => x.name === container);
      const l = c?.resources?.limits?.['memory'];
      return l && memoryBytes(String(l)) !== memoryBytes(limit) ? [{ namespace: p.metadata?.namespace ?? '', name: p.metadata?.name ?? '?', limit: String(l) }] : [];
    });
  return { namespace: w.namespace, name: w.name, manager: w.manager, at: w.at, index: w.index, keys: keys.length ? keys : w.written, olderPods };
}

/** The namespace's LimitRange whose Container default memory limit is `limit`, with its last writer. */
function defaultingLimitRange(ranges: V1LimitRange[], namespace: string | undefined, limit: string): { name: string; manager?: string; at?: Date; index?: number } | undefined {
  const want = memoryBytes(limit);
  for (const lr of ranges) {
    if (lr.metadata?.namespace !== namespace) continue;
    const items = lr.spec?.limits ?? [];
    const hit = items.some((i) => (i.type ?? 'Container') === 'Container' && memoryBytes(((i._default ?? (i as { default?: Record<string, string> }).default) as Record<string, string> | undefined)?.['memory']) === want);
    if (!hit) continue;
    const entries = lr.metadata?.managedFields ?? [];
    let index: number | undefined;
    for (let i = 0; i < entries.length; i++) if (entries[i]!.time && (index === undefined || new Date(entries[i]!.time!).getTime() >= new Date(entries[index]!.time!).getTime())) index = i;
    const e = index !== undefined ? entries[index] : undefined;
    return { name: lr.metadata?.name ?? '?', ...(e?.manager ? { manager: e.manager } : {}), ...(e?.time ? { at: new Date(e.time) } : {}), ...(index !== undefined ? { index } : {}) };
  }
  return undefined;
}

/** Error text that reads like a memory kill to a responder ("OOM command not allowed", "out of memory"). */
const MEMORY_WORDS = /\bOOM\b|out of memory|OutOfMemory/i;

/**
 * The look-alike: "OOM" in the errors of the target or its callers while no container of the target was
 * killed for memory (no OOMKilled, no restarts since the errors began). Raised and ruled out, so the board
 * says why raising the memory limit is not the fix (Redis answers "OOM command not allowed" at its own
 * maxmemory, a JVM throws OutOfMemoryError inside a running container).
 */
function memoryWordsWithoutKill(input: TriageInput): Finding[] {
  const t = input.kube.target!;
  const line = [...targetSymptoms(input).logs, ...dependentSymptoms(input).logs].find((l) => MEMORY_WORDS.test(l.template) || MEMORY_WORDS.test(l.example));
  if (!line) return [];
  const restarts = input.kube.pods.reduce((n, p) => n + containerStatuses(p).reduce((m, c) => m + (c.restartCount ?? 0), 0), 0);
  const since = line.first;
  const restartedSince = input.kube.pods.some((p) => containerStatuses(p).some((c) => c.lastState?.terminated?.finishedAt && (!since || new Date(c.lastState.terminated.finishedAt).getTime() >= since.getTime())));
  if (restartedSince) return [];
  return [
    {
      key: `cleared:oom-killed:${t.kind}/${t.namespace}/${t.name}`,
      analyzer: 'oom-killed',
      family: 'oom-killed',
      status: 'ruled_out',
      confidence: 0.05,
      title: `${t.name}'s containers killed for memory`,
      component: { kind: t.kind, namespace: t.namespace, name: t.name },
      mechanism: `The errors speak of memory ("${line.example.slice(0, 120)}"), which reads like an OOM kill.`,
      reason: `no container of ${t.name} was OOMKilled or restarted since the errors began (${restarts} restart${restarts === 1 ? '' : 's'} in all): the "OOM" is the application's own answer, so a higher memory limit is not the fix`,
      facts: { restarts },
      supporting: [],
      refuting: [line.evidence],
    },
  ];
}
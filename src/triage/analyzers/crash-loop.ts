/**
 * `crash-loop`: target containers in CrashLoopBackOff or restarting since shortly before the onset, with
 * what explains the crash — the error template of the previous container's log, the exit code, and the
 * change right before the first crash (a rollout of the workload, or another ranked change).
 *
 * It is the generic pod symptom, so it defers: containers whose last termination is OOMKilled belong to
 * `oom-killed`, containers restarted by a failing liveness probe to `failing-probe`.
 *
 * Facts (camelCase):
 * - `container`, `crashingPods` (count), `restartCount` (highest), `exitCode`, `lastTermination`
 *   (the terminated reason, e.g. `Error`), `waitingReason` (e.g. `CrashLoopBackOff`)
 * - `logPattern` (the explaining log template) and `logCount` (its lines in the previous logs read)
 * - when a rollout preceded it: `revision`, `image`, `previousRevision`, `previousImage`, `changedAt`
 * - otherwise, when another change preceded it: `precedingChange` (its summary), `changedAt`
 *
 * The file also holds the small helpers the pod family shares (revisions, scope, rollback proposal).
 */
import type { CoreV1Event, V1Container, V1ContainerStatus, V1Pod, V1ReplicaSet } from '@kubernetes/client-node';
import type { KubeEvidence } from '../../evidence/kubernetes/gather.js';
import type { LogPattern } from '../../evidence/logs/types.js';
import type { Citation, ComponentRef, Evidence } from '../../evidence/types.js';
import type { RankedChange } from '../../changes/types.js';
import type { Analyzer, TriageInput } from '../analyzer.js';
import { CHANGE_WINDOW_MS } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime, humanDuration, relativeToOnset } from '../time.js';
import type { Finding, MitigationProposal } from '../types.js';

// ------------------------------------------------------------------ shared by the pod family

/** When an event happened: the newest time the API gives for it. */
export function eventAt(e: CoreV1Event): Date | undefined {
  const t = e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp;
  return t ? new Date(t) : undefined;
}

/** When an event first happened. */
export function eventFirst(e: CoreV1Event): Date | undefined {
  const t = e.firstTimestamp ?? e.eventTime ?? e.lastTimestamp;
  return t ? new Date(t) : undefined;
}

/** Events about these pods (by name), of one reason, still current: last seen within the change window before the onset or after it. */
export function podEvents(kube: KubeEvidence, pods: string[], onset: Date, reason?: RegExp): CoreV1Event[] {
  return kube.events.filter((e) => {
    if (e.involvedObject?.kind !== 'Pod' || !pods.includes(e.involvedObject.name ?? '')) return false;
    if (reason && !reason.test(e.reason ?? '')) return false;
    const at = eventAt(e);
    return !!at && onset.getTime() - at.getTime() <= CHANGE_WINDOW_MS;
  });
}

export function eventEvidence(e: CoreV1Event, summary?: string): Evidence {
  const at = eventAt(e);
  return {
    kind: 'event',
    summary: summary ?? `event ${e.reason} ×${e.count ?? 1} on pod ${e.involvedObject?.name}: "${clip(e.message ?? '', 220)}"${at ? ` (last ${clockTime(at)})` : ''}`,
    citation: objectCitation('Event', e.metadata?.namespace ?? e.involvedObject?.namespace, e.metadata?.name ?? '?'),
    observedAt: at,
    detail: { reason: e.reason, count: e.count ?? 1, pod: e.involvedObject?.name, firstTimestamp: eventFirst(e)?.toISOString() ?? null, lastTimestamp: at?.toISOString() ?? null },
  };
}

export function clip(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

/** One Deployment revision: its ReplicaSet and when the rollout created it. */
export interface Revision {
  revision: number;
  replicaSet: V1ReplicaSet;
  name: string;
  createdAt?: Date;
}

/** The workload's current revision and the one before it (Deployments only; from the ReplicaSets' revision annotations). */
export function revisions(kube: KubeEvidence): { current?: Revision; previous?: Revision } {
  const all = kube.replicaSets
    .map((rs) => ({
      revision: Number(rs.metadata?.annotations?.['deployment.kubernetes.io/revision'] ?? 0),
      replicaSet: rs,
      name: rs.metadata?.name ?? '?',
      createdAt: rs.metadata?.creationTimestamp ? new Date(rs.metadata.creationTimestamp) : undefined,
    }))
    .filter((r) => r.revision > 0)
    .sort((a, b) => b.revision - a.revision);
  const wanted = Number(kube.workload?.metadata?.annotations?.['deployment.kubernetes.io/revision'] ?? 0);
  const current = all.find((r) => r.revision === wanted) ?? all[0];
  const previous = current ? all.find((r) => r.revision < current.revision) : undefined;
  return { current, previous };
}

/** The container of that name in a ReplicaSet's (or the workload's) pod template. */
export function templateContainer(owner: { spec?: { template?: { spec?: { containers?: V1Container[]; initContainers?: V1Container[] } } } } | undefined, name: string): V1Container | undefined {
  const spec = owner?.spec?.template?.spec;
  return [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])].find((c) => c.name === name);
}

/** The container of that name in a pod's spec. */
export function podContainer(p: V1Pod, name: string): V1Container | undefined {
  return [...(p.spec?.containers ?? []), ...(p.spec?.initContainers ?? [])].find((c) => c.name === name);
}

/** The ReplicaSet owning a pod. */
export function ownerReplicaSet(p: V1Pod): string | undefined {
  return p.metadata?.ownerReferences?.find((o) => o.kind === 'ReplicaSet')?.name;
}

export function containerStatuses(p: V1Pod): V1ContainerStatus[] {
  return [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])];
}

/** Was this revision rolled out shortly before `at` (within the change window, a minute of clock skew allowed)? */
export function rolledOutBefore(rev: Revision | undefined, at: Date): boolean {
  if (!rev?.createdAt) return false;
  const delta = at.getTime() - rev.createdAt.getTime();
  return delta >= -60_000 && delta <= CHANGE_WINDOW_MS;
}

export function revisionEvidence(kube: KubeEvidence, rev: Revision, onset: Date, what: string): Evidence {
  const t = kube.target!;
  return {
    kind: 'change',
    summary: `rollout to revision ${rev.revision} (ReplicaSet ${rev.name}${what ? `, ${what}` : ''})${rev.createdAt ? ` at ${clockTime(rev.createdAt)}, ${relativeToOnset(rev.createdAt, onset)}` : ''}`,
    citation: objectCitation('ReplicaSet', t.namespace, rev.name, 'metadata.annotations'),
    observedAt: rev.createdAt,
    detail: { revision: rev.revision, replicaSet: rev.name, createdAt: rev.createdAt?.toISOString() ?? null },
  };
}

/** `kubectl rollout undo` to a revision, as a proposal. */
export function undoProposal(kube: KubeEvidence, to: Revision, rationale: string): MitigationProposal {
  const t = kube.target!;
  return {
    action: 'rollout_undo',
    target: { kind: t.kind, namespace: t.namespace, name: t.name },
    params: { toRevision: to.revision },
    command: `kubectl rollout undo ${t.kind.toLowerCase()}/${t.name} -n ${t.namespace} --to-revision=${to.revision}`,
    rationale,
  };
}

/** Ready and not-ready addresses of an Endpoints object. */
function addressCounts(endpoints: { subsets?: { addresses?: unknown[]; notReadyAddresses?: unknown[] }[] } | undefined): { ready: number; notReady: number } {
  let ready = 0;
  let notReady = 0;
  for (const s of endpoints?.subsets ?? []) {
    ready += (s.addresses ?? []).length;
    notReady += (s.notReadyAddresses ?? []).length;
  }
  return { ready, notReady };
}

/**
 * Who is affected when some of the workload's pods do not serve: its Services (with their ready
 * endpoints), its callers and the Ingresses in front of those Services.
 */
export function servingScope(kube: KubeEvidence, problem: string): { scope: string; affected: ComponentRef[]; evidence: Evidence[]; readyEndpoints?: number } {
  const t = kube.target!;
  const ns = t.namespace;
  const services = kube.services.map(({ service, endpoints }) => ({ name: service.metadata?.name ?? '?', ...addressCounts(endpoints) }));
  const names = services.map((s) => s.name);
  const ingresses = kube.ingresses.filter((i) =>
    [...(i.spec?.rules ?? []).flatMap((r) => r.http?.paths ?? []).map((p) => p.backend?.service?.name), i.spec?.defaultBackend?.service?.name].some((n) => !!n && names.includes(n)),
  );
  const hosts = ingresses.flatMap((i) => (i.spec?.rules ?? []).map((r) => r.host).filter((h): h is string => !!h));
  const callers = kube.dependents.map((d) => d.name);
  const ready = services.length ? services.reduce((n, s) => n + s.ready, 0) : undefined;
  const parts = [problem];
  for (const s of services) {
    parts.push(
      s.ready === 0
        ? `Service ${s.name} has no ready endpoints${s.notReady ? ` (${s.notReady} not ready)` : ''}, so every request to it fails`
        : `Service ${s.name} still has ${s.ready} ready endpoint${s.ready === 1 ? '' : 's'}${s.notReady ? ` (${s.notReady} not ready)` : ''}: reduced capacity, not an outage`,
    );
  }
  if (callers.length) parts.push(`callers: ${callers.join(', ')}`);
  if (hosts.length) parts.push(`exposed at ${hosts.join(', ')}`);
  const evidence: Evidence[] = kube.services.map(({ service, endpoints }) => {
    const c = addressCounts(endpoints);
    return {
      kind: 'endpoints',
      summary: `Endpoints ${service.metadata?.name}: ${c.ready} ready, ${c.notReady} not ready`,
      citation: objectCitation('Endpoints', ns, service.metadata?.name ?? '?', 'subsets'),
      detail: { ready: c.ready, notReady: c.notReady },
    };
  });
  return {
    scope: parts.join('; '),
    affected: [
      ...names.map((name) => ({ kind: 'Service', namespace: ns, name })),
      ...kube.dependents.map((d) => ({ kind: d.kind, namespace: ns, name: d.name })),
      ...ingresses.map((i) => ({ kind: 'Ingress', namespace: ns, name: i.metadata?.name ?? '?' })),
    ],
    evidence,
    readyEndpoints: ready,
  };
}

/** `registry.example.com/shop/cart:2.4.0` → `2.4.0` (digest or tag; the whole reference without one). */
export function imageTag(image: string | undefined): string | undefined {
  if (!image) return undefined;
  const at = image.indexOf('@');
  if (at >= 0) return image.slice(at + 1);
  const colon = image.lastIndexOf(':');
  return colon > image.lastIndexOf('/') ? image.slice(colon + 1) : image;
}

// ------------------------------------------------------------------ crash loop

interface Crash {
  pod: V1Pod;
  podName: string;
  status: V1ContainerStatus;
  exitCode?: number;
  reason?: string;
  finishedAt?: Date;
}

/** Lines that are stack frames or headers, never the cause itself. */
const FRAME = /^(\s|goroutine \d+|\/|[\w./]+\.go:\d+|\S+\(.*\)$|Traceback \(most recent call last\)|File "|at [\w$.]+\(|\.\.\. \d+ more|\[signal )/;
/** The line that states the cause. */
// After an optional timestamp or logger prefix (`<TS> KeyError: 'X'`, `[main] FATAL …`).
const CAUSE = /(^|[\s\]>|])(panic:|fatal error:|FATAL\b|[A-Z]\w*(Error|Exception)\b:|Caused by:)|nil pointer|segmentation|unhandled|uncaught/i;
const ERRORISH = /refused|no such host|timeout|timed out|denied|forbidden|unauthori[sz]ed|not found|no such file|cannot|can't|could not|unable to|failed|missing|invalid|exit/i;

/** How well a log template explains a crash: the cause line ranks above error-level lines, which rank above error-ish words. */
function explainScore(p: LogPattern): number {
  const text = p.example || p.template;
  if (FRAME.test(p.template) && !CAUSE.test(p.template)) return 0;
  if (CAUSE.test(text)) return 5;
  if (p.level === 'error') return 3;
  if (ERRORISH.test(text) && p.level !== 'info' && p.level !== 'debug') return 2;
  return 0;
}

interface Explanation {
  pattern: LogPattern;
  count: number;
  pods: string[];
  citation: Citation;
  previous: boolean;
}

/** The best explaining template across the crashing containers' logs (previous containers first). */
function explainingPattern(kube: KubeEvidence, crashes: Crash[]): Explanation | undefined {
  const ns = kube.target!.namespace;
  const byTemplate = new Map<string, Explanation & { score: number }>();
  for (const log of kube.containerLogs) {
    if (!crashes.some((c) => c.podName === log.pod && c.status.name === log.container)) continue;
    for (const p of log.patterns) {
      const score = explainScore(p) + (log.previous ? 0.5 : 0);
      if (score < 2) continue;
      const seen = byTemplate.get(p.template);
      if (seen) {
        seen.count += p.count;
        if (!seen.pods.includes(log.pod)) seen.pods.push(log.pod);
        seen.score = Math.max(seen.score, score);
      } else {
        byTemplate.set(p.template, {
          pattern: p,
          count: p.count,
          pods: [log.pod],
          previous: log.previous,
          score,
          citation: { source: 'kubernetes', ref: `api/v1/namespaces/${ns}/pods/${log.pod}/log?container=${log.container}${log.previous ? '&previous=true' : ''}` },
        });
      }
    }
  }
  return [...byTemplate.values()].sort((a, b) => b.score - a.score || b.pods.length - a.pods.length || b.count - a.count)[0];
}

function recentCrash(s: V1ContainerStatus, onset: Date): { exitCode?: number; reason?: string; finishedAt?: Date } | undefined {
  const term = s.lastState?.terminated ?? s.state?.terminated;
  const finishedAt = term?.finishedAt ? new Date(term.finishedAt) : undefined;
  const looping = s.state?.waiting?.reason === 'CrashLoopBackOff';
  const recent = finishedAt ? onset.getTime() - finishedAt.getTime() <= CHANGE_WINDOW_MS : false;
  if (!looping && !((s.restartCount ?? 0) > 0 && recent)) return undefined;
  return { exitCode: term?.exitCode, reason: term?.reason, finishedAt };
}

const EXIT_MEANING: Record<number, string> = {
  1: 'application error',
  2: 'Go panic / misuse of a shell builtin',
  126: 'command not executable',
  127: 'command not found',
  134: 'SIGABRT',
  137: 'SIGKILL',
  139: 'SIGSEGV',
  143: 'SIGTERM',
};

/** The change right before the first crash that is not the workload's own rollout (a config edit, a flag, a deploy record). */
function precedingChange(changes: RankedChange[], t: { namespace: string; name: string }, firstCrash: Date): RankedChange | undefined {
  return changes.find((c) => {
    const delta = firstCrash.getTime() - c.at.getTime();
    if (delta < -60_000 || delta > CHANGE_WINDOW_MS || c.score < 0.3) return false;
    const ownRollout = (c.kind === 'rollout' || c.kind === 'image') && c.target.name === t.name && c.target.namespace === t.namespace && c.actor === 'deployment-controller';
    return !ownRollout;
  });
}

export const crashLoop: Analyzer = {
  name: 'crash-loop',
  analyze({ kube, onset, changes }: TriageInput): Finding[] {
    const t = kube.target;
    if (!t || !kube.workload) return [];
    const all: Crash[] = [];
    for (const pod of kube.pods) {
      for (const status of containerStatuses(pod)) {
        const c = recentCrash(status, onset);
        if (c) all.push({ pod, podName: pod.metadata?.name ?? '?', status, ...c });
      }
    }
    // OOMKilled containers are oom-killed's; liveness-probe restarts are failing-probe's.
    const livenessKilled = new Set(
      podEvents(kube, all.map((c) => c.podName), onset, /^Killing$/)
        .filter((e) => /failed (liveness|startup) probe/i.test(e.message ?? ''))
        .map((e) => e.involvedObject?.name ?? ''),
    );
    const crashes = all.filter((c) => c.reason !== 'OOMKilled' && !livenessKilled.has(c.podName));
    if (crashes.length === 0) return [];

    const component = { kind: t.kind, namespace: t.namespace, name: t.name };
    const container = mostCommon(crashes.map((c) => c.status.name));
    const mine = crashes.filter((c) => c.status.name === container);
    const pods = [...new Set(mine.map((c) => c.podName))];
    const restartCount = Math.max(...mine.map((c) => c.status.restartCount ?? 0));
    const last = mine.filter((c) => c.finishedAt).sort((a, b) => b.finishedAt!.getTime() - a.finishedAt!.getTime())[0] ?? mine[0]!;
    const waiting = mine.find((c) => c.status.state?.waiting?.reason)?.status.state?.waiting?.reason;

    const backoffs = podEvents(kube, pods, onset, /^BackOff$/).filter((e) => /restarting failed container/i.test(e.message ?? ''));
    // The first back-off dates the first crash; without events, the crashing pods' start is the best bound.
    const backoffStarts = backoffs.map(eventFirst).filter((d): d is Date => !!d);
    const starts = backoffStarts.length
      ? backoffStarts
      : mine.map((c) => (c.pod.status?.startTime ? new Date(c.pod.status.startTime) : undefined)).filter((d): d is Date => !!d);
    const firstCrash = starts.length ? new Date(Math.min(...starts.map((d) => d.getTime()))) : (last.finishedAt ?? onset);

    const supporting: Evidence[] = [];
    const facts: Record<string, string | number | boolean> = { container, crashingPods: pods.length, restartCount };
    if (last.exitCode !== undefined) facts['exitCode'] = last.exitCode;
    if (last.reason) facts['lastTermination'] = last.reason;
    if (waiting) facts['waitingReason'] = waiting;

    supporting.push({
      kind: 'object',
      summary: `pod ${last.podName}: container ${container} ${waiting ?? 'restarting'}, ${last.status.restartCount ?? 0} restarts, last terminated ${last.reason ?? '?'} exit code ${last.exitCode ?? '?'}${last.exitCode !== undefined && EXIT_MEANING[last.exitCode] ? ` (${EXIT_MEANING[last.exitCode]})` : ''}${last.finishedAt ? ` at ${clockTime(last.finishedAt)}` : ''}`,
      citation: objectCitation('Pod', t.namespace, last.podName, 'status.containerStatuses'),
      observedAt: last.finishedAt,
      detail: { pods, restartCount, exitCode: last.exitCode ?? null, reason: last.reason ?? null, waiting: waiting ?? null },
    });
    const backoff = backoffs.sort((a, b) => (b.count ?? 1) - (a.count ?? 1))[0];
    if (backoff) supporting.push(eventEvidence(backoff));

    const explanation = explainingPattern(kube, mine);
    if (explanation) {
      facts['logPattern'] = clip(explanation.pattern.template, 200);
      facts['logCount'] = explanation.count;
      supporting.push({
        kind: 'log',
        summary: `${explanation.previous ? 'previous' : 'current'} container log of ${container}: "${clip(explanation.pattern.example || explanation.pattern.template, 200)}" ×${explanation.count} in ${explanation.pods.length} pod${explanation.pods.length === 1 ? '' : 's'}`,
        citation: explanation.citation,
        observedAt: explanation.pattern.last,
        detail: { template: explanation.pattern.template, count: explanation.count, pods: explanation.pods, level: explanation.pattern.level ?? null },
      });
    }

    // The rollout right before the first crash, when the crashing pods are the new revision's.
    const { current, previous } = revisions(kube);
    const podsRs = new Set(mine.map((c) => ownerReplicaSet(c.pod)));
    const oldCrash = current ? mine.filter((c) => ownerReplicaSet(c.pod) !== current.name) : [];
    const fromRollout = !!current && !!previous && rolledOutBefore(current, firstCrash) && podsRs.size === 1 && podsRs.has(current.name);
    let rolloutText = '';
    if (fromRollout) {
      const image = templateContainer(current.replicaSet, container)?.image;
      const before = templateContainer(previous.replicaSet, container)?.image;
      Object.assign(facts, { revision: current.revision, previousRevision: previous.revision });
      if (image) facts['image'] = image;
      if (before) facts['previousImage'] = before;
      if (current.createdAt) facts['changedAt'] = current.createdAt.toISOString();
      const imageText = image && image !== before ? `image ${imageTag(image)}` : 'same image, pod template changed';
      supporting.push(revisionEvidence(kube, current, onset, `${imageText}${before && image !== before ? `, was ${imageTag(before)}` : ''}`));
      rolloutText = `it started after the rollout to revision ${current.revision} (${imageText})${current.createdAt ? ` at ${clockTime(current.createdAt)}, ${relativeToOnset(current.createdAt, onset)}` : ''}`;
      const healthyOld = kube.pods.filter(
        (p) => ownerReplicaSet(p) === previous.name && containerStatuses(p).every((s) => (s.restartCount ?? 0) === 0 && s.ready),
      );
      if (healthyOld.length) {
        supporting.push({
          kind: 'object',
          summary: `${healthyOld.length} pod${healthyOld.length === 1 ? '' : 's'} of revision ${previous.revision} (${imageTag(before) ?? previous.name}) still run ready without restarts`,
          citation: objectCitation('Pod', t.namespace, healthyOld[0]!.metadata?.name ?? '?', 'status.containerStatuses'),
        });
      }
    } else if (oldCrash.length && current && previous && rolledOutBefore(current, onset)) {
      // Not against the crash loop, against blaming the rollout: a note, and no rollback is proposed.
      supporting.push({
        kind: 'note',
        summary: `pods of older revisions crash too (${oldCrash.map((c) => c.podName).join(', ')}), so the rollout to revision ${current.revision} is not what broke it`,
        citation: objectCitation('Pod', t.namespace, oldCrash[0]!.podName, 'status.containerStatuses'),
      });
    }

    const other = fromRollout ? undefined : precedingChange(changes, t, firstCrash);
    if (other) {
      facts['precedingChange'] = clip(other.summary, 160);
      facts['changedAt'] = other.at.toISOString();
      supporting.push({ kind: 'change', summary: `${other.summary} (${clockTime(other.at)}, ${humanDuration(firstCrash.getTime() - other.at.getTime())} before the first crash)`, citation: other.citation, observedAt: other.at });
    }

    const longStanding = onset.getTime() - firstCrash.getTime() > CHANGE_WINDOW_MS;
    const confidence = longStanding ? 0.4 : fromRollout ? (explanation ? 0.9 : 0.85) : explanation ? 0.8 : 0.7;
    const status = longStanding ? 'open' : 'supported';
    const { scope, affected, evidence } = servingScope(kube, `${pods.length} of ${kube.pods.length} ${t.name} pods crash-loop`);
    supporting.push(...evidence.filter((e) => (e.detail?.['ready'] as number) === 0));

    const exit = last.exitCode !== undefined ? `exit code ${last.exitCode}${EXIT_MEANING[last.exitCode] ? ` (${EXIT_MEANING[last.exitCode]})` : ''}` : 'an unknown exit code';
    const mechanism =
      `Container ${container} of ${t.kind.toLowerCase()}/${t.name} crashes in ${pods.length} pod${pods.length === 1 ? '' : 's'} (${waiting ?? 'restarting'}, up to ${restartCount} restarts, last terminated ${last.reason ?? '?'} with ${exit})` +
      (explanation ? `; the ${explanation.previous ? 'previous' : 'current'} container logs show "${clip(explanation.pattern.template, 160)}" ×${explanation.count}` : '; no explaining log line was read') +
      (rolloutText ? `; ${rolloutText}` : '') +
      (other ? `; it started ${humanDuration(firstCrash.getTime() - other.at.getTime())} after: ${other.summary}` : '') +
      (longStanding ? `; the crashes began at ${clockTime(firstCrash)}, ${humanDuration(onset.getTime() - firstCrash.getTime())} before the alert, so they predate it` : '') +
      '.';

    return [
      {
        key: `crash-loop:${t.namespace}/${t.kind}/${t.name}`,
        analyzer: 'crash-loop',
        status,
        confidence,
        title: `${t.name} crash-looping${explanation ? `: ${clip(explanation.pattern.template, 80)}` : ` (${exit})`}${fromRollout ? ` since revision ${current!.revision}` : ''}`,
        component,
        mechanism,
        scope,
        affected,
        facts,
        supporting,
        refuting: [],
        ...(fromRollout && previous
          ? {
              mitigation: undoProposal(
                kube,
                previous,
                `revision ${previous.revision}${facts['previousImage'] ? ` (${imageTag(String(facts['previousImage']))})` : ''} ran without crashing; roll back while the crash in revision ${current!.revision} is fixed`,
              ),
            }
          : {}),
      },
    ];
  },
};

function mostCommon(xs: string[]): string {
  const n = new Map<string, number>();
  for (const x of xs) n.set(x, (n.get(x) ?? 0) + 1);
  return [...n.entries()].sort((a, b) => b[1] - a[1])[0]![0];
}

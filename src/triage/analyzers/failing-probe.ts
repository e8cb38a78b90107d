/**
 * `failing-probe`: readiness/liveness/startup probe failures of target pods (kubelet `Unhealthy` events,
 * `Readiness probe failed: Get "http://10.244.1.5:8081/healthz": dial tcp …: connect: connection refused`),
 * read against the probe spec and the container's ports to tell a misconfigured probe (a port the
 * container does not expose, a path that answers 404, a probe a recent rollout changed) from an app that
 * really is unhealthy. Liveness failures restart containers (`Killing` … `failed liveness probe`).
 *
 * Facts (camelCase): `probe` (`readiness` | `liveness` | `startup`), `container`, `path`, `port` (the
 * number probed), `containerPort` (the first port the container declares), `containerPorts` (all, comma
 * separated), `failure` (the kubelet's message), `failureKind` (`connection_refused` | `http_status` |
 * `timeout` | `other`), `statusCode`, `misconfigured` (boolean), `misconfiguration` (`port_not_exposed` |
 * `named_port_missing` | `path_not_found` | `probe_changed`), `failingPods`, `failures` (event count);
 * when a rollout changed the probe: `previousPort`, `previousPath`, `revision`, `previousRevision`, `changedAt`.
 *
 * With a misconfigured readiness probe and a passing liveness probe, the alternative "the app itself is
 * down" is returned as ruled out, with the liveness probe's record as the evidence against it.
 */
import type { CoreV1Event, V1Container, V1Pod, V1Probe } from '@kubernetes/client-node';
import type { Evidence } from '../../evidence/types.js';
import type { Analyzer, TriageInput } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime, relativeToOnset } from '../time.js';
import type { Finding } from '../types.js';
import { clip, containerStatuses, eventAt, eventEvidence, podContainer, podEvents, revisionEvidence, revisions, rolledOutBefore, servingScope, templateContainer, undoProposal } from './crash-loop.js';

type ProbeKind = 'readiness' | 'liveness' | 'startup';
/** Probe failures that ended this long before the onset, with all pods Ready, are over. */
const STALE_MS = 10 * 60_000;
/** Probe failures this soon after a container started are its warm-up (caches, JIT, connections). */
const WARMUP_MS = 90_000;
const PROBE_FIELD: Record<ProbeKind, 'readinessProbe' | 'livenessProbe' | 'startupProbe'> = { readiness: 'readinessProbe', liveness: 'livenessProbe', startup: 'startupProbe' };
const UNHEALTHY = /^(Readiness|Liveness|Startup) probe (?:failed|errored):\s*(.*)$/s;
const URL = /(?:Get|Head) "?(https?):\/\/[^/:"]+:(\d+)(\/[^"\s]*)?"?/;

interface ProbeTarget {
  path?: string;
  port?: number;
  /** The port as written (a name or a number). */
  portSpec?: string;
  kind: 'http' | 'tcp' | 'grpc' | 'exec' | 'none';
}

/** The port and path a probe checks, named ports resolved against the container's ports. */
export function probeTarget(probe: V1Probe | undefined, c: V1Container | undefined): ProbeTarget {
  if (!probe) return { kind: 'none' };
  const raw = probe.httpGet?.port ?? probe.tcpSocket?.port ?? probe.grpc?.port;
  const kind = probe.httpGet ? 'http' : probe.tcpSocket ? 'tcp' : probe.grpc ? 'grpc' : 'exec';
  if (raw === undefined) return { kind, path: probe.httpGet?.path };
  const port = typeof raw === 'number' || /^\d+$/.test(String(raw)) ? Number(raw) : c?.ports?.find((p) => p.name === raw)?.containerPort;
  return { kind, path: probe.httpGet?.path, port, portSpec: String(raw) };
}

function failureKind(msg: string): { kind: 'connection_refused' | 'http_status' | 'timeout' | 'other'; status?: number } {
  const status = /statuscode: (\d{3})/i.exec(msg);
  if (status) return { kind: 'http_status', status: Number(status[1]) };
  if (/connection refused/i.test(msg)) return { kind: 'connection_refused' };
  if (/timeout|deadline exceeded|timed out/i.test(msg)) return { kind: 'timeout' };
  return { kind: 'other' };
}

interface Failure {
  probe: ProbeKind;
  container: string;
  message: string;
  events: CoreV1Event[];
  pods: string[];
  count: number;
}

/** Group current Unhealthy events by probe kind and container. */
function failures(events: CoreV1Event[], pods: V1Pod[]): Failure[] {
  const out = new Map<string, Failure>();
  for (const e of events) {
    const m = UNHEALTHY.exec(e.message ?? '');
    if (!m) continue;
    const probe = m[1]!.toLowerCase() as ProbeKind;
    const podName = e.involvedObject?.name ?? '';
    const pod = pods.find((p) => p.metadata?.name === podName);
    const container = /spec\.(?:init)?[cC]ontainers\{([^}]+)\}/.exec(e.involvedObject?.fieldPath ?? '')?.[1] ?? pod?.spec?.containers?.[0]?.name ?? '?';
    const key = `${probe}/${container}`;
    const f = out.get(key) ?? { probe, container, message: m[2]!, events: [], pods: [], count: 0 };
    f.events.push(e);
    f.count += e.count ?? 1;
    if (!f.pods.includes(podName)) f.pods.push(podName);
    out.set(key, f);
  }
  return [...out.values()];
}

function describeTarget(p: ProbeTarget): string {
  if (p.kind === 'none') return 'no probe';
  if (p.kind === 'exec') return 'an exec probe';
  return `${p.kind === 'http' ? `GET ${p.path ?? '/'}` : p.kind.toUpperCase()} on port ${p.port ?? p.portSpec ?? '?'}${p.portSpec && String(p.port) !== p.portSpec ? ` (${p.portSpec})` : ''}`;
}

export const failingProbe: Analyzer = {
  name: 'failing-probe',
  analyze({ kube, onset }: TriageInput): Finding[] {
    const t = kube.target;
    if (!t || !kube.workload) return [];
    const podNames = kube.pods.map((p) => p.metadata?.name ?? '');
    const all = failures(podEvents(kube, podNames, onset, /^Unhealthy$/), kube.pods);
    if (all.length === 0) return [];
    const component = { kind: t.kind, namespace: t.namespace, name: t.name };
    const { current, previous } = revisions(kube);

    const analysed = all.map((f) => {
      const pod = kube.pods.find((p) => p.metadata?.name === f.pods[0])!;
      const c = podContainer(pod, f.container) ?? templateContainer(kube.workload, f.container);
      const spec = probeTarget(c?.[PROBE_FIELD[f.probe]], c);
      const url = URL.exec(f.message);
      const probedPort = url ? Number(url[2]) : spec.port;
      const path = url?.[3] ?? spec.path;
      const declared = (c?.ports ?? []).map((p) => p.containerPort);
      const fk = failureKind(f.message);
      const prevC = templateContainer(previous?.replicaSet, f.container);
      const prevSpec = probeTarget(prevC?.[PROBE_FIELD[f.probe]], prevC);
      const curC = templateContainer(current?.replicaSet, f.container) ?? c;
      const changed =
        !!current && !!previous && !!prevC && JSON.stringify(prevC[PROBE_FIELD[f.probe]] ?? null) !== JSON.stringify(curC?.[PROBE_FIELD[f.probe]] ?? null) && rolledOutBefore(current, onset);
      const failingOnNew = !!current && f.pods.every((p) => kube.pods.find((x) => x.metadata?.name === p)?.metadata?.ownerReferences?.some((o) => o.name === current.name));
      const misconfiguration =
        spec.portSpec && spec.port === undefined
          ? 'named_port_missing'
          : probedPort !== undefined && declared.length > 0 && !declared.includes(probedPort) && fk.kind === 'connection_refused'
            ? 'port_not_exposed'
            : fk.kind === 'http_status' && fk.status === 404
              ? 'path_not_found'
              : changed && failingOnNew && (fk.kind === 'connection_refused' || fk.kind === 'http_status')
                ? 'probe_changed'
                : undefined;
      return { f, pod, c, spec, probedPort, path, declared, fk, prevSpec, changed: changed && failingOnNew, misconfiguration };
    });
    // The misconfigured probe explains most; then readiness (it takes pods out of Services), then the most failures.
    const order: Record<ProbeKind, number> = { readiness: 0, liveness: 1, startup: 2 };
    analysed.sort((a, b) => Number(!!b.misconfiguration) - Number(!!a.misconfiguration) || order[a.f.probe] - order[b.f.probe] || b.f.count - a.f.count);
    const main = analysed[0]!;
    const { f } = main;

    const facts: Record<string, string | number | boolean> = {
      probe: f.probe,
      container: f.container,
      failure: clip(f.message, 200),
      failureKind: main.fk.kind,
      misconfigured: !!main.misconfiguration,
      failingPods: f.pods.length,
      failures: f.count,
    };
    if (main.path) facts['path'] = main.path;
    if (main.probedPort !== undefined) facts['port'] = main.probedPort;
    if (main.declared.length) {
      facts['containerPort'] = main.declared[0]!;
      facts['containerPorts'] = main.declared.join(',');
    }
    if (main.fk.status) facts['statusCode'] = main.fk.status;
    if (main.misconfiguration) facts['misconfiguration'] = main.misconfiguration;

    const newest = [...f.events].sort((a, b) => (b.count ?? 1) - (a.count ?? 1))[0]!;
    const supporting: Evidence[] = [eventEvidence(newest)];
    supporting.push({
      kind: 'object',
      summary: `${f.probe}Probe of ${f.container}: ${describeTarget(main.spec)}; the container declares port${main.declared.length === 1 ? '' : 's'} ${main.declared.join(', ') || 'none'}`,
      citation: objectCitation('Pod', t.namespace, main.pod.metadata?.name ?? '?', `spec.containers[${(main.pod.spec?.containers ?? []).findIndex((c) => c.name === f.container)}].${PROBE_FIELD[f.probe]}`),
      detail: { probe: main.c?.[PROBE_FIELD[f.probe]] ?? null, ports: main.declared },
    });
    if (main.changed && current && previous) {
      if (main.prevSpec.port !== undefined) facts['previousPort'] = main.prevSpec.port;
      if (main.prevSpec.path) facts['previousPath'] = main.prevSpec.path;
      Object.assign(facts, { revision: current.revision, previousRevision: previous.revision });
      if (current.createdAt) facts['changedAt'] = current.createdAt.toISOString();
      supporting.push(revisionEvidence(kube, current, onset, `${f.probe} probe ${describeTarget(main.prevSpec)} → ${describeTarget(main.spec)}`));
    }

    const notReady = kube.pods.filter((p) => (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status !== 'True'));
    // Probes that failed a few times while pods started, long before the onset, with every pod Ready now,
    // are how start-up looks: a look-alike, not the cause.
    const lastFailure = Math.max(...analysed.flatMap((a) => a.f.events.map((e) => eventAt(e)?.getTime() ?? 0)));
    // Or failures only in a pod's first moments (a rollout restart's new pods warming up), all Ready since.
    const startedAt = new Map(kube.pods.map((p) => [p.metadata?.name ?? '', p.status?.startTime ? new Date(p.status.startTime).getTime() : undefined]));
    const duringStart = analysed.every((a) =>
      a.f.events.every((e) => {
        const start = startedAt.get(e.involvedObject?.name ?? '');
        const at = eventAt(e)?.getTime();
        return start !== undefined && at !== undefined && at - start <= WARMUP_MS;
      }),
    );
    if (notReady.length === 0 && kube.pods.length > 0 && (onset.getTime() - lastFailure > STALE_MS || duringStart) && !analysed.some((a) => a.f.probe === 'liveness')) {
      return [
        {
          key: `failing-probe:${t.namespace}/${t.kind}/${t.name}`,
          analyzer: 'failing-probe',
          status: 'ruled_out',
          confidence: 0.05,
          title: `${t.name} ${f.probe} probe failing`,
          component,
          mechanism: `The ${f.probe} probe of ${f.container} failed ${f.count} time${f.count === 1 ? '' : 's'} ("${clip(f.message, 160)}"), last at ${clockTime(new Date(lastFailure))}.`,
          reason: `${duringStart ? 'the failures came in the first seconds after the pods started' : `the failures stopped ${relativeToOnset(new Date(lastFailure), onset)}`} and all ${kube.pods.length} pods are Ready: a start-up transient`,
          facts,
          supporting: [],
          refuting: [eventEvidence(newest)],
        },
      ];
    }
    const restarts = f.probe === 'liveness' ? podEvents(kube, f.pods, onset, /^Killing$/).filter((e) => /failed liveness probe/i.test(e.message ?? '')) : [];
    if (restarts[0]) supporting.push(eventEvidence(restarts[0]));
    const problem =
      f.probe === 'readiness'
        ? `${notReady.length} of ${kube.pods.length} ${t.name} pods are not Ready (readiness probe failing), so Services route nothing to them`
        : f.probe === 'liveness'
          ? `${t.name} containers are restarted by the liveness probe in ${f.pods.length} pod${f.pods.length === 1 ? '' : 's'}`
          : `${t.name} containers never pass their startup probe`;
    const { scope, affected, evidence } = servingScope(kube, problem);
    supporting.push(...evidence);

    const findings: Finding[] = [];
    const key = `failing-probe:${t.namespace}/${t.kind}/${t.name}`;

    // The alternative: the app itself is down. A passing liveness probe on the same container says it is not.
    const liveness = probeTarget(main.c?.livenessProbe, main.c);
    const livenessFailing = analysed.some((a) => a.f.probe === 'liveness' && a.f.container === f.container);
    const restartTotal = kube.pods.flatMap(containerStatuses).filter((s) => s.name === f.container).reduce((n, s) => n + (s.restartCount ?? 0), 0);
    if (main.misconfiguration && f.probe === 'readiness' && liveness.kind !== 'none' && !livenessFailing) {
      const livenessOk: Evidence = {
        kind: 'object',
        summary: `livenessProbe of ${f.container} (${describeTarget(liveness)}) passes: no Liveness failures, ${restartTotal} restart${restartTotal === 1 ? '' : 's'} across ${kube.pods.length} pods`,
        citation: objectCitation('Pod', t.namespace, main.pod.metadata?.name ?? '?', 'spec.containers[].livenessProbe'),
        detail: { livenessPort: liveness.port ?? null, livenessPath: liveness.path ?? null, restarts: restartTotal },
      };
      supporting.push(livenessOk);
      findings.push({
        key: `${key}/app-unhealthy`,
        analyzer: 'failing-probe',
        status: 'ruled_out',
        confidence: 0.05,
        title: `${t.name} itself is unhealthy`,
        component,
        mechanism: `The application in ${f.container} does not answer its health checks.`,
        reason: `the liveness probe (${describeTarget(liveness)}) passes on the same containers; only the readiness probe on port ${main.probedPort ?? '?'} fails`,
        supporting: [],
        refuting: [livenessOk],
      });
    }

    const why: Record<string, string> = {
      named_port_missing: `the probe names port "${main.spec.portSpec}", which the container does not declare`,
      port_not_exposed: `it probes port ${main.probedPort}, which the container does not expose (it declares ${main.declared.join(', ')}), so the connection is refused`,
      path_not_found: `${main.path ?? 'the probed path'} answers 404: the app does not serve that path`,
      probe_changed: `the probe changed with the rollout and fails since`,
    };
    const mechanism =
      `The ${f.probe} probe of ${f.container} in ${t.kind.toLowerCase()}/${t.name} fails in ${f.pods.length} pod${f.pods.length === 1 ? '' : 's'} (${f.count} failures): "${clip(f.message, 180)}"` +
      (main.misconfiguration ? `. The probe is misconfigured: ${why[main.misconfiguration]}` : `. The probe spec looks right (${describeTarget(main.spec)}), so the app itself reports unhealthy`) +
      (main.changed && current
        ? `; rollout to revision ${current.revision}${current.createdAt ? ` at ${clockTime(current.createdAt)} (${relativeToOnset(current.createdAt, onset)})` : ''} changed it from ${describeTarget(main.prevSpec)} to ${describeTarget(main.spec)}`
        : '') +
      '.';
    findings.unshift({
      key,
      analyzer: 'failing-probe',
      status: 'supported',
      confidence: main.misconfiguration ? 0.93 : 0.7,
      title: main.misconfiguration
        ? `${t.name} ${f.probe} probe misconfigured: ${describeTarget(main.spec)}${main.changed && current ? ` since revision ${current.revision}` : ''}`
        : `${t.name} ${f.probe} probe failing (${main.fk.kind.replace('_', ' ')}${main.fk.status ? ` ${main.fk.status}` : ''})`,
      component,
      mechanism,
      scope,
      affected,
      facts,
      supporting,
      refuting: [],
      ...(main.changed && previous ? { mitigation: undoProposal(kube, previous, `revision ${previous.revision} probed ${describeTarget(main.prevSpec)} and its pods were Ready`) } : {}),
    });
    return findings;
  },
};

/**
 * `init-container-stuck`: the target's pods stay in initialisation (`Init:0/1`, `Init:CrashLoopBackOff`
 * in kubectl): phase `Pending`, condition `Initialized=False` (`ContainersNotInitialized`, `containers
 * with incomplete status: [wait-for-db]`), the app containers waiting in `PodInitializing`, because an
 * init container has been running for minutes (a wait loop that never ends) or exits with an error and
 * restarts.
 *
 * What it waits for is read from the init container's log (`waiting for db`, `nc: bad address 'db'`,
 * `nslookup: can't resolve 'db'`, `** server can't find db.shop.svc.cluster.local: NXDOMAIN`,
 * `dial tcp: lookup db on 10.96.0.10:53: no such host`, `curl: (7) Failed to connect to db port 5432:
 * Connection refused`, `db:5432 - no response` from pg_isready), else from its command (`until nslookup
 * db; do …`, `nc -z db 5432`, `wait-for-it.sh db:5432`, `pg_isready -h db`). A cluster host name is then
 * resolved to its Service in the snapshot: one that does not exist, or has no ready endpoints, is named
 * as what is broken.
 *
 * Defers: pods the scheduler has not placed (`unschedulable`), init containers that cannot pull their
 * image (`image-pull`).
 *
 * Facts (camelCase): `initContainer`, `waitingOn` (host:port or service name, as the pod asks for it),
 * `logPattern` (the explaining log line), `podsBlocked`, `state` (`running` | `restarting`), `stuckFor`
 * (seconds, the longest), `restartCount`, `exitCode`, `dependency` (`Service/<ns>/<name>`),
 * `dependencyMissing` (true when the Service does not exist), `readyEndpoints` (of that Service), and,
 * when a rollout brought it: `revision`, `previousRevision`, `addedInRevision` (true when the previous
 * revision had no such init container), `changedAt`.
 *
 * Mitigation: `rollout_undo` when the current revision added (or changed) the init container and a
 * previous revision exists; otherwise none (the dependency needs fixing).
 */
import type { V1Container, V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import type { ContainerLogs } from '../../evidence/kubernetes/surroundings.js';
import type { Citation, Evidence } from '../../evidence/types.js';
import type { Analyzer, TriageInput } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime, humanDuration, relativeToOnset } from '../time.js';
import type { Finding, MitigationProposal } from '../types.js';
import { clip, eventAt, revisionEvidence, revisions, rolledOutBefore, servingScope, undoProposal } from './crash-loop.js';

const NAME = 'init-container-stuck';
/** An init container running this long without finishing is stuck, not slow. */
const STUCK_MS = 2 * 60_000;
const PULL = /ErrImagePull|ImagePullBackOff|InvalidImageName|ErrImageNeverPull/;

const HOST = '[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*';

/** What a log line says the container waits for: host, optional port. Most specific wordings first. */
const LOG_TARGETS: { re: RegExp; host: number; port?: number }[] = [
  { re: new RegExp(`Failed to connect to (${HOST}) port (\\d+)`, 'i'), host: 1, port: 2 },
  { re: new RegExp(`connect to (${HOST}) port (\\d+)`, 'i'), host: 1, port: 2 },
  { re: new RegExp(`Could not resolve host: (${HOST})`, 'i'), host: 1 },
  { re: new RegExp(`lookup (${HOST})(?: on [\\d.:]+)?: no such host`, 'i'), host: 1 },
  { re: new RegExp(`dial tcp (${HOST}):(\\d+): connect: connection refused`, 'i'), host: 1, port: 2 },
  { re: new RegExp(`(?:nc|wget|ping|telnet): bad address '(${HOST})'`, 'i'), host: 1 },
  { re: new RegExp(`nslookup: can't resolve '(${HOST})'`, 'i'), host: 1 },
  { re: new RegExp(`server can't find (${HOST})\\.?: (?:NXDOMAIN|SERVFAIL)`, 'i'), host: 1 },
  { re: new RegExp(`(${HOST}) \\([\\d.]+:(\\d+)\\)[^\\n]*(?:Connection refused|timed out)`, 'i'), host: 1, port: 2 },
  { re: new RegExp(`(${HOST}):(\\d+) - no response`, 'i'), host: 1, port: 2 },
  { re: new RegExp(`waiting (?:for|on) (?:the )?(?:service |host |database |dependency )?['"]?(${HOST})(?::(\\d+))?`, 'i'), host: 1, port: 2 },
];

/** What an init container's command waits for. */
const COMMAND_TARGETS: { re: RegExp; host: number; port?: number }[] = [
  { re: new RegExp(`wait-for(?:-it)?(?:\\.sh)?\\s+(?:-\\S+\\s+)*(${HOST}):(\\d+)`, 'i'), host: 1, port: 2 },
  { re: new RegExp(`\\bnc\\s+(?:-[a-zA-Z]+(?:\\s+\\d+)?\\s+)*(${HOST})\\s+(\\d+)`), host: 1, port: 2 },
  { re: new RegExp(`pg_isready\\s+[^;|&]*?-h\\s+(${HOST})(?:[^;|&]*?-p\\s+(\\d+))?`), host: 1, port: 2 },
  { re: new RegExp(`/dev/tcp/(${HOST})/(\\d+)`), host: 1, port: 2 },
  { re: new RegExp(`(?:curl|wget)\\s+[^;|&]*?https?://(${HOST})(?::(\\d+))?`), host: 1, port: 2 },
  { re: new RegExp(`\\b(?:nslookup|getent hosts|host)\\s+(${HOST})`), host: 1 },
  { re: new RegExp(`\\bdig\\s+(?:[+@]\\S+\\s+)*(${HOST})`), host: 1 },
];

/** Words that make a log line explain the wait. */
const EXPLAINS = /waiting|bad address|can't resolve|can't find|NXDOMAIN|no such host|could not resolve|connection refused|failed to connect|no response|timed out|timeout|unreachable|not ready|retrying|until/i;

/** Words the loose "waiting for …" wording catches that are not a host. */
const NOT_A_HOST = /^(?:\d+|it|them|the|a|an|all|service|services|dependency|dependencies|database|connection|connections|ready|readiness|response|startup|network|dns|lock|leader|migrations?|data|sync|init|pods?|endpoints?|seconds?|minutes?)$/i;

function targetIn(text: string, table: typeof LOG_TARGETS): { host: string; port?: string } | undefined {
  for (const t of table) {
    const m = t.re.exec(text);
    if (!m?.[t.host]) continue;
    const host = m[t.host]!.replace(/\.$/, '');
    // Noise words the loose "waiting for" wording can catch.
    if (NOT_A_HOST.test(host)) continue;
    return { host, ...(t.port && m[t.port] ? { port: m[t.port]! } : {}) };
  }
  return undefined;
}

/** How well a line explains the wait: it names a target (a fully qualified one or one with a port best), and reads like waiting. */
function lineScore(line: string, target: { host: string; port?: string } | undefined): number {
  return (target ? 2 + (target.port || target.host.includes('.') ? 0.5 : 0) : 0) + (EXPLAINS.test(line) ? 1 : 0);
}

interface Blocked {
  pod: V1Pod;
  name: string;
  status: V1ContainerStatus;
  state: 'running' | 'restarting';
  since?: Date;
}

/** The init container a pod is blocked on: the first that has not completed, if it runs long or fails. */
function blockedOn(p: V1Pod, now: Date): Blocked | undefined {
  if (p.metadata?.deletionTimestamp) return undefined;
  if ((p.status?.conditions ?? []).some((c) => c.type === 'PodScheduled' && c.status === 'False')) return undefined;
  const inits = p.status?.initContainerStatuses ?? [];
  const s = inits.find((x) => !(x.state?.terminated && x.state.terminated.exitCode === 0));
  if (!s) return undefined;
  if (p.status?.phase && p.status.phase !== 'Pending') return undefined;
  if (PULL.test(s.state?.waiting?.reason ?? '')) return undefined;
  const name = p.metadata?.name ?? '?';
  const failed = (s.restartCount ?? 0) > 0 || s.state?.waiting?.reason === 'CrashLoopBackOff' || (s.lastState?.terminated?.exitCode ?? 0) !== 0 || (s.state?.terminated?.exitCode ?? 0) !== 0;
  if (failed) {
    const since = p.metadata?.creationTimestamp ? new Date(p.metadata.creationTimestamp) : undefined;
    return { pod: p, name, status: s, state: 'restarting', ...(since ? { since } : {}) };
  }
  const started = s.state?.running?.startedAt ? new Date(s.state.running.startedAt) : undefined;
  if (started && now.getTime() - started.getTime() >= STUCK_MS) return { pod: p, name, status: s, state: 'running', since: started };
  return undefined;
}

interface Dependency {
  ref?: { namespace: string; name: string };
  /** The Service's ports. */
  ports?: number[];
  missing?: boolean;
  ready?: number;
  notReady?: number;
  external?: boolean;
  evidence?: Evidence;
}

/** A host a pod asks for, resolved to a Service of the snapshot (or the namespace). */
function resolveDependency(input: TriageInput, host: string): Dependency {
  const ns = input.kube.target!.namespace;
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(host)) return { external: true };
  const parts = host.toLowerCase().split('.');
  const snapshot = input.cluster?.snapshot;
  const namespaces = new Set([ns, ...(snapshot?.namespaces ?? []).map((n) => n.metadata?.name ?? '')]);
  let ref: { namespace: string; name: string } | undefined;
  if (parts.length === 1) ref = { namespace: ns, name: parts[0]! };
  else if (parts[2] === 'svc' || (parts.length === 2 && namespaces.has(parts[1]!))) ref = { namespace: parts[1]!, name: parts[0]! };
  if (!ref) return { external: true };
  const services = snapshot ? snapshot.services : ref.namespace === ns ? input.kube.namespaceServices.map((s) => s.service) : undefined;
  if (!services) return { ref };
  const svc = services.find((s) => s.metadata?.namespace === ref.namespace && s.metadata?.name === ref.name) ?? (snapshot ? undefined : services.find((s) => s.metadata?.name === ref.name));
  if (!svc) {
    const inNs = services.filter((s) => (s.metadata?.namespace ?? ns) === ref.namespace).map((s) => s.metadata?.name).filter(Boolean);
    return {
      ref,
      missing: true,
      evidence: {
        kind: 'object',
        summary: `Service ${ref.namespace}/${ref.name} does not exist${inNs.length ? ` (Services in ${ref.namespace}: ${inNs.slice(0, 6).join(', ')}${inNs.length > 6 ? ', …' : ''})` : ` (no Services in ${ref.namespace})`}`,
        citation: objectCitation('Service', ref.namespace, ref.name),
        detail: { service: ref.name, namespace: ref.namespace, exists: false, servicesInNamespace: inNs.slice(0, 20) },
      },
    };
  }
  if (svc.spec?.type === 'ExternalName') return { ref };
  const ports = (svc.spec?.ports ?? []).map((p) => p.port);
  const endpoints = snapshot
    ? snapshot.endpoints.find((e) => e.metadata?.namespace === ref.namespace && e.metadata?.name === ref.name)
    : input.kube.namespaceServices.find((s) => s.service.metadata?.name === ref.name)?.endpoints;
  let ready = 0;
  let notReady = 0;
  for (const sub of endpoints?.subsets ?? []) {
    ready += (sub.addresses ?? []).length;
    notReady += (sub.notReadyAddresses ?? []).length;
  }
  return {
    ref,
    ports,
    ready,
    notReady,
    evidence: {
      kind: 'endpoints',
      summary: `Endpoints ${ref.namespace}/${ref.name}: ${ready} ready, ${notReady} not ready${ready === 0 ? ' — nothing answers behind the Service' : ''}`,
      citation: objectCitation('Endpoints', ref.namespace, ref.name, 'subsets'),
      detail: { ready, notReady },
    },
  };
}

function commandOf(c: V1Container | undefined): string {
  return [...(c?.command ?? []), ...(c?.args ?? [])].join(' ');
}

function logCitation(ns: string, l: ContainerLogs): Citation {
  return { source: 'kubernetes', ref: `api/v1/namespaces/${ns}/pods/${l.pod}/log?container=${l.container}${l.previous ? '&previous=true' : ''}` };
}

export const initContainerStuck: Analyzer = {
  name: NAME,
  analyze(input: TriageInput): Finding[] {
    const { kube, onset } = input;
    const t = kube.target;
    if (!t || !kube.workload) return [];
    // "Now" for how long a container has run: the snapshot's read time, else the onset or the newest event.
    const times = [onset.getTime(), input.cluster?.snapshot.readAt?.getTime() ?? 0, ...kube.events.map((e) => eventAt(e)?.getTime() ?? 0)];
    const now = new Date(Math.max(...times));
    const blocked = kube.pods.map((p) => blockedOn(p, now)).filter((b): b is Blocked => !!b);
    if (!blocked.length) return [];

    // The init container most pods wait on.
    const counts = new Map<string, number>();
    for (const b of blocked) counts.set(b.status.name, (counts.get(b.status.name) ?? 0) + 1);
    const initContainer = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]![0];
    const mine = blocked.filter((b) => b.status.name === initContainer);
    const pods = mine.map((b) => b.name);
    const restarting = mine.filter((b) => b.state === 'restarting');
    const state: Blocked['state'] = restarting.length > mine.length / 2 ? 'restarting' : 'running';
    const longest = Math.max(0, ...mine.map((b) => (b.since ? now.getTime() - b.since.getTime() : 0)));
    const restartCount = Math.max(0, ...mine.map((b) => b.status.restartCount ?? 0));
    const term = mine.map((b) => b.status.lastState?.terminated ?? b.status.state?.terminated).find((x) => x && x.exitCode !== 0);
    const spec = (mine[0]!.pod.spec?.initContainers ?? []).find((c) => c.name === initContainer) ?? (kube.workload.spec?.template?.spec?.initContainers ?? []).find((c) => c.name === initContainer);

    // Its log: the line that names what it waits for, else the line that explains the wait, else the last line.
    const logs = kube.containerLogs.filter((l) => l.container === initContainer && pods.includes(l.pod));
    let explained: { line: string; count: number; log: ContainerLogs; target?: { host: string; port?: string } } | undefined;
    for (const l of logs) {
      for (const p of [...l.patterns].sort((a, b) => b.count - a.count)) {
        const line = p.example || p.template;
        const target = targetIn(line, LOG_TARGETS);
        const score = lineScore(line, target);
        const best = explained ? lineScore(explained.line, explained.target) : -1;
        if (score > best && score > 0) explained = { line, count: p.count, log: l, ...(target ? { target } : {}) };
      }
      if (!explained && l.tail.length) explained = { line: l.tail[l.tail.length - 1]!, count: 1, log: l };
    }
    const fromCommand = targetIn(commandOf(spec), COMMAND_TARGETS);
    // A wait on a Job of the namespace (a migration the release runs as a hook): its log or command names it.
    const job = waitedJob(input, `${explained?.line ?? ''} ${commandOf(spec)}`);
    const target = job ? undefined : (explained?.target ?? fromCommand);
    const waitingOn = job ? job.name : target ? `${target.host}${target.port ? `:${target.port}` : ''}` : undefined;
    const dep = target ? resolveDependency(input, target.host) : undefined;

    const facts: Record<string, string | number | boolean> = { initContainer, podsBlocked: pods.length, state, stuckFor: Math.round(longest / 1000) };
    if (waitingOn) facts['waitingOn'] = waitingOn;
    if (explained) facts['logPattern'] = clip(explained.line, 200);
    if (restartCount) facts['restartCount'] = restartCount;
    if (term?.exitCode !== undefined) facts['exitCode'] = term.exitCode;
    if (dep?.ref) facts['dependency'] = `Service/${dep.ref.namespace}/${dep.ref.name}`;
    if (dep?.missing) facts['dependencyMissing'] = true;
    if (dep?.ready !== undefined) facts['readyEndpoints'] = dep.ready;

    const first = mine[0]!;
    const initializedCond = (first.pod.status?.conditions ?? []).find((c) => c.type === 'Initialized');
    const appWaiting = (first.pod.status?.containerStatuses ?? []).map((c) => c.state?.waiting?.reason).find(Boolean);
    const supporting: Evidence[] = [
      {
        kind: 'object',
        summary:
          `pod ${first.name}: ${first.pod.status?.phase ?? 'Pending'}, init container ${initContainer} ` +
          (first.state === 'running'
            ? `running since ${first.since ? `${clockTime(first.since)} (${humanDuration(now.getTime() - first.since.getTime())})` : '?'}`
            : `${first.status.state?.waiting?.reason ?? 'restarting'}, ${first.status.restartCount ?? 0} restarts${term ? `, last exit code ${term.exitCode}${term.reason ? ` (${term.reason})` : ''}` : ''}`) +
          (appWaiting ? `; app containers ${appWaiting}` : '') +
          (initializedCond ? `; Initialized=${initializedCond.status}${initializedCond.reason ? ` ${initializedCond.reason}` : ''}${initializedCond.message ? ` ("${clip(initializedCond.message, 100)}")` : ''}` : '') +
          (pods.length > 1 ? `; ${pods.length - 1} more pod${pods.length === 2 ? '' : 's'} likewise` : ''),
        citation: objectCitation('Pod', t.namespace, first.name, 'status.initContainerStatuses'),
        ...(first.since ? { observedAt: first.since } : {}),
        detail: { pods, initContainer, state, restartCount, stuckForSeconds: Math.round(longest / 1000) },
      },
    ];
    if (explained) {
      supporting.push({
        kind: 'log',
        summary: `${explained.log.previous ? 'previous log' : 'log'} of ${explained.log.pod}/${initContainer}: "${clip(explained.line, 200)}" ×${explained.count}`,
        citation: logCitation(t.namespace, explained.log),
        detail: { line: clip(explained.line, 300), count: explained.count },
      });
    }
    const command = commandOf(spec);
    if (fromCommand && command) {
      const index = (first.pod.spec?.initContainers ?? []).findIndex((c) => c.name === initContainer);
      supporting.push({
        kind: 'object',
        summary: `init container ${initContainer} runs \`${clip(command, 160)}\`${fromCommand ? `: it waits for ${fromCommand.host}${fromCommand.port ? `:${fromCommand.port}` : ''}` : ''}`,
        citation: objectCitation('Pod', t.namespace, first.name, `spec.initContainers[${Math.max(0, index)}]`),
        detail: { command: clip(command, 300), image: spec?.image ?? null },
      });
    }
    if (dep?.evidence) supporting.push(dep.evidence);
    if (job) {
      facts['job'] = job.name;
      if (job.failed) facts['jobFailed'] = job.reason ?? 'Failed';
      supporting.push({ kind: 'object', summary: `Job ${t.namespace}/${job.name}: ${job.failed ? `failed (${job.reason ?? 'Failed'}${job.message ? `: "${clip(job.message, 120)}"` : ''}, ${job.failures} failed pod${job.failures === 1 ? '' : 's'})` : job.active ? 'still running' : 'not complete'}`, citation: objectCitation('Job', t.namespace, job.name, 'status') });
    }

    // Did the rollout bring the init step (or change it)?
    const { current, previous } = revisions(kube);
    const prevSpec = (previous?.replicaSet.spec?.template?.spec?.initContainers ?? []).find((c) => c.name === initContainer);
    const curSpec = (current?.replicaSet.spec?.template?.spec?.initContainers ?? []).find((c) => c.name === initContainer) ?? spec;
    const recent = !!current && rolledOutBefore(current, now);
    const added = !!current && !!previous && recent && !!curSpec && !prevSpec;
    const changed = !!current && !!previous && recent && !!curSpec && !!prevSpec && JSON.stringify({ ...prevSpec, resources: undefined }) !== JSON.stringify({ ...curSpec, resources: undefined });
    if ((added || changed) && current && previous) {
      Object.assign(facts, { revision: current.revision, previousRevision: previous.revision, addedInRevision: added });
      if (current.createdAt) facts['changedAt'] = current.createdAt.toISOString();
      supporting.push(revisionEvidence(kube, current, onset, added ? `added init container ${initContainer}` : `changed init container ${initContainer}${commandOf(prevSpec) !== commandOf(curSpec) ? ` (command \`${clip(commandOf(prevSpec), 60)}\` → \`${clip(commandOf(curSpec), 60)}\`)` : ''}`));
    }

    const { scope, affected, evidence } = servingScope(kube, `${pods.length} of ${kube.pods.length} ${t.name} pods are stuck in Init (${initContainer}), so they never start serving`);
    supporting.push(...evidence.filter((e) => (e.detail?.['ready'] as number) === 0));

    // A failed Job the new revision's pods wait for: the revision before it served without it.
    const jobUndo = job?.failed && previous && current && rolledOutBefore(current, now) ? undoProposal(kube, previous, `revision ${previous.revision} served before ${job.name} ran; roll back, fix the migration, then roll forward`) : undefined;
    const mitigation: MitigationProposal | undefined = jobUndo ??
      ((added || changed) && previous
        ? undoProposal(kube, previous, `revision ${previous.revision} ${added ? `had no ${initContainer} init container` : `ran ${initContainer} as it was`} and its pods started; roll back while ${dep?.ref ? `Service ${dep.ref.namespace}/${dep.ref.name}` : (waitingOn ?? 'the dependency')} is ${dep?.missing ? 'created' : 'fixed'}`)
        : undefined);

    const depText = job?.failed
      ? `; Job ${job.name} failed (${job.reason ?? 'Failed'}), so the wait can never end`
      : dep?.missing
      ? `; Service ${dep.ref!.namespace}/${dep.ref!.name} does not exist, so it can never answer`
      : dep?.ready === 0
        ? `; Service ${dep.ref!.namespace}/${dep.ref!.name} has no ready endpoints${dep.notReady ? ` (${dep.notReady} not ready)` : ''}`
        : dep?.external
          ? `; ${target!.host} is outside the cluster`
          : dep?.ref && target?.port && dep.ports?.length && !dep.ports.includes(Number(target.port))
            ? `; Service ${dep.ref.namespace}/${dep.ref.name} exposes port${dep.ports.length === 1 ? '' : 's'} ${dep.ports.join(', ')}, not ${target.port}`
            : dep?.ref && dep.ready
            ? `; Service ${dep.ref.namespace}/${dep.ref.name} has ${dep.ready} ready endpoint${dep.ready === 1 ? '' : 's'}, so the wait is on the port or a check it never passes`
            : '';
    const mechanism =
      `${pods.length} pod${pods.length === 1 ? '' : 's'} of ${t.kind.toLowerCase()}/${t.name} ${pods.length === 1 ? 'is' : 'are'} stuck in initialisation: init container ${initContainer} ` +
      (state === 'running' ? `has been running for ${humanDuration(longest)} without finishing` : `keeps failing (${restartCount} restarts${term ? `, exit code ${term.exitCode}` : ''})`) +
      (waitingOn ? (state === 'running' ? `, waiting for ${waitingOn}` : `, trying to reach ${waitingOn}`) : '') +
      (explained ? ` ("${clip(explained.line, 140)}")` : '') +
      depText +
      `. The app containers never start${appWaiting ? ` (${appWaiting})` : ''}.` +
      ((added || changed) && current ? ` Revision ${current.revision}${current.createdAt ? ` (${clockTime(current.createdAt)}, ${relativeToOnset(current.createdAt, onset)})` : ''} ${added ? 'added this init container' : 'changed this init container'}.` : '');

    const confidence = job?.failed || (waitingOn && (dep?.missing || dep?.ready === 0)) ? 0.9 : waitingOn ? 0.86 : explained ? 0.8 : 0.72;
    return [
      {
        key: `${NAME}:${t.namespace}/${t.kind}/${t.name}`,
        analyzer: NAME,
        family: 'init-container-stuck',
        status: 'supported',
        confidence,
        title: `${t.name} pods stuck in Init: ${initContainer} ${waitingOn ? `${state === 'running' ? 'waits for' : 'fails to reach'} ${waitingOn}${dep?.missing ? ' (no such Service)' : dep?.ready === 0 ? ' (no ready endpoints)' : ''}` : state === 'running' ? 'never finishes' : 'keeps failing'}`,
        // A failed Job it waits for is the faulty object; the workload is what it stops.
        component: job?.failed ? { kind: 'Job', namespace: t.namespace, name: job.name } : { kind: t.kind, namespace: t.namespace, name: t.name },
        mechanism,
        scope,
        affected: [{ kind: t.kind, namespace: t.namespace, name: t.name }, ...affected],
        facts,
        supporting,
        refuting: [],
        ...(mitigation ? { mitigation } : {}),
      },
    ];
  },
};

/** The namespace's Job whose name the wait names, with how it ended (from the snapshot). */
function waitedJob(input: TriageInput, text: string): { name: string; failed: boolean; active: boolean; failures: number; reason?: string; message?: string } | undefined {
  const t = input.kube.target!;
  const jobs = (input.cluster?.snapshot.jobs ?? []).filter((j) => j.metadata?.namespace === t.namespace && j.metadata?.name);
  const j = jobs.filter((x) => text.includes(x.metadata!.name!)).sort((a, b) => b.metadata!.name!.length - a.metadata!.name!.length)[0];
  if (!j) return undefined;
  const cond = (j.status?.conditions ?? []).find((c) => c.type === 'Failed' && c.status === 'True');
  return {
    name: j.metadata!.name!,
    failed: !!cond || ((j.status?.failed ?? 0) > 0 && !j.status?.active && !j.status?.succeeded),
    active: (j.status?.active ?? 0) > 0,
    failures: j.status?.failed ?? 0,
    ...(cond?.reason ? { reason: cond.reason } : {}),
    ...(cond?.message ? { message: cond.message } : {}),
  };
}

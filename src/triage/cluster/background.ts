/**
 * `background-noise`, over the whole cluster: what a responder sees around an incident and must be able
 * to set aside. Each is a hypothesis marked `unrelated`, with why, so nobody wonders whether Vigil saw it:
 * - unhealthy pods (crash loops, evictions, failed pods) whose workload the walk from the alert never
 *   reached, or whose trouble began long before the onset — reported for the pod and for its workload
 *   (Deployment, StatefulSet, Job/CronJob);
 * - Jobs of the last hours that failed or completed elsewhere;
 * - nodes that were NotReady, under pressure or cordoned, but host nothing the alert reaches (or
 *   recovered long ago);
 * - old warning events on objects off the path.
 * A pod of a reached workload whose trouble is recent is left to that workload's analyzers: the
 * culprit's own failing pods are never noise.
 */
import type { CoreV1Event, V1Pod } from '@kubernetes/client-node';
import type { ComponentRef } from '../../evidence/types.js';
import { nodeId } from '../../topology/graph.js';
import type { ClusterAnalyzer, ClusterTriageInput } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime, humanDuration } from '../time.js';
import type { Finding } from '../types.js';
import { eventTime } from './common.js';

const LONG_BEFORE_MS = 60 * 60_000;
const JOB_WINDOW_MS = 12 * 3600_000;
const NODE_WINDOW_MS = 7 * 86_400_000;
/** Node pressure this recent, over by the onset, on a node off the path: a look-alike worth clearing. */
const RECENT_PRESSURE_MS = 3 * 3600_000;
const MAX = 40;

const BAD_WAITING = new Set(['CrashLoopBackOff', 'ImagePullBackOff', 'ErrImagePull', 'CreateContainerConfigError', 'RunContainerError', 'InvalidImageName']);

function unhealthy(p: V1Pod): boolean {
  if (p.status?.phase === 'Failed' || p.status?.phase === 'Pending' || p.status?.reason === 'Evicted') return true;
  return (p.status?.containerStatuses ?? []).some((c) => (c.state?.waiting?.reason && BAD_WAITING.has(c.state.waiting.reason)) || (c.restartCount ?? 0) >= 3 || c.lastState?.terminated?.reason === 'OOMKilled');
}

function problem(p: V1Pod): string {
  if (p.status?.reason === 'Evicted') return `Evicted${p.status.message ? ` (${p.status.message.slice(0, 80)})` : ''}`;
  for (const c of p.status?.containerStatuses ?? []) {
    const waiting = c.state?.waiting?.reason;
    const last = c.lastState?.terminated;
    if (waiting) return `${waiting} (${c.restartCount ?? 0} restarts${last?.exitCode !== undefined ? `, last exit ${last.exitCode}${last.reason ? ` ${last.reason}` : ''}` : ''})`;
    if ((c.restartCount ?? 0) >= 3) return `${c.restartCount} restarts${last?.reason ? `, last ${last.reason}` : ''}`;
  }
  return p.status?.phase ?? 'unhealthy';
}

export const backgroundNoiseCluster: ClusterAnalyzer = {
  name: 'background-noise',
  analyze(input: ClusterTriageInput): Finding[] {
    const { snapshot: s, topology: t, walk, subjects } = input.cluster;
    const onset = input.onset.getTime();
    const reached = (r: ComponentRef | undefined) => !!r && walk.reached.has(nodeId(r));
    const from = subjects.map((x) => `${x.ref.kind.toLowerCase()}/${x.ref.name}`).slice(0, 2).join(', ') || 'the alerted component';
    const out: Finding[] = [];
    const workloadNoise = new Map<string, { ref: ComponentRef; pods: string[]; why: string; problem: string }>();
    const events = s.warningEvents;

    for (const p of s.pods.filter(unhealthy)) {
      const ns = p.metadata?.namespace ?? '';
      const name = p.metadata?.name ?? '';
      const owner = t.workloadOf(ns, name);
      const since = troubleSince(p, events);
      const longBefore = !!since && onset - since.getTime() > LONG_BEFORE_MS;
      const onPath = owner ? reached(owner) : false;
      if (onPath && !longBefore) continue;
      const otherNs = !subjects.some((x) => (x.ref.namespace ?? x.ref.name) === ns);
      const why = [!onPath ? `no path from ${from} to it${otherNs ? ` (namespace ${ns})` : ''}` : undefined, since ? `failing since ${clockTime(since)}, ${humanDuration(onset - since.getTime())} before the alert` : undefined].filter(Boolean).join('; ');
      const what = problem(p);
      out.push(noise(`noise:pod:${ns}/${name}`, { kind: 'Pod', namespace: ns, name }, `${name} ${what.split(' (')[0]}`, `Pod ${ns}/${name} is ${what}.`, why, objectCitation('Pod', ns, name, 'status'), since));
      if (owner) {
        const k = nodeId(owner);
        const cur = workloadNoise.get(k) ?? { ref: owner, pods: [], why, problem: what };
        cur.pods.push(name);
        workloadNoise.set(k, cur);
      }
    }
    for (const w of workloadNoise.values()) {
      // The CronJob behind a Job's pod is what people name.
      const cron = w.ref.kind === 'Job' ? t.incoming(nodeId(w.ref)).find((e) => e.kind === 'owns') : undefined;
      out.push(noise(`noise:workload:${nodeId(w.ref)}`, w.ref, `${w.ref.name}: ${w.problem.split(' (')[0]} (${w.pods.length} pod${w.pods.length === 1 ? '' : 's'})`, `${w.ref.kind} ${w.ref.namespace}/${w.ref.name} has unhealthy pods: ${w.pods.slice(0, 3).join(', ')} (${w.problem}).`, w.why, objectCitation(w.ref.kind, w.ref.namespace, w.ref.name, 'status')));
      if (cron) out.push(cronJobNoise(cron.from, (c) => [`cronjob ${c}: its job ${w.ref.name} fails`, `runs job ${w.ref.name}, which has unhealthy pods.`], w.why));
    }

    // Jobs that ran in the last hours elsewhere: completed or failed, they are the cluster's routine.
    for (const j of s.jobs) {
      const ns = j.metadata?.namespace ?? '';
      const name = j.metadata?.name ?? '';
      const created = j.metadata?.creationTimestamp ? new Date(j.metadata.creationTimestamp).getTime() : undefined;
      if (!created || Math.abs(onset - created) > JOB_WINDOW_MS) continue;
      const ref = { kind: 'Job', namespace: ns, name };
      const cronEdge = t.incoming(nodeId(ref)).find((e) => e.kind === 'owns');
      if (reached(ref) || (cronEdge && walk.reached.has(cronEdge.from)) || workloadNoise.has(nodeId(ref))) continue;
      const failed = (j.status?.conditions ?? []).some((c) => c.type === 'Failed' && c.status === 'True');
      const done = (j.status?.conditions ?? []).some((c) => c.type === 'Complete' && c.status === 'True');
      const state = failed ? 'failed' : done ? 'completed' : (j.status?.active ?? 0) > 0 ? 'running' : 'ran';
      out.push(noise(`noise:job:${ns}/${name}`, ref, `job ${name} ${state}`, `Job ${ns}/${name} ${state} (created ${clockTime(new Date(created))}).`, `no path from ${from} to it`, objectCitation('Job', ns, name, 'status')));
      // A failing run is its CronJob's failure, and the CronJob is what people name (as for unhealthy job pods above).
      if (failed && cronEdge && !out.some((f) => f.key === `noise:workload:${cronEdge.from}`)) {
        out.push(cronJobNoise(cronEdge.from, (c) => [`cronjob ${c}: its job ${name} failed`, `ran job ${name}, which failed (created ${clockTime(new Date(created))}).`], `no path from ${from} to it`));
      }
    }

    // Nodes: trouble that reaches none of the reached workloads, or that recovered long ago.
    for (const n of s.nodes) {
      const name = n.metadata?.name ?? '';
      const ref = { kind: 'Node', name };
      const ready = (n.status?.conditions ?? []).find((c) => c.type === 'Ready');
      const pressure = (n.status?.conditions ?? []).filter((c) => /Pressure$/.test(c.type) && c.status === 'True');
      const since = ready?.lastTransitionTime ? new Date(ready.lastTransitionTime).getTime() : undefined;
      const blinked = ready?.status === 'True' && since !== undefined && onset - since > LONG_BEFORE_MS && onset - since < NODE_WINDOW_MS;
      const oldEvent = events.find((e) => e.involvedObject?.kind === 'Node' && e.involvedObject.name === name && /NodeNotReady|NodeNotSchedulable|Rebooted|NodeHasDiskPressure|NodeHasInsufficientMemory/.test(e.reason ?? '') && onset - (eventTime(e)?.getTime() ?? onset) > LONG_BEFORE_MS);
      const trouble = ready?.status !== 'True' || pressure.length > 0 || n.spec?.unschedulable;
      const hostsReached = walk.reached.has(nodeId(ref)) && t.incoming(nodeId(ref)).some((e) => e.kind === 'runs-on' && walk.reached.has(e.from));
      // Pressure (and the evictions it caused) near the onset that is over now: a look-alike when the node
      // runs nothing the alert reaches, raised so it is seen and cleared.
      // On a node that runs reached pods too, when the evictions it caused took none of them.
      const evictedReached = s.pods.some((p) => p.spec?.nodeName === name && p.status?.reason === 'Evicted' && reached(t.workloadOf(p.metadata?.namespace ?? '', p.metadata?.name ?? '')));
      const recentPressure = !trouble && !evictedReached
        ? events.find((e) => e.involvedObject?.kind === 'Node' && e.involvedObject.name === name && /NodeHas(Disk|Memory|PID)Pressure|NodeHasInsufficient|EvictionThresholdMet/.test(e.reason ?? '') && onset - (eventTime(e)?.getTime() ?? 0) <= RECENT_PRESSURE_MS && onset - (eventTime(e)?.getTime() ?? 0) >= 0)
        : undefined;
      if (trouble && hostsReached) continue;
      if (!trouble && !blinked && !oldEvent && !recentPressure) continue;
      const what = ready?.status !== 'True' ? `NotReady (${ready?.reason ?? ready?.status})` : pressure.length ? pressure.map((c) => c.type).join(', ') : n.spec?.unschedulable ? 'cordoned' : recentPressure ? `${recentPressure.reason} at ${clockTime(eventTime(recentPressure)!)}, over since` : oldEvent ? `${oldEvent.reason} at ${eventTime(oldEvent)?.toISOString().slice(0, 16).replace('T', ' ')}` : `Ready again since ${clockTime(new Date(since!))}`;
      const why = trouble ? `runs nothing the alert reaches (${from})` : recentPressure ? (hostsReached ? `over before the alert, and its evictions took no pod the alert reaches (${from})` : `runs nothing the alert reaches (${from})`) : `recovered ${humanDuration(onset - (since ?? eventTime(oldEvent!)!.getTime()))} before the alert`;
      out.push(noise(`noise:node:${name}`, ref, `node ${name} ${what}`, `Node ${name}: ${what}.`, why, objectCitation('Node', undefined, name, 'status.conditions')));
    }

    // Old warnings on objects off the path (events live an hour by default, longer on some clusters).
    const seen = new Set<string>();
    for (const e of events) {
      const at = eventTime(e);
      const io = e.involvedObject;
      if (!at || !io?.name || onset - at.getTime() <= LONG_BEFORE_MS) continue;
      const id = `${e.reason}:${io.kind}/${io.namespace ?? ''}/${io.name}`;
      if (seen.has(id)) continue;
      seen.add(id);
      const ref: ComponentRef = { kind: io.kind ?? 'Object', ...(io.namespace ? { namespace: io.namespace } : {}), name: io.name };
      out.push(noise(`noise:event:${e.metadata?.namespace}/${id}`, ref, `old ${e.reason} warning on ${io.kind?.toLowerCase()}/${io.name}`, `Warning event ${e.reason}: ${(e.message ?? '').slice(0, 200)}`, `last seen ${humanDuration(onset - at.getTime())} before the alert (${at.toISOString().slice(0, 16).replace('T', ' ')})`, objectCitation('Event', e.metadata?.namespace, e.metadata?.name ?? '?'), at));
    }
    return out.slice(0, MAX);
  },
};

/** The CronJob (graph node id `CronJob/<ns>/<name>`) behind a noisy Job, told by its own name: `words(name)` gives the title and what it did. */
function cronJobNoise(id: string, words: (name: string) => [title: string, did: string], reason: string): Finding {
  const [, namespace = '', ...rest] = id.split('/');
  const name = rest.join('/');
  const [title, did] = words(name);
  return noise(`noise:workload:${id}`, { kind: 'CronJob', namespace, name }, title, `CronJob ${namespace}/${name} ${did}`, reason, objectCitation('CronJob', namespace, name));
}

function noise(key: string, component: ComponentRef, title: string, mechanism: string, reason: string, citation: ReturnType<typeof objectCitation>, at?: Date): Finding {
  return {
    key,
    analyzer: 'background-noise',
    status: 'unrelated',
    confidence: 0.02,
    title,
    component,
    mechanism,
    reason,
    supporting: [],
    refuting: [{ kind: 'object', summary: mechanism.slice(0, 240), citation, ...(at ? { observedAt: at } : {}) }],
  };
}

/** The earliest sign of trouble we can date: the oldest warning about the pod, else its start. */
function troubleSince(p: V1Pod, events: CoreV1Event[]): Date | undefined {
  const times = events
    .filter((e) => e.involvedObject?.name === p.metadata?.name && e.involvedObject?.namespace === p.metadata?.namespace)
    .map((e) => e.firstTimestamp ?? e.eventTime ?? e.lastTimestamp)
    .filter((x): x is Date => !!x)
    .map((x) => new Date(x));
  if (times.length) return new Date(Math.min(...times.map((x) => x.getTime())));
  return p.status?.startTime ? new Date(p.status.startTime) : undefined;
}

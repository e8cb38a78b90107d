/**
 * `unschedulable` caused by preemption: a higher-priority pod (a batch Job given a platform
 * PriorityClass, a DaemonSet rollout) made room for itself by evicting lower-priority pods, and their
 * replacements cannot schedule (same priority, nothing to preempt, no room, the node group at its max).
 * Each victim workload looks unschedulable on its own ("Insufficient cpu"); the origin is the preemptor.
 *
 * Read from the scheduler's `Preempted` events on the victims' pods (`Preempted by pod <uid> on node
 * <node>`, older `Preempted by <ns>/<pod> on node <node>`), resolved to the preemptor pod in the snapshot
 * (by UID or name) and its owner (Job → its CronJob, ReplicaSet → Deployment, StatefulSet, DaemonSet).
 * Supported when the preemptions began within 3 h before the onset (to 10 min after) and pods of the
 * victims' workloads are still Pending; localised to the preemptor's owner. Facts: `reason` (the
 * victims' scheduling reason, `insufficient_cpu`), `pendingPods` (victims' Pending pods), `preemptedPods`,
 * `priorityClass`, `priority`, `preemptor` (the pod), `victims` (workload names), `manager`, `changedAt`
 * (the owner's creation or last write). No mitigation in the catalog fits (suspending or deleting the
 * Job, or recreating it with a lower class, is its owner's call); the mechanism says so.
 */
import type { CoreV1Event, V1Pod } from '@kubernetes/client-node';
import { workloadOfPod } from '../../alerts/fingerprint.js';
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import { nodeId, selectorMatches } from '../../topology/graph.js';
import type { ClusterAnalyzer, ClusterTriageInput } from '../analyzer.js';
import { parseSchedulerMessage, type ScheduleReason } from '../analyzers/unschedulable.js';
import { objectCitation } from '../citations.js';
import { clockTime, relativeToOnset } from '../time.js';
import type { Finding } from '../types.js';
import { allEvents, eventEvidenceOf, eventFirstTime, eventTime } from './common.js';

const BEFORE_MS = 3 * 3600_000;
const AFTER_MS = 10 * 60_000;
const PREEMPTED = /Preempted by (?:pod )?(?:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})|([a-z0-9][\w.-]*)\/([a-z0-9][\w.-]*))(?: on node ([\w.-]+))?/i;

const escapeRe = (x: string) => x.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The preemptor named by a `Preempted` event: its UID, or its namespace/name; and the node. */
export function parsePreempted(message: string): { uid?: string; namespace?: string; name?: string; node?: string } | undefined {
  const m = PREEMPTED.exec(message);
  if (!m) return undefined;
  return { ...(m[1] ? { uid: m[1] } : {}), ...(m[2] ? { namespace: m[2], name: m[3]! } : {}), ...(m[4] ? { node: m[4] } : {}) };
}

export const preemption: ClusterAnalyzer = {
  name: 'preemption',
  analyze(input: ClusterTriageInput): Finding[] {
    const { snapshot: s, topology } = input.cluster;
    const onset = input.onset.getTime();
    const events = allEvents(input).filter((e) => {
      if (e.reason !== 'Preempted' || e.involvedObject?.kind !== 'Pod') return false;
      const at = (eventFirstTime(e) ?? eventTime(e))?.getTime();
      return at !== undefined && at >= onset - BEFORE_MS && at <= onset + AFTER_MS;
    });
    if (!events.length) return [];
    const byPreemptor = new Map<string, { pod: V1Pod; events: CoreV1Event[] }>();
    for (const e of events) {
      const p = parsePreempted(e.message ?? '');
      if (!p) continue;
      const pod = s.pods.find((x) => (p.uid ? x.metadata?.uid === p.uid : x.metadata?.namespace === p.namespace && x.metadata?.name === p.name));
      if (!pod) continue;
      const owner = topology.podOwner.get(`${pod.metadata?.namespace}/${pod.metadata?.name}`) ?? { kind: 'Pod', namespace: pod.metadata?.namespace, name: pod.metadata?.name ?? '?' };
      const k = nodeId(owner);
      const entry = byPreemptor.get(k) ?? { pod, events: [] };
      entry.events.push(e);
      byPreemptor.set(k, entry);
    }
    const out: Finding[] = [];
    for (const [id, { pod, events: evs }] of byPreemptor) {
      const owner = topology.nodes.get(id)?.ref ?? topology.podOwner.get(`${pod.metadata?.namespace}/${pod.metadata?.name}`) ?? { kind: 'Pod', namespace: pod.metadata?.namespace, name: pod.metadata?.name ?? '?' };
      const f = finding(input, owner, pod, evs);
      if (f) out.push(f);
    }
    return out;
  },
};

function finding(input: ClusterTriageInput, owner: ComponentRef, preemptor: V1Pod, evs: CoreV1Event[]): Finding | undefined {
  const s = input.cluster.snapshot;
  // Victims: the workloads whose pods were preempted (the pods themselves are gone; their names remain).
  const victims = new Map<string, ComponentRef>();
  for (const e of evs) {
    const ns = e.involvedObject?.namespace ?? e.metadata?.namespace ?? '';
    const podName = e.involvedObject?.name ?? '';
    // The Deployment whose ReplicaSet pod name this is (`<deploy>-<hash>-<5>`), else the name's workload part.
    const name = s.deployments.find((d) => d.metadata?.namespace === ns && new RegExp(`^${escapeRe(d.metadata?.name ?? '')}-[a-z0-9]{6,10}-[a-z0-9]{5}$`).test(podName))?.metadata?.name ?? workloadOfPod(podName);
    const sts = s.statefulSets.some((d) => d.metadata?.namespace === ns && d.metadata?.name === workloadOfPod(e.involvedObject?.name ?? '', { ordinal: true }));
    const ref: ComponentRef = sts ? { kind: 'StatefulSet', namespace: ns, name: workloadOfPod(e.involvedObject?.name ?? '', { ordinal: true }) } : { kind: 'Deployment', namespace: ns, name };
    victims.set(nodeId(ref), ref);
  }
  // Their replacements that cannot schedule now, and why.
  const pending = s.pods.filter((p) => {
    if (p.status?.phase !== 'Pending' || p.spec?.nodeName) return false;
    const o = input.cluster.topology.podOwner.get(`${p.metadata?.namespace}/${p.metadata?.name}`);
    return !!o && victims.has(nodeId(o));
  });
  const reasons = new Map<ScheduleReason, number>();
  for (const p of pending) {
    const cond = p.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
    const ev = allEvents(input).filter((e) => e.reason === 'FailedScheduling' && e.involvedObject?.name === p.metadata?.name).sort((a, b) => (eventTime(b)?.getTime() ?? 0) - (eventTime(a)?.getTime() ?? 0))[0];
    const parsed = parseSchedulerMessage(ev?.message ?? cond?.message ?? '');
    const top = parsed?.reasons.filter((r) => r.reason !== 'taint' && r.reason !== 'node_affinity').sort((a, b) => b.nodes - a.nodes)[0] ?? parsed?.reasons[0];
    if (top) reasons.set(top.reason, (reasons.get(top.reason) ?? 0) + 1);
  }
  const reason = [...reasons.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
  const firsts = evs.map((e) => eventFirstTime(e) ?? eventTime(e)).filter((d): d is Date => !!d).sort((a, b) => a.getTime() - b.getTime());
  const first = firsts[0];
  const ownerObj = ownerObject(input, owner);
  const created = ownerObj?.metadata?.creationTimestamp ? new Date(ownerObj.metadata.creationTimestamp) : undefined;
  const writer = (ownerObj?.metadata?.managedFields ?? []).filter((m) => m.time && !m.subresource && !/controller|kube-/.test(m.manager ?? '')).sort((a, b) => new Date(b.time!).getTime() - new Date(a.time!).getTime())[0];
  const changedAt = created && first && first.getTime() - created.getTime() <= BEFORE_MS ? created : writer?.time ? new Date(writer.time) : created;
  const priorityClass = preemptor.spec?.priorityClassName;
  const priority = preemptor.spec?.priority;
  const victimList = [...victims.values()];
  const affected: ComponentRef[] = [...victimList];
  for (const v of victimList) {
    const w = s.deployments.find((d) => d.metadata?.namespace === v.namespace && d.metadata?.name === v.name);
    const labels = w?.spec?.template?.metadata?.labels;
    for (const svc of s.services) if (svc.metadata?.namespace === v.namespace && svc.spec?.selector && Object.keys(svc.spec.selector).length && selectorMatches({ matchLabels: svc.spec.selector }, labels)) affected.push({ kind: 'Service', namespace: v.namespace, name: svc.metadata?.name ?? '?' });
  }
  const supported = pending.length > 0;
  const supporting: Evidence[] = [
    ...evs.slice(0, 3).map(eventEvidenceOf),
    {
      kind: 'object',
      summary: `pod ${preemptor.metadata?.namespace}/${preemptor.metadata?.name} (${owner.kind.toLowerCase()}/${owner.name})${priorityClass ? ` runs with PriorityClass ${priorityClass}` : ''}${priority !== undefined ? ` (priority ${priority})` : ''}`,
      citation: objectCitation('Pod', preemptor.metadata?.namespace, preemptor.metadata?.name ?? '?', 'spec.priorityClassName'),
    },
  ];
  if (pending.length) supporting.push({ kind: 'object', summary: `${pending.length} pod(s) of ${victimList.map((v) => v.name).join(', ')} Pending${reason ? ` (${reason.replace(/_/g, ' ')})` : ''}: ${pending.slice(0, 4).map((p) => p.metadata?.name).join(', ')}`, citation: objectCitation('Pod', pending[0]!.metadata?.namespace, pending[0]!.metadata?.name ?? '?', 'status.conditions') });
  if (changedAt) supporting.push({ kind: 'change', summary: `${owner.kind.toLowerCase()}/${owner.name} ${changedAt === created ? 'created' : 'written'}${writer?.manager ? ` by \`${writer.manager}\`` : ''} at ${clockTime(changedAt)} (${relativeToOnset(changedAt, input.onset)})`, citation: objectCitation(owner.kind, owner.namespace, owner.name, 'metadata.managedFields'), observedAt: changedAt });
  const facts: Record<string, string | number> = {
    preemptedPods: evs.length,
    pendingPods: pending.length,
    ...(reason ? { reason } : {}),
    ...(priorityClass ? { priorityClass } : {}),
    ...(priority !== undefined ? { priority } : {}),
    preemptor: `${preemptor.metadata?.namespace}/${preemptor.metadata?.name}`,
    victims: victimList.map((v) => v.name).join(','),
    ...(writer?.manager ? { manager: writer.manager } : {}),
    ...(changedAt ? { changedAt: changedAt.toISOString() } : {}),
  };
  return {
    key: `unschedulable:${owner.namespace ?? ''}/${owner.kind}/${owner.name}:preemption`,
    analyzer: 'preemption',
    family: 'unschedulable',
    status: supported ? 'supported' : 'open',
    confidence: supported ? 0.95 : 0.5,
    title: `${owner.kind.toLowerCase()}/${owner.name}${priorityClass ? ` (PriorityClass ${priorityClass})` : ''} preempted ${evs.length} pod(s) of ${victimList.map((v) => v.name).join(', ')}; ${pending.length} replacement(s) cannot schedule`,
    component: owner,
    mechanism:
      `${owner.kind.toLowerCase()}/${owner.name}${changedAt ? ` (${relativeToOnset(changedAt, input.onset)})` : ''} runs pods${priorityClass ? ` with PriorityClass ${priorityClass}` : ''}${priority !== undefined ? ` (priority ${priority})` : ''}; to fit them the scheduler preempted ${evs.length} lower-priority pod(s) of ${victimList.map((v) => v.name).join(', ')}${first ? ` from ${clockTime(first)}` : ''}. ` +
      `Their replacements cannot preempt anything back${reason ? ` and find no room (${reason.replace(/_/g, ' ')})` : ''}, so ${pending.length} stay Pending and the remaining replicas carry the load. ` +
      `Fix: suspend or delete ${owner.kind.toLowerCase()}/${owner.name} and recreate it with a lower PriorityClass; scaling, restarting or rolling back the victims only adds Pending pods.`,
    scope: `${victimList.map((v) => v.name).join(', ')} lost replicas to the preemption; what calls them degrades`,
    affected,
    facts,
    supporting,
    refuting: [],
  };
}

function ownerObject(input: ClusterTriageInput, owner: ComponentRef): { metadata?: { creationTimestamp?: Date | string; managedFields?: { manager?: string; time?: Date | string; subresource?: string }[] } } | undefined {
  const s = input.cluster.snapshot;
  const same = (o: { metadata?: { namespace?: string; name?: string } }) => o.metadata?.namespace === owner.namespace && o.metadata?.name === owner.name;
  switch (owner.kind) {
    case 'Job':
      return s.jobs.find(same);
    case 'CronJob':
      return s.cronJobs.find(same);
    case 'Deployment':
      return s.deployments.find(same);
    case 'StatefulSet':
      return s.statefulSets.find(same);
    case 'DaemonSet':
      return s.daemonSets.find(same);
    default:
      return s.pods.find(same);
  }
}

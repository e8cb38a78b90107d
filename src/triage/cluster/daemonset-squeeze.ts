/**
 * `unschedulable` caused by a DaemonSet: its new revision raised its requests, and because a DaemonSet
 * runs on every node the raise is taken from every node at once, so a workload's new pods find no room
 * ("Insufficient cpu") on nodes that fitted them before. The workload's own unschedulable finding is a
 * consequence; the origin is the DaemonSet's rollout.
 *
 * Read from the snapshot: Pending pods of candidate workloads whose scheduler message says Insufficient
 * cpu/memory, and DaemonSets whose newest ControllerRevision (created in the 6 h before the first such
 * pod's scheduling failure) requests at least twice the previous revision's cpu or memory per pod.
 * Facts: `reason`, `requestedCpu`/`previousRequestedCpu` (or memory), `changedAt`, `revision`,
 * `previousRevision`, `pendingPods`, `victims`. No mitigation: the catalog's rollout_undo acts on
 * Deployments; rolling a DaemonSet back (or lowering its requests) is shown in the mechanism.
 */
import type { V1ControllerRevision, V1DaemonSet, V1Pod } from '@kubernetes/client-node';
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import { nodeId } from '../../topology/graph.js';
import type { ClusterAnalyzer, ClusterTriageInput } from '../analyzer.js';
import { formatCpu, formatMemory, parseQuantity, parseSchedulerMessage } from '../analyzers/unschedulable.js';
import { objectCitation } from '../citations.js';
import { clockTime, relativeToOnset } from '../time.js';
import type { Finding } from '../types.js';
import { allEvents, eventTime } from './common.js';

const RECENT_MS = 6 * 3600_000;

type Resource = 'cpu' | 'memory';

/** Sum of a template's container requests for a resource, in cores or bytes. */
function requested(template: { spec?: { containers?: { resources?: { requests?: Record<string, unknown> } }[] } } | undefined, r: Resource): number {
  return (template?.spec?.containers ?? []).reduce((n, c) => n + (parseQuantity(c.resources?.requests?.[r] as string | undefined) ?? 0), 0);
}

const revisionTemplate = (cr: V1ControllerRevision) => (cr.data as { spec?: { template?: Parameters<typeof requested>[0] } } | undefined)?.spec?.template;

export const daemonsetSqueeze: ClusterAnalyzer = {
  name: 'daemonset-squeeze',
  analyze(input: ClusterTriageInput): Finding[] {
    const s = input.cluster.snapshot;
    const t = input.cluster.topology;
    const candidates = new Set(input.inputs.map((i) => i.kube.target).filter((x): x is NonNullable<typeof x> => !!x).map((x) => nodeId(x)));
    // Pending pods of candidates that no node has room for, and when that started.
    const events = allEvents(input).filter((e) => e.reason === 'FailedScheduling');
    const squeezed: { pod: V1Pod; owner: ComponentRef; resource: Resource; at?: Date }[] = [];
    for (const p of s.pods) {
      if (p.status?.phase !== 'Pending' || p.spec?.nodeName) continue;
      const owner = t.podOwner.get(`${p.metadata?.namespace}/${p.metadata?.name}`);
      if (!owner || !candidates.has(nodeId(owner)) || owner.kind === 'DaemonSet') continue;
      const ev = events.filter((e) => e.involvedObject?.name === p.metadata?.name).sort((a, b) => (eventTime(b)?.getTime() ?? 0) - (eventTime(a)?.getTime() ?? 0))[0];
      const msg = ev?.message ?? p.status?.conditions?.find((c) => c.type === 'PodScheduled')?.message ?? '';
      const reasons = parseSchedulerMessage(msg)?.reasons ?? [];
      const resource: Resource | undefined = reasons.some((r) => r.reason === 'insufficient_cpu') ? 'cpu' : reasons.some((r) => r.reason === 'insufficient_memory') ? 'memory' : undefined;
      if (resource) squeezed.push({ pod: p, owner, resource, ...(ev?.firstTimestamp ? { at: new Date(ev.firstTimestamp) } : {}) });
    }
    if (!squeezed.length) return [];
    const firstFail = squeezed.map((x) => x.at?.getTime()).filter((x): x is number => x !== undefined).sort((a, b) => a - b)[0] ?? input.onset.getTime();
    const out: Finding[] = [];
    for (const ds of s.daemonSets) {
      const f = raise(input, ds, squeezed, firstFail);
      if (f) out.push(f);
    }
    return out;
  },
};

function raise(input: ClusterTriageInput, ds: V1DaemonSet, squeezed: { pod: V1Pod; owner: ComponentRef; resource: Resource }[], firstFail: number): Finding | undefined {
  const ns = ds.metadata?.namespace ?? '';
  const name = ds.metadata?.name ?? '';
  const revs = input.cluster.snapshot.controllerRevisions
    .filter((r) => r.metadata?.namespace === ns && (r.metadata?.ownerReferences ?? []).some((o) => o.kind === 'DaemonSet' && o.name === name))
    .sort((a, b) => (b.revision ?? 0) - (a.revision ?? 0));
  const [cur, prev] = revs;
  if (!cur || !prev || !cur.metadata?.creationTimestamp) return undefined;
  const at = new Date(cur.metadata.creationTimestamp);
  if (at.getTime() > firstFail + 120_000 || firstFail - at.getTime() > RECENT_MS) return undefined;
  const resource = squeezed[0]!.resource;
  const now = requested(revisionTemplate(cur), resource);
  const before = requested(revisionTemplate(prev), resource);
  if (!(now >= before * 2 && now > 0)) return undefined;
  const fmt = (x: number) => (resource === 'cpu' ? formatCpu(x) : formatMemory(x));
  const victims = [...new Map(squeezed.filter((x) => x.resource === resource).map((x) => [nodeId(x.owner), x.owner])).values()];
  const pending = squeezed.filter((x) => x.resource === resource);
  const nodes = ds.status?.desiredNumberScheduled ?? input.cluster.snapshot.nodes.length;
  const component: ComponentRef = { kind: 'DaemonSet', namespace: ns, name };
  const supporting: Evidence[] = [
    { kind: 'change', summary: `daemonset/${name} rolled out revision ${cur.revision} (ControllerRevision ${cur.metadata.name}) at ${clockTime(at)} (${relativeToOnset(at, input.onset)}): ${resource} request ${fmt(before)} → ${fmt(now)} per pod`, citation: objectCitation('ControllerRevision', ns, cur.metadata.name ?? '?', 'data'), observedAt: at },
    { kind: 'object', summary: `ControllerRevision ${prev.metadata?.name} (revision ${prev.revision}) requested ${fmt(before)}`, citation: objectCitation('ControllerRevision', ns, prev.metadata?.name ?? '?', 'data') },
    { kind: 'object', summary: `${pending.length} pod(s) of ${victims.map((v) => v.name).join(', ')} Pending: Insufficient ${resource} (${pending.slice(0, 3).map((x) => x.pod.metadata?.name).join(', ')})`, citation: objectCitation('Pod', pending[0]!.pod.metadata?.namespace, pending[0]!.pod.metadata?.name ?? '?', 'status.conditions') },
  ];
  const key = resource === 'cpu' ? 'Cpu' : 'Memory';
  return {
    key: `unschedulable:${ns}/DaemonSet/${name}:requests`,
    analyzer: 'daemonset-squeeze',
    family: 'unschedulable',
    status: 'supported',
    confidence: 0.95,
    title: `daemonset/${name} raised its ${resource} request ${fmt(before)} → ${fmt(now)} on every node: ${victims.map((v) => v.name).join(', ')} cannot schedule`,
    component,
    mechanism:
      `Revision ${cur.revision} of daemonset/${ns}/${name} (${relativeToOnset(at, input.onset)}) requests ${fmt(now)} ${resource} per pod instead of ${fmt(before)}; a DaemonSet runs on every node, so ${fmt((now - before) * nodes)} of ${resource} left the cluster's ${nodes} node(s) at once and ${pending.length} pod(s) of ${victims.map((v) => v.name).join(', ')} find no room. ` +
      `Fix: roll the DaemonSet back (kubectl rollout undo daemonset/${name} -n ${ns} --to-revision=${prev.revision}) or lower its request; scaling the victims only adds Pending pods.`,
    scope: `${victims.map((v) => v.name).join(', ')} run below their desired replicas`,
    affected: [...victims, component],
    facts: { reason: resource === 'cpu' ? 'insufficient_cpu' : 'insufficient_memory', [`requested${key}`]: fmt(now), [`previousRequested${key}`]: fmt(before), changedAt: at.toISOString(), revision: cur.revision ?? 0, previousRevision: prev.revision ?? 0, pendingPods: pending.length, victims: victims.map((v) => v.name).join(',') },
    supporting,
    refuting: [],
  };
}

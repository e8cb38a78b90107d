/**
 * `unschedulable`: the target's pods stay Pending because the scheduler finds no node for them.
 *
 * Decided from the scheduler's own words: the PodScheduled=False condition message (or the newest
 * FailedScheduling event), e.g. `0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu},
 * 2 Insufficient cpu. preemption: …`, parsed into reasons with node counts. A Pending PVC the pod mounts
 * is followed to its StorageClass (missing → nothing can provision it) and its ProvisioningFailed events.
 * A recent rollout that raised the requests (compared with the previous ReplicaSet) is the change to undo.
 *
 * Facts (camelCase):
 * - `reason`: the deciding reason — insufficient_cpu | insufficient_memory | insufficient_resource | taint |
 *   node_affinity | pod_affinity | node_unschedulable | too_many_pods | host_port | volume_node_affinity |
 *   pv_unavailable | pvc_unbound | other
 * - `reasons`: every reason with its node count, `insufficient_cpu:2, taint:1`
 * - `nodes`: nodes the scheduler considered (the 3 of `0/3`); `reasonNodes`: nodes rejected for `reason`
 * - `pendingPods`: target pods Pending unscheduled
 * - `requestedCpu` / `requestedMemory`: the pending pod's total requests (`4`, `512Mi`)
 * - `previousRequestedCpu` / `previousRequestedMemory`: the previous ReplicaSet's, when a rollout changed them
 * - `largestAllocatableCpu` / `largestAllocatableMemory`: the roomiest node, when requests exceed it
 * - `pvc`, `storageClass`, `storageClassMissing`, `provisioningError`: for an unbound claim
 * - `changedAt`: when the change that caused it happened (the new ReplicaSet's creation)
 */
import type { V2HorizontalPodAutoscaler, CoreV1Event, V1Container, V1Node, V1Pod, V1ReplicaSet } from '@kubernetes/client-node';
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import type { KubeEvidence } from '../../evidence/kubernetes/gather.js';
import { writersOf } from '../../evidence/kubernetes/managed-fields.js';
import { scopeRefs } from '../scope.js';
import type { Analyzer, TriageInput } from '../analyzer.js';
import { CHANGE_WINDOW_MS } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime, relativeToOnset } from '../time.js';
import type { Finding, MitigationProposal } from '../types.js';
import { selectorMatches } from '../../topology/graph.js';
import type { ClusterSnapshot } from '../../topology/snapshot.js';

export type ScheduleReason =
  | 'insufficient_cpu'
  | 'insufficient_memory'
  | 'insufficient_resource'
  | 'taint'
  | 'node_affinity'
  | 'pod_affinity'
  | 'node_unschedulable'
  | 'too_many_pods'
  | 'host_port'
  | 'volume_node_affinity'
  | 'pv_unavailable'
  | 'pvc_unbound'
  | 'other';

export interface SchedulerMessage {
  /** Nodes that fit (the 0 of `0/3`). */
  available: number;
  /** Nodes considered (the 3 of `0/3`). */
  total: number;
  /** Each reason with the nodes it rejected; pod-level reasons (unbound PVCs) count every node. */
  reasons: { reason: ScheduleReason; nodes: number; text: string }[];
}

/** The phrases kube-scheduler's filter plugins print (v1.25+ wording, and the older `had taint … didn't tolerate`). */
const PHRASES: [RegExp, ScheduleReason][] = [
  [/^Insufficient cpu$/i, 'insufficient_cpu'],
  [/^Insufficient memory$/i, 'insufficient_memory'],
  [/^Insufficient /i, 'insufficient_resource'],
  [/untolerated taint|had taint .*didn't tolerate/i, 'taint'],
  [/didn't match Pod's node affinity|node\(s\) didn't match node selector/i, 'node_affinity'],
  [/pod (anti-)?affinity/i, 'pod_affinity'],
  [/were unschedulable|node\(s\) were unschedulable/i, 'node_unschedulable'],
  [/Too many pods/i, 'too_many_pods'],
  [/free ports/i, 'host_port'],
  [/volume node affinity conflict/i, 'volume_node_affinity'],
  [/didn't find available persistent volumes/i, 'pv_unavailable'],
  [/unbound immediate PersistentVolumeClaims|persistentvolumeclaim .* not found/i, 'pvc_unbound'],
];

/** When counts tie, the reason a responder can act on first. */
const PRIORITY: ScheduleReason[] = [
  'pvc_unbound',
  'insufficient_cpu',
  'insufficient_memory',
  'insufficient_resource',
  'node_affinity',
  'pod_affinity',
  'too_many_pods',
  'host_port',
  'volume_node_affinity',
  'pv_unavailable',
  'taint',
  'node_unschedulable',
  'other',
];

function classify(text: string): ScheduleReason {
  return PHRASES.find(([re]) => re.test(text))?.[1] ?? 'other';
}

/**
 * `0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 Insufficient cpu. preemption: …`
 * → { available 0, total 3, reasons [taint 1, insufficient_cpu 2] }. The preemption tail is dropped: it
 * says whether evicting lower-priority pods would help, not why the pod does not fit.
 */
export function parseSchedulerMessage(message: string): SchedulerMessage | undefined {
  const m = /(\d+)\/(\d+) nodes are available:\s*(.*)$/s.exec(message);
  if (!m) return undefined;
  const total = Number(m[2]);
  const body = m[3]!.split(/\.\s*preemption:/)[0]!.replace(/\.\s*$/, '');
  // Reasons are joined with ", " and each starts with its count; a taint's `{key: value}` never holds ", <digit>".
  const parts = body.split(/,\s*(?=\d+\s)|\.\s+(?=\d+\s)/).map((p) => p.trim()).filter(Boolean);
  const reasons: SchedulerMessage['reasons'] = [];
  for (const part of parts) {
    const counted = /^(\d+)\s+(.*)$/.exec(part);
    const text = counted ? counted[2]! : part;
    reasons.push({ reason: classify(text), nodes: counted ? Number(counted[1]) : total, text });
  }
  return { available: Number(m[1]), total, reasons };
}

function primaryReason(reasons: SchedulerMessage['reasons']): SchedulerMessage['reasons'][number] | undefined {
  return [...reasons].sort((a, b) => (a.reason === 'pvc_unbound' ? -1 : b.reason === 'pvc_unbound' ? 1 : b.nodes - a.nodes || PRIORITY.indexOf(a.reason) - PRIORITY.indexOf(b.reason)))[0];
}

// ---- resource quantities (the subset Kubernetes resources use)

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50 };
const DECIMAL: Record<string, number> = { m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15 };

/** `250m` → 0.25, `4` → 4, `512Mi` → 536870912; undefined when not a quantity. */
export function parseQuantity(q: string | number | undefined): number | undefined {
  if (q === undefined) return undefined;
  if (typeof q === 'number') return q;
  const m = /^([0-9.]+(?:e[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|m|k|M|G|T|P)?$/.exec(q.trim());
  if (!m) return undefined;
  const unit = m[2] ?? '';
  return Number(m[1]) * (BINARY[unit] ?? DECIMAL[unit] ?? 1);
}

export function formatCpu(cores: number): string {
  return Number.isInteger(cores) ? String(cores) : `${Math.round(cores * 1000)}m`;
}

export function formatMemory(bytes: number): string {
  for (const unit of ['Gi', 'Mi', 'Ki'] as const) if (bytes >= BINARY[unit]! && bytes % BINARY[unit]! === 0) return `${bytes / BINARY[unit]!}${unit}`;
  return String(bytes);
}

/** Total requests of the app containers (init containers run before and are not summed by the scheduler the same way). */
function requests(containers: V1Container[] | undefined): { cpu?: number; memory?: number } {
  let cpu: number | undefined;
  let memory: number | undefined;
  for (const c of containers ?? []) {
    const r = c.resources?.requests as Record<string, string> | undefined;
    const cq = parseQuantity(r?.['cpu']);
    const mq = parseQuantity(r?.['memory']);
    if (cq !== undefined) cpu = (cpu ?? 0) + cq;
    if (mq !== undefined) memory = (memory ?? 0) + mq;
  }
  return { cpu, memory };
}

// ---- the target's pending pods

function isUnscheduled(p: V1Pod, events: CoreV1Event[]): boolean {
  if (p.status?.phase !== 'Pending' || p.spec?.nodeName) return false;
  const cond = (p.status?.conditions ?? []).find((c) => c.type === 'PodScheduled');
  if (cond) return cond.status === 'False';
  return events.some((e) => e.reason === 'FailedScheduling' && e.involvedObject?.name === p.metadata?.name);
}

function eventTime(e: CoreV1Event): Date | undefined {
  const t = e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp;
  return t ? new Date(t) : undefined;
}

function newestEvent(events: CoreV1Event[], reason: string, kind: string, name: string): CoreV1Event | undefined {
  return events
    .filter((e) => e.reason === reason && e.involvedObject?.kind === kind && e.involvedObject?.name === name)
    .sort((a, b) => (eventTime(b)?.getTime() ?? 0) - (eventTime(a)?.getTime() ?? 0))[0];
}

function revisionOf(rs: V1ReplicaSet): number {
  return Number(rs.metadata?.annotations?.['deployment.kubernetes.io/revision'] ?? 0);
}

/** The ReplicaSet owning a pod, and the one before it (by revision). */
function replicaSetsOf(pod: V1Pod, all: V1ReplicaSet[]): { current?: V1ReplicaSet; previous?: V1ReplicaSet } {
  const owner = pod.metadata?.ownerReferences?.find((o) => o.kind === 'ReplicaSet')?.name;
  const current = all.find((rs) => rs.metadata?.name === owner);
  if (!current) return {};
  const previous = all.filter((rs) => revisionOf(rs) < revisionOf(current)).sort((a, b) => revisionOf(b) - revisionOf(a))[0];
  return { current, previous };
}

function largestAllocatable(nodes: V1Node[]): { cpu?: number; memory?: number } {
  let cpu: number | undefined;
  let memory: number | undefined;
  for (const n of nodes) {
    if (n.spec?.unschedulable) continue;
    const a = n.status?.allocatable as Record<string, string> | undefined;
    const c = parseQuantity(a?.['cpu']);
    const m = parseQuantity(a?.['memory']);
    if (c !== undefined) cpu = Math.max(cpu ?? 0, c);
    if (m !== undefined) memory = Math.max(memory ?? 0, m);
  }
  return { cpu, memory };
}


/** Target pods evicted shortly before the onset: then the Pending replacements are a consequence (node-pressure explains it). */
function recentEvictions(kube: KubeEvidence, onset: Date): V1Pod[] {
  return kube.pods.filter((p) => {
    if (p.status?.reason !== 'Evicted') return false;
    const ev = newestEvent(kube.events, 'Evicted', 'Pod', p.metadata?.name ?? '');
    // The eviction's time: its event, else the pod's DisruptionTarget/Ready transition (startTime is when it started, not when it was evicted).
    const cond = (p.status?.conditions ?? []).find((c) => c.type === 'DisruptionTarget') ?? (p.status?.conditions ?? []).find((c) => c.type === 'Ready');
    const at = ev ? eventTime(ev) : cond?.lastTransitionTime ? new Date(cond.lastTransitionTime) : undefined;
    return !at || onset.getTime() - at.getTime() <= CHANGE_WINDOW_MS;
  });
}

/** Scheduler reasons whose faulty object is storage (the claim or its class), not the workload. */
const STORAGE_REASONS = new Set<string>(['pvc_unbound', 'pv_unavailable', 'volume_node_affinity']);

export const unschedulable: Analyzer = {
  name: 'unschedulable',
  analyze({ kube, onset, changes, cluster }: TriageInput): Finding[] {
    const t = kube.target;
    if (!t || !kube.workload) return [];
    const pending = kube.pods.filter((p) => isUnscheduled(p, kube.events)).sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
    if (pending.length === 0) return [];
    const component = { kind: t.kind, namespace: t.namespace, name: t.name };
    const supporting: Evidence[] = [];
    const refuting: Evidence[] = [];
    const facts: Record<string, string | number | boolean> = { pendingPods: pending.length };

    // The scheduler's words: the pod condition first (always current), the newest FailedScheduling event otherwise.
    const pod = pending[0]!;
    const podName = pod.metadata?.name ?? '?';
    const cond = (pod.status?.conditions ?? []).find((c) => c.type === 'PodScheduled' && c.status === 'False');
    const event = newestEvent(kube.events, 'FailedScheduling', 'Pod', podName);
    const message = cond?.message ?? event?.message ?? '';
    const parsed = parseSchedulerMessage(message);
    const since = cond?.lastTransitionTime ? new Date(cond.lastTransitionTime) : event?.firstTimestamp ? new Date(event.firstTimestamp) : undefined;
    if (cond?.message) {
      supporting.push({
        kind: 'object',
        summary: `pod ${podName}: PodScheduled=False (${cond.reason ?? 'Unschedulable'}): "${cond.message}"`,
        citation: objectCitation('Pod', t.namespace, podName, 'status.conditions[type=PodScheduled]'),
        observedAt: since,
        detail: { pendingPods: pending.map((p) => p.metadata?.name) },
      });
    }
    if (event) {
      const at = eventTime(event);
      supporting.push({
        kind: 'event',
        summary: `event FailedScheduling ×${event.count ?? 1} on ${podName}${at ? ` (last ${clockTime(at)})` : ''}: "${event.message}"`,
        citation: objectCitation('Event', t.namespace, event.metadata?.name ?? '?'),
        observedAt: at,
      });
    }

    const primary = parsed ? primaryReason(parsed.reasons) : undefined;
    let reason: ScheduleReason = primary?.reason ?? 'other';
    if (parsed) {
      facts.nodes = parsed.total;
      facts.reasons = parsed.reasons.map((r) => `${r.reason}:${r.nodes}`).join(', ');
      if (primary) facts.reasonNodes = primary.nodes;
    }

    // What the pod asks for, against what the roomiest node can give at all.
    const req = requests(pod.spec?.containers);
    if (req.cpu !== undefined) facts.requestedCpu = formatCpu(req.cpu);
    if (req.memory !== undefined) facts.requestedMemory = formatMemory(req.memory);
    const room = largestAllocatable(kube.nodes);
    if (reason === 'insufficient_cpu' && req.cpu !== undefined && room.cpu !== undefined && req.cpu > room.cpu) {
      facts.largestAllocatableCpu = formatCpu(room.cpu);
      supporting.push({
        kind: 'object',
        summary: `requests cpu ${formatCpu(req.cpu)} exceed every node's allocatable cpu (largest ${formatCpu(room.cpu)}): no node can ever fit it`,
        citation: objectCitation('Pod', t.namespace, podName, 'spec.containers[*].resources.requests'),
        detail: { requestedCpu: formatCpu(req.cpu), largestAllocatableCpu: formatCpu(room.cpu) },
      });
    }
    if (reason === 'insufficient_memory' && req.memory !== undefined && room.memory !== undefined && req.memory > room.memory) {
      facts.largestAllocatableMemory = formatMemory(room.memory);
      supporting.push({
        kind: 'object',
        summary: `requests memory ${formatMemory(req.memory)} exceed every node's allocatable memory (largest ${formatMemory(room.memory)})`,
        citation: objectCitation('Pod', t.namespace, podName, 'spec.containers[*].resources.requests'),
      });
    }

    // An unbound claim: follow it to its StorageClass and the provisioner's complaints.
    let pvcDetail = '';
    let storageClassMissing = false;
    if (reason === 'pvc_unbound' || reason === 'other') {
      for (const v of pod.spec?.volumes ?? []) {
        const claim = v.persistentVolumeClaim?.claimName;
        const pvc = claim ? kube.pvcs.find((c) => c.metadata?.name === claim) : undefined;
        if (!claim || (pvc && pvc.status?.phase === 'Bound')) continue;
        reason = 'pvc_unbound';
        facts.pvc = claim;
        const cls = pvc?.spec?.storageClassName;
        if (cls !== undefined) facts.storageClass = cls;
        const sc = cls ? kube.storageClasses.find((s) => s.metadata?.name === cls) : undefined;
        supporting.push({
          kind: 'object',
          summary: pvc ? `PVC ${claim}: ${pvc.status?.phase ?? 'Pending'}, storageClassName ${cls ?? '(default)'}` : `PVC ${claim} does not exist`,
          citation: objectCitation('PersistentVolumeClaim', t.namespace, claim, 'status.phase'),
        });
        if (cls && kube.storageClasses.length > 0 && !sc) {
          storageClassMissing = true;
          facts.storageClassMissing = true;
          supporting.push({
            kind: 'object',
            summary: `StorageClass ${cls} does not exist (cluster has: ${kube.storageClasses.map((s) => s.metadata?.name).join(', ')})`,
            citation: { source: 'kubernetes', ref: `apis/storage.k8s.io/v1/storageclasses/${cls}` },
          });
          pvcDetail = `; its PVC ${claim} asks for StorageClass \`${cls}\`, which does not exist, so no volume is ever provisioned`;
        } else if (sc?.volumeBindingMode === 'WaitForFirstConsumer') {
          pvcDetail = `; its PVC ${claim} (StorageClass ${cls}, WaitForFirstConsumer) binds only once the pod is scheduled`;
        }
        const failed = newestEvent(kube.events, 'ProvisioningFailed', 'PersistentVolumeClaim', claim);
        if (failed) {
          facts.provisioningError = (failed.message ?? '').slice(0, 200);
          supporting.push({
            kind: 'event',
            summary: `event ProvisioningFailed ×${failed.count ?? 1} on PVC ${claim}: "${failed.message}"`,
            citation: objectCitation('Event', t.namespace, failed.metadata?.name ?? '?'),
            observedAt: eventTime(failed),
          });
          if (!pvcDetail) pvcDetail = `; provisioning its PVC ${claim} fails: ${failed.message}`;
        }
        break;
      }
    }
    facts.reason = reason;

    // A rollout that raised the requests: compare the pending pod's ReplicaSet with the previous one.
    const { current, previous } = replicaSetsOf(pod, kube.replicaSets);
    let mitigation: MitigationProposal | undefined;
    let change = '';
    if (current && previous && t.kind === 'Deployment') {
      const before = requests(previous.spec?.template?.spec?.containers);
      const created = current.metadata?.creationTimestamp ? new Date(current.metadata.creationTimestamp) : undefined;
      const recent = created ? onset.getTime() - created.getTime() <= CHANGE_WINDOW_MS : false;
      const cpuUp = req.cpu !== undefined && before.cpu !== undefined && req.cpu > before.cpu;
      const memUp = req.memory !== undefined && before.memory !== undefined && req.memory > before.memory;
      if ((cpuUp || memUp) && recent) {
        if (cpuUp) facts.previousRequestedCpu = formatCpu(before.cpu!);
        if (memUp) facts.previousRequestedMemory = formatMemory(before.memory!);
        facts.changedAt = created!.toISOString();
        const what = [cpuUp ? `cpu ${formatCpu(before.cpu!)} → ${formatCpu(req.cpu!)}` : '', memUp ? `memory ${formatMemory(before.memory!)} → ${formatMemory(req.memory!)}` : ''].filter(Boolean).join(', ');
        change = ` Revision ${revisionOf(current)} (ReplicaSet ${current.metadata?.name}, created ${clockTime(created!)}, ${relativeToOnset(created!, onset)}) raised the requests: ${what}.`;
        supporting.push({
          kind: 'change',
          summary: `rollout to revision ${revisionOf(current)} raised requests ${what} (ReplicaSet ${previous.metadata?.name} → ${current.metadata?.name})`,
          citation: objectCitation('ReplicaSet', t.namespace, current.metadata?.name ?? '?', 'spec.template.spec.containers[*].resources.requests'),
          observedAt: created,
          detail: { previousReplicaSet: previous.metadata?.name, replicaSet: current.metadata?.name },
        });
        mitigation = requestsMitigation(t, current, previous, revisionOf(previous));
      }
    }

    // Otherwise the change that made new pods appear: a scale-up (they need room, or a fresh volume).
    if (!change) {
      const scaled = changes.find((c) => c.kind === 'scale' && c.target.name === t.name && c.target.namespace === t.namespace && c.at <= onset && onset.getTime() - c.at.getTime() <= CHANGE_WINDOW_MS);
      if (scaled) {
        facts.changedAt = scaled.at.toISOString();
        change = ` It started with ${scaled.summary} (${relativeToOnset(scaled.at, onset)}): the added replica(s) are the ones that cannot be placed.`;
        supporting.push({ kind: 'change', summary: `${scaled.summary} (${clockTime(scaled.at)})`, citation: scaled.citation, observedAt: scaled.at });
      }
    }
    // A taint written to nodes shortly before: the nodes changed, not the pods.
    if (reason === 'taint') {
      for (const n of kube.nodes) {
        const w = writersOf(n.metadata?.managedFields, ['spec', 'taints'])[0];
        if (!w?.time || onset.getTime() - w.time.getTime() > CHANGE_WINDOW_MS) continue;
        facts.changedAt ??= w.time.toISOString();
        change += ` Node ${n.metadata?.name}'s taints were written by \`${w.manager}\` ${relativeToOnset(w.time, onset)}.`;
        supporting.push({
          kind: 'managed_fields',
          summary: `node ${n.metadata?.name}: spec.taints (${(n.spec?.taints ?? []).map((x) => `${x.key}=${x.value ?? ''}:${x.effect}`).join(', ')}) written by \`${w.manager}\` at ${clockTime(w.time)}`,
          citation: objectCitation('Node', undefined, n.metadata?.name ?? '?', `metadata.managedFields[${w.index}]`),
          observedAt: w.time,
        });
      }
    }

    // Evictions just before: the Pending pods are replacements that no longer fit — node-pressure leads then.
    const evicted = recentEvictions(kube, onset);
    if (evicted.length > 0) {
      refuting.push({
        kind: 'object',
        summary: `${evicted.length} pod(s) of ${t.name} were evicted just before (${evicted.map((p) => p.metadata?.name).join(', ')}): the Pending pods replace them, a node problem is the cause`,
        citation: objectCitation('Pod', t.namespace, evicted[0]!.metadata?.name ?? '?', 'status.reason'),
      });
    }

    // A claim that is bound but whose volume cannot be reached from any node that fits (a zonal disk
    // after a node-pool change, a local PV whose node is gone): the claim is the faulty object.
    if ((reason === 'volume_node_affinity' || reason === 'pv_unavailable') && facts.pvc === undefined) {
      for (const v of pod.spec?.volumes ?? []) {
        const claim = v.persistentVolumeClaim?.claimName;
        if (!claim) continue;
        const pvc = kube.pvcs.find((c) => c.metadata?.name === claim);
        facts.pvc = claim;
        if (pvc?.spec?.storageClassName) facts.storageClass = pvc.spec.storageClassName;
        if (pvc?.spec?.volumeName) facts.volume = pvc.spec.volumeName;
        supporting.push({
          kind: 'object',
          summary: `PVC ${claim}: ${pvc?.status?.phase ?? 'unknown'}${pvc?.spec?.volumeName ? ` to volume ${pvc.spec.volumeName}` : ''}, StorageClass ${pvc?.spec?.storageClassName ?? '(default)'}: the scheduler finds no node that can reach that volume`,
          citation: objectCitation('PersistentVolumeClaim', t.namespace, claim, 'spec.volumeName'),
        });
        break;
      }
    }
    // Storage faults are localised to the storage object (docs/fault-families.md): the StorageClass when
    // it is missing, else the claim; the workload that cannot start is the first of the affected.
    const storageRef: ComponentRef | undefined = STORAGE_REASONS.has(reason) && typeof facts.pvc === 'string'
      ? storageClassMissing && typeof facts.storageClass === 'string'
        ? { kind: 'StorageClass', name: facts.storageClass }
        : { kind: 'PersistentVolumeClaim', namespace: t.namespace, name: facts.pvc }
      : undefined;
    // Capacity short because a node is cordoned and cannot be drained: a budget allowing 0 disruptions keeps
    // its pods there, so the node neither frees up nor goes away (a node upgrade stuck on a PDB).
    const drain = reason === 'insufficient_cpu' || reason === 'insufficient_memory' || reason === 'node_unschedulable' ? blockedDrain(cluster?.snapshot) : undefined;
    if (drain) {
      Object.assign(facts, { blockedNode: drain.node, pdb: `${drain.namespace}/${drain.pdb}`, disruptionsAllowed: 0 });
      supporting.push({
        kind: 'object',
        summary: `node ${drain.node} is cordoned (spec.unschedulable) and still runs ${drain.pods.join(', ')}; PodDisruptionBudget ${drain.namespace}/${drain.pdb} allows 0 disruptions (${drain.detail}), so the drain cannot evict them and the node's capacity is neither usable nor replaced`,
        citation: objectCitation('PodDisruptionBudget', drain.namespace, drain.pdb, 'status.disruptionsAllowed'),
        detail: { node: drain.node, pods: drain.pods },
      });
    }
    const serving = kube.pods.filter((p) => p.status?.phase === 'Running' && (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')).length;
    const desired = (kube.workload.spec as { replicas?: number } | undefined)?.replicas;
    const reasonText = primary ? `${primary.nodes === parsed?.total ? 'every node' : `${primary.nodes} of ${parsed?.total} nodes`}: ${primary.text}` : message || 'no scheduler message';
    const affected = scopeRefs(kube);
    const scope =
      `${serving}${desired !== undefined ? ` of ${desired}` : ''} replica(s) of ${t.name} serve; ${pending.length} pod(s) cannot start` +
      (affected.length ? ` — ${affected.map((a) => `${a.kind.toLowerCase()}/${a.name}`).join(', ')} run on reduced capacity` : '');

    const specific = parsed !== undefined || storageClassMissing;
    return [
      {
        key: `unschedulable:${t.namespace}/${t.kind}/${t.name}`,
        analyzer: 'unschedulable',
        status: supporting.length > 0 ? 'supported' : 'inconclusive',
        confidence: evicted.length > 0 ? 0.7 : specific ? 0.93 : 0.6,
        title:
          reason === 'pvc_unbound'
            ? `${t.name} pods Pending: PVC ${facts.pvc ?? ''} unbound${storageClassMissing ? ` (StorageClass ${facts.storageClass} missing)` : ''}`
            : `${t.name} pods Pending: ${reason.replace(/_/g, ' ')}${facts.requestedCpu && reason === 'insufficient_cpu' ? ` (requests cpu ${facts.requestedCpu})` : ''}${storageRef?.kind === 'PersistentVolumeClaim' ? ` (PVC ${storageRef.name})` : ''}`,
        component: drain ? { kind: 'PodDisruptionBudget', namespace: drain.namespace, name: drain.pdb } : (storageRef ?? component),
        mechanism:
          `${pending.length} pod(s) of ${t.kind.toLowerCase()}/${t.name} are Pending unscheduled${since ? ` since ${clockTime(since)} (${relativeToOnset(since, onset)})` : ''}; ` +
          `the scheduler says ${parsed ? `0 of ${parsed.total} nodes fit (${reasonText})` : `"${message}"`}` +
          (req.cpu !== undefined || req.memory !== undefined ? `; each asks for ${[facts.requestedCpu ? `cpu ${facts.requestedCpu}` : '', facts.requestedMemory ? `memory ${facts.requestedMemory}` : ''].filter(Boolean).join(', ')}` : '') +
          (facts.largestAllocatableCpu ? `, more than the largest node's allocatable cpu ${facts.largestAllocatableCpu}` : '') +
          pvcDetail +
          '.' +
          change +
          (storageClassMissing ? ` Fix: create StorageClass \`${facts.storageClass}\` (e.g. a copy of an existing class under that name); ${t.kind === 'StatefulSet' ? 'volumeClaimTemplates are immutable, so moving to another class means recreating the StatefulSet with --cascade=orphan' : 'or point the claim at an existing class'}.` : '') +
          (evicted.length > 0 ? ` These pods replace ${evicted.length} evicted pod(s); see the node-pressure finding.` : '') +
          (drain ? ` The missing capacity is node ${drain.node}: cordoned for a drain that PodDisruptionBudget ${drain.namespace}/${drain.pdb} blocks (0 disruptions allowed). Fix: let the drain proceed (scale ${drain.pods.length ? 'the protected workload up by one, or relax minAvailable/maxUnavailable' : 'the budget'}), or uncordon the node until it can be drained.` : ''),
        scope,
        affected: storageRef || drain ? [component, ...(drain ? [{ kind: 'Node', name: drain.node }] : []), ...affected.filter((a) => !(a.kind === component.kind && a.name === component.name && a.namespace === component.namespace))] : affected,
        facts,
        supporting,
        refuting,
        ...(mitigation && evicted.length === 0 ? { mitigation } : {}),
      },
      ...autoscalerNotTheLimit(cluster?.snapshot.hpas ?? [], t, pending.length),
    ];
  },
};

/**
 * "Is the HPA capped?" — the look-alike of pods that never come: when the workload's HPA asked for the
 * replicas (desired below its max) and they are Pending, the autoscaler did its part; raised and ruled out.
 */
function autoscalerNotTheLimit(hpas: V2HorizontalPodAutoscaler[], t: { kind: string; namespace: string; name: string }, pending: number): Finding[] {
  const h = hpas.find((x) => x.metadata?.namespace === t.namespace && x.spec?.scaleTargetRef?.name === t.name && (x.spec.scaleTargetRef.kind ?? 'Deployment') === t.kind);
  const desired = h?.status?.desiredReplicas;
  const max = h?.spec?.maxReplicas;
  if (!h || desired === undefined || max === undefined || desired >= max) return [];
  return [
    {
      key: `hpa-at-max:${t.namespace}/HorizontalPodAutoscaler/${h.metadata?.name}:not-the-limit`,
      analyzer: 'unschedulable',
      family: 'hpa-at-max',
      status: 'ruled_out',
      confidence: 0.05,
      title: `HPA ${h.metadata?.name} is at its maximum`,
      component: { kind: 'HorizontalPodAutoscaler', namespace: t.namespace, name: h.metadata?.name ?? '?' },
      mechanism: `${t.name} runs below what its load needs.`,
      reason: `HPA ${h.metadata?.name} wants ${desired} of at most ${max} replicas: it scaled as asked, and ${pending} of the pods it asked for cannot be scheduled`,
      facts: { hpa: h.metadata?.name ?? '', desiredReplicas: desired, maxReplicas: max },
      supporting: [],
      refuting: [{ kind: 'object', summary: `HPA ${h.metadata?.name}: desired ${desired}, current ${h.status?.currentReplicas ?? '?'}, max ${max}`, citation: objectCitation('HorizontalPodAutoscaler', t.namespace, h.metadata?.name ?? '?', 'status') }],
    },
  ];
}

/**
 * Put the requests back. When the rollout changed only resources, `set_resources` restores exactly them;
 * when it changed more (an image too), undo the whole rollout to the previous revision.
 */
function requestsMitigation(t: ComponentRef, current: V1ReplicaSet, previous: V1ReplicaSet, previousRevision: number): MitigationProposal {
  const cur = current.spec?.template?.spec?.containers ?? [];
  const prev = previous.spec?.template?.spec?.containers ?? [];
  const strip = (c: V1Container) => JSON.stringify({ ...c, resources: undefined });
  const onlyResources = cur.length === prev.length && cur.every((c, i) => strip(c) === strip(prev[i]!));
  const changed = cur.find((c, i) => JSON.stringify(c.resources ?? {}) !== JSON.stringify(prev[i]?.resources ?? {}));
  if (onlyResources && changed) {
    const old = prev.find((p) => p.name === changed.name)?.resources?.requests as Record<string, string> | undefined;
    const requestsBack = Object.fromEntries(Object.entries(old ?? {}).filter(([k]) => k === 'cpu' || k === 'memory'));
    return {
      action: 'set_resources',
      target: t,
      params: { container: changed.name, requests: requestsBack },
      command: `kubectl set resources ${t.kind.toLowerCase()}/${t.name} -n ${t.namespace} -c ${changed.name} --requests=${Object.entries(requestsBack).map(([k, v]) => `${k}=${v}`).join(',')}`,
      rationale: `restore the requests of revision ${previousRevision} so the new pods fit on the nodes again`,
    };
  }
  return {
    action: 'rollout_undo',
    target: t,
    params: { toRevision: previousRevision },
    command: `kubectl rollout undo ${t.kind.toLowerCase()}/${t.name} -n ${t.namespace} --to-revision=${previousRevision}`,
    rationale: `return to revision ${previousRevision}, whose pods fit on the nodes`,
  };
}

/** A cordoned node still running pods that a PodDisruptionBudget with 0 allowed disruptions protects. */
function blockedDrain(snapshot: ClusterSnapshot | undefined): { node: string; namespace: string; pdb: string; pods: string[]; detail: string } | undefined {
  if (!snapshot?.pdbs?.length) return undefined;
  for (const node of snapshot.nodes) {
    if (!node.spec?.unschedulable) continue;
    const name = node.metadata?.name ?? '?';
    const running = snapshot.pods.filter((p) => p.spec?.nodeName === name && p.status?.phase === 'Running' && !(p.metadata?.ownerReferences ?? []).some((o) => o.kind === 'DaemonSet'));
    for (const pdb of snapshot.pdbs) {
      if ((pdb.status?.disruptionsAllowed ?? 1) > 0) continue;
      const ns = pdb.metadata?.namespace;
      const covered = running.filter((p) => p.metadata?.namespace === ns && selectorMatches(pdb.spec?.selector, p.metadata?.labels));
      if (!covered.length) continue;
      const rule = pdb.spec?.minAvailable !== undefined ? `minAvailable ${pdb.spec.minAvailable}` : pdb.spec?.maxUnavailable !== undefined ? `maxUnavailable ${pdb.spec.maxUnavailable}` : 'no rule';
      const detail = `${rule}, ${pdb.status?.currentHealthy ?? '?'} healthy of ${pdb.status?.expectedPods ?? '?'} expected`;
      return { node: name, namespace: ns ?? '?', pdb: pdb.metadata?.name ?? '?', pods: covered.map((p) => p.metadata?.name ?? '?').slice(0, 5), detail };
    }
  }
  return undefined;
}

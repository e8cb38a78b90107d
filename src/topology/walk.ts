/**
 * The walk from what the alert names to where the fault may be, and back to who it hurts.
 *
 * Forward (`walkFrom`): breadth-first along dependency edges from the subjects. A subject that is not
 * a workload first expands to what stands behind it (an Ingress to its Services and workloads, a
 * namespace to its workloads, a node to the workloads on it, a ConfigMap to its readers). Every reached
 * object keeps the shortest path from a subject, so a hypothesis can show `edge → frontend → quotes`.
 * Candidate workloads are ranked by distance and by how suspicious the snapshot makes them (unhealthy
 * pods, restarts, a rollout or a hand edit in the last day, warning events), bounded for cost.
 *
 * Backward (`affectedBy`): everything that depends on an object, transitively, up to the front doors:
 * the workloads that read a ConfigMap, their Services, their callers, the Ingresses in front, the
 * CronJobs whose Jobs use it. That is the scope of a fault in the object.
 */
import type { ComponentRef } from '../evidence/types.js';
import { nodeId, refOfId, WORKLOAD_KINDS, type Edge, type EdgeKind, type Topology } from './graph.js';
import type { Subject } from './subjects.js';

export interface PathStep {
  ref: ComponentRef;
  /** The edge that led here (absent for the subject). */
  via?: Edge;
}

export interface Reached {
  id: string;
  ref: ComponentRef;
  /** Shortest path from a subject, the subject first. */
  path: PathStep[];
  /** Service-to-service hops from the subject (calls edges), the measure of distance. */
  hops: number;
}

export interface Walk {
  subjects: Subject[];
  /** Subjects and what stands directly behind them (their expansion). */
  starts: Reached[];
  reached: Map<string, Reached>;
  /** Workloads worth gathering evidence for, most likely first. */
  candidates: Reached[];
}

/** Edges followed forward, from a dependent to what it depends on. */
const FORWARD: ReadonlySet<EdgeKind> = new Set(['routes', 'selects', 'calls', 'reads', 'mounts', 'runs-on', 'scaled-by', 'metrics-from', 'isolated-by', 'serves-tls', 'configured-by', 'resolves-via', 'limited-by', 'disrupted-by', 'owns', 'consumes', 'hosted-by', 'served-by']);
/** Edges whose target is something that hurts the dependent (walked backward for scope). */
const MAX_HOPS = 4;

export interface WalkOptions {
  maxCandidates?: number;
  /** Extra suspicion per workload id (recent changes, unhealthy pods), computed by the caller. */
  suspicion?: (id: string) => number;
}

export function walkFrom(subjects: Subject[], t: Topology, opts: WalkOptions = {}): Walk {
  const reached = new Map<string, Reached>();
  const queue: Reached[] = [];
  const visit = (r: Reached) => {
    const prev = reached.get(r.id);
    if (prev && (prev.hops < r.hops || (prev.hops === r.hops && prev.path.length <= r.path.length))) return;
    reached.set(r.id, r);
    queue.push(r);
  };
  const starts: Reached[] = [];
  for (const s of subjects) {
    const id = nodeId(s.ref);
    const start: Reached = { id, ref: s.ref, path: [{ ref: s.ref }], hops: 0 };
    starts.push(start);
    visit(start);
    for (const e of expansion(s.ref, t)) {
      const r: Reached = { id: e.id, ref: refOfId(e.id), path: [{ ref: s.ref }, { ref: refOfId(e.id), via: e.edge }], hops: 0 };
      starts.push(r);
      visit(r);
    }
    for (const e of checkedBy(s.ref, t)) visit({ id: e.to, ref: refOfId(e.to), path: [{ ref: s.ref }, { ref: refOfId(e.to), via: e }], hops: 1 });
  }
  while (queue.length) {
    const cur = queue.shift()!;
    if (cur.path.length > 12) continue;
    for (const e of t.outgoing(cur.id)) {
      if (!FORWARD.has(e.kind)) continue;
      // DNS is everyone's dependency: reach it, but do not walk on through it to other namespaces' services.
      if (cur.ref.kind === 'Service' && cur.ref.namespace === 'kube-system' && e.kind === 'selects' && cur.path.length > 6) continue;
      const hops = cur.hops + (e.kind === 'calls' ? 1 : 0);
      if (hops > MAX_HOPS) continue;
      visit({ id: e.to, ref: refOfId(e.to), path: [...cur.path, { ref: refOfId(e.to), via: e }], hops });
    }
  }
  const suspicion = opts.suspicion ?? (() => 0);
  const subjectIds = new Set(starts.map((s) => s.id));
  const workloads = [...reached.values()].filter((r) => WORKLOAD_KINDS.has(r.ref.kind));
  const score = (r: Reached) => (subjectIds.has(r.id) ? 10 : 0) + suspicion(r.id) * 3 - r.hops * 1.5 - (isDnsPath(r) ? 2 : 0);
  const candidates = workloads.sort((a, b) => score(b) - score(a) || a.hops - b.hops || a.id.localeCompare(b.id)).slice(0, opts.maxCandidates ?? 8);
  return { subjects, starts, reached, candidates };
}

/** What stands directly behind a subject that is not itself a workload. */
function expansion(ref: ComponentRef, t: Topology): { id: string; edge: Edge }[] {
  const id = nodeId(ref);
  const fromIncoming = (kinds: EdgeKind[]) => t.incoming(id).filter((e) => kinds.includes(e.kind)).map((e) => ({ id: e.from, edge: e }));
  switch (ref.kind) {
    case 'Namespace':
      return [...t.nodes.values()]
        .filter((n) => n.ref.namespace === ref.name && (WORKLOAD_KINDS.has(n.ref.kind) || n.ref.kind === 'Ingress'))
        .map((n) => ({ id: nodeId(n.ref), edge: { from: id, to: nodeId(n.ref), kind: 'selects' as const, via: `in namespace ${ref.name}` } }));
    case 'Node':
      return fromIncoming(['runs-on']);
    case 'HorizontalPodAutoscaler':
    case 'ScaledObject':
      return fromIncoming(['scaled-by']);
    case 'PersistentVolumeClaim':
    case 'StorageClass':
      return fromIncoming(['mounts']);
    case 'ConfigMap':
    case 'Secret':
      return [...fromIncoming(['reads']), ...fromIncoming(['serves-tls'])];
    case 'Certificate':
      return fromIncoming(['serves-tls']).flatMap((s) => [s, ...t.incoming(s.id).filter((e) => e.kind === 'serves-tls').map((e) => ({ id: e.from, edge: e }))]);
    case 'ExternalService':
    case 'ServiceEntry':
      return fromIncoming(['calls', 'configured-by']);
    case 'NetworkPolicy':
      return fromIncoming(['isolated-by']);
    default:
      return [];
  }
}

/**
 * A check job that ran fine (a reconciliation, a data-quality or synthetic check pushing its result to a
 * Pushgateway) alerts on what it measured, not on itself: the workloads of its system are where to look —
 * those of its namespace that share its name's first word (`ledger-reconcile` → `ledger-writer`), else,
 * in a small namespace, all of them.
 */
function checkedBy(ref: ComponentRef, t: Topology): Edge[] {
  if ((ref.kind !== 'CronJob' && ref.kind !== 'Job') || !ref.namespace) return [];
  const ownJobs = t.snapshot.jobs.filter((j) => j.metadata?.namespace === ref.namespace && (j.metadata?.name === ref.name || (j.metadata?.ownerReferences ?? []).some((o) => o.kind === 'CronJob' && o.name === ref.name)));
  const latest = ownJobs.sort((a, b) => String(b.metadata?.creationTimestamp ?? '').localeCompare(String(a.metadata?.creationTimestamp ?? '')))[0];
  if (!latest?.status?.succeeded) return [];
  const word = ref.name.split('-')[0]!;
  const siblings = [...t.nodes.values()].filter((n) => n.ref.namespace === ref.namespace && (n.ref.kind === 'Deployment' || n.ref.kind === 'StatefulSet'));
  const named = siblings.filter((n) => n.ref.name.split('-')[0] === word);
  const picked = named.length ? named : siblings.length <= 5 ? siblings : [];
  return picked.map((n) => ({ from: nodeId(ref), to: nodeId(n.ref), kind: 'calls' as const, via: `checked by ${ref.kind.toLowerCase()}/${ref.name} (it ran fine: the alert is about what it measures)` }));
}

function isDnsPath(r: Reached): boolean {
  return r.path.some((p) => p.via?.kind === 'resolves-via');
}

/** Edges whose dependents are hurt when their target fails. */
const HURTS: ReadonlySet<EdgeKind> = new Set(['routes', 'selects', 'calls', 'reads', 'mounts', 'runs-on', 'scaled-by', 'metrics-from', 'isolated-by', 'serves-tls', 'configured-by', 'limited-by', 'disrupted-by', 'owns', 'consumes', 'hosted-by', 'served-by']);

/**
 * Who is hurt when `origin` fails: its dependents, transitively (bounded), ordered by closeness.
 * DNS is left out on purpose: every pod resolves through kube-dns, and a DNS fault's scope is what the
 * evidence shows failing, not the whole cluster.
 */
export function affectedBy(origin: ComponentRef, t: Topology, opts: { limit?: number; within?: Set<string> } = {}): ComponentRef[] {
  const start = nodeId(origin);
  const seen = new Map<string, number>([[start, 0]]);
  const queue = [start];
  while (queue.length) {
    const id = queue.shift()!;
    const depth = seen.get(id)!;
    if (depth >= 8) continue;
    for (const e of t.incoming(id)) {
      if (!HURTS.has(e.kind) || seen.has(e.from)) continue;
      // A Service hurts its callers; a workload hurts the Services that select it. Nodes, quotas and
      // policies hurt the workloads bound to them, not everything those workloads touch.
      seen.set(e.from, depth + 1);
      queue.push(e.from);
    }
  }
  seen.delete(start);
  const kinds = new Set([...WORKLOAD_KINDS, 'Service', 'Ingress', 'Job', 'VirtualService', 'HTTPRoute', 'GRPCRoute']);
  const out = [...seen.entries()]
    .filter(([id]) => kinds.has(id.split('/')[0]!))
    .filter(([id]) => !opts.within || opts.within.has(id) || seen.get(id)! <= 2)
    .sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0]))
    .map(([id]) => refOfId(id));
  return out.slice(0, opts.limit ?? 30);
}

/** `edge → frontend → quotes`: the path as people read it, services and workloads only. */
export function pathText(path: PathStep[]): string {
  const names: string[] = [];
  for (const step of path) {
    const label = step.ref.kind === 'Ingress' || step.ref.kind === 'ExternalService' ? step.ref.name : step.ref.name;
    if (names[names.length - 1] !== label) names.push(label);
  }
  return names.join(' → ');
}

/** Is `b` reachable forward from `a` (a depends on b, directly or not)? */
export function dependsOn(t: Topology, a: ComponentRef, b: ComponentRef, maxDepth = 8): boolean {
  const target = nodeId(b);
  const seen = new Set([nodeId(a)]);
  let frontier = [nodeId(a)];
  for (let d = 0; d < maxDepth && frontier.length; d++) {
    const next: string[] = [];
    for (const id of frontier) {
      for (const e of t.outgoing(id)) {
        if (!FORWARD.has(e.kind) || seen.has(e.to)) continue;
        if (e.to === target) return true;
        seen.add(e.to);
        next.push(e.to);
      }
    }
    frontier = next;
  }
  return false;
}

/**
 * `topology`: the cluster's service graph around one component, for the model. The same graph the
 * deterministic walk uses (owner chains, Service selectors, Ingress → Service, env/ConfigMap host
 * references, NetworkPolicies, Istio objects, service-graph metrics, the catalog's dependsOn): the
 * component's neighbours by edge kind in both directions, what it reaches further on, what a fault in
 * it would hurt, and the path from what the alert names to it. Bounded, redacted, cited with the
 * snapshot it was read from.
 */
import { z } from 'zod';
import { builtinKind } from '../kubernetes/objects.js';
import { clipRedacted } from '../../redact/index.js';
import { boundedData, type EvidenceTool, type ToolResult } from '../tool.js';
import type { Citation, ComponentRef } from '../types.js';
import { nodeId, WORKLOAD_KINDS, type Edge, type Topology } from '../../topology/graph.js';
import { affectedBy, type PathStep } from '../../topology/walk.js';
import { ClusterGraphs, GraphUnavailableError, type GraphView } from './graph-source.js';

const KNOWN_EDGE_KINDS = new Set(['routes', 'selects', 'calls', 'reads', 'mounts', 'runs-on', 'scaled-by', 'isolated-by', 'serves-tls', 'configured-by', 'resolves-via', 'limited-by', 'disrupted-by', 'owns', 'consumes', 'hosted-by']);

const parameters = z.object({
  kind: z.string().min(1).describe('Any kind in the graph: Deployment, Service, Ingress, ConfigMap, Node, … (a Pod: its workload).'),
  namespace: z.string().optional().describe('Omit for cluster-scoped kinds or a unique name.'),
  name: z.string().min(1).describe('Name (an ExternalService: its host).'),
  edges: z.array(z.string()).optional().describe('Only these edge kinds (calls, selects, routes, reads, runs-on, …).'),
  depth: z.number().int().min(1).max(4).default(2).describe('Hops of further dependencies listed.'),
});

/** Entries listed per edge kind and direction; the rest are counted. */
const MAX_PER_KIND = 12;
const MAX_REACHES = 15;
const MAX_AFFECTS = 20;
const MAX_PODS = 8;
/** Edges followed for `reaches`: the ones along which a fault travels to the component (DNS and nodes are listed directly only). */
const FURTHER = new Set(['calls', 'selects', 'routes', 'reads', 'mounts', 'configured-by', 'owns', 'consumes', 'hosted-by', 'serves-tls']);

export function topologyTool(graphs: ClusterGraphs): EvidenceTool<typeof parameters> {
  return {
    name: 'topology',
    description:
      'The dependency graph around one component (the graph triage walked): what it depends on and what depends on it, each edge with how it was found, what a fault in it would hurt, its pods, and its path from the alert.',
    parameters,
    effect: 'read',
    async execute(p, ctx): Promise<ToolResult> {
      const namespace = p.namespace?.trim() || undefined;
      const asked = `${p.kind}/${namespace ?? ''}/${p.name}`;
      let view: GraphView;
      try {
        view = await graphs.get(ctx);
      } catch (err) {
        const citation: Citation = { source: 'kubernetes', ref: `topology ${asked}` };
        const reason = err instanceof GraphUnavailableError ? err.message : `could not read the cluster: ${err instanceof Error ? err.message : String(err)}`;
        return { status: 'error', citation, error: ctx.redactor.redactText(reason).slice(0, 500) };
      }
      const t = view.topology;
      const cite = (id: string): Citation => ({ source: 'kubernetes', ref: `topology ${id} (cluster snapshot ${view.readAt.toISOString()})` });
      const fail = (error: string): ToolResult => ({ status: 'error', citation: cite(asked), error: ctx.redactor.redactText(error).slice(0, 1500) });

      const edgeKinds = new Set<string>([...t.out.values()].flat().map((e) => e.kind));
      const unknownEdges = (p.edges ?? []).filter((e) => !edgeKinds.has(e) && !KNOWN_EDGE_KINDS.has(e));
      if (unknownEdges.length) return fail(`Unknown edge kind(s) ${unknownEdges.map((e) => JSON.stringify(e)).join(', ')}. Edge kinds are: ${[...KNOWN_EDGE_KINDS].join(', ')}. Call topology again with those, or without "edges".`);
      const only = p.edges?.length ? new Set(p.edges) : undefined;

      const kinds = new Set([...t.nodes.values()].map((n) => n.ref.kind));
      const kind = resolveKind(p.kind, kinds);
      if (!kind) return fail(`Unknown kind "${p.kind}". The cluster graph holds: ${[...kinds].sort().join(', ')}, and Pod (answered for its workload). Call topology again with one of these kinds.`);

      const found = locate(t, kind, namespace, p.name);
      if ('error' in found) return fail(found.error);
      if ('missing' in found) {
        return { status: 'no_data', citation: cite(asked), message: ctx.redactor.redactText(missingMessage(t, kind, namespace, p.name, view)).slice(0, 1500) };
      }
      const { id, note } = found;
      const node = t.nodes.get(id)!;

      const dependsOn = grouped(t.outgoing(id), 'to', only);
      const dependents = grouped(t.incoming(id), 'from', only);
      const reaches = further(t, id, p.depth, only);
      const affects = affectedBy(node.ref, t, { limit: MAX_AFFECTS }).map(nodeId);
      const pods = podLines(t, node.ref, node.pods ?? []);
      const fromAlert = alertPath(view, id);
      const data = {
        component: id,
        ...(note ? { note } : {}),
        // The snapshot's time is in the cite.
        graph: view.origin === 'investigation' ? "the investigation's graph" : 'a fresh cluster snapshot (no service catalog edges)',
        ...(pods.length ? { pods } : {}),
        dependsOn,
        dependents,
        ...(reaches.length ? { reaches } : {}),
        ...(affects.length ? { affects } : {}),
        ...(fromAlert ? { fromAlert } : {}),
        ...(view.gaps.length ? { gaps: view.gaps.slice(0, 5) } : {}),
      };
      const bounded = boundedData(data, ctx);
      const counts = (g: Record<string, string[]>) => Object.entries(g).map(([k, v]) => `${k} ${v.length}`).join(', ') || 'none';
      const summary = `${id}: depends on ${counts(dependsOn)}; dependents ${counts(dependents)}${fromAlert?.path ? `; from the alert: ${fromAlert.path}` : ''}`;
      const citation = cite(id);
      return {
        status: 'success',
        citation,
        data: bounded.data,
        // Redacted, then cut: a cut first can leave a secret too short for its detector.
        evidence: [{ kind: 'object', summary: clipRedacted(ctx.redactor.redactText(summary), 400), citation, observedAt: view.readAt }],
        truncated: bounded.truncated,
      };
    },
  };
}

/** `deploy`, `deployments`, `virtualservice`, `VirtualServices` → the kind as the graph spells it. */
function resolveKind(input: string, kinds: Set<string>): string | undefined {
  const k = input.trim();
  if (/^pods?$|^po$/i.test(k)) return 'Pod';
  const builtin = builtinKind(k)?.kind;
  if (builtin) return builtin;
  const lower = k.toLowerCase();
  for (const kind of kinds) {
    const l = kind.toLowerCase();
    if (l === lower || `${l}s` === lower || `${l}es` === lower) return kind;
  }
  return undefined;
}

type Located = { id: string; note?: string } | { missing: true } | { error: string };

function locate(t: Topology, kind: string, namespace: string | undefined, name: string): Located {
  if (kind === 'Pod') {
    const owners = [...t.podOwner.entries()].filter(([key]) => (namespace ? key === `${namespace}/${name}` : key.endsWith(`/${name}`)));
    if (owners.length === 0) return { missing: true };
    const ref = owners[0]![1];
    return { id: nodeId(ref), note: `pod ${owners[0]![0]} belongs to ${nodeId(ref)}: answered for the workload` };
  }
  const exact = t.find(kind, namespace, name);
  if (exact) return { id: nodeId(exact.ref) };
  if (namespace) return { missing: true };
  const same = [...t.nodes.values()].filter((n) => n.ref.kind === kind && n.ref.name === name);
  if (same.length === 1) return { id: nodeId(same[0]!.ref) };
  if (same.length > 1) return { error: `${kind} "${name}" exists in several namespaces: ${same.map((n) => nodeId(n.ref)).join(', ')}. Call topology again with "namespace".` };
  return { missing: true };
}

/** Not in the graph: say so, and name what the model may have meant. */
function missingMessage(t: Topology, kind: string, namespace: string | undefined, name: string, view: GraphView): string {
  const want = `${kind} ${namespace ? `${namespace}/` : ''}${name}`;
  const scored: { id: string; score: number }[] = [];
  for (const n of t.nodes.values()) {
    const id = nodeId(n.ref);
    let score = 0;
    if (n.ref.name === name) score = 3;
    else if (n.ref.name.includes(name) || name.includes(n.ref.name)) score = 2;
    else if (n.ref.name.length > 2 && editDistance(n.ref.name, name) <= 2) score = 2;
    if (score === 0) continue;
    if (n.ref.kind === kind) score += 1;
    if (namespace && n.ref.namespace === namespace) score += 1;
    scored.push({ id, score });
  }
  const close = scored.sort((a, b) => b.score - a.score || a.id.localeCompare(b.id)).slice(0, 8).map((s) => s.id);
  const namespaces = [...t.nodes.values()].filter((n) => n.ref.kind === 'Namespace').map((n) => n.ref.name);
  const inNamespace = namespace
    ? [...t.nodes.values()].filter((n) => n.ref.namespace === namespace && (WORKLOAD_KINDS.has(n.ref.kind) || n.ref.kind === 'Service')).map((n) => nodeId(n.ref)).sort().slice(0, 12)
    : [];
  const lines = [`No ${want} in the cluster graph (snapshot ${view.readAt.toISOString()}).`];
  if (close.length) lines.push(`Did you mean: ${close.join(', ')}?`);
  else if (namespace && !namespaces.includes(namespace)) lines.push(`There is no namespace "${namespace}"; namespaces: ${namespaces.sort().slice(0, 30).join(', ')}.`);
  else if (inNamespace.length) lines.push(`Workloads and Services in ${namespace}: ${inNamespace.join(', ')}.`);
  lines.push('Call topology again with kind, namespace and name exactly as listed (ids read Kind/namespace/name).');
  return lines.join(' ');
}

/** Edges by kind, each as `Kind/ns/name · how it was found`; long lists are cut and counted. */
function grouped(edges: Edge[], end: 'to' | 'from', only: Set<string> | undefined): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const e of edges) {
    if (only && !only.has(e.kind)) continue;
    (out[e.kind] ??= []).push(`${e[end]} · ${e.via}`);
  }
  for (const [k, list] of Object.entries(out)) {
    if (list.length > MAX_PER_KIND) out[k] = [...list.slice(0, MAX_PER_KIND), `… ${list.length - MAX_PER_KIND} more`];
  }
  return out;
}

/** What the component depends on beyond its direct neighbours (breadth-first, shortest path each). */
function further(t: Topology, start: string, depth: number, only: Set<string> | undefined): string[] {
  const seen = new Set([start, ...t.outgoing(start).map((e) => e.to)]);
  let frontier: { id: string; path: string }[] = t.outgoing(start).filter((e) => FURTHER.has(e.kind) && (!only || only.has(e.kind))).map((e) => ({ id: e.to, path: `—${e.kind}→ ${e.to}` }));
  const out: string[] = [];
  for (let d = 1; d < depth && frontier.length && out.length < MAX_REACHES; d++) {
    const next: { id: string; path: string }[] = [];
    for (const f of frontier) {
      for (const e of t.outgoing(f.id)) {
        if (!FURTHER.has(e.kind) || (only && !only.has(e.kind)) || seen.has(e.to)) continue;
        seen.add(e.to);
        const path = `${f.path} —${e.kind}→ ${e.to}`;
        next.push({ id: e.to, path });
        if (out.length < MAX_REACHES) out.push(path);
      }
    }
    frontier = next;
  }
  return out;
}

function podLines(t: Topology, ref: ComponentRef, names: string[]): string[] {
  if (!WORKLOAD_KINDS.has(ref.kind)) return [];
  const byName = new Map(t.snapshot.pods.filter((p) => p.metadata?.namespace === ref.namespace).map((p) => [p.metadata?.name ?? '', p]));
  const lines = names.slice(0, MAX_PODS).map((n) => {
    const p = byName.get(n);
    const statuses = p?.status?.containerStatuses ?? [];
    const ready = (p?.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
    const restarts = statuses.reduce((s, c) => s + (c.restartCount ?? 0), 0);
    const waiting = statuses.find((c) => c.state?.waiting?.reason)?.state?.waiting?.reason;
    return [n, p?.status?.phase ?? '?', ready ? 'ready' : 'not ready', `restarts ${restarts}`, waiting ?? '', p?.spec?.nodeName ? `on ${p.spec.nodeName}` : ''].filter(Boolean).join(' ');
  });
  if (names.length > MAX_PODS) lines.push(`… ${names.length - MAX_PODS} more`);
  return lines;
}

/** The path the walk from the alert's subjects took to the component, or a shortest one found now. */
function alertPath(view: GraphView, id: string): { subjects: string[]; path?: string; hops?: number; reached?: false } | undefined {
  const subjects = view.subjects ?? view.walk?.subjects;
  if (!subjects || subjects.length === 0) return undefined;
  const names = subjects.slice(0, 6).map((s) => `${nodeId(s.ref)} (${s.how})`);
  const reached = view.walk?.reached.get(id);
  if (reached) return { subjects: names, path: pathText(reached.path), hops: reached.hops };
  const found = shortestPath(view.topology, subjects.map((s) => nodeId(s.ref)), id);
  if (found) return { subjects: names, path: found };
  return { subjects: names, reached: false };
}

function pathText(path: PathStep[]): string {
  return path.map((s, i) => (i === 0 || !s.via ? nodeId(s.ref) : `—${s.via.kind} [${s.via.via}]→ ${nodeId(s.ref)}`)).join(' ');
}

/** Breadth-first along dependency edges from any of `starts` to `target` (bounded). */
function shortestPath(t: Topology, starts: string[], target: string): string | undefined {
  if (starts.includes(target)) return target;
  const prev = new Map<string, Edge | null>(starts.map((s) => [s, null]));
  let frontier = [...starts];
  for (let d = 0; d < 8 && frontier.length; d++) {
    const next: string[] = [];
    for (const id of frontier) {
      for (const e of t.outgoing(id)) {
        if (prev.has(e.to)) continue;
        prev.set(e.to, e);
        if (e.to === target) {
          const steps: string[] = [];
          let cur: string = target;
          for (let edge = prev.get(cur); edge; edge = prev.get(cur)) {
            steps.unshift(`—${edge.kind} [${edge.via}]→ ${cur}`);
            cur = edge.from;
          }
          return `${cur} ${steps.join(' ')}`;
        }
        next.push(e.to);
      }
    }
    frontier = next;
  }
  return undefined;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prevDiag = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prevDiag + (a[i - 1] === b[j - 1] ? 0 : 1));
      prevDiag = tmp;
    }
  }
  return row[b.length]!;
}

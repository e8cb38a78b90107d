/**
 * Where the model's graph tools get the cluster graph. Inside an investigation the model loop hands
 * them the graph deterministic triage built from its one snapshot read (`ToolContext.investigation`),
 * so a tool call reads nothing more. Called on its own (no investigation), a tool gets a graph built
 * here through the same reader (`readClusterSnapshot` + `buildTopology`, plus service-graph metrics
 * when Prometheus is configured), kept for a minute and shared by concurrent calls. That fallback has
 * no service catalog `dependsOn` edges.
 */
import type { PrometheusClient } from '../prometheus/client.js';
import type { KubeReader } from '../kubernetes/client.js';
import type { ToolContext } from '../tool.js';
import { buildTopology, type Topology } from '../../topology/graph.js';
import { addServiceGraphEdges } from '../../topology/service-graph.js';
import { readClusterSnapshot } from '../../topology/snapshot.js';
import type { Subject } from '../../topology/subjects.js';
import type { Walk } from '../../topology/walk.js';

export interface GraphView {
  topology: Topology;
  walk?: Walk;
  subjects?: Subject[];
  /** `investigation`: the graph triage built; `snapshot`: read by the tool itself. */
  origin: 'investigation' | 'snapshot';
  readAt: Date;
  /** Lists the snapshot could not read fully (the graph may miss objects of those kinds). */
  gaps: string[];
}

export class GraphUnavailableError extends Error {
  override readonly name = 'GraphUnavailableError';
}

const DEFAULT_TTL_MS = 60_000;

export class ClusterGraphs {
  #cached: { at: number; view: Promise<GraphView> } | undefined;

  constructor(
    private readonly reader: KubeReader | undefined,
    private readonly opts: { prometheus?: PrometheusClient; ttlMs?: number; clock?: () => number } = {},
  ) {}

  /** The investigation's graph when there is one, else a recent snapshot's. */
  async get(ctx: ToolContext): Promise<GraphView> {
    const c = ctx.investigation?.cluster;
    if (c) {
      const snapshot = c.topology.snapshot;
      return { topology: c.topology, ...(c.walk ? { walk: c.walk } : {}), ...(c.subjects ? { subjects: c.subjects } : {}), origin: 'investigation', readAt: snapshot.readAt, gaps: snapshot.gaps };
    }
    if (!this.reader) throw new GraphUnavailableError('Kubernetes is not configured: there is no cluster graph to read');
    const now = (this.opts.clock ?? Date.now)();
    if (!this.#cached || now - this.#cached.at > (this.opts.ttlMs ?? DEFAULT_TTL_MS)) {
      const view = this.#build(ctx);
      const entry = { at: now, view };
      this.#cached = entry;
      // A failed read is not kept: the next call tries again.
      view.catch(() => {
        if (this.#cached === entry) this.#cached = undefined;
      });
    }
    return this.#cached.view;
  }

  async #build(ctx: ToolContext): Promise<GraphView> {
    const snapshot = await readClusterSnapshot(this.reader!, { now: ctx.now, ...(ctx.signal ? { signal: ctx.signal } : {}) });
    const topology = buildTopology(snapshot);
    const gaps = [...snapshot.gaps];
    if (this.opts.prometheus) {
      const onset = ctx.investigation?.onset ?? ctx.now;
      await addServiceGraphEdges(topology, this.opts.prometheus, onset, ctx.now).catch((err: unknown) => gaps.push(`prometheus service graph: ${err instanceof Error ? err.message : String(err)}`));
    }
    return { topology, origin: 'snapshot', readAt: snapshot.readAt, gaps };
  }
}

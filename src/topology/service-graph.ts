/**
 * Edges from service-graph metrics, when Prometheus has them: who called whom in the hour before the
 * onset, as the mesh or the tracing pipeline saw it. Istio's `istio_requests_total` (source-reported),
 * the OpenTelemetry service graph connector's `traces_service_graph_request_total{client, server}`, and
 * Linkerd's outbound `response_total{deployment, dst_deployment}`. Each becomes a `calls` edge from the
 * caller's workload to the callee's Service (or workload when no Service selects it).
 */
import type { PrometheusClient } from '../evidence/prometheus/client.js';
import type { ComponentRef } from '../evidence/types.js';
import { nodeId, WORKLOAD_KINDS, type Topology } from './graph.js';

const QUERIES: { metric: string; query: string; edge: (m: Record<string, string>) => { from?: [string | undefined, string | undefined]; to?: [string | undefined, string | undefined] } }[] = [
  {
    metric: 'istio_requests_total',
    query: 'sum by (source_workload, source_workload_namespace, destination_workload, destination_workload_namespace) (increase(istio_requests_total{reporter="source"}[1h]))',
    edge: (m) => ({ from: [m['source_workload_namespace'], m['source_workload']], to: [m['destination_workload_namespace'], m['destination_workload']] }),
  },
  {
    // Thrift, gRPC over TCP, databases: Istio reports plain TCP traffic in its TCP metrics only.
    metric: 'istio_tcp_connections_opened_total',
    query: 'sum by (source_workload, source_workload_namespace, destination_workload, destination_workload_namespace) (increase(istio_tcp_connections_opened_total{reporter="source"}[1h]))',
    edge: (m) => ({ from: [m['source_workload_namespace'], m['source_workload']], to: [m['destination_workload_namespace'], m['destination_workload']] }),
  },
  {
    metric: 'traces_service_graph_request_total',
    query: 'sum by (client, server) (increase(traces_service_graph_request_total[1h]))',
    edge: (m) => ({ from: [undefined, m['client']], to: [undefined, m['server']] }),
  },
  {
    metric: 'response_total',
    query: 'sum by (namespace, deployment, dst_namespace, dst_deployment) (increase(response_total{direction="outbound"}[1h]))',
    edge: (m) => ({ from: [m['namespace'], m['deployment']], to: [m['dst_namespace'], m['dst_deployment']] }),
  },
];

export async function addServiceGraphEdges(t: Topology, client: PrometheusClient, onset: Date, now: Date): Promise<number> {
  const at = new Date(Math.min(onset.getTime(), now.getTime()));
  let added = 0;
  const results = await Promise.all(QUERIES.map((q) => client.query(q.query, at).then((r) => ({ q, r }), () => undefined)));
  for (const res of results) {
    if (!res || res.r.data.resultType !== 'vector') continue;
    for (const s of res.r.data.result) {
      if (Number(s.value[1]) <= 0) continue;
      const e = res.q.edge(s.metric);
      const from = workloadNamed(t, e.from?.[0], e.from?.[1]);
      const to = workloadNamed(t, e.to?.[0], e.to?.[1]);
      if (!from || !to || nodeId(from) === nodeId(to)) continue;
      const svc = t.incoming(nodeId(to)).find((x) => x.kind === 'selects');
      t.link(from, svc ? t.nodes.get(svc.from)!.ref : to, 'calls', `${res.q.metric} (service graph)`);
      added++;
    }
  }
  return added;
}

/** A workload (or the workload behind a Service) by name; OpenTelemetry's `service.name` is usually the workload's. */
function workloadNamed(t: Topology, ns: string | undefined, name: string | undefined): ComponentRef | undefined {
  if (!name) return undefined;
  for (const node of t.nodes.values()) {
    if (WORKLOAD_KINDS.has(node.ref.kind) && node.ref.name === name && (!ns || node.ref.namespace === ns)) return node.ref;
  }
  for (const node of t.nodes.values()) {
    if (node.ref.kind === 'Service' && node.ref.name === name && (!ns || node.ref.namespace === ns)) {
      const sel = t.outgoing(nodeId(node.ref)).find((e) => e.kind === 'selects');
      return sel ? t.nodes.get(sel.to)!.ref : undefined;
    }
  }
  return undefined;
}

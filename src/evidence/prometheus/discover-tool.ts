/**
 * `prometheus_discover`: which series Prometheus has for a workload, read the way deterministic
 * triage reads them (`discoverMetrics`: `/api/v1/series` with the request, pool and data-store metric
 * names of every convention, matched by namespace, Service, job and app labels). The model gets the
 * recognised convention, the standard query ids with their exact PromQL in that convention's names
 * and labels, and the metric names seen, then runs the queries with `prometheus_query_range`.
 * Nothing is evaluated here, so the queries are offered, never cited as evidence.
 */
import { z } from 'zod';
import { nodeId, WORKLOAD_KINDS } from '../../topology/graph.js';
import type { ClusterGraphs } from '../topology/graph-source.js';
import { boundedData, errorResult, type EvidenceTool, type ToolContext, type ToolResult } from '../tool.js';
import type { Citation } from '../types.js';
import type { PrometheusClient } from './client.js';
import { discoverMetrics, discoveryMatchers, type WorkloadIdentity } from './discover.js';

const isoTime = z.iso.datetime({ offset: true });

const parameters = z.object({
  namespace: z.string().min(1).describe('Namespace.'),
  name: z.string().min(1).describe('Workload (or a Service: the workload it selects).'),
  start: isoTime.optional().describe('Default: an hour before the onset.'),
  end: isoTime.optional().describe('Default: now.'),
});

const MAX_NAMES = 60;
/** Series a workload's identity is looked up by: enough to tell its Services, never its whole pod list. */
const MAX_PODS = 50;

export function prometheusDiscoverTool(client: PrometheusClient, graphs?: ClusterGraphs): EvidenceTool<typeof parameters> {
  return {
    name: 'prometheus_discover',
    description:
      'A workload\'s request, connection-pool and data-store series: its metric convention and the exact PromQL of its standard queries (error_ratio, request_rate, latency_p99, db_pool_saturation, store_*), to run with prometheus_query_range.',
    parameters,
    effect: 'read',
    async execute(p, ctx): Promise<ToolResult> {
      const onset = ctx.investigation?.onset;
      const end = p.end ? new Date(p.end) : ctx.now;
      const start = p.start ? new Date(p.start) : new Date(Math.min(onset?.getTime() ?? end.getTime(), end.getTime()) - 60 * 60_000);
      const range = { from: start, to: end };
      const { identity, note } = await identify(graphs, p.namespace, p.name, ctx);
      const citation = cite(client, identity, range);
      if (start >= end) return { status: 'error', citation, error: 'start must be before end; call prometheus_discover again without start/end, or with start < end' };
      try {
        const found = await discoverMetrics(client, identity, range, ctx.signal);
        if (found.names.length === 0) {
          return {
            status: 'no_data',
            citation,
            message: `No request, pool or data-store series for ${p.namespace}/${p.name}${identity.services.length ? ` (or its Services ${identity.services.join(', ')})` : ''} between ${start.toISOString()} and ${end.toISOString()}. ${note ? `${note} ` : ''}Container metrics may still exist: try prometheus_query with container_memory_working_set_bytes or kube_pod_container_status_restarts_total{namespace="${p.namespace}"}.`,
          };
        }
        const queries = found.entries.map((e) => ({ id: e.id, title: e.title, unit: e.unit, badWhen: e.badWhen, ...(e.threshold !== undefined ? { threshold: e.threshold } : {}), promql: e.template }));
        const data = {
          workload: `${p.namespace}/${identity.name}`,
          ...(note ? { note } : {}),
          ...(identity.services.length ? { services: identity.services } : {}),
          convention: found.convention ?? 'none recognised (the names below exist, but no request counter with a status label)',
          ...(found.selector ? { selector: found.selector } : {}),
          queries,
          metricNames: found.names.slice(0, MAX_NAMES),
          ...(found.names.length > MAX_NAMES ? { moreNames: found.names.length - MAX_NAMES } : {}),
          // The range is the result's own (its envelope says it).
          next: queries.length
            ? `Run one with prometheus_query_range {query: <promql>${onset ? `, onset: "${onset.toISOString()}"` : ''}}; cite that result for a value.`
            : 'No standard query fits these names: write PromQL over the metricNames with prometheus_query_range.',
        };
        const bounded = boundedData(data, ctx);
        const summary = `${found.names.length} metric name(s) for ${p.namespace}/${identity.name}; convention ${found.convention ?? 'none'}; queries ${queries.map((q) => q.id).join(', ') || 'none'}`;
        return { status: 'success', citation, data: bounded.data, evidence: [{ kind: 'metric', summary: ctx.redactor.redactText(summary), citation, observedAt: end }], truncated: bounded.truncated };
      } catch (error) {
        return errorResult(citation, error, ctx.redactor);
      }
    },
  };
}

/** The workload's Services and pods from the cluster graph; a Service name is resolved to the workload it selects. */
async function identify(graphs: ClusterGraphs | undefined, namespace: string, name: string, ctx: ToolContext): Promise<{ identity: WorkloadIdentity; note?: string }> {
  const bare: WorkloadIdentity = { namespace, name, services: [], pods: [] };
  if (!graphs) return { identity: bare };
  let t;
  try {
    t = (await graphs.get(ctx)).topology;
  } catch {
    return { identity: bare, note: 'The cluster graph was not readable: matched by the name only.' };
  }
  const nodes = [...t.nodes.values()];
  let workload = nodes.find((n) => WORKLOAD_KINDS.has(n.ref.kind) && n.ref.namespace === namespace && n.ref.name === name);
  let note: string | undefined;
  if (!workload) {
    const svc = t.find('Service', namespace, name);
    const selected = svc ? t.outgoing(nodeId(svc.ref)).find((e) => e.kind === 'selects') : undefined;
    workload = selected ? t.nodes.get(selected.to) : undefined;
    if (workload) note = `Service ${namespace}/${name} selects ${nodeId(workload.ref)}: discovered for that workload.`;
    else note = `No workload ${namespace}/${name} in the cluster graph: matched by the name only.`;
  }
  if (!workload) return { identity: bare, note };
  const id = nodeId(workload.ref);
  const services = t.incoming(id).filter((e) => e.kind === 'selects' && e.from.startsWith('Service/')).map((e) => t.nodes.get(e.from)!.ref.name);
  return { identity: { namespace, name: workload.ref.name, services: [...new Set(services)], pods: (workload.pods ?? []).slice(0, MAX_PODS) }, ...(note ? { note } : {}) };
}

/** The discovery as a re-runnable `/api/v1/series` request (the matchers are long: the ref names what they select). */
function cite(client: PrometheusClient, w: WorkloadIdentity, range: { from: Date; to: Date }): Citation {
  const alt = [...new Set([w.name, ...w.services])].join('|');
  const ref = `series discovery {namespace="${w.namespace}"} {service_name|job|application=~"${alt}"}`;
  const base = client.publicUrl;
  const url = base
    ? `${base}/api/v1/series?${discoveryMatchers(w).map((m) => `match[]=${encodeURIComponent(m)}`).join('&')}&start=${range.from.getTime() / 1000}&end=${range.to.getTime() / 1000}`
    : undefined;
  return { source: 'prometheus', ref, range, ...(url ? { url } : {}) };
}

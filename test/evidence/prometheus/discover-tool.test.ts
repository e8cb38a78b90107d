/**
 * `prometheus_discover` against a real Prometheus (Debian's) loaded with the deploy-before-error-spike
 * scenario's series, and the scenario's cluster on the fake Kubernetes API server for the workload's
 * Services and pods. The PromQL it offers is then evaluated by `prometheus_query_range`, as the model
 * would do next.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeReader } from '../../../src/evidence/kubernetes/client.js';
import { PrometheusClient } from '../../../src/evidence/prometheus/client.js';
import { prometheusDiscoverTool } from '../../../src/evidence/prometheus/discover-tool.js';
import { prometheusQueryRangeTool } from '../../../src/evidence/prometheus/tools.js';
import type { ToolContext, ToolResult } from '../../../src/evidence/tool.js';
import { ClusterGraphs } from '../../../src/evidence/topology/graph-source.js';
import { createRedactor } from '../../../src/redact/index.js';
import { prometheusSkipReason } from '../../support/prometheus.js';
import { READER_TOKEN, startWorld, type World } from '../../support/world.js';

const skip = prometheusSkipReason();
if (skip) console.warn(`[prometheus_discover] skipped: ${skip}`);
const SCENARIO = fileURLToPath(new URL('../../scenarios/deploy-before-error-spike/', import.meta.url));

let world: World;
let client: PrometheusClient;
let graphs: ClusterGraphs;
beforeAll(async () => {
  if (skip) return;
  world = await startWorld({ scenarioDir: join(SCENARIO), startApp: false });
  client = new PrometheusClient({ baseUrl: world.prometheus!.url, publicUrl: 'https://prometheus.example.com' });
  graphs = new ClusterGraphs(new KubeReader(world.kube.kubeConfigFor(READER_TOKEN)));
}, 60_000);
afterAll(async () => {
  await world?.close();
});

const ctx = (): ToolContext => ({ redactor: createRedactor(), now: new Date(), investigation: { onset: world.scenario.onset } });

function ok(r: ToolResult): Record<string, any> {
  if (r.status !== 'success') throw new Error(`expected success, got ${JSON.stringify(r)}`);
  return r.data as Record<string, any>;
}

describe.skipIf(!!skip)('prometheus_discover', () => {
  it("names the workload's convention and the exact PromQL of its standard queries, which then evaluate", async () => {
    const tool = prometheusDiscoverTool(client, graphs);
    const r = await tool.execute(tool.parameters.parse({ namespace: 'shop', name: 'cart' }), ctx());
    const d = ok(r);
    expect(d['convention']).toBe('prometheus-client');
    expect(d['services']).toEqual(['cart']);
    expect(d['selector']).toBe('namespace="shop",service="cart"');
    const byId = Object.fromEntries((d['queries'] as { id: string; promql: string }[]).map((q) => [q.id, q.promql]));
    // The convention's own names and labels (the exact form is discoverMetrics'; it is evaluated below).
    expect(byId['error_ratio']).toContain('rate(http_requests_total{namespace="shop",service="cart",code=~"5.."}[1m])');
    expect(byId['error_ratio']).toContain('/ sum(rate(http_requests_total{namespace="shop",service="cart"}[1m]))');
    expect(byId['request_rate']).toBe('sum(rate(http_requests_total{namespace="shop",service="cart"}[1m]))');
    expect(d['metricNames']).toContain('http_requests_total');
    expect(d['next']).toContain(`onset: "${world.scenario.onset.toISOString()}"`);
    // Cited as the series request (re-runnable from the link), over the hour before the onset until now.
    if (r.status !== 'success') return;
    expect(r.citation.ref).toBe('series discovery {namespace="shop"} {service_name|job|application=~"cart"}');
    expect(r.citation.url).toMatch(/^https:\/\/prometheus\.example\.com\/api\/v1\/series\?match\[\]=/);
    expect(r.citation.range!.from.getTime()).toBe(world.scenario.onset.getTime() - 3600_000);
    // Nothing was evaluated: the offered queries are not evidence lines of their own.
    expect(r.evidence.map((e) => e.citation.ref)).toEqual([r.citation.ref]);

    const range = prometheusQueryRangeTool(client);
    const end = new Date();
    const evaluated = await range.execute(range.parameters.parse({ query: byId['error_ratio'], start: new Date(end.getTime() - 3600_000).toISOString(), end: end.toISOString(), onset: world.scenario.onset.toISOString() }), ctx());
    const series = ok(evaluated)['series'] as { last: number; baseline?: { median: number } }[];
    // ~0.2% before the deploy, ~35% after.
    expect(series[0]!.last).toBeGreaterThan(0.25);
    expect(series[0]!.baseline!.median).toBeLessThan(0.01);
  });

  it('works by the name alone without a cluster graph, and says what to try when nothing matches', async () => {
    const bare = prometheusDiscoverTool(client);
    expect(ok(await bare.execute(bare.parameters.parse({ namespace: 'shop', name: 'cart' }), ctx()))['convention']).toBe('prometheus-client');
    const tool = prometheusDiscoverTool(client, graphs);
    const none = await tool.execute(tool.parameters.parse({ namespace: 'shop', name: 'checkout' }), ctx());
    expect(none.status).toBe('no_data');
    if (none.status !== 'no_data') return;
    expect(none.message).toContain('No workload shop/checkout in the cluster graph: matched by the name only.');
    expect(none.message).toContain('try prometheus_query with container_memory_working_set_bytes');
  });

  it('refuses an empty range with what to send instead', async () => {
    const tool = prometheusDiscoverTool(client, graphs);
    const r = await tool.execute(tool.parameters.parse({ namespace: 'shop', name: 'cart', start: '2026-12-01T10:00:00Z', end: '2026-12-01T09:00:00Z' }), ctx());
    expect(r.status === 'error' && r.error).toContain('call prometheus_discover again without start/end');
  });
});

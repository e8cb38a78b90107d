/**
 * Vigil's PromQL evaluated by a real Prometheus (Debian's 2.42) loaded with a scenario-like world:
 * checkout's 5xx ratio jumps from 0.1% to 100% at the onset, its latency stays steady, and an unrelated
 * payments service is noisy throughout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_RATIO, renderPromQL } from '../../../src/evidence/prometheus/catalog.js';
import { PrometheusClient, PrometheusError } from '../../../src/evidence/prometheus/client.js';
import { metricEvidence } from '../../../src/evidence/prometheus/evidence.js';
import { gatherMetrics } from '../../../src/evidence/prometheus/gather.js';
import { prometheusQueryRangeTool, prometheusQueryTool } from '../../../src/evidence/prometheus/tools.js';
import type { MetricsEvidence, SeriesSummary } from '../../../src/evidence/prometheus/types.js';
import type { ToolContext } from '../../../src/evidence/tool.js';
import { createRedactor } from '../../../src/redact/index.js';
import { buildSeries, prometheusSkipReason, startPrometheus, type RunningPrometheus, type SeriesSpec } from '../../support/prometheus.js';

const skip = prometheusSkipReason();
if (skip) console.warn(`[prometheus-live] skipped: ${skip}`);
const STEP_MS = 15_000;
// Onset on the 15 s grid, far enough back that onset + 5 m is already in the past for the server's clock.
const onset = new Date(Math.floor(Date.now() / STEP_MS) * STEP_MS - 10 * 60_000);
const GITHUB_TOKEN = `ghp_${'a1B2'.repeat(9)}`;

function spec(metric: string, labels: Record<string, string>, type: 'counter' | 'gauge', segments: SeriesSpec['segments'], extra: Partial<SeriesSpec> = {}): SeriesSpec {
  return { metric, labels, type, from: '@-2h', to: '@+5m', step: '15s', segments, ...extra };
}

const checkout = { namespace: 'shop', service: 'checkout' };
const payments = { namespace: 'payments', service: 'payments' };
const pod = { namespace: 'shop', pod: 'checkout-7d9f8b6c5-x2x9k', container: 'checkout' };
const world: SeriesSpec[] = [
  spec('http_requests_total', { ...checkout, code: '200' }, 'counter', [{ until: '@0', rate: 99.9 }, { until: '@+5m', rate: 0 }]),
  spec('http_requests_total', { ...checkout, code: '503' }, 'counter', [{ until: '@0', rate: 0.1 }, { until: '@+5m', rate: 100 }]),
  ...(
    [
      ['0.1', 50],
      ['0.25', 90],
      ['0.5', 99],
      ['1', 100],
      ['+Inf', 100],
    ] as const
  ).map(([le, rate]) => spec('http_request_duration_seconds_bucket', { ...checkout, le }, 'counter', [{ until: '@+5m', rate }])),
  spec('kube_pod_container_status_restarts_total', pod, 'counter', [{ until: '@+5m', rate: 0 }], { start: 2 }),
  spec('container_memory_working_set_bytes', pod, 'gauge', [{ until: '@+5m', value: 200e6 }], { noise: 0.02 }),
  spec('kube_pod_container_resource_limits', { ...pod, resource: 'memory', unit: 'byte' }, 'gauge', [{ until: '@+5m', value: 536_870_912 }]),
  spec('container_cpu_cfs_periods_total', pod, 'counter', [{ until: '@+5m', rate: 10 }]),
  spec('container_cpu_cfs_throttled_periods_total', pod, 'counter', [{ until: '@+5m', rate: 0.5 }]),
  // The unrelated, noisy neighbour.
  spec('http_requests_total', { ...payments, code: '200' }, 'counter', [{ until: '@+5m', rate: 50 }], { noise: 0.3 }),
  spec('http_requests_total', { ...payments, code: '500' }, 'counter', [{ until: '@+5m', rate: 0.5 }], { noise: 0.5 }),
  // A label carrying a secret, to see the tools redact what Prometheus returns.
  spec('build_info', { ...checkout, commit_token: GITHUB_TOKEN }, 'gauge', [{ until: '@+5m', value: 1 }]),
];

function ctx(): ToolContext {
  return { redactor: createRedactor({ salt: 'prometheus-test' }), now: new Date(onset.getTime() + 5 * 60_000) };
}

function only(evidence: MetricsEvidence, id: string): { status: string; series: SeriesSummary[]; query: string; error?: string } {
  const found = evidence.summaries.filter((s) => s.id === id);
  expect(found, id).toHaveLength(1);
  return found[0]!;
}

describe.skipIf(skip !== undefined)(`real Prometheus${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let prometheus: RunningPrometheus;
  let client: PrometheusClient;

  beforeAll(async () => {
    prometheus = await startPrometheus({ series: world.map((s) => buildSeries(s, onset)) });
    console.info(`Prometheus built blocks and was ready in ${prometheus.startupMs} ms`);
    client = new PrometheusClient({ baseUrl: prometheus.url, publicUrl: prometheus.url, retries: 0 });
  });
  afterAll(async () => {
    await prometheus?.stop();
  });

  describe('gatherMetrics', () => {
    let evidence: MetricsEvidence;
    beforeAll(async () => {
      evidence = await gatherMetrics(client, { namespace: 'shop', workload: 'checkout' }, onset, {
        dependencies: [{ namespace: 'payments', workload: 'payments' }],
      });
    });

    it('finds the error ratio leaving its baseline within one step of the onset', () => {
      const ratio = only(evidence, 'error_ratio');
      expect(ratio.status).toBe('success');
      expect(ratio.series).toHaveLength(1);
      const s = ratio.series[0]!;
      expect(Math.abs(s.deviationStart!.getTime() - onset.getTime())).toBeLessThanOrEqual(STEP_MS);
      expect(s.deviationDirection).toBe('up');
      expect(s.baseline?.median).toBeCloseTo(0.001, 5);
      expect(s.last).toBeCloseTo(1, 5);
      // rate()[1m] spreads the jump over a minute; the level shift is placed inside it.
      expect(s.changePoints).toHaveLength(1);
      expect(s.changePoints[0]!.at.getTime() - onset.getTime()).toBeGreaterThanOrEqual(0);
      expect(s.changePoints[0]!.at.getTime() - onset.getTime()).toBeLessThanOrEqual(60_000);
      expect(s.changePoints[0]!.after).toBeCloseTo(1, 5);
      const [line] = metricEvidence(evidence.summaries.find((m) => m.id === 'error_ratio')!);
      expect(line).toMatchObject({ kind: 'metric', citation: { source: 'prometheus' } });
      expect(line!.summary).toMatch(/^HTTP 5xx ratio rose from 0\.1% to 100% starting /);
    });

    it('reports no deviation for the steady series', () => {
      for (const id of ['latency_p99', 'request_rate', 'container_restarts', 'memory_working_set', 'memory_limit_ratio', 'cpu_throttling']) {
        const m = only(evidence, id);
        expect(m.status, `${id}: ${m.error ?? ''}`).toBe('success');
        for (const s of m.series) {
          expect(s.deviationStart, id).toBeUndefined();
          expect(s.changePoints, id).toEqual([]);
        }
      }
      expect(only(evidence, 'latency_p99').series[0]!.last).toBeCloseTo(0.5, 2);
      expect(only(evidence, 'memory_limit_ratio').series[0]!.mean).toBeCloseTo(200e6 / 536_870_912, 1);
      expect(only(evidence, 'cpu_throttling').series[0]!.last).toBeCloseTo(0.05, 3);
    });

    it('reports the noisy unrelated dependency as steady, and missing metrics as no_data', () => {
      const dep = only(evidence, 'dependency_error_ratio');
      expect(dep.status).toBe('success');
      expect(dep.series[0]!.deviationStart).toBeUndefined();
      expect(dep.series[0]!.mean).toBeGreaterThan(0.003);
      expect(only(evidence, 'dependency_latency_p99').status).toBe('no_data');
      expect(only(evidence, 'db_pool_saturation').status).toBe('no_data');
    });

    it('cites the exact PromQL, the range, and a graph link that Prometheus serves', async () => {
      const ratio = evidence.summaries.find((s) => s.id === 'error_ratio')!;
      expect(ratio.citation).toMatchObject({ source: 'prometheus', ref: ratio.query });
      expect(ratio.query).toContain('namespace="shop",service="checkout",code=~"5.."');
      expect(ratio.range.to.getTime() - ratio.range.from.getTime()).toBe(65 * 60_000);
      expect(ratio.citation.url).toMatch(new RegExp(`^${prometheus.url}/graph\\?g0\\.expr=`));
      const page = await fetch(ratio.citation.url!);
      expect(page.status).toBe(200);
    });

    it('keeps noisy neighbours out of the target and reads them as steady on their own', async () => {
      const own = await gatherMetrics(client, { namespace: 'payments', workload: 'payments' }, onset);
      const rate = only(own, 'request_rate');
      expect(rate.status).toBe('success');
      expect(rate.series[0]!.mean).toBeGreaterThan(40);
      expect(rate.series[0]!.deviationStart).toBeUndefined();
      expect(only(own, 'error_ratio').series[0]!.deviationStart).toBeUndefined();
    });
  });

  describe('client', () => {
    it('surfaces Prometheus errors typed, with the HTTP status', async () => {
      const error = await client.query('sum(rate(http_requests_total[1m]', onset).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PrometheusError);
      expect(error).toMatchObject({ errorType: 'bad_data', status: 400 });
      expect((error as Error).message).toContain('unclosed left parenthesis');
    });

    it('keeps hostile label values inside their string literals (the query parses, matches nothing)', async () => {
      const query = renderPromQL(ERROR_RATIO.template, { namespace: 'shop"} or vector(1) # \\', workload: 'check.out' });
      const out = await client.query(query, onset);
      expect(out.data).toEqual({ resultType: 'vector', result: [] });
    });

    it('parses scalars and NaN values as Prometheus sends them', async () => {
      const scalar = await client.query('scalar(vector(1) / 0)', onset);
      expect(scalar.data).toMatchObject({ resultType: 'scalar', result: [expect.any(Number), '+Inf'] });
      const nan = await client.query('vector(0) / 0', onset);
      expect(nan.data).toMatchObject({ resultType: 'vector', result: [{ value: [expect.any(Number), 'NaN'] }] });
    });
  });

  describe('tools', () => {
    it('prometheus_query returns values with labels, redacted, and a citation', async () => {
      const tool = prometheusQueryTool(client);
      const result = await tool.execute(
        { query: 'sum by (code) (rate(http_requests_total{namespace="shop",service="checkout"}[1m]))', time: new Date(onset.getTime() + 2 * 60_000).toISOString() },
        ctx(),
      );
      expect(result.status).toBe('success');
      if (result.status !== 'success') return;
      const data = result.data as { resultType: string; result: { metric: Record<string, string>; value: number }[] };
      expect(data.resultType).toBe('vector');
      expect(data.result.find((r) => r.metric.code === '503')!.value).toBeCloseTo(100, 5);
      expect(result.citation.ref).toContain('sum by (code)');
      expect(result.evidence.length).toBeGreaterThan(0);

      const secret = await tool.execute({ query: 'build_info' }, { ...ctx(), now: onset });
      expect(secret.status).toBe('success');
      expect(JSON.stringify(secret)).not.toContain(GITHUB_TOKEN);
      expect(JSON.stringify(secret)).toContain('[REDACTED:');
    });

    it('prometheus_query gives no_data for nothing matched and error with Prometheus\' message for bad PromQL', async () => {
      const tool = prometheusQueryTool(client);
      const none = await tool.execute({ query: 'http_requests_total{service="nope"}', time: onset.toISOString() }, ctx());
      expect(none.status).toBe('no_data');
      const bad = await tool.execute({ query: 'sum(rate(http_requests_total[1m]' }, ctx());
      expect(bad).toMatchObject({ status: 'error', citation: { source: 'prometheus', ref: 'sum(rate(http_requests_total[1m]' } });
      if (bad.status === 'error') expect(bad.error).toContain('parse error: unclosed left parenthesis');
    });

    it('prometheus_query_range summarises (no raw samples) and finds the deviation', async () => {
      const tool = prometheusQueryRangeTool(client);
      const query =
        'sum(rate(http_requests_total{namespace="shop",service="checkout",code=~"5.."}[1m])) / sum(rate(http_requests_total{namespace="shop",service="checkout"}[1m]))';
      const result = await tool.execute(
        {
          query,
          start: new Date(onset.getTime() - 60 * 60_000).toISOString(),
          end: new Date(onset.getTime() + 5 * 60_000).toISOString(),
          onset: onset.toISOString(),
        },
        ctx(),
      );
      expect(result.status).toBe('success');
      if (result.status !== 'success') return;
      const json = JSON.stringify(result.data);
      expect(json).not.toContain('"values"');
      expect(Buffer.byteLength(json)).toBeLessThan(16 * 1024);
      const data = result.data as { stepSeconds: number; series: { points: number; deviationStart: string }[] };
      expect(data.stepSeconds).toBe(15);
      expect(data.series[0]!.points).toBe(261);
      expect(Math.abs(new Date(data.series[0]!.deviationStart).getTime() - onset.getTime())).toBeLessThanOrEqual(STEP_MS);
      expect(result.evidence[0]!.summary).toMatch(/^series rose from 0\.001 to 1 starting /);
      expect(result.citation).toMatchObject({ source: 'prometheus', ref: query });
    });

    it('prometheus_query_range gives no_data and error as data, never throws', async () => {
      const tool = prometheusQueryRangeTool(client);
      const end = new Date(onset.getTime() + 5 * 60_000).toISOString();
      expect((await tool.execute({ query: 'up{job="nothing"}', end }, ctx())).status).toBe('no_data');
      const bad = await tool.execute({ query: 'rate(http_requests_total)', end }, ctx());
      expect(bad.status).toBe('error');
      if (bad.status === 'error') expect(bad.error).toMatch(/expected type range vector/);
    });
  });
});

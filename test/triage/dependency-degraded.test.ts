import { describe, expect, it } from 'vitest';
import type { RankedChange } from '../../src/changes/types.js';
import type { KubeEvidence } from '../../src/evidence/kubernetes/gather.js';
import { emptySurroundings } from '../../src/evidence/kubernetes/surroundings.js';
import type { LogsEvidence } from '../../src/evidence/loki/types.js';
import type { MetricSummary, SeriesSummary } from '../../src/evidence/prometheus/types.js';
import type { TriageInput } from '../../src/triage/analyzer.js';
import { dependencyDegraded, parsePoolCounts } from '../../src/triage/analyzers/dependency-degraded.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const at = (min: number) => new Date(ONSET.getTime() + min * 60_000);

function kube(over: Partial<KubeEvidence> = {}): KubeEvidence {
  return {
    ...emptySurroundings(),
    onset: ONSET,
    target: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
    replicaSets: [15, 16].map((rev) => ({ metadata: { name: `checkout-${rev}`, annotations: { 'deployment.kubernetes.io/revision': String(rev) } } })),
    pods: [],
    services: [{ service: { metadata: { name: 'checkout' } } }],
    events: [],
    related: [],
    dependents: [{ kind: 'Deployment', name: 'storefront', via: 'env CHECKOUT_URL' }],
    unhealthyPods: [],
    warningEvents: [],
    gaps: [],
    server: 'https://k8s.test',
    ...over,
  };
}

function series(startMin: number | undefined, before: number, after: number, metric: Record<string, string> = {}): SeriesSummary {
  return {
    metric,
    points: 240,
    nonFinite: 0,
    from: at(-60),
    to: ONSET,
    first: before,
    last: after,
    min: before,
    max: startMin === undefined ? before : after,
    mean: before,
    baseline: { median: before, mad: before / 20 },
    changePoints: startMin === undefined ? [] : [{ at: at(startMin), before, after }],
    ...(startMin === undefined ? {} : { deviationStart: at(startMin), deviationDirection: 'up' as const }),
  };
}

function summary(id: string, title: string, unit: string, s: SeriesSummary[]): MetricSummary {
  return { id, title, unit, badWhen: 'high', query: `q(${id})`, range: { from: at(-60), to: ONSET }, stepSeconds: 15, status: 'success', series: s, citation: { source: 'prometheus', ref: `q(${id})` } };
}

const depLatency = (startMin: number) => summary('dependency_latency_p99', 'Dependency HTTP latency p99 (payments/payments-api)', 'seconds', [series(startMin, 0.04, 4)]);
const targetErrors = (startMin: number) => summary('error_ratio', 'HTTP 5xx ratio', 'ratio', [series(startMin, 0.003, 0.45)]);

function logs(lines: { template: string; example: string; first: Date }[]): LogsEvidence {
  return {
    summaries: [
      {
        selector: '{namespace="shop", app="checkout"}',
        query: '{namespace="shop", app="checkout"}',
        range: { from: at(-30), to: ONSET },
        status: 'success',
        totalLines: 500,
        sampled: false,
        patterns: [],
        errorPatterns: lines.map((l) => ({ ...l, count: 40, level: 'error' as const })),
        newSinceOnset: lines.map((l) => ({ ...l, count: 40, level: 'error' as const, change: { kind: 'new' as const, countBefore: 0, countAfter: 40, perMinuteBefore: 0, perMinuteAfter: 20 } })),
        citation: { source: 'loki', ref: '{namespace="shop", app="checkout"}' },
      },
    ],
  };
}

const timeoutLog = logs([{ template: 'level=error msg="payment intent failed" upstream=payments-api.payments.svc:<NUM> error="context deadline exceeded"', example: 'level=error msg="payment intent failed" upstream=payments-api.payments.svc:8080 error="context deadline exceeded"', first: at(-1.8) }]);

const oldDeploy: RankedChange = {
  at: at(-180),
  actor: 'deployment-controller',
  kind: 'image',
  target: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
  source: 'kubernetes',
  summary: 'rollout to revision 16: checkout=registry/checkout:1.18.0',
  citation: { source: 'kubernetes', ref: 'apis/apps/v1/namespaces/shop/replicasets/checkout-16' },
  score: 0.1,
  why: [],
};

function input(over: Partial<TriageInput> = {}): TriageInput {
  return {
    alert: { labels: {}, labelValues: [] } as unknown as TriageInput['alert'],
    onset: ONSET,
    kube: kube(),
    changes: [],
    service: { name: 'checkout', namespace: 'shop', dependsOn: ['payments-api', 'checkout-db'], flags: [] },
    ...over,
  };
}

describe('dependency-degraded: downstream service', () => {
  it('localises to the dependency that degraded first, corroborated by logs naming it; the old own deploy is noted', () => {
    const [f] = dependencyDegraded.analyze(input({ metrics: { summaries: [depLatency(-2), targetErrors(-1.5)] }, logs: timeoutLog, changes: [oldDeploy] }));
    expect(f).toMatchObject({
      status: 'supported',
      component: { kind: 'Service', namespace: 'payments', name: 'payments-api' },
      facts: { dependency: 'payments-api', metric: 'dependency_latency_p99', before: 0.04, after: 4 },
    });
    expect(f!.confidence).toBeGreaterThanOrEqual(0.85);
    expect(f!.affected).toEqual(expect.arrayContaining([{ kind: 'Service', namespace: 'payments', name: 'payments-api' }, { kind: 'Deployment', namespace: 'shop', name: 'checkout' }]));
    expect(f!.supporting.some((e) => /own last deploy/.test(e.summary))).toBe(true);
    expect(f!.mitigation).toBeUndefined();
  });

  it('rules out a dependency that degraded only after the target (it follows)', () => {
    const [f] = dependencyDegraded.analyze(input({ metrics: { summaries: [depLatency(-1), targetErrors(-6)] } }));
    expect(f).toMatchObject({ status: 'ruled_out' });
    expect(f!.reason).toMatch(/AFTER checkout's symptoms/);
  });

  it('says nothing when no dependency moved and the pool is fine', () => {
    const flat = summary('dependency_latency_p99', 'Dependency HTTP latency p99 (payments/payments-api)', 'seconds', [series(undefined, 0.04, 0.04)]);
    const pool = summary('db_pool_saturation', 'DB connection pool in use / max', 'ratio', [series(undefined, 0.2, 0.2, { pool_name: 'checkout-db' })]);
    expect(dependencyDegraded.analyze(input({ metrics: { summaries: [flat, pool, targetErrors(-2)] } }))).toEqual([]);
  });
});

describe('dependency-degraded: DB pool exhaustion', () => {
  const pool = (startMin: number) => summary('db_pool_saturation', 'DB connection pool in use / max', 'ratio', [{ ...series(startMin, 0.2, 1, { pool_name: 'checkout-db' }), changePoints: [{ at: at(startMin), before: 0.2, after: 0.45 }, { at: at(-9), before: 0.75, after: 1 }] }]);
  const poolLog = logs([{ template: 'level=error msg="timeout acquiring connection from pool" pool=checkout-db used=<NUM> max=<NUM>', example: 'level=error msg="timeout acquiring connection from pool" pool=checkout-db used=20 max=20 waiting=31', first: at(-8.5) }]);

  it('after a deploy: the target\'s pool, the DB as context, rollout undo to the previous revision', () => {
    const deploy = { ...oldDeploy, at: at(-25) };
    const [f] = dependencyDegraded.analyze(input({ metrics: { summaries: [pool(-24)] }, logs: poolLog, changes: [deploy] }));
    expect(f).toMatchObject({
      status: 'supported',
      component: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
      facts: { dependency: 'checkout-db', metric: 'db_pool_saturation', poolUsed: 20, poolMax: 20, deployRevision: 16, saturatedAt: at(-9).toISOString() },
      mitigation: { action: 'rollout_undo', params: { toRevision: 15 } },
    });
    expect(f!.confidence).toBeGreaterThanOrEqual(0.9);
  });

  it('without a deploy: a restart to release leaked connections; with a slow DB: no mitigation', () => {
    const [restart] = dependencyDegraded.analyze(input({ metrics: { summaries: [pool(-24)] }, logs: poolLog }));
    expect(restart!.mitigation).toMatchObject({ action: 'rollout_restart' });
    const slowDb = summary('dependency_latency_p99', 'Dependency HTTP latency p99 (shop/checkout-db)', 'seconds', [series(-26, 0.005, 0.8)]);
    const [db] = dependencyDegraded.analyze(input({ metrics: { summaries: [pool(-24), slowDb] }, logs: poolLog }));
    expect(db!.mitigation).toBeUndefined();
    expect(db!.mechanism).toMatch(/fix is on the database side/);
  });

  it('parses pool counts from common pool log shapes', () => {
    expect(parsePoolCounts('pool=x used=20 max=20 waiting=3')).toEqual({ used: 20, max: 20 });
    expect(parsePoolCounts('HikariPool-1 - Connection is not available, request timed out after 30000ms (total=10, active=10, idle=0, waiting=4)')).toEqual({ used: 10, max: 10 });
    expect(parsePoolCounts('nothing here')).toBeUndefined();
  });
});

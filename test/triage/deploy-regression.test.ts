import { describe, expect, it } from 'vitest';
import type { RankedChange } from '../../src/changes/types.js';
import type { KubeEvidence } from '../../src/evidence/kubernetes/gather.js';
import { emptySurroundings } from '../../src/evidence/kubernetes/surroundings.js';
import type { MetricSummary } from '../../src/evidence/prometheus/types.js';
import type { TriageInput } from '../../src/triage/analyzer.js';
import { deployRegression, symptomAfter, targetSymptoms } from '../../src/triage/analyzers/deploy-regression.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const at = (min: number) => new Date(ONSET.getTime() + min * 60_000);

function kube(over: Partial<KubeEvidence> = {}): KubeEvidence {
  return {
    ...emptySurroundings(),
    onset: ONSET,
    target: { kind: 'Deployment', namespace: 'shop', name: 'cart' },
    workload: { metadata: { name: 'cart', namespace: 'shop' }, spec: { selector: {}, template: { metadata: { labels: { app: 'cart' } } } } },
    replicaSets: [11, 12].map((rev) => ({ metadata: { name: `cart-${rev}`, annotations: { 'deployment.kubernetes.io/revision': String(rev) } } })),
    pods: [],
    services: [{ service: { metadata: { name: 'cart' } } }],
    events: [],
    related: [],
    dependents: [{ kind: 'Deployment', name: 'storefront', via: 'env CART_URL' }],
    unhealthyPods: [],
    warningEvents: [],
    gaps: [],
    server: 'https://k8s.test',
    ...over,
  };
}

function errorRatio(startMin: number | undefined, id = 'error_ratio', title = 'HTTP 5xx ratio'): MetricSummary {
  return {
    id,
    title,
    unit: 'ratio',
    badWhen: 'high',
    query: `sum(rate(http_requests_total{namespace="shop",service="cart",code=~"5.."}[1m])) / sum(rate(http_requests_total{namespace="shop",service="cart"}[1m]))`,
    range: { from: at(-60), to: ONSET },
    stepSeconds: 15,
    status: 'success',
    series: [
      {
        metric: {},
        points: 240,
        nonFinite: 0,
        from: at(-60),
        to: ONSET,
        first: 0.002,
        last: 0.35,
        min: 0.001,
        max: 0.36,
        mean: 0.03,
        baseline: { median: 0.002, mad: 0.0003 },
        changePoints: startMin === undefined ? [] : [{ at: at(startMin), before: 0.002, after: 0.35 }],
        ...(startMin === undefined ? {} : { deviationStart: at(startMin), deviationDirection: 'up' as const }),
      },
    ],
    citation: { source: 'prometheus', ref: 'sum(rate(…))' },
  };
}

const rollout = (min: number, rev = 12): RankedChange => ({
  at: at(min),
  actor: 'deployment-controller',
  kind: 'image',
  target: { kind: 'Deployment', namespace: 'shop', name: 'cart' },
  before: 'cart=registry/cart:2.13.0',
  after: 'cart=registry/cart:2.14.0',
  source: 'kubernetes',
  summary: `rollout to revision ${rev}: cart=registry/cart:2.14.0`,
  citation: { source: 'kubernetes', ref: `apis/apps/v1/namespaces/shop/replicasets/cart-${rev}` },
  score: 0.8,
  why: [],
});

const pr: RankedChange = {
  at: at(-22),
  actor: 'carol',
  kind: 'pr_merged',
  target: { kind: 'Service', name: 'cart' },
  after: '8c1e4b7',
  source: 'github',
  summary: '#214 "Switch price rounding to bankers" merged by carol',
  citation: { source: 'github', ref: 'repos/acme/cart/pulls/214' },
  score: 0.4,
  why: [],
};

function input(over: Partial<TriageInput> = {}): TriageInput {
  return {
    alert: { labels: {}, labelValues: [] } as unknown as TriageInput['alert'],
    onset: ONSET,
    kube: kube(),
    changes: [],
    service: { name: 'cart', namespace: 'shop', repo: 'acme/cart', dependsOn: [], flags: [] },
    ...over,
  };
}

describe('deploy-regression', () => {
  it('blames a rollout right before the 5xx spike, with the PR and a rollout undo to the previous revision', () => {
    const [f] = deployRegression.analyze(input({ changes: [rollout(-5), pr], metrics: { summaries: [errorRatio(-4.5)] } }));
    expect(f).toMatchObject({
      status: 'supported',
      component: { kind: 'Deployment', namespace: 'shop', name: 'cart' },
      facts: { revision: 12, pr: 214, prTitle: 'Switch price rounding to bankers', prMergedBy: 'carol', metric: 'error_ratio', before: 0.002, after: 0.35 },
      mitigation: { action: 'rollout_undo', params: { toRevision: 11 } },
    });
    expect(f!.confidence).toBeGreaterThanOrEqual(0.8);
    expect(f!.supporting.some((e) => e.kind === 'metric')).toBe(true);
    expect(f!.affected).toContainEqual({ kind: 'Deployment', namespace: 'shop', name: 'storefront' });
  });

  it('rules itself out when the errors started before the deploy (the red herring)', () => {
    const [f] = deployRegression.analyze(input({ changes: [rollout(-5)], metrics: { summaries: [errorRatio(-12)] } }));
    expect(f).toMatchObject({ status: 'ruled_out' });
    expect(f!.reason).toMatch(/BEFORE the deploy/);
    expect(f!.mitigation).toBeUndefined();
  });

  it('rules out a deploy older than the change window, and says nothing without any deploy', () => {
    const [old] = deployRegression.analyze(input({ changes: [rollout(-2 * 24 * 60)], metrics: { summaries: [errorRatio(-3)] } }));
    expect(old).toMatchObject({ status: 'ruled_out' });
    expect(old!.reason).toMatch(/2 days before the alert/);
    expect(deployRegression.analyze(input({ metrics: { summaries: [errorRatio(-3)] } }))).toEqual([]);
  });

  it('defers to the pod analyzers when the new pods crash, and to a dependency that degraded first', () => {
    const crashing = kube({ pods: [{ metadata: { name: 'cart-12-x' }, status: { containerStatuses: [{ name: 'cart', image: 'x', imageID: '', ready: false, restartCount: 4, state: { waiting: { reason: 'CrashLoopBackOff' } } }] } }] });
    const [c] = deployRegression.analyze(input({ kube: crashing, changes: [rollout(-5)], metrics: { summaries: [errorRatio(-4)] } }));
    expect(c).toMatchObject({ status: 'open' });
    expect(c!.confidence).toBeLessThan(0.8);

    const dep = errorRatio(-4.8, 'dependency_latency_p99', 'Dependency HTTP latency p99 (payments/payments-api)');
    const [d] = deployRegression.analyze(input({ changes: [rollout(-5)], metrics: { summaries: [errorRatio(-4), dep] } }));
    expect(d).toMatchObject({ status: 'inconclusive' });
  });

  it('proposes reverting the PR when GitHub is all it knows', () => {
    const deploy: RankedChange = { ...pr, kind: 'deploy', at: at(-5), actor: 'github-actions[bot]', summary: 'deploy 8c1e4b7 to production by github-actions[bot] (success)', citation: { source: 'github', ref: 'repos/acme/cart/deployments/9' } };
    const [f] = deployRegression.analyze(input({ kube: kube({ replicaSets: [] }), changes: [deploy, pr], metrics: { summaries: [errorRatio(-4.5)] } }));
    expect(f).toMatchObject({ status: 'supported', facts: { sha: '8c1e4b7', pr: 214 }, mitigation: { action: 'revert_pr', params: { repo: 'acme/cart', number: 214 } } });
  });

  it('times symptoms against a change', () => {
    const s = targetSymptoms({ metrics: { summaries: [errorRatio(-4)] }, logs: undefined, kube: kube() });
    expect(symptomAfter(s, at(-5)).relation).toBe('after');
    expect(symptomAfter(s, at(-2)).relation).toBe('before');
    expect(symptomAfter({ metrics: [], logs: [], metricsKnown: false }, at(-2)).relation).toBe('unknown');
  });
});

import type { V2HorizontalPodAutoscaler } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { Alert } from '../../src/alerts/types.js';
import type { RankedChange } from '../../src/changes/types.js';
import type { KubeEvidence } from '../../src/evidence/kubernetes/gather.js';
import { emptySurroundings } from '../../src/evidence/kubernetes/surroundings.js';
import type { MetricSummary, SeriesSummary } from '../../src/evidence/prometheus/types.js';
import type { TriageInput } from '../../src/triage/analyzer.js';
import { hpaAtMax, queueTriggerFacts, readMetrics } from '../../src/triage/analyzers/hpa-at-max.js';

const onset = new Date('2026-03-01T12:00:00Z');
const at = (offsetMin: number) => new Date(onset.getTime() + offsetMin * 60_000);
const alert: Alert = { source: 'alertmanager', status: 'firing', title: 't', alertName: 'KubeHpaMaxedOut', labels: {}, labelValues: ['recommendations', 'shop'], annotations: {}, count: 1, text: '' };

function hpa(current: number, max: number, cpu: number, limited = true): V2HorizontalPodAutoscaler {
  return {
    metadata: { name: 'recommendations', namespace: 'shop' },
    spec: { scaleTargetRef: { kind: 'Deployment', name: 'recommendations' }, minReplicas: 3, maxReplicas: max, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } }] },
    status: {
      currentReplicas: current,
      desiredReplicas: current,
      currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: cpu, averageValue: '463m' } } }],
      conditions: limited
        ? [{ type: 'ScalingLimited', status: 'True', reason: 'TooManyReplicas', message: 'the desired replica count is more than the maximum replica count', lastTransitionTime: at(-6.5) }]
        : [{ type: 'ScalingLimited', status: 'False', reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range', lastTransitionTime: at(-60) }],
    },
  };
}

function series(before: number, after: number, shiftAt: Date): SeriesSummary {
  return {
    metric: {},
    points: 500,
    nonFinite: 0,
    from: at(-60),
    to: at(2),
    first: before,
    last: after,
    min: before,
    max: after,
    mean: (before + after) / 2,
    baseline: { median: before, mad: before * 0.02 },
    changePoints: before === after ? [] : [{ at: shiftAt, before, after }],
    ...(before === after ? {} : { deviationStart: shiftAt, deviationDirection: after > before ? ('up' as const) : ('down' as const) }),
  };
}

function summary(id: string, title: string, unit: string, s: SeriesSummary): MetricSummary {
  const query = `${id}{namespace="shop",service="recommendations"}`;
  return { id, title, unit, badWhen: 'high', query, range: { from: at(-60), to: at(2) }, stepSeconds: 15, status: 'success', series: [s], citation: { source: 'prometheus', ref: query } };
}

function input(kube: Partial<KubeEvidence>, metrics?: MetricSummary[], changes: RankedChange[] = []): TriageInput {
  return {
    alert,
    onset,
    changes,
    ...(metrics ? { metrics: { summaries: metrics } } : {}),
    kube: {
      ...emptySurroundings(),
      onset,
      target: { kind: 'Deployment', namespace: 'shop', name: 'recommendations' },
      workload: { metadata: { name: 'recommendations', namespace: 'shop' }, spec: { replicas: 10, selector: {}, template: {} } },
      replicaSets: [],
      pods: [],
      services: [{ service: { metadata: { name: 'recommendations', namespace: 'shop' } } }],
      events: [],
      related: [],
      dependents: [{ kind: 'Deployment', name: 'storefront', via: 'env RECOMMENDATIONS_URL' }],
      unhealthyPods: [],
      warningEvents: [],
      gaps: [],
      server: 'https://k8s.example',
      ...kube,
    },
  };
}

describe('readMetrics', () => {
  it('pairs resource utilization targets with their current value', () => {
    const h = hpa(10, 10, 185);
    expect(readMetrics(h.spec!.metrics, h.status!.currentMetrics)).toEqual([{ metric: 'cpu', current: 185, target: 60, unit: '%' }]);
  });
});

describe('hpa-at-max analyzer', () => {
  it('reports load-driven saturation when traffic rose at the onset', () => {
    const [f] = hpaAtMax.analyze(
      input({ hpas: [hpa(10, 10, 185)] }, [
        summary('request_rate', 'HTTP request rate', 'req/s', series(120, 360, at(-8))),
        summary('latency_p99', 'HTTP latency p99', 'seconds', series(0.19, 1.4, at(-7))),
      ]),
    );
    expect(f).toMatchObject({
      analyzer: 'hpa-at-max',
      status: 'supported',
      component: { kind: 'Deployment', namespace: 'shop', name: 'recommendations' },
      facts: { maxReplicas: 10, currentReplicas: 10, metric: 'cpu', current: 185, target: 60, driver: 'load', trafficRatio: 3 },
    });
    expect(f!.confidence).toBeGreaterThanOrEqual(0.8);
    expect(f!.mitigation).toBeUndefined();
    expect(f!.mechanism).toContain('Raise spec.maxReplicas');
    expect(f!.supporting.map((e) => e.kind)).toEqual(['object', 'metric', 'metric']);
    expect(f!.affected).toContainEqual({ kind: 'Deployment', namespace: 'shop', name: 'storefront' });
  });

  it('points at a regression when latency rose without more traffic after a rollout', () => {
    const rollout: RankedChange = {
      at: at(-12),
      actor: 'deployment-controller',
      kind: 'image',
      target: { kind: 'Deployment', namespace: 'shop', name: 'recommendations' },
      source: 'kubernetes',
      summary: 'rollout to revision 10: recommendations=registry.example.com/shop/recommendations:3.5.0',
      citation: { source: 'kubernetes', ref: 'apis/apps/v1/namespaces/shop/replicasets/recommendations-abc' },
      score: 0.9,
      why: [],
    };
    const [f] = hpaAtMax.analyze(
      input({ hpas: [hpa(10, 10, 170)] }, [summary('request_rate', 'HTTP request rate', 'req/s', series(120, 122, at(-8))), summary('latency_p99', 'HTTP latency p99', 'seconds', series(0.19, 1.1, at(-10)))], [rollout]),
    );
    expect(f).toMatchObject({ status: 'inconclusive', facts: { driver: 'regression' } });
    expect(f!.confidence).toBeLessThan(0.6);
    expect(f!.refuting.map((e) => e.kind)).toEqual(['metric', 'metric', 'change']);
  });

  it('blames the ScaledObject edit that set the ceiling of KEDA\'s HPA, and cites it so it is not cleared as a look-alike', () => {
    const keda = hpa(1, 1, 0);
    keda.metadata = { name: 'keda-hpa-recommendations', namespace: 'shop', ownerReferences: [{ apiVersion: 'keda.sh/v1alpha1', kind: 'ScaledObject', name: 'recommendations', uid: 'u1' }] };
    const edit: RankedChange = {
      at: at(-7),
      actor: 'argocd-controller',
      kind: 'edit',
      target: { kind: 'ScaledObject', namespace: 'shop', name: 'recommendations' },
      source: 'kubernetes',
      summary: 'argocd-controller updated scaledobject/recommendations (spec)',
      citation: { source: 'kubernetes', ref: 'apis/keda.sh/v1alpha1/namespaces/shop/scaledobjects/recommendations#metadata.managedFields[0]' },
      score: 0.6,
      why: [],
    };
    const [f] = hpaAtMax.analyze(input({ hpas: [keda] }, [summary('request_rate', 'HTTP request rate', 'req/s', series(120, 130, at(-8)))], [edit]));
    expect(f).toMatchObject({ status: 'supported', facts: { driver: 'misconfiguration', scaledObject: 'recommendations', manager: 'argocd-controller', changedAt: at(-7).toISOString() } });
    expect(f!.supporting.map((e) => e.citation.ref)).toContain(edit.citation.ref);
    // Localised to the ScaledObject KEDA renders the HPA from; the HPA and the saturated workload in scope.
    expect(f!.component).toEqual({ kind: 'ScaledObject', namespace: 'shop', name: 'recommendations' });
    expect(f!.affected?.slice(0, 2)).toEqual([
      { kind: 'HorizontalPodAutoscaler', namespace: 'shop', name: 'keda-hpa-recommendations' },
      { kind: 'Deployment', namespace: 'shop', name: 'recommendations' },
    ]);
  });

  it('a ceiling lowered hours before the peak still explains it, and the release values say what it was', () => {
    const keda = hpa(3, 3, 0);
    keda.metadata = { name: 'keda-hpa-recommendations', namespace: 'shop', ownerReferences: [{ apiVersion: 'keda.sh/v1alpha1', kind: 'ScaledObject', name: 'recommendations', uid: 'u1' }] };
    const edit: RankedChange = {
      at: at(-125), actor: 'kubectl-edit', kind: 'edit', target: { kind: 'ScaledObject', namespace: 'shop', name: 'recommendations' }, source: 'kubernetes',
      summary: 'kubectl edit updated scaledobject/recommendations (maxReplicaCount)', citation: { source: 'kubernetes', ref: 'apis/keda.sh/v1alpha1/namespaces/shop/scaledobjects/recommendations#metadata.managedFields[1]' }, score: 0.2, why: [],
    };
    const so = { apiVersion: 'keda.sh/v1alpha1', kind: 'ScaledObject', metadata: { name: 'recommendations', namespace: 'shop', annotations: { 'meta.helm.sh/release-name': 'recommendations' } }, spec: { maxReplicaCount: 3, triggers: [] } };
    const helm = { release: 'recommendations', revisions: [{ name: 'recommendations', namespace: 'shop', revision: 31, status: 'deployed', description: 'Upgrade complete', chart: 'recommendations-3.6.0', values: { image: { tag: '2.14.0' }, keda: { minReplicaCount: 2, maxReplicaCount: 20 } }, secretName: 'sh.helm.release.v1.recommendations.v31' }] };
    const base = input({ hpas: [keda], helm }, [summary('request_rate', 'HTTP request rate', 'req/s', series(120, 125, at(-8)))], [edit]);
    const [f] = hpaAtMax.analyze({ ...base, cluster: { snapshot: { custom: { ScaledObject: [so] } } } as never });
    expect(f).toMatchObject({ status: 'supported', component: { kind: 'ScaledObject', name: 'recommendations' }, facts: { driver: 'misconfiguration', previousMaxReplicas: 20, changedAt: at(-125).toISOString() } });
    expect(f!.supporting.map((e) => e.citation.ref)).toContain('api/v1/namespaces/shop/secrets/sh.helm.release.v1.recommendations.v31#data.release (decoded)');
    expect(f!.mechanism).toContain('lowered from 20 to 3');
  });

  it('returns nothing when the HPA still has room', () => {
    expect(hpaAtMax.analyze(input({ hpas: [hpa(4, 10, 70, false)] }))).toEqual([]);
  });

  it('returns nothing without an HPA for the workload', () => {
    expect(hpaAtMax.analyze(input({}))).toEqual([]);
  });

  describe('below its ceiling but behind the load', () => {
    const behind = (o: { policyPods?: number; editMin?: number; reason?: string } = {}): V2HorizontalPodAutoscaler => {
      const h = hpa(11, 30, 99, false);
      h.spec!.minReplicas = 2;
      h.spec!.behavior = { scaleUp: { policies: [{ type: 'Pods', value: o.policyPods ?? 1, periodSeconds: 60 }] } };
      h.status!.conditions = [{ type: 'ScalingLimited', status: 'True', reason: o.reason ?? 'ScaleUpLimit', message: 'the desired replica count is increasing faster than the maximum scale rate', lastTransitionTime: at(-8) }];
      h.metadata!.managedFields = o.editMin === undefined ? [] : [{ manager: 'argocd-controller', operation: 'Update', time: at(o.editMin), fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:minReplicas': {}, 'f:maxReplicas': {} } } }];
      return h;
    };

    it('localises to the HPA when it is rate-limited on its scale-up and its spec was edited today', () => {
      const [f] = hpaAtMax.analyze(input({ hpas: [behind({ editMin: -600 })] }));
      expect(f).toMatchObject({
        status: 'supported',
        component: { kind: 'HorizontalPodAutoscaler', namespace: 'shop', name: 'recommendations' },
        facts: { hpa: 'recommendations', minReplicas: 2, currentReplicas: 11, metric: 'cpu', current: 99, target: 60, driver: 'misconfiguration', scaleUpPolicy: '1 pod per 60 s', manager: 'argocd-controller', changedFields: 'minReplicas' },
      });
      expect(f!.mechanism).toMatch(/ScalingLimited \(ScaleUpLimit\)/);
    });

    it('says nothing when it keeps up (not rate-limited, desired = current) or when neither a slow policy nor an edit explains it', () => {
      expect(hpaAtMax.analyze(input({ hpas: [behind({ editMin: -600, reason: 'DesiredWithinRange' })] }))).toEqual([]);
      expect(hpaAtMax.analyze(input({ hpas: [behind({ policyPods: 10, editMin: -3 * 24 * 60 })] }))).toEqual([]);
    });
  });
});


describe('queueTriggerFacts (a KEDA ScaledObject\'s queue trigger)', () => {
  it('names the queue and the consumer the way the scaler does', () => {
    expect(queueTriggerFacts([{ type: 'rabbitmq', metadata: { mode: 'QueueLength', queueName: 'shipments.created', value: '200' } }], 'shipment-consumer')).toEqual({ topic: 'shipments.created', consumer: 'shipment-consumer' });
    expect(queueTriggerFacts([{ type: 'cpu', metadata: { value: '70' } }, { type: 'kafka', metadata: { topic: 'orders', consumerGroup: 'billing', lagThreshold: '50' } }], 'billing-worker')).toEqual({ topic: 'orders', consumer: 'billing' });
  });

  it('says nothing for triggers that are not queues, or without a queue name', () => {
    expect(queueTriggerFacts([{ type: 'cpu', metadata: { value: '70' } }, { type: 'prometheus', metadata: { query: 'sum(rate(x[1m]))' } }], 'api')).toEqual({});
    expect(queueTriggerFacts([{ type: 'kafka', metadata: { consumerGroup: 'g' } }], 'w')).toEqual({});
    expect(queueTriggerFacts(undefined, 'w')).toEqual({});
  });

  it('blames an HPA whose scale-down window was cut to 0 and that rescales up and down over and over', () => {
    const hpa = (window: number): V2HorizontalPodAutoscaler => ({
      metadata: { name: 'recommendations', namespace: 'shop', managedFields: [{ manager: 'argocd-controller', operation: 'Update', time: at(-50), fieldsV1: { 'f:spec': { 'f:behavior': { 'f:scaleDown': { 'f:stabilizationWindowSeconds': {} } } } } }] },
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'recommendations' }, minReplicas: 4, maxReplicas: 30, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } }], behavior: { scaleDown: { stabilizationWindowSeconds: window } } },
      status: { currentReplicas: 5, desiredReplicas: 5 },
    });
    const rescale = (size: number, n: string) => ({ metadata: { name: `recommendations.${n}`, namespace: 'shop' }, involvedObject: { kind: 'HorizontalPodAutoscaler', namespace: 'shop', name: 'recommendations' }, reason: 'SuccessfulRescale', message: `New size: ${size}; reason: cpu resource utilization (percentage of request) ${size > 5 ? 'above' : 'below'} target`, count: 17, type: 'Normal' });
    const events = [rescale(14, 'a'), rescale(5, 'b')];
    const [f] = hpaAtMax.analyze(input({ hpas: [hpa(0)], events }));
    expect(f).toMatchObject({ status: 'supported', component: { kind: 'HorizontalPodAutoscaler', name: 'recommendations' }, facts: { driver: 'misconfiguration', metric: 'cpu', maxReplicas: 30, stabilizationWindowSeconds: 0, rescales: 34, manager: 'argocd-controller' } });
    expect(hpaAtMax.analyze(input({ hpas: [hpa(300)], events }))).toEqual([]);
  });
});

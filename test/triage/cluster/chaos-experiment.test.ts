import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { KubeEvidence } from '../../../src/evidence/kubernetes/gather.js';
import { emptySurroundings } from '../../../src/evidence/kubernetes/surroundings.js';
import type { MetricSummary } from '../../../src/evidence/prometheus/types.js';
import type { ClusterTriageInput, TriageInput } from '../../../src/triage/analyzer.js';
import { chaosExperiment, goDuration } from '../../../src/triage/cluster/chaos-experiment.js';
import { buildTopology } from '../../../src/topology/graph.js';
import { emptySnapshot, type ClusterSnapshot, type CustomObject } from '../../../src/topology/snapshot.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const at = (min: number) => new Date(ONSET.getTime() + min * 60_000);
const iso = (min: number) => at(min).toISOString();

function deployment(ns: string, name: string): V1Deployment {
  return {
    metadata: { name, namespace: ns, annotations: { 'deployment.kubernetes.io/revision': '4' } },
    spec: { replicas: 2, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name, tier: 'backend' } }, spec: { containers: [{ name, image: `registry.example.com/${name}:3.1.0` }] } } },
    status: { replicas: 2, readyReplicas: 2 },
  };
}

function pod(ns: string, name: string, owner: string, opts: { restarts?: number; finishedMin?: number; createdMin?: number } = {}): V1Pod {
  return {
    metadata: { name, namespace: ns, labels: { app: owner }, creationTimestamp: at(opts.createdMin ?? -600), ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `${owner}-6c8f9d7b4`, uid: 'rs', controller: true }] },
    spec: { containers: [{ name: owner, image: 'x' }], nodeName: 'node-1' },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True' }],
      containerStatuses: [
        {
          name: owner,
          image: 'x',
          imageID: 'x',
          ready: true,
          restartCount: opts.restarts ?? 0,
          state: { running: { startedAt: at(-1) } },
          ...(opts.finishedMin !== undefined ? { lastState: { terminated: { exitCode: 137, reason: 'Error', finishedAt: at(opts.finishedMin) } } } : {}),
        },
      ],
    },
  };
}

function latency(startMin: number | undefined): MetricSummary {
  return {
    id: 'latency_p99',
    title: 'HTTP latency p99',
    unit: 'seconds',
    badWhen: 'high',
    query: 'histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket{namespace="payments"}[5m])))',
    range: { from: at(-60), to: at(5) },
    stepSeconds: 30,
    status: 'success',
    series: [
      {
        metric: {},
        points: 120,
        nonFinite: 0,
        from: at(-60),
        to: at(5),
        first: 0.08,
        last: 0.41,
        min: 0.07,
        max: 0.43,
        mean: 0.2,
        baseline: { median: 0.08, mad: 0.01 },
        changePoints: startMin !== undefined ? [{ at: at(startMin), before: 0.08, after: 0.4 }] : [],
        ...(startMin !== undefined ? { deviationStart: at(startMin), deviationDirection: 'up' as const } : {}),
      },
    ],
    citation: { source: 'prometheus', ref: 'histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket{namespace="payments"}[5m])))' },
  };
}

function kube(ns: string, name: string, pods: V1Pod[], over: Partial<KubeEvidence> = {}): KubeEvidence {
  return {
    ...emptySurroundings(),
    onset: ONSET,
    target: { kind: 'Deployment', namespace: ns, name },
    workload: deployment(ns, name),
    replicaSets: [],
    pods,
    services: [{ service: { metadata: { name, namespace: ns }, spec: { selector: { app: name } } } }],
    events: [],
    related: [],
    dependents: [{ kind: 'Deployment', name: 'checkout-caller', via: 'env PAYMENTS_URL' }],
    unhealthyPods: [],
    warningEvents: [],
    gaps: [],
    server: 'https://k8s.test',
    ...over,
  };
}

const candidate = (k: KubeEvidence, metrics: MetricSummary[] = []): TriageInput => ({
  alert: { labels: {}, labelValues: [] } as unknown as TriageInput['alert'],
  onset: ONSET,
  kube: k,
  changes: [],
  metrics: { summaries: metrics },
});

function cluster(inputs: TriageInput[], custom: Record<string, CustomObject[]>): ClusterTriageInput {
  const snapshot: ClusterSnapshot = {
    ...emptySnapshot(),
    readAt: ONSET,
    deployments: inputs.map((i) => i.kube.workload as V1Deployment),
    pods: inputs.flatMap((i) => i.kube.pods),
    custom,
  };
  const topology = buildTopology(snapshot);
  return { alert: { labels: {}, labelValues: [] } as unknown as ClusterTriageInput['alert'], onset: ONSET, cluster: { snapshot, topology, walk: { subjects: [], starts: [], reached: new Map(), candidates: [] }, subjects: [] }, inputs, changes: [], metrics: [], jobs: [] };
}

const PAYMENTS_PODS = [pod('payments', 'payments-api-6c8f9d7b4-x2x9k', 'payments-api'), pod('payments', 'payments-api-6c8f9d7b4-q7w8z', 'payments-api')];

function networkDelay(over: { annotations?: Record<string, string>; status?: Record<string, unknown>; selector?: Record<string, unknown>; startMin?: number } = {}): CustomObject {
  const start = over.startMin ?? -12;
  return {
    apiVersion: 'chaos-mesh.org/v1alpha1',
    kind: 'NetworkChaos',
    metadata: { name: 'payments-delay', namespace: 'chaos-testing', creationTimestamp: iso(start) as unknown as Date, ...(over.annotations ? { annotations: over.annotations } : {}) },
    spec: { action: 'delay', mode: 'all', selector: over.selector ?? { namespaces: ['payments'], labelSelectors: { app: 'payments-api' } }, delay: { latency: '300ms', jitter: '50ms', correlation: '25' }, duration: '30m', direction: 'to' },
    status: over.status ?? {
      conditions: [
        { type: 'Selected', status: 'True' },
        { type: 'AllInjected', status: 'True' },
        { type: 'AllRecovered', status: 'False' },
        { type: 'Paused', status: 'False' },
      ],
      experiment: {
        desiredPhase: 'Run',
        containerRecords: PAYMENTS_PODS.map((p) => ({ id: `payments/${p.metadata!.name}`, phase: 'Injected', selectorKey: '.', injectedCount: 1, recoveredCount: 0, events: [{ operation: 'Apply', type: 'Succeeded', timestamp: iso(start) }] })),
      },
    },
  };
}

describe('chaos-experiment', () => {
  it('localises to a running NetworkChaos that injects delay into the alerted workload, corroborated by its p99', () => {
    const payments = candidate(kube('payments', 'payments-api', PAYMENTS_PODS), [latency(-11)]);
    const [f, ...rest] = chaosExperiment.analyze(cluster([payments], { NetworkChaos: [networkDelay()] }));
    expect(rest).toEqual([]);
    expect(f).toMatchObject({
      key: 'chaos-experiment:chaos-testing/NetworkChaos/payments-delay',
      analyzer: 'chaos-experiment',
      family: 'chaos-experiment',
      status: 'supported',
      component: { kind: 'NetworkChaos', namespace: 'chaos-testing', name: 'payments-delay' },
      facts: { experiment: 'NetworkChaos/payments-delay', action: 'delay', target: 'payments/payments-api', startedAt: iso(-12), latency: '300ms', mode: 'all', duration: '30m' },
    });
    expect(f!.confidence).toBeGreaterThanOrEqual(0.85);
    expect(f!.mitigation).toMatchObject({ action: 'pause_chaos', target: { kind: 'NetworkChaos', namespace: 'chaos-testing', name: 'payments-delay' }, params: {} });
    expect(f!.affected).toEqual(expect.arrayContaining([{ kind: 'Deployment', namespace: 'payments', name: 'payments-api' }, { kind: 'Service', namespace: 'payments', name: 'payments-api' }]));
    const refs = f!.supporting.map((e) => e.citation.ref);
    expect(refs).toContain('apis/chaos-mesh.org/v1alpha1/namespaces/chaos-testing/networkchaos/payments-delay#status.experiment');
    expect(refs.some((r) => r.startsWith('histogram_quantile'))).toBe(true);
    expect(f!.title).toMatch(/delay 300ms ±50ms/);
  });

  it('takes a network delay the target\'s own server metrics cannot show from the alerted caller\'s latency', () => {
    const payments = candidate(kube('payments', 'payments-api', PAYMENTS_PODS), [latency(undefined)]);
    const checkoutPods = [pod('shop', 'checkout-5f6d7c8b9-a1b2c', 'checkout')];
    const checkout = candidate(kube('shop', 'checkout', checkoutPods), [latency(-10)]);
    const withCaller = (inputs: TriageInput[]) => {
      const c = cluster(inputs, { NetworkChaos: [networkDelay()] });
      const s = c.cluster.snapshot;
      s.deployments = s.deployments.map((d) => (d.metadata?.name === 'checkout' ? { ...d, spec: { ...d.spec!, template: { ...d.spec!.template, spec: { containers: [{ name: 'checkout', image: 'reg/checkout:1', env: [{ name: 'PAYMENTS_URL', value: 'http://payments-api.payments.svc:8080' }] }] } } } } : d));
      s.services = [{ metadata: { name: 'payments-api', namespace: 'payments' }, spec: { selector: { app: 'payments-api' } } }, { metadata: { name: 'checkout', namespace: 'shop' }, spec: { selector: { app: 'checkout' } } }];
      const topology = buildTopology(s);
      const reached = new Map([['Deployment/shop/checkout', { id: 'Deployment/shop/checkout', ref: { kind: 'Deployment', namespace: 'shop', name: 'checkout' }, path: [], hops: 0 }]]);
      return { ...c, cluster: { ...c.cluster, topology, walk: { ...c.cluster.walk, reached } } } as ClusterTriageInput;
    };
    expect(chaosExperiment.analyze(withCaller([payments, checkout]))[0]).toMatchObject({ status: 'supported' });
    expect(chaosExperiment.analyze(withCaller([payments]))[0]).toMatchObject({ status: 'open' });
  });

  it('takes a clock offset from the alerted caller rejecting what the target stamped (a warning, not a 5xx)', () => {
    const auth = candidate(kube('identity', 'auth', [pod('identity', 'auth-6f7d9c8b54-2kq7x', 'auth')]), [latency(undefined)]);
    const gwPods = [pod('edge', 'api-gateway-7d8c9b6f5d-h4kpz', 'api-gateway')];
    const rejections = (firstMin: number) => ({
      pod: 'api-gateway-7d8c9b6f5d-h4kpz', container: 'gateway', previous: false, lineCount: 40,
      patterns: [{ template: '{"level":"warn","msg":"rejecting request: invalid access token","err":"token has invalid claims: token is expired"}', example: 'x', count: 24, level: 'warn' as const, first: at(firstMin), last: at(0) }],
    });
    const gateway = (firstMin: number) => candidate(kube('edge', 'api-gateway', gwPods, { containerLogs: [rejections(firstMin)] as never }), [latency(undefined)]);
    const timeChaos: CustomObject = {
      apiVersion: 'chaos-mesh.org/v1alpha1', kind: 'TimeChaos',
      metadata: { name: 'auth-clock-drift', namespace: 'chaos-testing', creationTimestamp: iso(-13) as unknown as Date },
      spec: { mode: 'fixed-percent', value: '67', selector: { namespaces: ['identity'], labelSelectors: { app: 'auth' } }, timeOffset: '-10m' },
      status: { conditions: [{ type: 'AllInjected', status: 'True' }, { type: 'Paused', status: 'False' }], experiment: { desiredPhase: 'Run', containerRecords: [{ id: 'identity/auth-6f7d9c8b54-2kq7x/auth', phase: 'Injected', injectedCount: 1, recoveredCount: 0, events: [{ operation: 'Apply', type: 'Succeeded', timestamp: iso(-13) }] }] } },
    };
    const run = (inputs: TriageInput[]) => {
      const c = cluster(inputs, { TimeChaos: [timeChaos] });
      const s = c.cluster.snapshot;
      s.deployments = s.deployments.map((d) => (d.metadata?.name === 'api-gateway' ? { ...d, spec: { ...d.spec!, template: { ...d.spec!.template, spec: { containers: [{ name: 'gateway', image: 'reg/gw:1', env: [{ name: 'JWKS_URL', value: 'http://auth.identity.svc/.well-known/jwks.json' }] }] } } } } : d));
      s.services = [{ metadata: { name: 'auth', namespace: 'identity' }, spec: { selector: { app: 'auth' } } }];
      const topology = buildTopology(s);
      const reached = new Map([['Deployment/edge/api-gateway', { id: 'Deployment/edge/api-gateway', ref: { kind: 'Deployment', namespace: 'edge', name: 'api-gateway' }, path: [], hops: 0 }]]);
      return chaosExperiment.analyze({ ...c, cluster: { ...c.cluster, topology, walk: { ...c.cluster.walk, reached } } } as ClusterTriageInput)[0];
    };
    const f = run([auth, gateway(-11)]);
    expect(f).toMatchObject({ status: 'supported', component: { kind: 'TimeChaos', name: 'auth-clock-drift' } });
    expect(f!.mechanism).toContain('api-gateway, which calls auth, logs new errors since it started');
    // Rejections that were there before the experiment started say nothing about it.
    expect(run([auth, gateway(-40)])).toMatchObject({ status: 'open' });
  });

  it('rules out a paused experiment and one that finished long before the symptoms', () => {
    const payments = candidate(kube('payments', 'payments-api', PAYMENTS_PODS), [latency(-11)]);
    const [paused] = chaosExperiment.analyze(cluster([payments], { NetworkChaos: [networkDelay({ annotations: { 'experiment.chaos-mesh.org/pause': 'true' } })] }));
    expect(paused).toMatchObject({ status: 'ruled_out', component: { kind: 'NetworkChaos', name: 'payments-delay' } });
    expect(paused!.reason).toMatch(/paused/);
    expect(paused!.supporting).toEqual([]);

    const finished = networkDelay({
      startMin: -180,
      status: {
        conditions: [{ type: 'AllInjected', status: 'False' }, { type: 'AllRecovered', status: 'True' }],
        experiment: {
          desiredPhase: 'Stop',
          containerRecords: [{ id: 'payments/payments-api-6c8f9d7b4-x2x9k', phase: 'Not Injected', injectedCount: 1, recoveredCount: 1, events: [{ operation: 'Apply', type: 'Succeeded', timestamp: iso(-180) }, { operation: 'Recover', type: 'Succeeded', timestamp: iso(-150) }] }],
        },
      },
    });
    const [done] = chaosExperiment.analyze(cluster([payments], { NetworkChaos: [finished] }));
    expect(done).toMatchObject({ status: 'ruled_out' });
    expect(done!.reason).toMatch(/ended at 09:30:00, 2 h before the symptoms began/);
  });

  it('reports a PodChaos pod-kill through its records and the restarts it caused', () => {
    const pods = [pod('shop', 'cart-6c8f9d7b4-x2x9k', 'cart', { restarts: 1, finishedMin: -4 }), pod('shop', 'cart-6c8f9d7b4-bbbbb', 'cart', { createdMin: -4 })];
    const cart = candidate(kube('shop', 'cart', pods));
    const podKill: CustomObject = {
      apiVersion: 'chaos-mesh.org/v1alpha1',
      kind: 'PodChaos',
      metadata: { name: 'kill-cart', namespace: 'shop', creationTimestamp: iso(-5) as unknown as Date },
      spec: { action: 'pod-kill', mode: 'one', selector: { pods: { shop: ['cart-6c8f9d7b4-x2x9k'] } } },
      status: { experiment: { desiredPhase: 'Run', containerRecords: [{ id: 'shop/cart-6c8f9d7b4-x2x9k', phase: 'Injected', injectedCount: 1, recoveredCount: 0, events: [{ operation: 'Apply', type: 'Succeeded', timestamp: iso(-4) }] }] } },
    };
    const [f] = chaosExperiment.analyze(cluster([cart], { PodChaos: [podKill] }));
    expect(f).toMatchObject({ status: 'supported', component: { kind: 'PodChaos', namespace: 'shop', name: 'kill-cart' }, facts: { action: 'pod-kill', target: 'shop/cart', startedAt: iso(-4), mode: 'one' } });
    expect(f!.supporting.some((e) => /restarted/.test(e.summary))).toBe(true);
  });

  it('reads a Litmus ChaosEngine: active engine, appinfo selecting the workload', () => {
    const cart = candidate(kube('shop', 'cart', [pod('shop', 'cart-6c8f9d7b4-x2x9k', 'cart')]));
    const engine: CustomObject = {
      apiVersion: 'litmuschaos.io/v1alpha1',
      kind: 'ChaosEngine',
      metadata: { name: 'cart-chaos', namespace: 'shop', creationTimestamp: iso(-6) as unknown as Date },
      spec: {
        engineState: 'active',
        appinfo: { appns: 'shop', applabel: 'app=cart', appkind: 'deployment' },
        chaosServiceAccount: 'pod-delete-sa',
        experiments: [{ name: 'pod-delete', spec: { components: { env: [{ name: 'TOTAL_CHAOS_DURATION', value: '600' }, { name: 'CHAOS_INTERVAL', value: '10' }] } } }],
      },
      status: { engineStatus: 'initialized', experiments: [{ name: 'pod-delete', status: 'Running', verdict: 'Awaited', lastUpdateTime: iso(-1) }] },
    };
    const [f] = chaosExperiment.analyze(cluster([cart], { ChaosEngine: [engine] }));
    expect(f).toMatchObject({ status: 'supported', component: { kind: 'ChaosEngine', namespace: 'shop', name: 'cart-chaos' }, facts: { experiment: 'ChaosEngine/cart-chaos', action: 'pod-delete', target: 'shop/cart', startedAt: iso(-6) } });
    expect(f!.supporting.some((e) => e.citation.ref === 'apis/litmuschaos.io/v1alpha1/namespaces/shop/chaosengines/cart-chaos#status')).toBe(true);
    // A stopped engine is cleared.
    const [stopped] = chaosExperiment.analyze(cluster([cart], { ChaosEngine: [{ ...engine, spec: { ...engine.spec, engineState: 'stop' }, status: { engineStatus: 'stopped' } }] }));
    expect(stopped).toMatchObject({ status: 'ruled_out' });
  });

  it('ignores experiments that select none of the candidates', () => {
    const payments = candidate(kube('payments', 'payments-api', PAYMENTS_PODS), [latency(-11)]);
    const ledgerStatus = { experiment: { desiredPhase: 'Run', containerRecords: [{ id: 'payments/ledger-7f6d5c4b3-aaaaa', phase: 'Injected', injectedCount: 1, recoveredCount: 0 }] } };
    expect(chaosExperiment.analyze(cluster([payments], { NetworkChaos: [networkDelay({ selector: { namespaces: ['payments'], labelSelectors: { app: 'ledger' } }, status: ledgerStatus })] }))).toEqual([]);
    expect(chaosExperiment.analyze(cluster([payments], { NetworkChaos: [networkDelay({ selector: { namespaces: ['shop'], labelSelectors: { app: 'payments-api' } }, status: {} })] }))).toEqual([]);
    expect(chaosExperiment.analyze(cluster([payments], {}))).toEqual([]);
  });

  it('is not sure when the symptoms began before the experiment, and open when the status says nothing', () => {
    const early = candidate(kube('payments', 'payments-api', PAYMENTS_PODS), [latency(-40)]);
    const [before] = chaosExperiment.analyze(cluster([early], { NetworkChaos: [networkDelay()] }));
    expect(before!.status).toBe('inconclusive');
    expect(before!.refuting.some((e) => /before the experiment started/.test(e.summary))).toBe(true);

    const quiet = candidate(kube('payments', 'payments-api', PAYMENTS_PODS));
    const [noStatus] = chaosExperiment.analyze(cluster([quiet], { NetworkChaos: [networkDelay({ status: {} })] }));
    expect(noStatus).toMatchObject({ status: 'open' });
    expect(noStatus!.confidence).toBeLessThan(0.6);

    // Injecting, but the target's metrics answered and nothing moved: a lead, not the cause.
    const steady = candidate(kube('payments', 'payments-api', PAYMENTS_PODS), [latency(undefined)]);
    const [noSymptom] = chaosExperiment.analyze(cluster([steady], { NetworkChaos: [networkDelay()] }));
    expect(noSymptom).toMatchObject({ status: 'open' });
    expect(noSymptom!.mechanism).toMatch(/no error or latency rise/);

    const late = candidate(kube('payments', 'payments-api', PAYMENTS_PODS), [latency(-11)]);
    const [after] = chaosExperiment.analyze(cluster([late], { NetworkChaos: [networkDelay({ startMin: 10 })] }));
    expect(after).toMatchObject({ status: 'ruled_out' });
  });

  it('parses Go durations', () => {
    expect(goDuration('30s')).toBe(30_000);
    expect(goDuration('1h30m')).toBe(5_400_000);
    expect(goDuration('500ms')).toBe(500);
    expect(goDuration('soon')).toBeUndefined();
  });
});

import type { V1Container, V1Deployment, V1Pod, V1ReplicaSet, V1StatefulSet } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { KubeEvidence } from '../../src/evidence/kubernetes/gather.js';
import type { HelmRevision } from '../../src/evidence/kubernetes/helm.js';
import { emptySurroundings } from '../../src/evidence/kubernetes/surroundings.js';
import type { MetricSummary, SeriesSummary } from '../../src/evidence/prometheus/types.js';
import type { TriageInput } from '../../src/triage/analyzer.js';
import { cpuCores, cpuThrottling } from '../../src/triage/analyzers/cpu-throttling.js';
import { buildTopology } from '../../src/topology/graph.js';
import { emptySnapshot } from '../../src/topology/snapshot.js';

const onset = new Date('2025-03-01T12:00:00Z');
const at = (offsetMs: number) => new Date(onset.getTime() + offsetMs);
const MIN = 60_000;
const NS = 'shop';

const container = (cpu: string | undefined, image = 'reg/recommender:2.8.0'): V1Container => ({
  name: 'recommender',
  image,
  ports: [{ name: 'http', containerPort: 8080 }],
  resources: { requests: { cpu: '100m', memory: '256Mi' }, limits: { ...(cpu ? { cpu } : {}), memory: '512Mi' } },
});
function rs(name: string, revision: number, c: V1Container, createdAt: Date): V1ReplicaSet {
  return { metadata: { name, namespace: NS, creationTimestamp: createdAt, annotations: { 'deployment.kubernetes.io/revision': String(revision) } }, spec: { selector: {}, template: { spec: { containers: [c] } } } };
}
function pod(name: string, c: V1Container, owner = 'recommender-7c9f8'): V1Pod {
  return {
    metadata: { name, namespace: NS, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner, uid: owner }] },
    spec: { containers: [c], nodeName: 'node-a' },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True' }],
      containerStatuses: [{ name: 'recommender', ready: true, restartCount: 0, image: c.image!, imageID: '', state: { running: { startedAt: at(-19 * MIN) } } }],
    },
  };
}
const setResources = {
  manager: 'kubectl-set',
  operation: 'Update',
  time: at(-20 * MIN),
  fieldsV1: { 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"recommender"}': { 'f:resources': { 'f:limits': { 'f:cpu': {} } } } } } } } },
};

function series(pod: string, mean: number, from: Date, to: Date, extra: Partial<SeriesSummary> = {}): SeriesSummary {
  return { metric: { namespace: NS, pod, container: 'recommender' }, points: 40, nonFinite: 0, from, to, first: mean, last: mean, min: mean * 0.9, max: mean * 1.1, mean, baseline: null, changePoints: [], ...extra };
}
const THROTTLE_QUERY =
  'sum by (pod, container) (rate(container_cpu_cfs_throttled_periods_total{namespace="shop",pod=~"recommender-…",container!="",container!="POD"}[5m])) / sum by (pod, container) (rate(container_cpu_cfs_periods_total{…}[5m]))';
function throttleSummary(s: SeriesSummary[]): MetricSummary {
  return {
    id: 'cpu_throttling',
    title: 'CPU throttled periods ratio',
    unit: 'ratio',
    badWhen: 'high',
    threshold: 0.25,
    query: THROTTLE_QUERY,
    range: { from: at(-60 * MIN), to: at(5 * MIN) },
    stepSeconds: 30,
    status: 'success',
    series: s,
    citation: { source: 'prometheus', ref: THROTTLE_QUERY },
  };
}
/** Before the rollout: the old pods barely throttled; after it the new pods are throttled 62 % of periods. */
const THROTTLED = throttleSummary([
  series('recommender-5d4c2-aaaaa', 0.03, at(-60 * MIN), at(-20 * MIN)),
  series('recommender-5d4c2-bbbbb', 0.04, at(-60 * MIN), at(-20 * MIN)),
  series('recommender-7c9f8-xxxxx', 0.62, at(-19 * MIN), at(5 * MIN)),
  series('recommender-7c9f8-yyyyy', 0.6, at(-19 * MIN), at(5 * MIN)),
]);
const LATENCY_QUERY = 'histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket{namespace="shop",service="recommender"}[1m])))';
function latency(moved: boolean): MetricSummary {
  return {
    id: 'latency_p99',
    title: 'HTTP latency p99',
    unit: 'seconds',
    badWhen: 'high',
    query: LATENCY_QUERY,
    range: { from: at(-60 * MIN), to: at(5 * MIN) },
    stepSeconds: 30,
    status: 'success',
    series: [
      {
        metric: {},
        points: 130,
        nonFinite: 0,
        from: at(-60 * MIN),
        to: at(5 * MIN),
        first: 0.12,
        last: moved ? 1.8 : 0.12,
        min: 0.1,
        max: moved ? 2.1 : 0.14,
        mean: moved ? 0.9 : 0.12,
        baseline: { median: 0.12, mad: 0.01 },
        changePoints: moved ? [{ at: at(-18 * MIN), before: 0.12, after: 1.8 }] : [],
        ...(moved ? { deviationStart: at(-18 * MIN), deviationDirection: 'up' as const } : {}),
      },
    ],
    citation: { source: 'prometheus', ref: LATENCY_QUERY },
  };
}

function input(kube: Partial<KubeEvidence>, summaries: MetricSummary[] = [THROTTLED, latency(true)]): TriageInput {
  const workload: V1Deployment = {
    metadata: { name: 'recommender', namespace: NS, annotations: { 'deployment.kubernetes.io/revision': '4' }, managedFields: [setResources] },
    spec: { selector: {}, template: { spec: { containers: [container('200m')] } } },
  };
  return {
    alert: { labels: {}, labelValues: [] } as unknown as TriageInput['alert'],
    onset,
    changes: [],
    metrics: { summaries },
    kube: {
      ...emptySurroundings(),
      onset,
      target: { kind: 'Deployment', namespace: NS, name: 'recommender' },
      workload,
      replicaSets: [rs('recommender-7c9f8', 4, container('200m'), at(-20 * MIN)), rs('recommender-5d4c2', 3, container('1'), at(-12 * 24 * 60 * MIN))],
      pods: [pod('recommender-7c9f8-xxxxx', container('200m')), pod('recommender-7c9f8-yyyyy', container('200m'))],
      services: [{ service: { metadata: { name: 'recommender' } }, endpoints: { subsets: [{ addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }] }] } }],
      events: [],
      related: [],
      dependents: [{ kind: 'Deployment', name: 'frontend', via: 'env RECOMMENDER_ADDR' }],
      unhealthyPods: [],
      warningEvents: [],
      gaps: [],
      server: '',
      ...kube,
    },
  };
}

describe('cpu-throttling', () => {
  it('parses CPU quantities', () => {
    expect(cpuCores('200m')).toBe(0.2);
    expect(cpuCores('1')).toBe(1);
    expect(cpuCores('1.5')).toBe(1.5);
    expect(cpuCores(2)).toBe(2);
    expect(cpuCores('lots')).toBeUndefined();
  });

  it('names the lowered CPU limit, who lowered it, the throttling and the latency, and proposes restoring the limit', () => {
    const [f] = cpuThrottling.analyze(input({}));
    expect(f).toMatchObject({ key: 'cpu-throttling:shop/Deployment/recommender', analyzer: 'cpu-throttling', family: 'cpu-throttling', status: 'supported', confidence: 0.9 });
    expect(f!.component).toEqual({ kind: 'Deployment', namespace: NS, name: 'recommender' });
    expect(f!.facts).toMatchObject({
      container: 'recommender',
      cpuLimit: '200m',
      previousCpuLimit: '1',
      throttledRatio: 0.62,
      manager: 'kubectl-set',
      changedAt: at(-20 * MIN).toISOString(),
      revision: 4,
      previousRevision: 3,
      metric: 'latency_p99',
    });
    expect(f!.facts!['throttledBefore']).toBeCloseTo(0.04, 2);
    expect(f!.mitigation).toMatchObject({ action: 'set_resources', target: { kind: 'Deployment', name: 'recommender' }, params: { container: 'recommender', limits: { cpu: '1' } } });
    expect(f!.mitigation!.command).toBe('kubectl set resources deployment/recommender -n shop -c recommender --limits=cpu=1');
    expect(f!.supporting.map((e) => e.kind)).toEqual(expect.arrayContaining(['metric', 'object', 'change', 'managed_fields']));
    const refs = f!.supporting.map((e) => e.citation.ref);
    expect(refs).toContain(THROTTLE_QUERY);
    expect(refs).toContain(LATENCY_QUERY);
    expect(refs).toContain('apis/apps/v1/namespaces/shop/replicasets/recommender-7c9f8#metadata.annotations');
    expect(refs).toContain('apis/apps/v1/namespaces/shop/deployments/recommender#metadata.managedFields[0]');
    expect(refs).toContain('api/v1/namespaces/shop/pods/recommender-7c9f8-xxxxx#spec.containers[0].resources');
    expect(f!.mechanism).toContain('lowered from 1 to 200m');
    expect(f!.affected![0]).toEqual({ kind: 'Deployment', namespace: NS, name: 'recommender' });
    expect(f!.affected).toEqual(expect.arrayContaining([{ kind: 'Service', namespace: NS, name: 'recommender' }, { kind: 'Deployment', namespace: NS, name: 'frontend' }]));
    expect(f!.refuting).toEqual([]);
  });

  it('finds a CPU limit lowered by a Helm upgrade of a StatefulSet', () => {
    const sts: V1StatefulSet = {
      metadata: {
        name: 'recommender',
        namespace: NS,
        annotations: { 'meta.helm.sh/release-name': 'recommender' },
        managedFields: [{ ...setResources, manager: 'helm', time: at(-15 * MIN) }],
      },
      spec: { selector: {}, serviceName: 'recommender', template: { spec: { containers: [container('500m')] } } },
    };
    const helmRev = (revision: number, cpu: string, deployedAt: Date): HelmRevision => ({
      name: 'recommender',
      namespace: NS,
      revision,
      status: revision === 8 ? 'deployed' : 'superseded',
      description: 'Upgrade complete',
      chart: 'recommender-1.4.0',
      deployedAt,
      values: { image: { tag: '2.8.0' }, resources: { requests: { cpu: '100m' }, limits: { cpu, memory: '512Mi' } } },
      secretName: `sh.helm.release.v1.recommender.v${revision}`,
    });
    const pods = [pod('recommender-0', container('500m')), pod('recommender-1', container('500m'))];
    const summary = throttleSummary([
      series('recommender-0', 0.55, at(-60 * MIN), at(5 * MIN), { baseline: { median: 0.02, mad: 0.01 }, deviationStart: at(-14 * MIN), deviationDirection: 'up', changePoints: [{ at: at(-14 * MIN), before: 0.02, after: 0.55 }] }),
      series('recommender-1', 0.5, at(-60 * MIN), at(5 * MIN), { baseline: { median: 0.02, mad: 0.01 }, deviationStart: at(-14 * MIN), deviationDirection: 'up', changePoints: [{ at: at(-14 * MIN), before: 0.02, after: 0.5 }] }),
    ]);
    const [f] = cpuThrottling.analyze(
      input(
        {
          target: { kind: 'StatefulSet', namespace: NS, name: 'recommender' },
          workload: sts,
          replicaSets: [],
          pods,
          helm: { release: 'recommender', revisions: [helmRev(8, '500m', at(-15 * MIN)), helmRev(7, '2', at(-30 * 24 * 60 * MIN))] },
        },
        [summary, latency(true)],
      ),
    );
    expect(f!.status).toBe('supported');
    expect(f!.facts).toMatchObject({ container: 'recommender', cpuLimit: '500m', previousCpuLimit: '2', throttledRatio: 0.55, throttledBefore: 0.02, manager: 'helm', helmRevision: 8, changedAt: at(-15 * MIN).toISOString() });
    expect(f!.supporting.map((e) => e.kind)).toEqual(expect.arrayContaining(['helm_release', 'managed_fields', 'metric']));
    expect(f!.supporting.find((e) => e.kind === 'helm_release')!.citation.ref).toBe('api/v1/namespaces/shop/secrets/sh.helm.release.v1.recommender.v8#data.release (decoded; values redacted)');
    expect(f!.mitigation).toMatchObject({ action: 'set_resources', target: { kind: 'StatefulSet' }, params: { container: 'recommender', limits: { cpu: '2' } } });
  });

  it('reports a new image that throttles under an unchanged limit, with a rollback', () => {
    const [f] = cpuThrottling.analyze(
      input({
        workload: { metadata: { name: 'recommender', namespace: NS, annotations: { 'deployment.kubernetes.io/revision': '4' } }, spec: { selector: {}, template: { spec: { containers: [container('200m', 'reg/recommender:2.9.0')] } } } },
        replicaSets: [rs('recommender-7c9f8', 4, container('200m', 'reg/recommender:2.9.0'), at(-20 * MIN)), rs('recommender-5d4c2', 3, container('200m'), at(-12 * 24 * 60 * MIN))],
      }),
    );
    expect(f!.status).toBe('supported');
    expect(f!.confidence).toBe(0.82);
    expect(f!.facts!['previousCpuLimit']).toBeUndefined();
    expect(f!.mechanism).toContain('2.8.0 → 2.9.0');
    expect(f!.mitigation).toMatchObject({ action: 'rollout_undo', params: { toRevision: 3 } });
  });

  it('leaves throttling open when latency and errors did not move', () => {
    const [f] = cpuThrottling.analyze(input({}, [THROTTLED, latency(false)]));
    expect(f!.status).toBe('open');
    expect(f!.mechanism).toContain('did not leave their baseline');
  });

  it('rules the lowered limit out when the container is barely throttled', () => {
    const low = throttleSummary([series('recommender-7c9f8-xxxxx', 0.04, at(-19 * MIN), at(5 * MIN)), series('recommender-5d4c2-aaaaa', 0.03, at(-60 * MIN), at(-20 * MIN))]);
    const [f] = cpuThrottling.analyze(input({}, [low, latency(true)]));
    expect(f!.status).toBe('ruled_out');
    expect(f!.reason).toContain('4%');
    expect(f!.refuting[0]!.citation.ref).toBe(THROTTLE_QUERY);
    expect(f!.mitigation).toBeUndefined();
  });

  it('marks chronic throttling without any change as unrelated', () => {
    const chronic = throttleSummary([series('recommender-7c9f8-xxxxx', 0.4, at(-60 * MIN), at(5 * MIN), { baseline: { median: 0.4, mad: 0.02 } })]);
    const [f] = cpuThrottling.analyze(input({ workload: { metadata: { name: 'recommender', namespace: NS }, spec: { selector: {}, template: { spec: { containers: [container('200m')] } } } }, replicaSets: [rs('recommender-7c9f8', 4, container('200m'), at(-40 * 24 * 60 * MIN))] }, [chronic, latency(true)]));
    expect(f!.status).toBe('unrelated');
    expect(f!.supporting).toEqual([]);
  });

  it('does not blame a lowered limit that left the throttling where it was', () => {
    const same = throttleSummary([series('recommender-5d4c2-aaaaa', 0.45, at(-60 * MIN), at(-20 * MIN)), series('recommender-7c9f8-xxxxx', 0.48, at(-19 * MIN), at(5 * MIN))]);
    const [f] = cpuThrottling.analyze(input({}, [same, latency(true)]));
    expect(f!.status).toBe('unrelated');
    expect(f!.reason).toContain('did not rise');
    expect(f!.mitigation).toBeUndefined();
  });

  it('without a throttling metric, a lowered limit is only open; without one either, nothing', () => {
    const [f] = cpuThrottling.analyze(input({}, [latency(true)]));
    expect(f!.status).toBe('open');
    expect(f!.facts).toMatchObject({ cpuLimit: '200m', previousCpuLimit: '1' });
    expect(f!.mitigation).toBeUndefined();
    expect(cpuThrottling.analyze(input({ replicaSets: [rs('recommender-7c9f8', 4, container('200m'), at(-40 * 24 * 60 * MIN))], workload: { metadata: { name: 'recommender', namespace: NS }, spec: { selector: {}, template: { spec: { containers: [container('200m')] } } } } }, [latency(true)]))).toEqual([]);
  });

  it('defers to the pod analyzers when containers crash or are OOMKilled', () => {
    const p = pod('recommender-7c9f8-xxxxx', container('200m'));
    p.status!.containerStatuses![0]!.state = { waiting: { reason: 'CrashLoopBackOff' } };
    expect(cpuThrottling.analyze(input({ pods: [p] }))).toEqual([]);
    const o = pod('recommender-7c9f8-xxxxx', container('200m'));
    o.status!.containerStatuses![0]!.lastState = { terminated: { exitCode: 137, reason: 'OOMKilled', finishedAt: at(-2 * MIN) } };
    expect(cpuThrottling.analyze(input({ pods: [o] }))).toEqual([]);
  });

  it('does not blame a change that came after the throttling began', () => {
    const early = throttleSummary([
      series('recommender-7c9f8-xxxxx', 0.6, at(-60 * MIN), at(5 * MIN), { baseline: { median: 0.03, mad: 0.01 }, deviationStart: at(-45 * MIN), deviationDirection: 'up', changePoints: [{ at: at(-45 * MIN), before: 0.03, after: 0.6 }] }),
    ]);
    const lat = latency(true);
    lat.series[0]!.deviationStart = at(-44 * MIN);
    const [f] = cpuThrottling.analyze(input({}, [early, lat]));
    expect(f!.mitigation).toBeUndefined();
    expect(f!.refuting.map((e) => e.kind)).toContain('change');
    expect(f!.mechanism).toContain('before that change');
  });
});

describe('cpu-throttling: an injected sidecar limited by its injector config', () => {
  it('localises to the injector ConfigMap written before the throttled pods were created, with restore_config', () => {
    const proxy = (cpu: string): V1Container => ({ name: 'istio-proxy', image: 'istio/proxyv2:1.23.2', resources: { limits: { cpu, memory: '256Mi' } } });
    const injected = (name: string, cpu: string, created: Date): V1Pod => {
      const p = pod(name, container('1'));
      return { ...p, metadata: { ...p.metadata, creationTimestamp: created }, spec: { ...p.spec!, containers: [container('1'), proxy(cpu)] } };
    };
    const pods = [injected('recommender-7c9f8-xxxxx', '200m', at(-50 * MIN)), injected('recommender-7c9f8-yyyyy', '200m', at(-45 * MIN)), injected('recommender-7c9f8-zzzzz', '2', at(-3 * 24 * 60 * MIN))];
    const sidecar = (p: string, mean: number) => ({ ...series(p, mean, at(-60 * MIN), at(5 * MIN)), metric: { namespace: NS, pod: p, container: 'istio-proxy' } });
    const snapshot = emptySnapshot();
    snapshot.configMaps = [{ metadata: { name: 'istio-sidecar-injector', namespace: 'istio-system', managedFields: [{ manager: 'helm', operation: 'Update', time: at(-6 * 60 * MIN), fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:config': {}, 'f:values': {} } } }] }, keys: ['config', 'values'], hosts: [] }];
    snapshot.pods = pods;
    const base = input({ pods, workload: { metadata: { name: 'recommender', namespace: NS }, spec: { selector: {}, template: { spec: { containers: [container('1')] } } } } }, [throttleSummary([sidecar('recommender-7c9f8-xxxxx', 0.7), sidecar('recommender-7c9f8-yyyyy', 0.68), sidecar('recommender-7c9f8-zzzzz', 0.01)]), latency(true)]);
    const [f] = cpuThrottling.analyze({ ...base, cluster: { snapshot, topology: buildTopology(snapshot), walk: { subjects: [], starts: [], reached: new Map(), candidates: [] }, subjects: [] } });
    expect(f).toMatchObject({
      status: 'supported',
      family: 'config-change',
      component: { kind: 'ConfigMap', namespace: 'istio-system', name: 'istio-sidecar-injector' },
      facts: { object: 'ConfigMap/istio-sidecar-injector', editor: 'helm', container: 'istio-proxy', cpuLimit: '200m', metric: 'latency_p99' },
      mitigation: { action: 'restore_config', target: { kind: 'ConfigMap', namespace: 'istio-system', name: 'istio-sidecar-injector' } },
    });
    // The comparison a responder makes: pods injected before the change run the old limit, unthrottled.
    expect(f!.mechanism).toMatch(/on 2 pods created after it \(recommender-7c9f8-xxxxx, recommender-7c9f8-yyyyy\), while 1 older pod is not/);
  });
});

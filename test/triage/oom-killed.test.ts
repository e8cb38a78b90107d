import type { V1Container, V1Deployment, V1Pod, V1ReplicaSet } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { KubeEvidence } from '../../src/evidence/kubernetes/gather.js';
import { emptySurroundings } from '../../src/evidence/kubernetes/surroundings.js';
import type { MetricSummary } from '../../src/evidence/prometheus/types.js';
import type { TriageInput } from '../../src/triage/analyzer.js';
import { memoryBytes, oomKilled } from '../../src/triage/analyzers/oom-killed.js';

const onset = new Date('2025-03-01T12:00:00Z');
const at = (offsetMs: number) => new Date(onset.getTime() + offsetMs);
const MIN = 60_000;

const container = (limit: string, image = 'reg/search-api:3.2.1'): V1Container => ({ name: 'search-api', image, resources: { limits: { memory: limit } } });
function rs(name: string, revision: number, c: V1Container, createdAt: Date): V1ReplicaSet {
  return { metadata: { name, creationTimestamp: createdAt, annotations: { 'deployment.kubernetes.io/revision': String(revision) } }, spec: { selector: {}, template: { spec: { containers: [c] } } } };
}
function pod(name: string, limit: string, term: { finishedAt: Date }, waiting = true): V1Pod {
  return {
    metadata: { name, namespace: 'search', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'search-api-new', uid: 'u' }] },
    spec: { containers: [container(limit)] },
    status: {
      containerStatuses: [
        {
          name: 'search-api',
          ready: false,
          restartCount: 6,
          image: 'x',
          imageID: '',
          state: waiting ? { waiting: { reason: 'CrashLoopBackOff' } } : { running: { startedAt: at(-MIN) } },
          lastState: { terminated: { exitCode: 137, reason: 'OOMKilled', finishedAt: term.finishedAt } },
        },
      ],
    },
  };
}

const setResources = {
  manager: 'kubectl-set',
  operation: 'Update',
  time: at(-25 * MIN),
  fieldsV1: { 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"search-api"}': { 'f:resources': { 'f:limits': { 'f:memory': {} } } } } } } } },
};

function input(kube: Partial<KubeEvidence>, metrics?: TriageInput['metrics']): TriageInput {
  const workload: V1Deployment = {
    metadata: { name: 'search-api', namespace: 'search', annotations: { 'deployment.kubernetes.io/revision': '6' }, managedFields: [setResources] },
    spec: { selector: {}, template: { spec: { containers: [container('256Mi')] } } },
  };
  return {
    alert: { labels: {}, labelValues: [] } as unknown as TriageInput['alert'],
    onset,
    changes: [],
    metrics,
    kube: {
      ...emptySurroundings(),
      onset,
      target: { kind: 'Deployment', namespace: 'search', name: 'search-api' },
      workload,
      replicaSets: [rs('search-api-new', 6, container('256Mi'), at(-25 * MIN)), rs('search-api-old', 5, container('512Mi'), at(-9 * 24 * 60 * MIN))],
      pods: [pod('search-api-new-a', '256Mi', { finishedAt: at(-MIN) })],
      services: [{ service: { metadata: { name: 'search-api' } }, endpoints: { subsets: [{ notReadyAddresses: [{ ip: '10.0.0.1' }] }] } }],
      events: [],
      related: [],
      dependents: [],
      unhealthyPods: [],
      warningEvents: [],
      gaps: [],
      server: '',
      ...kube,
    },
  };
}

const ratio: MetricSummary = {
  id: 'memory_limit_ratio',
  title: 'Memory working set / limit',
  unit: 'ratio',
  badWhen: 'high',
  threshold: 0.9,
  query: 'sum by (pod, container) (container_memory_working_set_bytes{…}) / …',
  range: { from: at(-60 * MIN), to: onset },
  stepSeconds: 30,
  status: 'success',
  series: [{ metric: { pod: 'search-api-new-a', container: 'search-api' }, points: 50, nonFinite: 0, from: at(-25 * MIN), to: onset, first: 0.9, last: 0.97, min: 0.9, max: 0.98, mean: 0.95, baseline: null, changePoints: [] }],
  citation: { source: 'prometheus', ref: 'sum by (pod, container) (…)' },
};

describe('oom-killed', () => {
  it('parses memory quantities', () => {
    expect(memoryBytes('256Mi')).toBe(268435456);
    expect(memoryBytes('1G')).toBe(1e9);
    expect(memoryBytes('536870912')).toBe(536870912);
    expect(memoryBytes('lots')).toBeUndefined();
  });

  it('names the lowered limit, who lowered it, and proposes restoring it', () => {
    const [f] = oomKilled.analyze(input({}, { summaries: [ratio] }));
    expect(f!.status).toBe('supported');
    expect(f!.confidence).toBe(0.95);
    expect(f!.facts).toMatchObject({
      container: 'search-api',
      lastTermination: 'OOMKilled',
      exitCode: 137,
      memoryLimit: '256Mi',
      previousMemoryLimit: '512Mi',
      limitLowered: true,
      manager: 'kubectl-set',
      revision: 6,
      peakLimitRatio: 0.98,
    });
    expect(f!.facts!['changedAt']).toBe(at(-25 * MIN).toISOString());
    expect(f!.mitigation).toMatchObject({ action: 'set_resources', params: { container: 'search-api', limits: { memory: '512Mi' } } });
    expect(f!.mitigation!.command).toBe('kubectl set resources deployment/search-api -n search -c search-api --limits=memory=512Mi');
    expect(f!.supporting.map((e) => e.kind)).toEqual(expect.arrayContaining(['object', 'change', 'managed_fields', 'metric', 'endpoints']));
  });

  it('proposes a rollout undo when the lower limit came with a new image', () => {
    const [f] = oomKilled.analyze(input({ replicaSets: [rs('search-api-new', 6, container('256Mi', 'reg/search-api:3.3.0'), at(-10 * MIN)), rs('search-api-old', 5, container('512Mi'), at(-9 * 24 * 60 * MIN))] }));
    expect(f!.mitigation).toMatchObject({ action: 'rollout_undo', params: { toRevision: 5 } });
  });

  it('proposes nothing when the limit did not change', () => {
    const [f] = oomKilled.analyze(input({ replicaSets: [rs('search-api-new', 6, container('256Mi'), at(-20 * 24 * 60 * MIN))] }));
    expect(f!.status).toBe('supported');
    expect(f!.confidence).toBe(0.92);
    expect(f!.facts!['previousMemoryLimit']).toBeUndefined();
    expect(f!.mitigation).toBeUndefined();
  });

  it('marks an OOM kill from days ago, with the container running since, as unrelated', () => {
    const [f] = oomKilled.analyze(input({ pods: [pod('search-api-new-a', '256Mi', { finishedAt: at(-3 * 24 * 60 * MIN) }, false)] }));
    expect(f!.status).toBe('unrelated');
    expect(f!.reason).toContain('before the alert');
    expect(f!.mitigation).toBeUndefined();
  });

  it('returns nothing without OOM kills', () => {
    const p = pod('search-api-new-a', '256Mi', { finishedAt: at(-MIN) });
    p.status!.containerStatuses![0]!.lastState = { terminated: { exitCode: 1, reason: 'Error' } };
    expect(oomKilled.analyze(input({ pods: [p] }))).toEqual([]);
  });

  // The same limit in both revisions, the current one five hours old: only the memory curve can tell a leak.
  const sameLimit = () => ({
    workload: { metadata: { name: 'search-api', namespace: 'search', annotations: { 'deployment.kubernetes.io/revision': '6' } }, spec: { selector: {}, template: { spec: { containers: [container('512Mi', 'reg/search-api:3.3.0')] } } } } as V1Deployment,
    replicaSets: [rs('search-api-new', 6, container('512Mi', 'reg/search-api:3.3.0'), at(-5 * 60 * MIN)), rs('search-api-old', 5, container('512Mi'), at(-9 * 24 * 60 * MIN))],
    pods: [pod('search-api-new-a', '512Mi', { finishedAt: at(-MIN) }), pod('search-api-new-b', '512Mi', { finishedAt: at(-3 * MIN) })],
  });
  const workingSet = (series: { pod: string; min: number; max: number }[]): MetricSummary => ({
    ...ratio,
    id: 'memory_working_set',
    title: 'Memory working set',
    unit: 'bytes',
    threshold: undefined,
    series: series.map((x) => ({ metric: { pod: x.pod, container: 'search-api' }, points: 120, nonFinite: 0, from: at(-60 * MIN), to: onset, first: x.min, last: x.max, min: x.min, max: x.max, mean: (x.min + x.max) / 2, baseline: null, changePoints: [] })),
  });
  const MI = 2 ** 20;

  it('calls containers climbing from far below an unchanged limit to it a leak of the rollout they run, even hours old', () => {
    const [f] = oomKilled.analyze(input(sameLimit(), { summaries: [workingSet([{ pod: 'search-api-new-a', min: 120 * MI, max: 505 * MI }, { pod: 'search-api-new-b', min: 200 * MI, max: 500 * MI }])] }));
    expect(f!.facts).toMatchObject({ memoryGrowth: 'leak', revision: 6, previousRevision: 5, changedAt: at(-5 * 60 * MIN).toISOString(), image: 'reg/search-api:3.3.0', previousImage: 'reg/search-api:3.2.1' });
    expect(f!.mitigation).toMatchObject({ action: 'rollout_undo', params: { toRevision: 5 } });
    expect(f!.mechanism).toMatch(/a leak introduced with revision 6/);
  });

  it('does not call it a leak when the containers start near the limit (undersized, not leaking)', () => {
    const [f] = oomKilled.analyze(input(sameLimit(), { summaries: [workingSet([{ pod: 'search-api-new-a', min: 470 * MI, max: 510 * MI }, { pod: 'search-api-new-b', min: 480 * MI, max: 511 * MI }])] }));
    expect(f!.facts?.['memoryGrowth']).toBeUndefined();
    expect(f!.mitigation).toBeUndefined();
  });

  it('localises a limit the pod template never set to the LimitRange that defaulted it', () => {
    const noLimit: V1Container = { name: 'search-api', image: 'reg/search-api:3.2.1', resources: { requests: { cpu: '250m' } } };
    const workload: V1Deployment = { metadata: { name: 'search-api', namespace: 'search', annotations: { 'deployment.kubernetes.io/revision': '5' } }, spec: { selector: {}, template: { spec: { containers: [noLimit] } } } };
    const base = input({ workload, replicaSets: [rs('search-api-old', 5, noLimit, at(-9 * 24 * 60 * MIN))], pods: [pod('search-api-new-a', '128Mi', { finishedAt: at(-MIN) })] });
    const limitRange = { metadata: { name: 'defaults', namespace: 'search', managedFields: [{ manager: 'argocd-controller', operation: 'Apply', time: at(-2 * 24 * 60 * MIN) }] }, spec: { limits: [{ type: 'Container', _default: { memory: '128Mi' } }] } };
    const [f] = oomKilled.analyze({ ...base, cluster: { snapshot: { limitRanges: [limitRange] } } as never });
    expect(f!.component).toEqual({ kind: 'LimitRange', namespace: 'search', name: 'defaults' });
    expect(f!.facts).toMatchObject({ memoryLimit: '128Mi', limitDefaultedBy: 'LimitRange/defaults', manager: 'argocd-controller' });
    expect(f!.supporting.some((e) => e.citation.ref.includes('limitranges/defaults'))).toBe(true);
    // A limit the template does set is the workload's own, whatever the namespace defaults.
    const [own] = oomKilled.analyze({ ...input({}), cluster: { snapshot: { limitRanges: [{ ...limitRange, spec: { limits: [{ type: 'Container', _default: { memory: '256Mi' } }] } }] } } as never });
    expect(own!.component).toMatchObject({ kind: 'Deployment', name: 'search-api' });
  });

  it('localises an injected sidecar\'s limit to the injector ConfigMap edited before its pods were created', () => {
    const proxy = (limit: string): V1Container => ({ name: 'istio-proxy', image: 'istio/proxyv2:1.23.2', resources: { limits: { memory: limit } } });
    const sidecarPod = (name: string, limit: string, created: Date): V1Pod => {
      const p = pod(name, '256Mi', { finishedAt: at(-MIN) });
      return { ...p, metadata: { ...p.metadata!, creationTimestamp: created }, spec: { containers: [container('2Gi'), proxy(limit)] }, status: { containerStatuses: [{ ...p.status!.containerStatuses![0]!, name: 'istio-proxy' }] } };
    };
    const injector = { metadata: { name: 'istio-sidecar-injector', namespace: 'istio-system', managedFields: [{ manager: 'helm', operation: 'Update', time: at(-160 * MIN), fieldsV1: { 'f:data': { 'f:config': {}, 'f:values': {} } } }] }, keys: ['config', 'values'], hosts: [] };
    const fresh = sidecarPod('search-api-new-a', '128Mi', at(-20 * MIN));
    const older = { ...sidecarPod('reviews-api-7c9d-x1y2z', '1Gi', at(-3 * 24 * 60 * MIN)), metadata: { name: 'reviews-api-7c9d-x1y2z', namespace: 'community', creationTimestamp: at(-3 * 24 * 60 * MIN) } };
    const base = input({ pods: [fresh] });
    const [f] = oomKilled.analyze({ ...base, cluster: { snapshot: { limitRanges: [], configMaps: [injector], pods: [fresh, older] } } as never });
    expect(f!.component).toEqual({ kind: 'ConfigMap', namespace: 'istio-system', name: 'istio-sidecar-injector' });
    expect(f!.facts).toMatchObject({ container: 'istio-proxy', memoryLimit: '128Mi', object: 'ConfigMap/istio-sidecar-injector', keys: 'values', editor: 'helm', changedAt: at(-160 * MIN).toISOString() });
    expect(f!.affected?.[0]).toEqual({ kind: 'Deployment', namespace: 'search', name: 'search-api' });
    expect(f!.supporting.map((e) => e.summary).join(' ')).toContain('reviews-api-7c9d-x1y2z: 1Gi');
    // The template overriding the proxy's memory by annotation makes it the workload's own setting.
    const annotated = input({ pods: [fresh], workload: { ...base.kube.workload!, spec: { ...base.kube.workload!.spec!, template: { metadata: { annotations: { 'sidecar.istio.io/proxyMemoryLimit': '128Mi' } }, spec: base.kube.workload!.spec!.template.spec } } } as V1Deployment });
    const [own] = oomKilled.analyze({ ...annotated, cluster: { snapshot: { limitRanges: [], configMaps: [injector], pods: [fresh] } } as never });
    expect(own!.component).toMatchObject({ kind: 'Deployment', name: 'search-api' });
  });

  it('localises a limit the pods run but their template does not to the VerticalPodAutoscaler that rewrote it', () => {
    const p = pod('search-api-new-a', '134217728', { finishedAt: at(-MIN) });
    const rewritten: V1Pod = { ...p, metadata: { ...p.metadata!, annotations: { vpaObservedContainers: 'search-api', vpaUpdates: 'Pod resources updated by search-api: container 0: memory request, memory limit' } }, spec: { containers: [{ ...container('134217728'), resources: { requests: { memory: '67108864' }, limits: { memory: '134217728' } } }] } };
    const base = input({ pods: [rewritten], replicaSets: [rs('search-api-new', 6, container('256Mi'), at(-9 * 24 * 60 * MIN))] });
    const vpaObj = (targetMemory: string) => ({ apiVersion: 'autoscaling.k8s.io/v1', kind: 'VerticalPodAutoscaler', metadata: { name: 'search-api', namespace: 'search' }, spec: { updatePolicy: { updateMode: 'Auto' } }, status: { recommendation: { containerRecommendations: [{ containerName: 'search-api', target: { memory: targetMemory } }] } } });
    const [f] = oomKilled.analyze({ ...base, cluster: { snapshot: { limitRanges: [], configMaps: [], pods: [rewritten], custom: { VerticalPodAutoscaler: [vpaObj('200Mi')] } } } as never });
    expect(f).toMatchObject({ component: { kind: 'VerticalPodAutoscaler', namespace: 'search', name: 'search-api' }, facts: { memoryLimit: '134217728', previousMemoryLimit: '256Mi', updateMode: 'Auto' }, mitigation: { action: 'rollout_restart' } });
    // A recommendation still as low as what the pods got: restarting would re-apply it, so no proposal.
    const [low] = oomKilled.analyze({ ...base, cluster: { snapshot: { limitRanges: [], configMaps: [], pods: [rewritten], custom: { VerticalPodAutoscaler: [vpaObj('64Mi')] } } } as never });
    expect(low!.component).toMatchObject({ kind: 'VerticalPodAutoscaler' });
    expect(low!.mitigation).toBeUndefined();
  });
});

import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { Alert } from '../../src/alerts/types.js';
import type { KubeEvidence } from '../../src/evidence/kubernetes/gather.js';
import { emptySurroundings } from '../../src/evidence/kubernetes/surroundings.js';
import type { TriageInput } from '../../src/triage/analyzer.js';
import { nodePressure, nodeTroubles } from '../../src/triage/analyzers/node-pressure.js';

const onset = new Date('2026-03-01T12:00:00Z');
const at = (offsetMin: number) => new Date(onset.getTime() + offsetMin * 60_000);
const alert: Alert = { source: 'alertmanager', status: 'firing', title: 't', alertName: 'KubeDeploymentReplicasMismatch', labels: {}, labelValues: ['search-api', 'catalog'], annotations: {}, count: 1, text: '' };
const EVICTED_MSG = 'The node was low on resource: memory. Threshold quantity: 100Mi, available: 87364Ki. Container search-api was using 2841236Ki, request is 2Gi, has larger consumption of its request. ';

function node(name: string, trouble?: { type: string; status: string; since: Date }): V1Node {
  const conds = ['MemoryPressure', 'DiskPressure', 'PIDPressure'].map((type) => ({ type, status: 'False', lastTransitionTime: at(-60 * 24 * 100) }));
  const ready = { type: 'Ready', status: 'True', lastTransitionTime: at(-60 * 24 * 100) };
  const all = [...conds, ready].map((c) => (trouble && c.type === trouble.type ? { ...c, status: trouble.status, lastTransitionTime: trouble.since, message: 'kubelet has insufficient memory available' } : c));
  return { metadata: { name }, status: { conditions: all } };
}
const pod = (name: string, nodeName: string | undefined, status: V1Pod['status']): V1Pod => ({ metadata: { name, namespace: 'catalog' }, spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'search-api' }] }, status });
const running = (name: string, nodeName: string) => pod(name, nodeName, { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] });
const evicted = (name: string, nodeName: string) => pod(name, nodeName, { phase: 'Failed', reason: 'Evicted', message: EVICTED_MSG });
const pending = (name: string) => pod(name, undefined, { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] });

function input(kube: Partial<KubeEvidence>): TriageInput {
  return {
    alert,
    onset,
    changes: [],
    kube: {
      ...emptySurroundings(),
      onset,
      target: { kind: 'Deployment', namespace: 'catalog', name: 'search-api' },
      workload: { metadata: { name: 'search-api', namespace: 'catalog' }, spec: { replicas: 4, selector: {}, template: {} } },
      replicaSets: [],
      pods: [],
      services: [{ service: { metadata: { name: 'search-api', namespace: 'catalog' } } }],
      events: [],
      related: [],
      dependents: [{ kind: 'Deployment', name: 'catalog-bff', via: 'env SEARCH_API_URL' }],
      unhealthyPods: [],
      warningEvents: [],
      gaps: [],
      server: 'https://k8s.example',
      ...kube,
    },
  };
}

describe('nodeTroubles', () => {
  it('lists pressure before NotReady and ignores healthy nodes', () => {
    const t = nodeTroubles([node('node-1'), node('node-2', { type: 'Ready', status: 'Unknown', since: at(-1) }), node('node-3', { type: 'MemoryPressure', status: 'True', since: at(-3) })]);
    expect(t.map((x) => `${x.name}:${x.condition}`)).toEqual(['node-3:MemoryPressure', 'node-2:NotReady']);
  });
});

describe('node-pressure analyzer', () => {
  it('blames a node under MemoryPressure that evicted the target pods at the onset', () => {
    const findings = nodePressure.analyze(
      input({
        nodes: [node('node-1'), node('node-2'), node('node-3', { type: 'MemoryPressure', status: 'True', since: at(-3) })],
        pods: [running('a', 'node-1'), running('b', 'node-2'), evicted('c', 'node-3'), evicted('d', 'node-3'), pending('e'), pending('f')],
        events: [{ metadata: { name: 'c.1', namespace: 'catalog' }, involvedObject: { kind: 'Pod', name: 'c' }, reason: 'Evicted', message: EVICTED_MSG, type: 'Warning', lastTimestamp: at(-2.5) }],
        warningEvents: [{ metadata: { name: 'node-3.1', namespace: 'default' }, involvedObject: { kind: 'Node', name: 'node-3' }, reason: 'EvictionThresholdMet', message: 'Attempting to reclaim memory', type: 'Warning', lastTimestamp: at(-2.5) }],
      }),
    );
    expect(findings).toHaveLength(1);
    const f = findings[0]!;
    expect(f).toMatchObject({
      analyzer: 'node-pressure',
      status: 'supported',
      // The faulty object is the node (docs/fault-families.md); the workload it evicted leads the affected.
      component: { kind: 'Node', name: 'node-3' },
      facts: { node: 'node-3', condition: 'MemoryPressure', evictedPods: 2, evictedResource: 'memory', pendingPods: 2, conditionSince: at(-3).toISOString() },
    });
    expect(f.confidence).toBeGreaterThanOrEqual(0.9);
    expect(f.mitigation).toMatchObject({ action: 'cordon_node', target: { kind: 'Node', namespace: 'catalog', name: 'node-3' }, command: 'kubectl cordon node-3' });
    expect(f.affected).toEqual([
      { kind: 'Deployment', namespace: 'catalog', name: 'search-api' },
      { kind: 'Service', namespace: 'catalog', name: 'search-api' },
      { kind: 'Deployment', namespace: 'catalog', name: 'catalog-bff' },
    ]);
    expect(f.supporting.some((e) => e.summary.includes('EvictionThresholdMet'))).toBe(true);
    expect(f.supporting.some((e) => e.summary.includes('other nodes Ready without pressure: node-1, node-2'))).toBe(true);
  });

  it('counts what the node evicted from other workloads too, pods that are gone included (only their event is left)', () => {
    const gone = { metadata: { name: 'cohorts-1-x7k2p.1', namespace: 'reports' }, involvedObject: { kind: 'Pod', name: 'cohorts-1-x7k2p', namespace: 'reports' }, source: { component: 'kubelet', host: 'node-3' }, reason: 'Evicted', message: EVICTED_MSG, type: 'Warning', lastTimestamp: at(-2.8) };
    const elsewhere = { ...gone, metadata: { name: 'other.1', namespace: 'web' }, involvedObject: { kind: 'Pod', name: 'web-1-abcde', namespace: 'web' }, source: { component: 'kubelet', host: 'node-1' } };
    const [f] = nodePressure.analyze(
      input({
        nodes: [node('node-1'), node('node-3', { type: 'MemoryPressure', status: 'True', since: at(-3) })],
        pods: [running('a', 'node-1'), evicted('c', 'node-3'), pending('e')],
        warningEvents: [gone, elsewhere],
      }),
    );
    // The target's one eviction and the report pod's; not the eviction on another node.
    expect(f!.facts).toMatchObject({ evictedPods: 2, targetEvictedPods: 1 });
    expect(f!.supporting.some((e) => e.summary.includes('reports/cohorts-1-x7k2p'))).toBe(true);
    expect(f!.supporting.some((e) => e.summary.includes('web-1-abcde'))).toBe(false);
  });

  it('marks a troubled node that runs none of the target pods unrelated', () => {
    const [f] = nodePressure.analyze(
      input({
        nodes: [node('node-1'), node('node-4', { type: 'Ready', status: 'False', since: at(-10) })],
        pods: [running('a', 'node-1'), running('b', 'node-1')],
      }),
    );
    expect(f).toMatchObject({ status: 'unrelated', component: { kind: 'Node', name: 'node-4' } });
    expect(f!.reason).toContain('runs no pod of catalog/search-api');
  });

  it('does not make a long-standing condition the cause of this onset', () => {
    const [f] = nodePressure.analyze(
      input({
        nodes: [node('node-1', { type: 'DiskPressure', status: 'True', since: at(-3 * 24 * 60) })],
        pods: [running('a', 'node-1')],
      }),
    );
    expect(f!.status).toBe('inconclusive');
    expect(f!.confidence).toBeLessThan(0.5);
    expect(f!.refuting[0]!.summary).toContain('3 days before the alert');
  });

  it('returns nothing when every node is healthy (a NotReady six days ago is history)', () => {
    expect(nodePressure.analyze(input({ nodes: [node('node-1'), node('node-2')], pods: [running('a', 'node-1')] }))).toEqual([]);
  });
});

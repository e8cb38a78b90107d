/** A DaemonSet rollout that raised its requests on every node starves a workload's scale-out. */
import type { V1ControllerRevision, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { ClusterTriageInput, TriageInput } from '../../../src/triage/analyzer.js';
import { daemonsetSqueeze } from '../../../src/triage/cluster/daemonset-squeeze.js';
import { buildTopology } from '../../../src/topology/graph.js';
import { emptySnapshot } from '../../../src/topology/snapshot.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const at = (min: number) => new Date(ONSET.getTime() + min * 60_000);
const MSG = '0/5 nodes are available: 5 Insufficient cpu. preemption: 0/5 nodes are available: 5 No preemption victims found for incoming pod.';

const rev = (n: number, cpu: string, createdMin: number): V1ControllerRevision => ({ metadata: { name: `fluent-bit-${n}abc`, namespace: 'logging', creationTimestamp: at(createdMin), ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'fluent-bit', uid: 'u-fb', controller: true }] }, revision: n, data: { spec: { template: { spec: { containers: [{ name: 'fluent-bit', resources: { requests: { cpu } } }] } } } } });
const pending = (name: string): V1Pod => ({ metadata: { name, namespace: 'search', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'search-api-7d9f8', uid: 'rs', controller: true }] }, spec: { containers: [] }, status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: MSG }] } });

function world(newCpu: string, createdMin = -48): ClusterTriageInput {
  const s = emptySnapshot();
  s.deployments = [{ metadata: { name: 'search-api', namespace: 'search', uid: 'u-s' }, spec: { selector: { matchLabels: { app: 'search-api' } }, template: { metadata: { labels: { app: 'search-api' } }, spec: { containers: [] } } } }];
  s.replicaSets = [{ metadata: { name: 'search-api-7d9f8', namespace: 'search', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'search-api', uid: 'u-s', controller: true }] } }];
  s.daemonSets = [{ metadata: { name: 'fluent-bit', namespace: 'logging', uid: 'u-fb' }, spec: { selector: { matchLabels: { app: 'fluent-bit' } }, template: { spec: { containers: [] } } }, status: { desiredNumberScheduled: 5, currentNumberScheduled: 5, numberMisscheduled: 0, numberReady: 3 } }];
  s.controllerRevisions = [rev(6, '100m', -60 * 24 * 60), rev(7, newCpu, createdMin)];
  s.pods = [pending('search-api-7d9f8-aaaa1'), pending('search-api-7d9f8-aaaa2')];
  const candidate = { kube: { target: { kind: 'Deployment', namespace: 'search', name: 'search-api' }, events: [] } } as unknown as TriageInput;
  return { alert: { labels: {}, labelValues: [] } as never, onset: ONSET, cluster: { snapshot: s, topology: buildTopology(s), walk: { subjects: [], starts: [], reached: new Map(), candidates: [] }, subjects: [] }, inputs: [candidate], changes: [], metrics: [], jobs: [] };
}

describe('daemonset-squeeze', () => {
  it('blames the DaemonSet revision that multiplied its cpu request before the pods stopped fitting', () => {
    const [f] = daemonsetSqueeze.analyze(world('1500m'));
    expect(f).toMatchObject({ family: 'unschedulable', status: 'supported', component: { kind: 'DaemonSet', namespace: 'logging', name: 'fluent-bit' }, facts: { reason: 'insufficient_cpu', requestedCpu: '1500m', previousRequestedCpu: '100m', revision: 7, previousRevision: 6, pendingPods: 2, victims: 'search-api' } });
    expect(f!.mechanism).toMatch(/--to-revision=6/);
  });

  it('leaves a small raise, or an old one, alone', () => {
    expect(daemonsetSqueeze.analyze(world('150m'))).toEqual([]);
    expect(daemonsetSqueeze.analyze(world('1500m', -3 * 24 * 60))).toEqual([]);
  });
});

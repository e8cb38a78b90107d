import type { CoreV1Event, V1Node, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { Alert } from '../../../src/alerts/types.js';
import { emptyKubeEvidence, type KubeEvidence } from '../../../src/evidence/kubernetes/gather.js';
import type { ComponentRef } from '../../../src/evidence/types.js';
import { buildTopology } from '../../../src/topology/graph.js';
import { emptySnapshot, type ClusterSnapshot } from '../../../src/topology/snapshot.js';
import { walkFrom } from '../../../src/topology/walk.js';
import type { ClusterTriageInput, TriageInput } from '../../../src/triage/analyzer.js';
import { candidatePods, nodeHealth } from '../../../src/triage/cluster/node-health.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const at = (min: number) => new Date(ONSET.getTime() + min * 60_000);
const iso = (min: number) => at(min).toISOString();
const alert: Alert = { source: 'alertmanager', status: 'firing', title: '[FIRING:1] KubeDeploymentReplicasMismatch', alertName: 'KubeDeploymentReplicasMismatch', labels: { namespace: 'shop', deployment: 'checkout' }, labelValues: [], annotations: {}, count: 1, text: '' };

const OLD = -100 * 24 * 60;

function node(name: string, ip: string, ready: { status: 'True' | 'False' | 'Unknown'; since: number; reason?: string; message?: string } = { status: 'True', since: OLD }, extra: Partial<V1Node> = {}): V1Node {
  const reason = ready.reason ?? (ready.status === 'True' ? 'KubeletReady' : ready.status === 'Unknown' ? 'NodeStatusUnknown' : 'KubeletNotReady');
  const message = ready.message ?? (ready.status === 'True' ? 'kubelet is posting ready status' : ready.status === 'Unknown' ? 'Kubelet stopped posting node status.' : 'PLEG is not healthy: pleg was last seen active 3m10s ago; threshold is 3m0s');
  const heartbeat = ready.status === 'Unknown' ? at(ready.since - 1) : at(-0.5);
  const pressure = (type: string, r: string) => ({ type, status: ready.status === 'Unknown' ? 'Unknown' : 'False', reason: ready.status === 'Unknown' ? 'NodeStatusUnknown' : r, lastHeartbeatTime: heartbeat, lastTransitionTime: ready.status === 'Unknown' ? at(ready.since) : at(OLD) });
  return {
    metadata: { name, creationTimestamp: at(-500 * 24 * 60), labels: { 'kubernetes.io/hostname': name } },
    spec: { podCIDR: '10.244.1.0/24', ...extra.spec },
    status: {
      addresses: [
        { type: 'InternalIP', address: ip },
        { type: 'Hostname', address: name },
      ],
      conditions: [
        pressure('MemoryPressure', 'KubeletHasSufficientMemory'),
        pressure('DiskPressure', 'KubeletHasNoDiskPressure'),
        pressure('PIDPressure', 'KubeletHasSufficientPID'),
        { type: 'Ready', status: ready.status, reason, message, lastHeartbeatTime: heartbeat, lastTransitionTime: at(ready.since) },
      ],
    },
    ...(extra.metadata ? { metadata: { name, ...extra.metadata } } : {}),
  };
}

const unreachableTaints = (min: number) => [
  { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule', timeAdded: at(min) },
  { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: at(min) },
];

function pod(name: string, nodeName: string | undefined, ready = true, extra: Partial<V1Pod['metadata']> = {}): V1Pod {
  return {
    metadata: { name, namespace: 'shop', labels: { app: 'checkout', 'pod-template-hash': '7d9f8b6c5' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'checkout-7d9f8b6c5', uid: 'rs-1', controller: true }], creationTimestamp: at(-3 * 24 * 60), ...extra },
    spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'checkout', image: 'registry.example/shop/checkout:4.2.0' }] },
    status: nodeName
      ? { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: ready ? at(-3 * 24 * 60) : at(-3) }], containerStatuses: [{ name: 'checkout', ready, restartCount: 0, image: 'registry.example/shop/checkout:4.2.0', imageID: '', state: { running: { startedAt: at(-3 * 24 * 60) } } }] }
      : { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', lastTransitionTime: at(-8) }] },
  };
}

function world(nodes: V1Node[], pods: V1Pod[], events: CoreV1Event[] = [], more: Partial<ClusterSnapshot> = {}): ClusterTriageInput {
  const snapshot: ClusterSnapshot = {
    ...emptySnapshot(),
    readAt: at(1),
    namespaces: [{ metadata: { name: 'shop' } }, { metadata: { name: 'batch' } }],
    nodes,
    deployments: [
      {
        metadata: { name: 'checkout', namespace: 'shop', uid: 'dep-1' },
        spec: { replicas: 3, selector: { matchLabels: { app: 'checkout' } }, template: { metadata: { labels: { app: 'checkout' } }, spec: { containers: [{ name: 'checkout', image: 'registry.example/shop/checkout:4.2.0' }] } } },
      },
      ...(more.deployments ?? []),
    ],
    replicaSets: [{ metadata: { name: 'checkout-7d9f8b6c5', namespace: 'shop', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'checkout', uid: 'dep-1', controller: true }] } }, ...(more.replicaSets ?? [])],
    pods: [...pods, ...(more.pods ?? [])],
    services: [{ metadata: { name: 'checkout', namespace: 'shop' }, spec: { selector: { app: 'checkout' }, ports: [{ port: 8080 }] } }],
    warningEvents: events.filter((e) => e.type === 'Warning'),
  };
  const topology = buildTopology(snapshot);
  const subjects = [{ ref: { kind: 'Deployment', namespace: 'shop', name: 'checkout' } as ComponentRef, how: 'label deployment=checkout' }];
  const walk = walkFrom(subjects, topology);
  const kube: KubeEvidence = {
    ...emptyKubeEvidence(ONSET, 'https://k8s.test'),
    target: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
    workload: snapshot.deployments[0]!,
    pods: pods.filter((p) => p.metadata?.labels?.['app'] === 'checkout'),
    services: [{ service: snapshot.services[0]! }],
    events: events.filter((e) => (e.metadata?.namespace ?? '') === 'shop'),
    nodes,
    warningEvents: snapshot.warningEvents,
  };
  const input: TriageInput = { alert, onset: ONSET, kube, changes: [], cluster: { snapshot, topology, walk, subjects, candidate: walk.candidates[0]! } };
  return { alert, onset: ONSET, cluster: { snapshot, topology, walk, subjects }, inputs: [input], changes: [], metrics: [], jobs: [] };
}

const ev = (name: string, ns: string, involved: CoreV1Event['involvedObject'], reason: string, message: string, type: 'Normal' | 'Warning', min: number, extra: Partial<CoreV1Event> = {}): CoreV1Event => ({
  metadata: { name, namespace: ns, creationTimestamp: at(min) },
  involvedObject: involved,
  reason,
  message,
  type,
  firstTimestamp: at(min),
  lastTimestamp: at(min),
  count: 1,
  ...extra,
});

describe('node-health', () => {
  it('blames a node that stopped posting status under a candidate pod, with the condition, since, pods and scope', () => {
    const input = world(
      [node('node-1', '10.40.0.11'), node('node-2', '10.40.0.12', { status: 'Unknown', since: -4 }, { spec: { taints: unreachableTaints(-4) } }), node('node-3', '10.40.0.13')],
      [pod('checkout-7d9f8b6c5-a1b2c', 'node-1'), pod('checkout-7d9f8b6c5-d3e4f', 'node-2', false), pod('checkout-7d9f8b6c5-g5h6i', 'node-3')],
      [ev('checkout-7d9f8b6c5-d3e4f.1823', 'shop', { kind: 'Pod', namespace: 'shop', name: 'checkout-7d9f8b6c5-d3e4f' }, 'NodeNotReady', 'Node is not ready', 'Warning', -3.5, { source: { component: 'node-controller' } })],
    );
    const findings = nodeHealth.analyze(input);
    expect(findings).toHaveLength(1);
    const f = findings[0]!;
    expect(f).toMatchObject({
      key: 'node-health:/Node/node-2',
      analyzer: 'node-health',
      family: 'node-not-ready',
      status: 'supported',
      component: { kind: 'Node', name: 'node-2' },
      facts: { node: 'node-2', condition: 'Unknown', conditionSince: iso(-4), podsOnNode: 1, reason: 'NodeStatusUnknown' },
    });
    expect(f.confidence).toBeGreaterThanOrEqual(0.85);
    expect(f.confidence).toBeLessThanOrEqual(0.92);
    expect(f.mitigation).toMatchObject({ action: 'cordon_node', target: { kind: 'Node', namespace: 'shop', name: 'node-2' }, command: 'kubectl cordon node-2' });
    expect(f.affected).toEqual([
      { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
      { kind: 'Service', namespace: 'shop', name: 'checkout' },
    ]);
    const refs = f.supporting.map((e) => e.citation.ref);
    expect(refs).toContain('api/v1/nodes/node-2#status.conditions[type=Ready]');
    expect(refs).toContain('api/v1/nodes/node-2#spec.taints');
    expect(refs).toContain('api/v1/namespaces/shop/events/checkout-7d9f8b6c5-d3e4f.1823');
    expect(f.supporting.some((e) => /Kubelet stopped posting node status/.test(e.summary))).toBe(true);
    expect(f.supporting.some((e) => e.summary.includes('other nodes Ready: node-1, node-3'))).toBe(true);
    expect(f.mechanism).toMatch(/stopped reporting.*since 11:56:00 \(4 min before the alert\)/);
    expect(f.refuting).toEqual([]);
  });

  it('reads KubeletNotReady (Ready=False) as NotReady and keeps its message', () => {
    const input = world(
      [node('node-1', '10.40.0.11'), node('node-2', '10.40.0.12', { status: 'False', since: -6, message: 'container runtime is down' })],
      [pod('checkout-7d9f8b6c5-a1b2c', 'node-1'), pod('checkout-7d9f8b6c5-d3e4f', 'node-2', false)],
    );
    const [f] = nodeHealth.analyze(input);
    expect(f).toMatchObject({ status: 'supported', facts: { condition: 'NotReady', reason: 'KubeletNotReady', podsOnNode: 1 } });
    expect(f!.mechanism).toContain('container runtime is down');
  });

  it('says nothing about a node that is Ready again since before the onset, however recently it blinked', () => {
    const input = world(
      [node('node-1', '10.40.0.11'), node('node-2', '10.40.0.12', { status: 'True', since: -20 })],
      [pod('checkout-7d9f8b6c5-a1b2c', 'node-1'), pod('checkout-7d9f8b6c5-d3e4f', 'node-2')],
      [ev('node-2.1', 'default', { kind: 'Node', name: 'node-2' }, 'NodeNotReady', 'Node node-2 status is now: NodeNotReady', 'Warning', -24)],
    );
    expect(nodeHealth.analyze(input)).toEqual([]);
    // …and a NotReady days ago, Ready since.
    expect(nodeHealth.analyze(world([node('node-1', '10.40.0.11', { status: 'True', since: -6 * 24 * 60 })], [pod('checkout-7d9f8b6c5-a1b2c', 'node-1')]))).toEqual([]);
  });

  it('keeps a node that recovered only after the onset open: it was not Ready when the symptoms began', () => {
    const input = world(
      [node('node-1', '10.40.0.11'), node('node-2', '10.40.0.12', { status: 'True', since: 2 })],
      [pod('checkout-7d9f8b6c5-a1b2c', 'node-1'), pod('checkout-7d9f8b6c5-d3e4f', 'node-2')],
      [ev('node-2.1', 'default', { kind: 'Node', name: 'node-2' }, 'NodeNotReady', 'Node node-2 status is now: NodeNotReady', 'Warning', -6)],
    );
    const [f] = nodeHealth.analyze(input);
    expect(f).toMatchObject({ status: 'open', component: { kind: 'Node', name: 'node-2' }, facts: { condition: 'NotReady', conditionSince: iso(-6) } });
    expect(f!.confidence).toBeLessThan(0.6);

    // The node controller's event on the pod says the same.
    const viaPod = world(
      [node('node-1', '10.40.0.11'), node('node-2', '10.40.0.12', { status: 'True', since: 2 })],
      [pod('checkout-7d9f8b6c5-a1b2c', 'node-1'), pod('checkout-7d9f8b6c5-d3e4f', 'node-2')],
      [ev('checkout-7d9f8b6c5-d3e4f.9', 'shop', { kind: 'Pod', namespace: 'shop', name: 'checkout-7d9f8b6c5-d3e4f' }, 'NodeNotReady', 'Node is not ready', 'Warning', -5)],
    );
    expect(nodeHealth.analyze(viaPod)[0]).toMatchObject({ status: 'open', facts: { conditionSince: iso(-5) } });
    // Without any record of when it went bad, a transition after the onset proves nothing about the onset.
    const unknown = world([node('node-1', '10.40.0.11'), node('node-2', '10.40.0.12', { status: 'True', since: 2 })], [pod('checkout-7d9f8b6c5-d3e4f', 'node-2')]);
    expect(nodeHealth.analyze(unknown)).toEqual([]);
  });

  it('marks a dead node that runs none of the candidates\' pods unrelated', () => {
    const input = world(
      [node('node-1', '10.40.0.11'), node('node-4', '10.40.0.14', { status: 'Unknown', since: -15 })],
      [pod('checkout-7d9f8b6c5-a1b2c', 'node-1'), pod('checkout-7d9f8b6c5-d3e4f', 'node-1')],
    );
    const [f] = nodeHealth.analyze(input);
    expect(f).toMatchObject({ status: 'unrelated', component: { kind: 'Node', name: 'node-4' }, supporting: [] });
    expect(f!.reason).toMatch(/runs none of the pods/);
  });

  it('does not make a node NotReady for days the cause of this onset', () => {
    const input = world([node('node-1', '10.40.0.11', { status: 'False', since: -3 * 24 * 60 })], [pod('checkout-7d9f8b6c5-a1b2c', 'node-1', false)]);
    const [f] = nodeHealth.analyze(input);
    expect(f!.status).toBe('inconclusive');
    expect(f!.confidence).toBeLessThan(0.5);
    expect(f!.refuting[0]!.summary).toContain('3 days before the alert');
  });

  it('blames a cordon only when the pods it sent away cannot be placed', () => {
    const cordoned = node('node-2', '10.40.0.12', undefined, {
      spec: { unschedulable: true, taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }] },
      metadata: {
        creationTimestamp: at(-500 * 24 * 60),
        managedFields: [
          { manager: 'kubelet', operation: 'Update', subresource: 'status', time: at(-1), fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:conditions': {} } } },
          { manager: 'kubectl-cordon', operation: 'Update', time: at(-12), fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:unschedulable': {} } } },
        ],
      },
    });
    const pending = pod('checkout-7d9f8b6c5-zz9yy', undefined);
    const input = world(
      [node('node-1', '10.40.0.11'), cordoned, node('node-3', '10.40.0.13')],
      [pod('checkout-7d9f8b6c5-a1b2c', 'node-1'), pod('checkout-7d9f8b6c5-g5h6i', 'node-3'), pending],
      [
        ev('checkout-7d9f8b6c5-zz9yy.1', 'shop', { kind: 'Pod', namespace: 'shop', name: 'checkout-7d9f8b6c5-zz9yy' }, 'FailedScheduling', '0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) didn\'t match pod anti-affinity rules. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.', 'Warning', -2),
      ],
    );
    const [f] = nodeHealth.analyze(input);
    expect(f).toMatchObject({ status: 'supported', component: { kind: 'Node', name: 'node-2' }, facts: { condition: 'Unschedulable', reason: 'NodeNotSchedulable', pendingPods: 1, podsOnNode: 0, conditionSince: iso(-12) } });
    expect(f!.confidence).toBeLessThan(0.85);
    expect(f!.supporting.map((e) => e.citation.ref)).toContain('api/v1/nodes/node-2#metadata.managedFields[1]');
    expect(f!.supporting.some((e) => /node\(s\) were unschedulable/.test(e.summary))).toBe(true);
    expect(f!.affected).toContainEqual({ kind: 'Deployment', namespace: 'shop', name: 'checkout' });

    // Cordoned while its pods keep running and nothing is Pending: routine maintenance, at most open.
    const calm = world([node('node-1', '10.40.0.11'), cordoned], [pod('checkout-7d9f8b6c5-a1b2c', 'node-1'), pod('checkout-7d9f8b6c5-d3e4f', 'node-2')]);
    const [g] = nodeHealth.analyze(calm);
    expect(g).toMatchObject({ status: 'open', facts: { condition: 'Unschedulable', podsOnNode: 1 } });
    expect(g!.confidence).toBeLessThan(0.5);
  });

  it('counts the Terminating pods an unreachable node keeps, and ignores workloads reached only through DNS', () => {
    const input = world(
      [node('node-1', '10.40.0.11'), node('node-2', '10.40.0.12', { status: 'Unknown', since: -9 }, { spec: { taints: unreachableTaints(-9) } })],
      [pod('checkout-7d9f8b6c5-a1b2c', 'node-1'), pod('checkout-7d9f8b6c5-d3e4f', 'node-2', false, { deletionTimestamp: at(-4) })],
    );
    const [f] = nodeHealth.analyze(input);
    expect(f).toMatchObject({ status: 'supported', facts: { podsOnNode: 1 } });
    expect(f!.mechanism).toContain('1 Terminating');
    expect(candidatePods(input).map((p) => p.pod.metadata?.name)).toEqual(['checkout-7d9f8b6c5-a1b2c', 'checkout-7d9f8b6c5-d3e4f']);
  });

  it('returns nothing without nodes or when every node is healthy', () => {
    expect(nodeHealth.analyze(world([], [pod('checkout-7d9f8b6c5-a1b2c', 'node-1')]))).toEqual([]);
    expect(nodeHealth.analyze(world([node('node-1', '10.40.0.11'), node('node-2', '10.40.0.12')], [pod('checkout-7d9f8b6c5-a1b2c', 'node-1')]))).toEqual([]);
  });
});

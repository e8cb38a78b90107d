import type { V1Node, V1Pod, V1ReplicaSet } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { Alert } from '../../src/alerts/types.js';
import type { KubeEvidence } from '../../src/evidence/kubernetes/gather.js';
import { emptySurroundings } from '../../src/evidence/kubernetes/surroundings.js';
import type { TriageInput } from '../../src/triage/analyzer.js';
import { parseQuantity, parseSchedulerMessage, unschedulable } from '../../src/triage/analyzers/unschedulable.js';

const onset = new Date('2026-03-01T12:00:00Z');
const at = (offsetMin: number) => new Date(onset.getTime() + offsetMin * 60_000);
const alert: Alert = { source: 'alertmanager', status: 'firing', title: 't', alertName: 'KubeDeploymentReplicasMismatch', labels: {}, labelValues: ['checkout', 'shop'], annotations: {}, count: 1, text: '' };
const SCHED = '0/4 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 3 Insufficient cpu. preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod.';

const container = (cpu: string) => ({ name: 'checkout', image: 'registry.example.com/shop/checkout:1.15.0', resources: { requests: { cpu, memory: '256Mi' } } });
const rs = (name: string, revision: number, cpu: string, created: Date): V1ReplicaSet => ({
  metadata: { name, namespace: 'shop', creationTimestamp: created, annotations: { 'deployment.kubernetes.io/revision': String(revision) } },
  spec: { selector: {}, template: { spec: { containers: [container(cpu)] } } },
});
const pendingPod = (name: string, owner: string, cpu: string, message = SCHED): V1Pod => ({
  metadata: { name, namespace: 'shop', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner, uid: owner }] },
  spec: { containers: [container(cpu)] },
  status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message, lastTransitionTime: at(-17) }] },
});
const runningPod = (name: string, owner: string): V1Pod => ({
  metadata: { name, namespace: 'shop', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner, uid: owner }] },
  spec: { nodeName: 'node-1', containers: [container('250m')] },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
});
const node = (name: string): V1Node => ({ metadata: { name }, status: { allocatable: { cpu: '3920m', memory: '15214836Ki' } } });

function input(kube: Partial<KubeEvidence>): TriageInput {
  return {
    alert,
    onset,
    changes: [],
    kube: {
      ...emptySurroundings(),
      onset,
      target: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
      workload: { metadata: { name: 'checkout', namespace: 'shop' }, spec: { replicas: 3, selector: {}, template: {} } },
      replicaSets: [],
      pods: [],
      services: [{ service: { metadata: { name: 'checkout', namespace: 'shop' }, spec: { selector: { app: 'checkout' } } } }],
      events: [],
      related: [],
      dependents: [{ kind: 'Deployment', name: 'storefront', via: 'env CHECKOUT_URL' }],
      unhealthyPods: [],
      warningEvents: [],
      gaps: [],
      server: 'https://k8s.example',
      ...kube,
    },
  };
}

describe('parseSchedulerMessage', () => {
  it('splits reasons with node counts and drops the preemption tail', () => {
    expect(parseSchedulerMessage(SCHED)).toEqual({
      available: 0,
      total: 4,
      reasons: [
        { reason: 'taint', nodes: 1, text: 'node(s) had untolerated taint {dedicated: gpu}' },
        { reason: 'insufficient_cpu', nodes: 3, text: 'Insufficient cpu' },
      ],
    });
  });
  it('reads pod-level reasons (no count) as every node', () => {
    const m = parseSchedulerMessage('0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.');
    expect(m?.reasons).toEqual([{ reason: 'pvc_unbound', nodes: 3, text: 'pod has unbound immediate PersistentVolumeClaims' }]);
  });
  it('is undefined for text that is not a scheduler message', () => {
    expect(parseSchedulerMessage('Back-off pulling image')).toBeUndefined();
  });
  it('parses quantities', () => {
    expect(parseQuantity('250m')).toBe(0.25);
    expect(parseQuantity('4')).toBe(4);
    expect(parseQuantity('512Mi')).toBe(512 * 2 ** 20);
  });
});

describe('unschedulable analyzer', () => {
  it('blames the rollout that raised the cpu request and proposes setting it back', () => {
    const oldRs = rs('checkout-6d8f7b9c4', 4, '250m', at(-9 * 24 * 60));
    const newRs = rs('checkout-5f9c8d7b6', 5, '4', at(-17));
    const [f] = unschedulable.analyze(
      input({
        replicaSets: [oldRs, newRs],
        pods: [runningPod('checkout-6d8f7b9c4-a', 'checkout-6d8f7b9c4'), pendingPod('checkout-5f9c8d7b6-x', 'checkout-5f9c8d7b6', '4'), pendingPod('checkout-5f9c8d7b6-y', 'checkout-5f9c8d7b6', '4')],
        nodes: [node('node-1'), node('node-2'), node('node-3'), node('gpu-node-1')],
      }),
    );
    expect(f).toMatchObject({
      analyzer: 'unschedulable',
      status: 'supported',
      component: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
      facts: { reason: 'insufficient_cpu', requestedCpu: '4', previousRequestedCpu: '250m', nodes: 4, reasonNodes: 3, largestAllocatableCpu: '3920m', pendingPods: 2 },
      mitigation: { action: 'set_resources', params: { container: 'checkout', requests: { cpu: '250m', memory: '256Mi' } } },
    });
    expect(f!.confidence).toBeGreaterThanOrEqual(0.9);
    expect(f!.mechanism).toContain('cpu 250m → 4');
    expect(f!.affected).toEqual([
      { kind: 'Service', namespace: 'shop', name: 'checkout' },
      { kind: 'Deployment', namespace: 'shop', name: 'storefront' },
    ]);
    expect(f!.supporting.map((e) => e.citation.ref)).toContain('api/v1/namespaces/shop/pods/checkout-5f9c8d7b6-x#status.conditions[type=PodScheduled]');
  });

  it('undoes the whole rollout when the image changed too', () => {
    const oldRs = rs('checkout-a', 4, '250m', at(-9 * 24 * 60));
    const newRs = rs('checkout-b', 5, '4', at(-17));
    newRs.spec!.template!.spec!.containers[0]!.image = 'registry.example.com/shop/checkout:1.16.0';
    const [f] = unschedulable.analyze(input({ replicaSets: [oldRs, newRs], pods: [pendingPod('checkout-b-x', 'checkout-b', '4')], nodes: [node('node-1')] }));
    expect(f!.mitigation).toMatchObject({ action: 'rollout_undo', params: { toRevision: 4 } });
  });

  it('follows an unbound PVC to its missing StorageClass and proposes nothing', () => {
    const pod = pendingPod('ledger-2', 'none', '500m', '0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.');
    pod.spec!.volumes = [{ name: 'data', persistentVolumeClaim: { claimName: 'data-ledger-2' } }];
    const [f] = unschedulable.analyze(
      input({
        target: { kind: 'StatefulSet', namespace: 'shop', name: 'ledger' },
        pods: [pod],
        pvcs: [{ metadata: { name: 'data-ledger-2', namespace: 'shop' }, spec: { storageClassName: 'fast-ssd' }, status: { phase: 'Pending' } }],
        storageClasses: [{ metadata: { name: 'gp3' }, provisioner: 'ebs.csi.aws.com' }],
        events: [
          {
            metadata: { name: 'data-ledger-2.1', namespace: 'shop' },
            involvedObject: { kind: 'PersistentVolumeClaim', name: 'data-ledger-2', namespace: 'shop' },
            reason: 'ProvisioningFailed',
            message: 'storageclass.storage.k8s.io "fast-ssd" not found',
            type: 'Warning',
            count: 12,
            lastTimestamp: at(-1),
          },
        ],
      }),
    );
    expect(f).toMatchObject({ status: 'supported', facts: { reason: 'pvc_unbound', pvc: 'data-ledger-2', storageClass: 'fast-ssd', storageClassMissing: true } });
    // Localised to the faulty object (docs/fault-families.md): the missing StorageClass; the StatefulSet is hurt.
    expect(f!.component).toEqual({ kind: 'StorageClass', name: 'fast-ssd' });
    expect(f!.affected?.[0]).toEqual({ kind: 'StatefulSet', namespace: 'shop', name: 'ledger' });
    expect(f!.mitigation).toBeUndefined();
    expect(f!.mechanism).toContain('fast-ssd');
  });

  it('localises a bound claim whose volume no fitting node can reach to the claim', () => {
    const pod = pendingPod('orders-db-0', 'none', '500m', '0/4 nodes are available: 1 node(s) had untolerated taint {node-role: infra}, 3 node(s) had volume node affinity conflict. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.');
    pod.spec!.volumes = [{ name: 'data', persistentVolumeClaim: { claimName: 'data-orders-db-0' } }];
    const [f] = unschedulable.analyze(
      input({
        target: { kind: 'StatefulSet', namespace: 'shop', name: 'orders-db' },
        pods: [pod],
        pvcs: [{ metadata: { name: 'data-orders-db-0', namespace: 'shop' }, spec: { storageClassName: 'gp3', volumeName: 'pvc-1234' }, status: { phase: 'Bound' } }],
      }),
    );
    expect(f).toMatchObject({ status: 'supported', component: { kind: 'PersistentVolumeClaim', namespace: 'shop', name: 'data-orders-db-0' }, facts: { reason: 'volume_node_affinity', pvc: 'data-orders-db-0', storageClass: 'gp3', volume: 'pvc-1234' } });
    expect(f!.affected?.[0]).toEqual({ kind: 'StatefulSet', namespace: 'shop', name: 'orders-db' });
  });

  it('defers to node-pressure when the Pending pods replace evicted ones', () => {
    const evicted: V1Pod = {
      metadata: { name: 'checkout-a-old', namespace: 'shop' },
      spec: { nodeName: 'node-3', containers: [container('250m')] },
      status: { phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource: memory.', startTime: at(-60 * 24) },
    };
    const [f] = unschedulable.analyze(input({ pods: [evicted, pendingPod('checkout-a-new', 'checkout-a', '250m', '0/3 nodes are available: 3 Insufficient memory.')] }));
    expect(f!.confidence).toBeLessThan(0.9);
    expect(f!.refuting).toHaveLength(1);
    expect(f!.mitigation).toBeUndefined();
  });

  it('relates a taint reason to the node edit that added the taint', () => {
    const tainted: V1Node = {
      metadata: {
        name: 'node-1',
        managedFields: [{ manager: 'kubectl-taint', operation: 'Update', time: at(-4), fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:taints': {} } } }],
      },
      spec: { taints: [{ key: 'maintenance', value: 'true', effect: 'NoSchedule' }] },
      status: { allocatable: { cpu: '3920m' } },
    };
    const [f] = unschedulable.analyze(
      input({ nodes: [tainted], pods: [pendingPod('checkout-a-x', 'checkout-a', '250m', "0/1 nodes are available: 1 node(s) had untolerated taint {maintenance: true}. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")] }),
    );
    expect(f!.facts).toMatchObject({ reason: 'taint', nodes: 1, changedAt: at(-4).toISOString() });
    expect(f!.supporting.some((e) => e.kind === 'managed_fields' && e.summary.includes('kubectl-taint'))).toBe(true);
    expect(f!.mitigation).toBeUndefined();
  });

  it('returns nothing when no target pod is unscheduled (another workload pending does not count)', () => {
    expect(unschedulable.analyze(input({ pods: [runningPod('checkout-a-1', 'checkout-a')] }))).toEqual([]);
  });
});

describe('unschedulable: the missing capacity is a node whose drain a PodDisruptionBudget blocks', () => {
  const cordoned: V1Node = { metadata: { name: 'node-2' }, spec: { unschedulable: true }, status: { allocatable: { cpu: '3920m', memory: '15214836Ki' } } };
  const ledgerPod = (name: string, nodeName: string): V1Pod => ({ metadata: { name, namespace: 'ledger', labels: { app: 'ledger' } }, spec: { nodeName, containers: [] }, status: { phase: 'Running' } });
  const pdb = (allowed: number) => ({ metadata: { name: 'ledger', namespace: 'ledger' }, spec: { minAvailable: 3, selector: { matchLabels: { app: 'ledger' } } }, status: { disruptionsAllowed: allowed, currentHealthy: 3, expectedPods: 3 } });
  const withCluster = (allowed: number): TriageInput => ({
    ...input({ pods: [pendingPod('checkout-new-a', 'checkout-new', '2')], nodes: [node('node-1'), cordoned] }),
    cluster: { snapshot: { nodes: [node('node-1'), cordoned], pods: [ledgerPod('ledger-0', 'node-2'), ledgerPod('ledger-1', 'node-1')], pdbs: [pdb(allowed)] } } as never,
  });

  it('localises the Pending pods to the budget, with the cordoned node in scope', () => {
    const [f] = unschedulable.analyze(withCluster(0));
    expect(f).toMatchObject({ status: 'supported', component: { kind: 'PodDisruptionBudget', namespace: 'ledger', name: 'ledger' }, facts: { reason: 'insufficient_cpu', blockedNode: 'node-2', pdb: 'ledger/ledger', disruptionsAllowed: 0 } });
    expect(f!.affected).toEqual(expect.arrayContaining([{ kind: 'Deployment', namespace: 'shop', name: 'checkout' }, { kind: 'Node', name: 'node-2' }]));
    expect(f!.supporting.some((e) => /node-2 is cordoned .* still runs ledger-0; PodDisruptionBudget ledger\/ledger allows 0 disruptions \(minAvailable 3/.test(e.summary))).toBe(true);
  });

  it('leaves the workload as the component when the budget allows a disruption (the drain can go on)', () => {
    const [f] = unschedulable.analyze(withCluster(1));
    expect(f!.component).toEqual({ kind: 'Deployment', namespace: 'shop', name: 'checkout' });
    expect(f!.facts?.['blockedNode']).toBeUndefined();
  });

  it('rules out the HPA as the limit when it asked for the replicas that cannot schedule', () => {
    const hpa = (desired: number, max: number) => ({ metadata: { name: 'checkout', namespace: 'shop' }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'checkout' }, minReplicas: 2, maxReplicas: max }, status: { currentReplicas: desired, desiredReplicas: desired } });
    const base = input({ pods: [pendingPod('checkout-7d9f8b6c5-x2x9z', 'checkout-7d9f8b6c5', '500m')] });
    const withHpa = (h: ReturnType<typeof hpa>) => ({ ...base, cluster: { snapshot: { hpas: [h], nodes: [], pods: [] } } }) as unknown as TriageInput;
    const cleared = unschedulable.analyze(withHpa(hpa(6, 20))).find((f) => f.family === 'hpa-at-max');
    expect(cleared).toMatchObject({ status: 'ruled_out', component: { kind: 'HorizontalPodAutoscaler', name: 'checkout' }, facts: { desiredReplicas: 6, maxReplicas: 20 } });
    expect(unschedulable.analyze(withHpa(hpa(20, 20))).some((f) => f.family === 'hpa-at-max')).toBe(false);
  });
});

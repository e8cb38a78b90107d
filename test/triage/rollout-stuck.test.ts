import type { CoreV1Event, V1Container, V1Deployment, V1DeploymentStatus, V1DeploymentStrategy, V1Pod, V1ReplicaSet } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { KubeEvidence } from '../../src/evidence/kubernetes/gather.js';
import { emptySurroundings } from '../../src/evidence/kubernetes/surroundings.js';
import type { TriageInput } from '../../src/triage/analyzer.js';
import { resolveIntOrPercent, rolloutStuck } from '../../src/triage/analyzers/rollout-stuck.js';

const onset = new Date('2025-03-01T12:00:00Z');
const at = (offsetMs: number) => new Date(onset.getTime() + offsetMs);
const MIN = 60_000;
const DAY = 24 * 60 * MIN;
const NS = 'shop';
const NEW = 'catalog-7f6d5';
const OLD = 'catalog-5b8c4';

const container = (image = 'reg/catalog:5.1.0'): V1Container => ({
  name: 'catalog',
  image,
  ports: [{ name: 'http', containerPort: 8080 }],
  readinessProbe: { httpGet: { path: '/ready', port: 'http' as unknown as number }, initialDelaySeconds: 5, periodSeconds: 5 },
});
function rs(name: string, revision: number, createdAt: Date, available = 0, image?: string): V1ReplicaSet {
  return {
    metadata: { name, namespace: NS, creationTimestamp: createdAt, annotations: { 'deployment.kubernetes.io/revision': String(revision) } },
    spec: { selector: {}, replicas: name === NEW ? 4 : 0, template: { spec: { containers: [container(image)] } } },
    status: { replicas: available, availableReplicas: available },
  };
}
function pod(name: string, owner = NEW, ready = false): V1Pod {
  return {
    metadata: { name, namespace: NS, creationTimestamp: at(-6 * MIN), ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner, uid: owner }] },
    spec: { containers: [container()] },
    status: {
      phase: 'Running',
      conditions: [{ type: 'PodScheduled', status: 'True' }, { type: 'Ready', status: ready ? 'True' : 'False' }],
      containerStatuses: [{ name: 'catalog', ready, restartCount: 0, image: 'reg/catalog:5.1.0', imageID: '', started: true, state: { running: { startedAt: at(-6 * MIN) } } }],
    },
  };
}
const NEW_PODS = ['a', 'b', 'c', 'd'].map((x) => pod(`${NEW}-${x}${x}${x}${x}${x}`));

const event = (name: string, kind: string, involved: string, reason: string, message: string, last = at(-6 * MIN), count = 1): CoreV1Event => ({
  metadata: { name, namespace: NS },
  involvedObject: { kind, name: involved, namespace: NS, ...(kind === 'Pod' ? { fieldPath: 'spec.containers{catalog}' } : {}) },
  reason,
  type: reason === 'Unhealthy' ? 'Warning' : 'Normal',
  message,
  firstTimestamp: at(-6 * MIN),
  lastTimestamp: last,
  count,
});
const SCALING = [
  event('catalog.1', 'Deployment', 'catalog', 'ScalingReplicaSet', `Scaled down replica set ${OLD} to 0 from 4`),
  event('catalog.2', 'Deployment', 'catalog', 'ScalingReplicaSet', `Scaled up replica set ${NEW} to 4`),
];
const NOT_READY_YET = event('catalog-a.u', 'Pod', `${NEW}-aaaaa`, 'Unhealthy', 'Readiness probe failed: Get "http://10.244.2.17:8080/ready": dial tcp 10.244.2.17:8080: connect: connection refused', at(-10_000), 70);

const STUCK_STATUS: V1DeploymentStatus = {
  observedGeneration: 12,
  replicas: 4,
  updatedReplicas: 4,
  readyReplicas: 0,
  availableReplicas: 0,
  unavailableReplicas: 4,
  conditions: [
    { type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable', message: 'Deployment does not have minimum availability.', lastUpdateTime: at(-6 * MIN), lastTransitionTime: at(-6 * MIN) },
    { type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated', message: `ReplicaSet "${NEW}" is progressing.`, lastUpdateTime: at(-6 * MIN), lastTransitionTime: at(-20 * DAY) },
  ],
};

function deployment(strategy: V1DeploymentStrategy | undefined, status: V1DeploymentStatus = STUCK_STATUS): V1Deployment {
  return {
    metadata: {
      name: 'catalog',
      namespace: NS,
      generation: 12,
      annotations: { 'deployment.kubernetes.io/revision': '9' },
      managedFields: [
        { manager: 'kube-controller-manager', operation: 'Update', subresource: 'status', time: at(-MIN), fieldsV1: { 'f:status': {} } },
        { manager: 'kubectl-patch', operation: 'Update', time: at(-6 * MIN), fieldsV1: { 'f:spec': { 'f:strategy': { 'f:rollingUpdate': { 'f:maxUnavailable': {}, 'f:maxSurge': {} } }, 'f:template': { 'f:spec': {} } } } },
      ],
    },
    spec: { replicas: 4, selector: { matchLabels: { app: 'catalog' } }, strategy, progressDeadlineSeconds: 600, template: { spec: { containers: [container()] } } },
    status,
  };
}

function input(kube: Partial<KubeEvidence>): TriageInput {
  return {
    alert: { labels: {}, labelValues: [] } as unknown as TriageInput['alert'],
    onset,
    changes: [],
    kube: {
      ...emptySurroundings(),
      onset,
      target: { kind: 'Deployment', namespace: NS, name: 'catalog' },
      workload: deployment({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '100%', maxSurge: 0 } }),
      replicaSets: [rs(NEW, 9, at(-6 * MIN)), rs(OLD, 8, at(-20 * DAY))],
      pods: NEW_PODS,
      services: [{ service: { metadata: { name: 'catalog' } }, endpoints: { subsets: [{ notReadyAddresses: [{ ip: '10.244.2.17' }, { ip: '10.244.2.18' }, { ip: '10.244.3.4' }, { ip: '10.244.3.5' }] }] } }],
      events: [...SCALING, NOT_READY_YET],
      related: [],
      dependents: [{ kind: 'Deployment', name: 'storefront', via: 'env CATALOG_URL' }],
      unhealthyPods: [],
      warningEvents: [],
      gaps: [],
      server: '',
      ...kube,
    },
  };
}

describe('rollout-stuck', () => {
  it('resolves maxUnavailable and maxSurge as the controller does', () => {
    expect(resolveIntOrPercent('100%', 4, false)).toBe(4);
    expect(resolveIntOrPercent('25%', 3, false)).toBe(0);
    expect(resolveIntOrPercent('25%', 3, true)).toBe(1);
    expect(resolveIntOrPercent(undefined, 8, false)).toBe(2);
    expect(resolveIntOrPercent(2, 8, false)).toBe(2);
  });

  it('finds a rolling update with maxUnavailable 100% that replaced every ready pod with unready ones', () => {
    const [f] = rolloutStuck.analyze(input({}));
    expect(f).toMatchObject({ key: 'rollout-stuck:shop/Deployment/catalog', analyzer: 'rollout-stuck', family: 'rollout-stuck', status: 'supported', confidence: 0.9 });
    expect(f!.component).toEqual({ kind: 'Deployment', namespace: NS, name: 'catalog' });
    expect(f!.facts).toMatchObject({
      strategy: 'RollingUpdate',
      maxUnavailable: '100%',
      maxSurge: 0,
      availableReplicas: 0,
      desiredReplicas: 4,
      reason: 'MinimumReplicasUnavailable',
      revision: 9,
      previousRevision: 8,
      readyNewPods: 0,
      manager: 'kubectl-patch',
      changedAt: at(-6 * MIN).toISOString(),
    });
    const refs = f!.supporting.map((e) => e.citation.ref);
    expect(refs).toEqual(
      expect.arrayContaining([
        'apis/apps/v1/namespaces/shop/deployments/catalog#status',
        'apis/apps/v1/namespaces/shop/deployments/catalog#spec.strategy',
        'apis/apps/v1/namespaces/shop/deployments/catalog#metadata.managedFields[1]',
        `apis/apps/v1/namespaces/shop/replicasets/${NEW}#metadata.annotations`,
        'api/v1/namespaces/shop/events/catalog.1',
        'api/v1/namespaces/shop/events/catalog-a.u',
        'api/v1/namespaces/shop/endpoints/catalog#subsets',
      ]),
    );
    expect(f!.mechanism).toContain('maxUnavailable 100%');
    expect(f!.mechanism).toContain('not crashing');
    expect(f!.mitigation).toMatchObject({ action: 'rollout_undo', target: { kind: 'Deployment', name: 'catalog' }, params: { toRevision: 8 } });
    expect(f!.affected).toEqual(expect.arrayContaining([{ kind: 'Service', namespace: NS, name: 'catalog' }, { kind: 'Deployment', namespace: NS, name: 'storefront' }]));
  });

  it('finds a Recreate rollout whose new pods are not ready yet', () => {
    const [f] = rolloutStuck.analyze(input({ workload: deployment({ type: 'Recreate' }) }));
    expect(f!.status).toBe('supported');
    expect(f!.facts).toMatchObject({ strategy: 'Recreate', availableReplicas: 0, desiredReplicas: 4 });
    expect(f!.facts!['maxUnavailable']).toBeUndefined();
    expect(f!.mechanism).toContain('Recreate');
  });

  it('reports ProgressDeadlineExceeded with the default strategy', () => {
    const status: V1DeploymentStatus = {
      observedGeneration: 12,
      replicas: 5,
      updatedReplicas: 2,
      readyReplicas: 3,
      availableReplicas: 3,
      conditions: [
        { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' },
        { type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: `ReplicaSet "${NEW}" has timed out progressing.`, lastUpdateTime: at(-2 * MIN) },
      ],
    };
    const pods = [pod(`${NEW}-aaaaa`), pod(`${NEW}-bbbbb`), pod(`${OLD}-ccccc`, OLD, true), pod(`${OLD}-ddddd`, OLD, true), pod(`${OLD}-eeeee`, OLD, true)];
    const [f] = rolloutStuck.analyze(input({ workload: deployment(undefined, status), pods, replicaSets: [rs(NEW, 9, at(-14 * MIN)), rs(OLD, 8, at(-20 * DAY), 3)] }));
    expect(f!.status).toBe('supported');
    expect(f!.confidence).toBe(0.8);
    expect(f!.facts).toMatchObject({ reason: 'ProgressDeadlineExceeded', maxUnavailable: '25%', maxSurge: '25%', availableReplicas: 3, desiredReplicas: 4 });
    expect(f!.title).toContain('exceeded its progress deadline');
    expect(f!.mitigation).toMatchObject({ action: 'rollout_undo', params: { toRevision: 8 } });
  });

  it('proposes no rollback when the previous revision never served', () => {
    const prevPods = [pod(`${OLD}-zzzzz`, OLD)];
    prevPods[0]!.status!.conditions = [{ type: 'Ready', status: 'False' }];
    const [f] = rolloutStuck.analyze(input({ replicaSets: [rs(NEW, 9, at(-6 * MIN)), rs(OLD, 8, at(-12 * MIN))], pods: [...NEW_PODS, ...prevPods] }));
    expect(f!.status).toBe('supported');
    expect(f!.mitigation).toBeUndefined();
  });

  it('defers to the pod analyzers when the new pods crash, cannot pull, or fail a misconfigured probe', () => {
    const crashing = NEW_PODS.map((p) => structuredClone(p));
    crashing[0]!.status!.containerStatuses![0]!.state = { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s restarting failed container' } };
    expect(rolloutStuck.analyze(input({ pods: crashing }))).toEqual([]);
    const pulling = NEW_PODS.map((p) => structuredClone(p));
    pulling[1]!.status!.containerStatuses![0]!.state = { waiting: { reason: 'ImagePullBackOff' } };
    expect(rolloutStuck.analyze(input({ pods: pulling }))).toEqual([]);
    const notFound = event('catalog-b.u', 'Pod', `${NEW}-bbbbb`, 'Unhealthy', 'Readiness probe failed: HTTP probe failed with statuscode: 404', at(-10_000), 50);
    expect(rolloutStuck.analyze(input({ events: [...SCALING, notFound] }))).toEqual([]);
    const wrongPort = event('catalog-c.u', 'Pod', `${NEW}-ccccc`, 'Unhealthy', 'Readiness probe failed: Get "http://10.244.2.19:9090/ready": dial tcp 10.244.2.19:9090: connect: connection refused', at(-10_000), 50);
    expect(rolloutStuck.analyze(input({ events: [...SCALING, wrongPort] }))).toEqual([]);
  });

  it('returns nothing for a finished rollout, a Deployment without status, or a StatefulSet', () => {
    const done: V1DeploymentStatus = {
      observedGeneration: 12,
      replicas: 4,
      updatedReplicas: 4,
      readyReplicas: 4,
      availableReplicas: 4,
      conditions: [
        { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' },
        { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable', message: `ReplicaSet "${NEW}" has successfully progressed.` },
      ],
    };
    const ready = NEW_PODS.map((p) => pod(p.metadata!.name!, NEW, true));
    expect(rolloutStuck.analyze(input({ workload: deployment({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '100%', maxSurge: 0 } }, done), pods: ready }))).toEqual([]);
    const bare = deployment({ type: 'Recreate' });
    delete bare.status;
    expect(rolloutStuck.analyze(input({ workload: bare }))).toEqual([]);
    expect(rolloutStuck.analyze(input({ target: { kind: 'StatefulSet', namespace: NS, name: 'catalog' } }))).toEqual([]);
  });

  it('leaves a capacity drop under a strategy that does not allow it open', () => {
    const status: V1DeploymentStatus = { ...STUCK_STATUS, availableReplicas: 1, readyReplicas: 1 };
    const [f] = rolloutStuck.analyze(input({ workload: deployment({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 1 } }, status) }));
    expect(f!.status).toBe('open');
    expect(f!.mitigation).toBeUndefined();
  });
});

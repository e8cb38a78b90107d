import type { V1Container, V1Deployment, V1Endpoints, V1Pod, V1ReplicaSet, V1Service } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { KubeEvidence } from '../../src/evidence/kubernetes/gather.js';
import type { ContainerLogs } from '../../src/evidence/kubernetes/surroundings.js';
import { emptySurroundings } from '../../src/evidence/kubernetes/surroundings.js';
import type { TriageInput } from '../../src/triage/analyzer.js';
import { initContainerStuck } from '../../src/triage/analyzers/init-container-stuck.js';
import { emptySnapshot } from '../../src/topology/snapshot.js';

const onset = new Date('2025-03-01T12:00:00Z');
const at = (offsetMs: number) => new Date(onset.getTime() + offsetMs);
const MIN = 60_000;
const DAY = 24 * 60 * MIN;
const NS = 'shop';
const NEW = 'orders-6b7f9';
const OLD = 'orders-59d4c';

const app: V1Container = { name: 'orders', image: 'reg/orders:3.4.0', ports: [{ containerPort: 8080 }] };
const waitForDb = (host = 'orders-db.shop.svc.cluster.local'): V1Container => ({
  name: 'wait-for-db',
  image: 'busybox:1.36',
  command: ['sh', '-c', `until nslookup ${host}; do echo waiting for orders-db; sleep 2; done`],
});
function rs(name: string, revision: number, inits: V1Container[], createdAt: Date): V1ReplicaSet {
  return { metadata: { name, namespace: NS, creationTimestamp: createdAt, annotations: { 'deployment.kubernetes.io/revision': String(revision) } }, spec: { selector: {}, template: { spec: { initContainers: inits, containers: [app] } } } };
}
function stuckPod(name: string, init: V1Container = waitForDb(), startedAt = at(-14 * MIN)): V1Pod {
  return {
    metadata: { name, namespace: NS, creationTimestamp: startedAt, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: NEW, uid: NEW }] },
    spec: { initContainers: [init], containers: [app], nodeName: 'node-a' },
    status: {
      phase: 'Pending',
      conditions: [
        { type: 'PodScheduled', status: 'True' },
        { type: 'Initialized', status: 'False', reason: 'ContainersNotInitialized', message: `containers with incomplete status: [${init.name}]` },
        { type: 'Ready', status: 'False', reason: 'ContainersNotReady' },
      ],
      initContainerStatuses: [{ name: init.name, ready: false, restartCount: 0, image: init.image!, imageID: '', started: true, state: { running: { startedAt } } }],
      containerStatuses: [{ name: 'orders', ready: false, restartCount: 0, image: app.image!, imageID: '', state: { waiting: { reason: 'PodInitializing' } } }],
    },
  };
}
function initLogs(pod: string, container: string, lines: { line: string; count: number }[], previous = false): ContainerLogs {
  return { pod, container, previous, patterns: lines.map((l) => ({ template: l.line, example: l.line, count: l.count })), tail: lines.map((l) => l.line) };
}
const svc = (name: string, ns = NS, type?: string): V1Service => ({ metadata: { name, namespace: ns }, spec: { selector: { app: name }, ports: [{ port: 80 }], ...(type ? { type } : {}) } });
const eps = (name: string, ready: number, notReady = 0, ns = NS): V1Endpoints => ({
  metadata: { name, namespace: ns },
  subsets: [{ addresses: Array.from({ length: ready }, (_, i) => ({ ip: `10.244.1.${i + 10}` })), notReadyAddresses: Array.from({ length: notReady }, (_, i) => ({ ip: `10.244.2.${i + 10}` })) }],
});
function cluster(services: V1Service[], endpoints: V1Endpoints[]): TriageInput['cluster'] {
  return { snapshot: { ...emptySnapshot(), readAt: at(MIN), namespaces: [{ metadata: { name: NS } }], services, endpoints } } as unknown as TriageInput['cluster'];
}

function input(kube: Partial<KubeEvidence>, extra: Partial<TriageInput> = {}): TriageInput {
  const workload: V1Deployment = {
    metadata: { name: 'orders', namespace: NS, annotations: { 'deployment.kubernetes.io/revision': '7' } },
    spec: { replicas: 2, selector: { matchLabels: { app: 'orders' } }, template: { spec: { initContainers: [waitForDb()], containers: [app] } } },
  };
  return {
    alert: { labels: {}, labelValues: [] } as unknown as TriageInput['alert'],
    onset,
    changes: [],
    cluster: cluster([svc('orders'), svc('payments')], [eps('orders', 0), eps('payments', 2)]),
    kube: {
      ...emptySurroundings(),
      onset,
      target: { kind: 'Deployment', namespace: NS, name: 'orders' },
      workload,
      replicaSets: [rs(NEW, 7, [waitForDb()], at(-15 * MIN)), rs(OLD, 6, [], at(-30 * DAY))],
      pods: [stuckPod(`${NEW}-aaaaa`), stuckPod(`${NEW}-bbbbb`)],
      services: [{ service: svc('orders'), endpoints: eps('orders', 0) }],
      containerLogs: [
        initLogs(`${NEW}-aaaaa`, 'wait-for-db', [
          { line: 'waiting for orders-db', count: 410 },
          { line: "nslookup: can't resolve 'orders-db.shop.svc.cluster.local'", count: 410 },
        ]),
      ],
      events: [],
      related: [],
      dependents: [{ kind: 'Deployment', name: 'checkout', via: 'env ORDERS_URL' }],
      unhealthyPods: [],
      warningEvents: [],
      gaps: [],
      server: '',
      ...kube,
    },
    ...extra,
  };
}

describe('init-container-stuck', () => {
  it('names the Service the init container waits for, that it does not exist, and the rollout that added the step', () => {
    const [f] = initContainerStuck.analyze(input({}));
    expect(f).toMatchObject({ key: 'init-container-stuck:shop/Deployment/orders', analyzer: 'init-container-stuck', family: 'init-container-stuck', status: 'supported', confidence: 0.9 });
    expect(f!.component).toEqual({ kind: 'Deployment', namespace: NS, name: 'orders' });
    expect(f!.facts).toMatchObject({
      initContainer: 'wait-for-db',
      waitingOn: 'orders-db.shop.svc.cluster.local',
      logPattern: "nslookup: can't resolve 'orders-db.shop.svc.cluster.local'",
      podsBlocked: 2,
      state: 'running',
      stuckFor: 15 * 60,
      dependency: 'Service/shop/orders-db',
      dependencyMissing: true,
      revision: 7,
      previousRevision: 6,
      addedInRevision: true,
      changedAt: at(-15 * MIN).toISOString(),
    });
    const refs = f!.supporting.map((e) => e.citation.ref);
    expect(refs).toEqual(
      expect.arrayContaining([
        `api/v1/namespaces/shop/pods/${NEW}-aaaaa#status.initContainerStatuses`,
        `api/v1/namespaces/shop/pods/${NEW}-aaaaa/log?container=wait-for-db`,
        'api/v1/namespaces/shop/services/orders-db',
        `apis/apps/v1/namespaces/shop/replicasets/${NEW}#metadata.annotations`,
        `api/v1/namespaces/shop/pods/${NEW}-aaaaa#spec.initContainers[0]`,
      ]),
    );
    expect(f!.mechanism).toContain('does not exist');
    expect(f!.mitigation).toMatchObject({ action: 'rollout_undo', target: { kind: 'Deployment', name: 'orders' }, params: { toRevision: 6 } });
    expect(f!.affected).toEqual(expect.arrayContaining([{ kind: 'Service', namespace: NS, name: 'orders' }, { kind: 'Deployment', namespace: NS, name: 'checkout' }]));
  });

  it('says the dependency has no ready endpoints, and proposes nothing when no rollout added the step', () => {
    const init: V1Container = { name: 'wait-for-postgres', image: 'postgres:16-alpine', command: ['sh', '-c', 'until pg_isready -h postgres -p 5432; do sleep 2; done'] };
    const pods = [stuckPod(`${NEW}-aaaaa`, init)];
    const [f] = initContainerStuck.analyze(
      input(
        {
          pods,
          replicaSets: [rs(NEW, 7, [init], at(-20 * DAY)), rs(OLD, 6, [init], at(-30 * DAY))],
          containerLogs: [initLogs(`${NEW}-aaaaa`, 'wait-for-postgres', [{ line: 'postgres:5432 - no response', count: 300 }])],
        },
        { cluster: cluster([svc('orders'), svc('postgres')], [eps('orders', 0), eps('postgres', 0, 1)]) },
      ),
    );
    expect(f!.status).toBe('supported');
    expect(f!.confidence).toBe(0.9);
    expect(f!.facts).toMatchObject({ initContainer: 'wait-for-postgres', waitingOn: 'postgres:5432', dependency: 'Service/shop/postgres', readyEndpoints: 0, podsBlocked: 1 });
    expect(f!.facts!['dependencyMissing']).toBeUndefined();
    expect(f!.supporting.map((e) => e.citation.ref)).toContain('api/v1/namespaces/shop/endpoints/postgres#subsets');
    expect(f!.mechanism).toContain('no ready endpoints');
    expect(f!.mitigation).toBeUndefined();
  });

  it('reads a restarting init container from its previous log', () => {
    const init: V1Container = { name: 'fetch-config', image: 'curlimages/curl:8.8.0', command: ['sh', '-c', 'curl -fsS http://config-server:8888/orders > /config/app.yaml'] };
    const p = stuckPod(`${NEW}-aaaaa`, init);
    p.status!.initContainerStatuses = [
      { name: 'fetch-config', ready: false, restartCount: 5, image: init.image!, imageID: '', state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 2m40s restarting failed container' } }, lastState: { terminated: { exitCode: 7, reason: 'Error', finishedAt: at(-MIN) } } },
    ];
    const [f] = initContainerStuck.analyze(
      input(
        {
          pods: [p],
          replicaSets: [rs(NEW, 7, [init], at(-20 * DAY))],
          containerLogs: [initLogs(`${NEW}-aaaaa`, 'fetch-config', [{ line: 'curl: (7) Failed to connect to config-server port 8888 after 2 ms: Couldn\'t connect to server', count: 1 }], true)],
        },
        { cluster: cluster([svc('orders'), svc('config-server')], [eps('orders', 0), eps('config-server', 2)]) },
      ),
    );
    expect(f!.facts).toMatchObject({ initContainer: 'fetch-config', state: 'restarting', restartCount: 5, exitCode: 7, waitingOn: 'config-server:8888', readyEndpoints: 2 });
    expect(f!.supporting.map((e) => e.citation.ref)).toContain(`api/v1/namespaces/shop/pods/${NEW}-aaaaa/log?container=fetch-config&previous=true`);
    expect(f!.mechanism).toContain('keeps failing');
    expect(f!.mechanism).toContain('exposes port 80, not 8888');
    expect(f!.title).toContain('fails to reach config-server:8888');
  });

  it('reads the target from the command when there is no log, and resolves it in the namespace without a snapshot', () => {
    const init: V1Container = { name: 'wait-for-redis', image: 'busybox:1.36', command: ['sh', '-c', 'until nc -z -w 2 redis 6379; do sleep 1; done'] };
    const [f] = initContainerStuck.analyze(
      input(
        { pods: [stuckPod(`${NEW}-aaaaa`, init)], containerLogs: [], replicaSets: [rs(NEW, 7, [init], at(-20 * DAY))], namespaceServices: [{ service: svc('orders') }] },
        { cluster: undefined },
      ),
    );
    expect(f!.facts).toMatchObject({ initContainer: 'wait-for-redis', waitingOn: 'redis:6379', dependency: 'Service/shop/redis', dependencyMissing: true });
    expect(f!.facts!['logPattern']).toBeUndefined();
    expect(f!.supporting.some((e) => e.summary.includes('nc -z -w 2 redis 6379'))).toBe(true);
  });

  it('does not treat an external host as a missing Service', () => {
    const init: V1Container = { name: 'wait-for-api', image: 'busybox:1.36', command: ['sh', '-c', 'until wget -q -O- https://api.stripe.com/healthcheck; do sleep 5; done'] };
    const [f] = initContainerStuck.analyze(input({ pods: [stuckPod(`${NEW}-aaaaa`, init)], containerLogs: [initLogs(`${NEW}-aaaaa`, 'wait-for-api', [{ line: "wget: bad address 'api.stripe.com'", count: 90 }])] }));
    expect(f!.facts).toMatchObject({ waitingOn: 'api.stripe.com' });
    expect(f!.facts!['dependency']).toBeUndefined();
    expect(f!.mechanism).toContain('outside the cluster');
  });

  it('returns nothing for init containers that just started, cannot pull, pods not scheduled, or pods already running', () => {
    expect(initContainerStuck.analyze(input({ pods: [stuckPod(`${NEW}-aaaaa`, waitForDb(), at(-30_000))] }, { cluster: cluster([], []) }))).toEqual([]);
    const pull = stuckPod(`${NEW}-aaaaa`);
    pull.status!.initContainerStatuses![0]!.state = { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "busybox:1.99"' } };
    expect(initContainerStuck.analyze(input({ pods: [pull] }))).toEqual([]);
    const unscheduled = stuckPod(`${NEW}-aaaaa`);
    unscheduled.status!.conditions = [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }];
    expect(initContainerStuck.analyze(input({ pods: [unscheduled] }))).toEqual([]);
    const running = stuckPod(`${NEW}-aaaaa`);
    running.status!.phase = 'Running';
    running.status!.initContainerStatuses![0]!.state = { terminated: { exitCode: 0, reason: 'Completed' } };
    expect(initContainerStuck.analyze(input({ pods: [running] }))).toEqual([]);
  });
});

describe('init-container-stuck: waiting on a Job that failed', () => {
  it('localises to the failed Job (a migration hook) and rolls back to the revision that served before it', () => {
    const waitMigration: V1Container = { name: 'wait-for-migrations', image: 'reg/orders:3.4.0', command: ['sh', '-c', 'until orders migrate status --expect 0087; do sleep 15; done'] };
    const pods = [stuckPod(`${NEW}-aaaaa`, waitMigration), stuckPod(`${NEW}-bbbbb`, waitMigration)];
    const job = {
      metadata: { name: 'orders-migrate-3-4-0', namespace: NS },
      status: { failed: 3, conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }] },
    };
    const c = cluster([svc('orders')], [eps('orders', 2)]);
    (c!.snapshot as { jobs: unknown[] }).jobs = [job];
    const [f] = initContainerStuck.analyze(
      input(
        {
          replicaSets: [rs(NEW, 7, [waitMigration], at(-15 * MIN)), rs(OLD, 6, [waitMigration], at(-30 * DAY))],
          pods,
          containerLogs: [initLogs(`${NEW}-aaaaa`, 'wait-for-migrations', [{ line: 'waiting for migration job orders-migrate-3-4-0, retry in 15s', count: 60 }])],
        },
        { cluster: c },
      ),
    );
    expect(f).toMatchObject({
      status: 'supported',
      component: { kind: 'Job', namespace: NS, name: 'orders-migrate-3-4-0' },
      facts: { initContainer: 'wait-for-migrations', waitingOn: 'orders-migrate-3-4-0', job: 'orders-migrate-3-4-0', jobFailed: 'BackoffLimitExceeded', podsBlocked: 2 },
      mitigation: { action: 'rollout_undo', params: { toRevision: 6 } },
    });
    expect(f!.mechanism).toMatch(/Job orders-migrate-3-4-0 failed \(BackoffLimitExceeded\), so the wait can never end/);
  });
});

import {
  ApiException,
  AppsV1Api,
  AutoscalingV2Api,
  CoreV1Api,
  KubernetesObjectApi,
  NetworkingV1Api,
  Watch,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeKube, type FakeKube } from './server.js';

const NOW = new Date('2025-03-01T12:00:00Z');

function pod(namespace: string, name: string, labels: Record<string, string>, phase: string, containers = ['app']): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels, creationTimestamp: '2025-03-01T10:00:00Z' },
    spec: { nodeName: 'node-1', containers: containers.map((c) => ({ name: c, image: `${c}:1` })) },
    status: { phase },
  };
}

const world = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } },
  { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1', labels: { 'kubernetes.io/hostname': 'node-1' } } },
  pod('shop', 'web-1', { app: 'web', tier: 'front' }, 'Running'),
  pod('shop', 'web-2', { app: 'web', tier: 'front' }, 'Running', ['app', 'sidecar']),
  pod('shop', 'db-0', { app: 'db' }, 'Pending'),
  pod('other', 'job-x', { app: 'batch' }, 'Failed'),
  {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'shop', generation: 2 },
    spec: { replicas: 2, selector: { matchLabels: { app: 'web' } } },
    status: { replicas: 2 },
  },
  {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'web-1.abc', namespace: 'shop' },
    involvedObject: { kind: 'Pod', name: 'web-1', namespace: 'shop' },
    reason: 'Unhealthy',
    type: 'Warning',
    message: 'Readiness probe failed',
  },
  {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'web.def', namespace: 'shop' },
    involvedObject: { kind: 'Deployment', name: 'web', namespace: 'shop' },
    reason: 'ScalingReplicaSet',
    type: 'Normal',
    message: 'Scaled up',
  },
  {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'web', namespace: 'shop' },
    spec: { minReplicas: 2, maxReplicas: 5, scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' } },
  },
  {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: 'web', namespace: 'shop' },
    spec: { rules: [{ host: 'shop.example.com' }] },
  },
  { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1', namespace: 'shop' }, spec: { size: 3 } },
];

const logs = {
  'shop/web-1/app': {
    current: '2025-03-01T11:50:00Z old line\n2025-03-01T11:59:30Z GET /a 200\n2025-03-01T11:59:50Z GET /b 503\n',
    previous: '2025-03-01T09:00:00Z panic: boom\n',
  },
};

let kube: FakeKube;
let core: CoreV1Api;
let apps: AppsV1Api;

beforeAll(async () => {
  kube = await startFakeKube({ objects: world, logs, now: () => NOW });
  const kc = kube.kubeConfigFor('any-token');
  core = kc.makeApiClient(CoreV1Api);
  apps = kc.makeApiClient(AppsV1Api);
});
afterAll(() => kube.close());

async function apiError(p: Promise<unknown>): Promise<ApiException<unknown>> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiException);
  return err as ApiException<unknown>;
}

describe('fake kube: reads', () => {
  it('gets namespaced and cluster-scoped objects through typed clients', async () => {
    const dep = await apps.readNamespacedDeployment({ name: 'web', namespace: 'shop' });
    expect(dep.spec?.replicas).toBe(2);
    expect(dep.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    const node = await core.readNode({ name: 'node-1' });
    expect(node.metadata?.labels?.['kubernetes.io/hostname']).toBe('node-1');
    const hpa = await kube.kubeConfigFor('t').makeApiClient(AutoscalingV2Api).readNamespacedHorizontalPodAutoscaler({ name: 'web', namespace: 'shop' });
    expect(hpa.spec?.maxReplicas).toBe(5);
    const ing = await kube.kubeConfigFor('t').makeApiClient(NetworkingV1Api).listNamespacedIngress({ namespace: 'shop' });
    expect(ing.items.map((i) => i.spec?.rules?.[0]?.host)).toEqual(['shop.example.com']);
  });

  it('lists as a real XxxList, per namespace and across namespaces', async () => {
    const shop = await core.listNamespacedPod({ namespace: 'shop' });
    expect(shop.kind).toBe('PodList');
    expect(shop.apiVersion).toBe('v1');
    expect(shop.metadata?.resourceVersion).toMatch(/^\d+$/);
    expect(shop.items.map((p) => p.metadata?.name)).toEqual(['db-0', 'web-1', 'web-2']);
    const all = await core.listPodForAllNamespaces();
    expect(all.items.map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`)).toEqual([
      'other/job-x',
      'shop/db-0',
      'shop/web-1',
      'shop/web-2',
    ]);
  });

  it('filters by label selectors', async () => {
    const names = async (labelSelector: string): Promise<string[]> =>
      (await core.listPodForAllNamespaces({ labelSelector })).items.map((p) => p.metadata!.name!);
    expect(await names('app=web')).toEqual(['web-1', 'web-2']);
    expect(await names('app==db')).toEqual(['db-0']);
    expect(await names('app!=web')).toEqual(['job-x', 'db-0']);
    expect(await names('app in (db,batch)')).toEqual(['job-x', 'db-0']);
    expect(await names('app notin (db,batch),tier')).toEqual(['web-1', 'web-2']);
    expect(await names('!tier')).toEqual(['job-x', 'db-0']);
  });

  it('filters by field selectors and rejects unsupported fields with 400', async () => {
    const ev = await core.listNamespacedEvent({ namespace: 'shop', fieldSelector: 'involvedObject.name=web-1,type=Warning' });
    expect(ev.items.map((e) => e.reason)).toEqual(['Unhealthy']);
    const running = await core.listPodForAllNamespaces({ fieldSelector: 'status.phase!=Running,spec.nodeName=node-1' });
    expect(running.items.map((p) => p.metadata?.name)).toEqual(['job-x', 'db-0']);
    const byName = await core.listNamespacedPod({ namespace: 'shop', fieldSelector: 'metadata.name=web-2' });
    expect(byName.items).toHaveLength(1);
    const err = await apiError(core.listNamespacedPod({ namespace: 'shop', fieldSelector: 'spec.replicas=1' }));
    expect(err.code).toBe(400);
    expect(JSON.parse(err.body as string).message).toBe('field label not supported: spec.replicas');
  });

  it('paginates with limit and continue', async () => {
    const first = await core.listPodForAllNamespaces({ limit: 3 });
    expect(first.items).toHaveLength(3);
    expect(first.metadata?.remainingItemCount).toBe(1);
    const second = await core.listPodForAllNamespaces({ limit: 3, _continue: first.metadata!._continue! });
    expect(second.items.map((p) => p.metadata?.name)).toEqual(['web-2']);
    expect(second.metadata?._continue).toBeUndefined();
  });

  it('serves pod logs with container, previous, tail, since and timestamps', async () => {
    const current = await core.readNamespacedPodLog({ name: 'web-1', namespace: 'shop' });
    expect(current).toBe('old line\nGET /a 200\nGET /b 503\n');
    expect(await core.readNamespacedPodLog({ name: 'web-1', namespace: 'shop', tailLines: 1, timestamps: true })).toBe(
      '2025-03-01T11:59:50Z GET /b 503\n',
    );
    expect(await core.readNamespacedPodLog({ name: 'web-1', namespace: 'shop', sinceSeconds: 60 })).toBe('GET /a 200\nGET /b 503\n');
    expect(await core.readNamespacedPodLog({ name: 'web-1', namespace: 'shop', previous: true })).toBe('panic: boom\n');
    expect(await core.readNamespacedPodLog({ name: 'web-1', namespace: 'shop', limitBytes: 4 })).toBe('old ');
    const noPrev = await apiError(core.readNamespacedPodLog({ name: 'db-0', namespace: 'shop', previous: true }));
    expect(noPrev.code).toBe(400);
    expect(JSON.parse(noPrev.body as string).message).toBe('previous terminated container "app" in pod "db-0" not found');
    const which = await apiError(core.readNamespacedPodLog({ name: 'web-2', namespace: 'shop' }));
    expect(JSON.parse(which.body as string).message).toBe(
      'a container name must be specified for pod web-2, choose one of: [app sidecar]',
    );
    const bad = await apiError(core.readNamespacedPodLog({ name: 'web-2', namespace: 'shop', container: 'nope' }));
    expect(bad.code).toBe(400);
  });

  it('answers 404 with a real Status body', async () => {
    const err = await apiError(apps.readNamespacedDeployment({ name: 'x', namespace: 'shop' }));
    expect(err.code).toBe(404);
    expect(JSON.parse(err.body as string)).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'deployments.apps "x" not found',
      reason: 'NotFound',
      details: { name: 'x', group: 'apps', kind: 'deployments' },
      code: 404,
    });
  });

  it('supports generic reads through discovery (KubernetesObjectApi), including unknown kinds', async () => {
    const api = KubernetesObjectApi.makeApiClient(kube.kubeConfigFor('t'));
    const dep = await api.read({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'shop' } });
    expect(dep.metadata?.name).toBe('web');
    const widgets = await api.list('example.com/v1', 'Widget', 'shop');
    expect(widgets.items.map((w) => w.metadata?.name)).toEqual(['w1']);
    const nodes = await api.list('v1', 'Node');
    expect(nodes.items).toHaveLength(1);
  });

  it('streams a watch as ADDED events', async () => {
    const seen: string[] = [];
    await new Promise<void>((resolve, reject) => {
      void new Watch(kube.kubeConfigFor('t'))
        .watch('/api/v1/namespaces/shop/pods', { labelSelector: 'app=web' }, (type, obj: { metadata: { name: string } }) => {
          seen.push(`${type} ${obj.metadata.name}`);
        }, (err) => (err ? reject(err as Error) : resolve()))
        .catch(reject);
    });
    expect(seen).toEqual(['ADDED web-1', 'ADDED web-2']);
  });

  it('delays responses and injects failures on demand', async () => {
    kube.setLatency(150);
    const started = Date.now();
    await core.readNamespace({ name: 'shop' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    kube.setLatency(0);
    kube.failNext(/\/deployments\/web$/, 503);
    expect((await apiError(apps.readNamespacedDeployment({ name: 'web', namespace: 'shop' }))).code).toBe(503);
    expect((await apps.readNamespacedDeployment({ name: 'web', namespace: 'shop' })).metadata?.name).toBe('web');
  });
});

import { ApiException, AppsV1Api, CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeKube, type FakeKube } from './server.js';

const NOW = new Date('2025-03-01T12:00:00Z');

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'checkout',
    namespace: 'shop',
    generation: 4,
    resourceVersion: '500',
    creationTimestamp: '2025-01-01T00:00:00Z',
    managedFields: [
      {
        manager: 'helm',
        operation: 'Update',
        apiVersion: 'apps/v1',
        time: '2025-02-26T12:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:spec': { 'f:replicas': {}, 'f:template': { 'f:spec': { 'f:containers': {} } } } },
      },
    ],
  },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: 'checkout' } },
    template: { metadata: { labels: { app: 'checkout' } }, spec: { containers: [{ name: 'checkout', image: 'checkout:1' }] } },
  },
  status: { replicas: 3, readyReplicas: 3 },
};

let kube: FakeKube;
let apps: AppsV1Api;
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

beforeAll(async () => {
  kube = await startFakeKube({
    objects: [deployment, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg', namespace: 'shop' }, data: { a: '1' } }],
    now: () => NOW,
  });
  apps = kube.kubeConfigFor('admin').makeApiClient(AppsV1Api);
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

describe('fake kube: writes', () => {
  it('dry-run patches return the would-be object without persisting', async () => {
    const out = await apps.patchNamespacedDeployment(
      { name: 'checkout', namespace: 'shop', body: { spec: { replicas: 5 } }, dryRun: 'All', fieldManager: 'vigil' },
      merge,
    );
    expect(out.spec?.replicas).toBe(5);
    const stored = kube.getObject('apps/v1', 'Deployment', 'shop', 'checkout');
    expect(stored?.['spec']).toMatchObject({ replicas: 3 });
    expect(stored?.metadata.resourceVersion).toBe('500');
    expect(kube.audit.at(-1)).toMatchObject({ verb: 'patch', dryRun: true, fieldManager: 'vigil', status: 200 });
  });

  it('persisted patches bump resourceVersion and generation and record managedFields, taking ownership', async () => {
    const out = await apps.patchNamespacedDeployment(
      { name: 'checkout', namespace: 'shop', body: { spec: { template: { spec: { containers: [{ name: 'checkout', image: 'checkout:2' }] } } } }, fieldManager: 'vigil' },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    expect(out.metadata?.generation).toBe(5);
    expect(Number(out.metadata?.resourceVersion)).toBeGreaterThan(500);
    const entries = out.metadata?.managedFields ?? [];
    const vigil = entries.find((e) => e.manager === 'vigil');
    expect(vigil).toMatchObject({ operation: 'Update', apiVersion: 'apps/v1', fieldsType: 'FieldsV1' });
    expect(vigil?.time?.toISOString()).toBe('2025-03-01T12:00:00.000Z');
    expect(vigil?.fieldsV1).toEqual({ 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': {} } } } });
    // helm no longer owns the containers list, but still owns replicas
    expect(entries.find((e) => e.manager === 'helm')?.fieldsV1).toEqual({ 'f:spec': { 'f:replicas': {} } });
    expect(out.status?.readyReplicas).toBe(3);
  });

  it('json-patch arrays are the default patch type', async () => {
    const out = await apps.patchNamespacedDeployment({
      name: 'checkout',
      namespace: 'shop',
      body: [{ op: 'add', path: '/metadata/annotations', value: { note: 'x' } }],
      fieldManager: 'vigil',
    });
    expect(out.metadata?.annotations).toEqual({ note: 'x' });
    expect(out.metadata?.generation).toBe(5);
  });

  it('serves and writes the scale subresource, recorded as subresource "scale"', async () => {
    const scale = await apps.readNamespacedDeploymentScale({ name: 'checkout', namespace: 'shop' });
    expect(scale).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 3 }, status: { selector: 'app=checkout' } });
    const out = await apps.patchNamespacedDeploymentScale(
      { name: 'checkout', namespace: 'shop', body: { spec: { replicas: 0 } }, fieldManager: 'kubectl' },
      merge,
    );
    expect(out.spec?.replicas).toBe(0);
    const dep = await apps.readNamespacedDeployment({ name: 'checkout', namespace: 'shop' });
    expect(dep.spec?.replicas).toBe(0);
    const kubectl = dep.metadata?.managedFields?.find((e) => e.manager === 'kubectl');
    expect(kubectl).toMatchObject({ subresource: 'scale', operation: 'Update', fieldsV1: { 'f:spec': { 'f:replicas': {} } } });
    expect(dep.metadata?.managedFields?.find((e) => e.manager === 'helm')).toBeUndefined();
    const replaced = await apps.replaceNamespacedDeploymentScale({
      name: 'checkout',
      namespace: 'shop',
      body: { metadata: { name: 'checkout', namespace: 'shop' }, spec: { replicas: 3 } },
      fieldManager: 'vigil',
    });
    expect(replaced.spec?.replicas).toBe(3);
  });

  it('rejects invalid replicas (422), stale resourceVersion (409) and apply patches (415)', async () => {
    const bad = await apiError(
      apps.patchNamespacedDeployment({ name: 'checkout', namespace: 'shop', body: { spec: { replicas: -1 } } }, merge),
    );
    expect(bad.code).toBe(422);
    expect(JSON.parse(bad.body as string).message).toContain('spec.replicas: Invalid value: -1');
    const current = await apps.readNamespacedDeployment({ name: 'checkout', namespace: 'shop' });
    const stale = await apiError(
      apps.replaceNamespacedDeployment({
        name: 'checkout',
        namespace: 'shop',
        body: { ...current, metadata: { ...current.metadata, resourceVersion: '1' } },
      }),
    );
    expect(stale.code).toBe(409);
    const apply = await apiError(
      apps.patchNamespacedDeployment(
        { name: 'checkout', namespace: 'shop', body: { spec: { replicas: 1 } }, fieldManager: 'x' },
        setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
      ),
    );
    expect(apply.code).toBe(415);
  });

  it('creates, replaces and deletes objects', async () => {
    const core = kube.kubeConfigFor('admin').makeApiClient(CoreV1Api);
    const created = await core.createNamespacedConfigMap({
      namespace: 'shop',
      body: { metadata: { name: 'new' }, data: { k: 'v' } },
      fieldManager: 'vigil',
    });
    expect(created.metadata?.uid).toBeDefined();
    expect(created.metadata?.managedFields?.[0]?.fieldsV1).toEqual({ 'f:data': { 'f:k': {} } });
    expect((await apiError(core.createNamespacedConfigMap({ namespace: 'shop', body: { metadata: { name: 'new' } } }))).code).toBe(409);
    const replaced = await core.replaceNamespacedConfigMap({ name: 'cfg', namespace: 'shop', body: { metadata: { name: 'cfg' }, data: { a: '2' } } });
    expect(replaced.data).toEqual({ a: '2' });
    const status = await core.deleteNamespacedConfigMap({ name: 'new', namespace: 'shop' });
    expect(status.status).toBe('Success');
    expect((await apiError(core.readNamespacedConfigMap({ name: 'new', namespace: 'shop' }))).code).toBe(404);
  });
});

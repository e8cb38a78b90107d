/**
 * Write preconditions on the fake, as kube-apiserver answers them: a merge or strategic patch (or a PUT)
 * naming a resourceVersion other than the stored one is 409 Conflict; a JSON patch whose `test` fails is
 * 422 Invalid with the server's generic message. On the object and its scale subresource, dry runs too.
 */
import { ApiException, AppsV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeKube, type FakeKube } from './server.js';

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'checkout', namespace: 'shop', generation: 4, resourceVersion: '500' },
  spec: { replicas: 3, selector: { matchLabels: { app: 'checkout' } }, template: { metadata: { labels: { app: 'checkout' } }, spec: { containers: [{ name: 'checkout', image: 'checkout:1' }] } } },
  status: { replicas: 3 },
};

const CONFLICT = {
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'Operation cannot be fulfilled on deployments.apps "checkout": the object has been modified; please apply your changes to the latest version and try again',
  reason: 'Conflict',
  details: { name: 'checkout', group: 'apps', kind: 'deployments' },
  code: 409,
};
/** What kube-apiserver answers when a JSON patch does not apply: it does not say which op failed. */
const TEST_FAILED = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the server rejected our request due to an error in our request', reason: 'Invalid', details: {}, code: 422 };

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const strategic = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
const json = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);

let kube: FakeKube;
let apps: AppsV1Api;
beforeEach(async () => {
  kube = await startFakeKube({ objects: [deployment] });
  apps = kube.kubeConfigFor('admin').makeApiClient(AppsV1Api);
});
afterEach(() => kube.close());

async function refusal(p: Promise<unknown>): Promise<{ code: number; body: unknown }> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiException);
  const e = err as ApiException<string>;
  return { code: e.code, body: JSON.parse(e.body) };
}

const stored = () => kube.getObject('apps/v1', 'Deployment', 'shop', 'checkout')!;
const target = { name: 'checkout', namespace: 'shop' };

describe('fake kube: resourceVersion preconditions (409 Conflict)', () => {
  it.each([
    ['merge patch', merge],
    ['strategic merge patch', strategic],
  ])('a %s naming a stale resourceVersion is refused on the object, dry run or not', async (_name, type) => {
    const body = { metadata: { resourceVersion: '499' }, spec: { replicas: 5 } };
    for (const dryRun of ['All', undefined]) expect(await refusal(apps.patchNamespacedDeployment({ ...target, body, dryRun }, type))).toEqual({ code: 409, body: CONFLICT });
    expect(stored().spec).toMatchObject({ replicas: 3 });
    expect(stored().metadata.resourceVersion).toBe('500');
  });

  it('a patch naming the current resourceVersion applies and moves it on', async () => {
    const out = await apps.patchNamespacedDeployment({ ...target, body: { metadata: { resourceVersion: '500' }, spec: { replicas: 5 } } }, merge);
    expect(out.spec?.replicas).toBe(5);
    expect(Number(out.metadata?.resourceVersion)).toBeGreaterThan(500);
    expect(await refusal(apps.patchNamespacedDeployment({ ...target, body: { metadata: { resourceVersion: '500' }, spec: { replicas: 6 } } }, merge))).toEqual({ code: 409, body: CONFLICT });
  });

  it('the Scale carries its parent’s resourceVersion, and a stale one in a Scale patch is a conflict on the parent', async () => {
    const scale = await apps.readNamespacedDeploymentScale(target);
    expect(scale.metadata?.resourceVersion).toBe('500');
    await apps.patchNamespacedDeploymentStatus({ ...target, body: { status: { readyReplicas: 1 } } }, merge);
    const body = { metadata: { resourceVersion: '500' }, spec: { replicas: 0 } };
    for (const dryRun of ['All', undefined]) expect(await refusal(apps.patchNamespacedDeploymentScale({ ...target, body, dryRun }, merge))).toEqual({ code: 409, body: CONFLICT });
    expect(stored().spec).toMatchObject({ replicas: 3 });
    const current = stored().metadata.resourceVersion!;
    const out = await apps.patchNamespacedDeploymentScale({ ...target, body: { metadata: { resourceVersion: current }, spec: { replicas: 0 } } }, merge);
    expect(out.spec?.replicas).toBe(0);
  });
});

describe('fake kube: JSON-patch test ops (422 Invalid)', () => {
  it('a failed test refuses the whole patch on the object, dry run or not', async () => {
    const body = [
      { op: 'test', path: '/metadata/generation', value: 3 },
      { op: 'replace', path: '/spec/replicas', value: 5 },
    ];
    for (const dryRun of ['All', undefined]) expect(await refusal(apps.patchNamespacedDeployment({ ...target, body, dryRun }, json))).toEqual({ code: 422, body: TEST_FAILED });
    expect(stored().spec).toMatchObject({ replicas: 3 });
    const ok = await apps.patchNamespacedDeployment({ ...target, body: [{ ...body[0], value: 4 }, body[1]] }, json);
    expect(ok.spec?.replicas).toBe(5);
  });

  it('a failed test refuses a Scale patch too, and a test on the resourceVersion is a precondition', async () => {
    const refused = [
      [{ op: 'test', path: '/spec/replicas', value: 2 }, { op: 'replace', path: '/spec/replicas', value: 0 }],
      [{ op: 'test', path: '/metadata/resourceVersion', value: '499' }, { op: 'replace', path: '/spec/replicas', value: 0 }],
    ];
    for (const body of refused)
      for (const dryRun of ['All', undefined]) expect(await refusal(apps.patchNamespacedDeploymentScale({ ...target, body, dryRun }, json))).toEqual({ code: 422, body: TEST_FAILED });
    expect(stored().spec).toMatchObject({ replicas: 3 });
  });

  it('a body that is not a list of operations is 400, not 422', async () => {
    const bad = await refusal(apps.patchNamespacedDeployment({ ...target, body: { op: 'test' } }, json));
    expect(bad).toMatchObject({ code: 400, body: { reason: 'BadRequest' } });
  });
});

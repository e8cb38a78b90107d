import { ApiException, AppsV1Api, AuthorizationV1Api, CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeKube, type FakeKube, type Identity } from './server.js';

let clock = new Date('2025-03-01T12:00:00Z');

const reader: Identity = {
  user: 'system:serviceaccount:vigil:vigil-reader',
  rules: [
    { verbs: ['get', 'list', 'watch'], apiGroups: ['', 'apps'], resources: ['pods', 'events', 'deployments', 'replicasets'] },
    { verbs: ['get'], apiGroups: [''], resources: ['pods/log'], namespaces: ['shop'] },
  ],
};
const bot: Identity = {
  user: 'system:serviceaccount:vigil:vigil-bot',
  rules: [
    { verbs: ['get'], apiGroups: ['apps'], resources: ['deployments'] },
    { verbs: ['create'], apiGroups: [''], resources: ['serviceaccounts/token'], namespaces: ['vigil'] },
  ],
  canImpersonate: ['system:serviceaccount:vigil:vigil-executor'],
};
const executor: Identity = {
  user: 'system:serviceaccount:vigil:vigil-executor',
  rules: [{ verbs: ['get', 'patch', 'update'], apiGroups: ['apps'], resources: ['deployments/scale'], namespaces: ['shop'] }],
};

let kube: FakeKube;

beforeAll(async () => {
  kube = await startFakeKube({
    objects: [
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'checkout', namespace: 'shop' },
        spec: { replicas: 0, selector: { matchLabels: { app: 'checkout' } } },
      },
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'payments' }, spec: { containers: [{ name: 'c' }] } },
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'vigil-executor', namespace: 'vigil' } },
    ],
    identities: { 'reader-token': reader, 'bot-token': bot, 'executor-static': executor },
    now: () => clock,
  });
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

describe('fake kube: authentication and authorisation', () => {
  it('answers 401 for an unknown token', async () => {
    const apps = kube.kubeConfigFor('who-knows').makeApiClient(AppsV1Api);
    expect((await apiError(apps.readNamespacedDeployment({ name: 'checkout', namespace: 'shop' }))).code).toBe(401);
    expect(kube.audit.at(-1)).toMatchObject({ user: 'system:anonymous', status: 401 });
  });

  it('answers 403 with the real Forbidden wording', async () => {
    const apps = kube.kubeConfigFor('reader-token').makeApiClient(AppsV1Api);
    expect((await apps.readNamespacedDeployment({ name: 'checkout', namespace: 'shop' })).spec?.replicas).toBe(0);
    const err = await apiError(
      apps.patchNamespacedDeployment(
        { name: 'checkout', namespace: 'shop', body: { spec: { replicas: 3 } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
    expect(err.code).toBe(403);
    const body = JSON.parse(err.body as string);
    expect(body.reason).toBe('Forbidden');
    expect(body.message).toBe(
      'deployments.apps "checkout" is forbidden: User "system:serviceaccount:vigil:vigil-reader" cannot patch resource "deployments" in API group "apps" in the namespace "shop"',
    );
    const core = kube.kubeConfigFor('reader-token').makeApiClient(CoreV1Api);
    const logErr = await apiError(core.readNamespacedPodLog({ name: 'p', namespace: 'payments' }));
    expect(JSON.parse(logErr.body as string).message).toContain('cannot get resource "pods/log" in API group "" in the namespace "payments"');
  });

  it('answers SelfSubjectAccessReviews from the rules', async () => {
    const authz = kube.kubeConfigFor('reader-token').makeApiClient(AuthorizationV1Api);
    const ask = async (verb: string, resource: string, namespace: string, subresource?: string): Promise<boolean | undefined> =>
      (
        await authz.createSelfSubjectAccessReview({
          body: { spec: { resourceAttributes: { verb, group: 'apps', resource, namespace, ...(subresource ? { subresource } : {}) } } },
        })
      ).status?.allowed;
    expect(await ask('list', 'deployments', 'shop')).toBe(true);
    expect(await ask('patch', 'deployments', 'shop', 'scale')).toBe(false);
  });

  it('issues TokenRequest tokens with the SA rules, and expires them', async () => {
    const core = kube.kubeConfigFor('bot-token').makeApiClient(CoreV1Api);
    const short = await apiError(
      core.createNamespacedServiceAccountToken({ name: 'vigil-executor', namespace: 'vigil', body: { spec: { audiences: [], expirationSeconds: 60 } } }),
    );
    expect(short.code).toBe(400);
    const tr = await core.createNamespacedServiceAccountToken({
      name: 'vigil-executor',
      namespace: 'vigil',
      body: { spec: { audiences: [], expirationSeconds: 600 } },
    });
    expect(tr.status?.expirationTimestamp?.toISOString()).toBe('2025-03-01T12:10:00.000Z');
    const token = tr.status?.token ?? "";
    const apps = kube.kubeConfigFor(token).makeApiClient(AppsV1Api);
    const scaled = await apps.patchNamespacedDeploymentScale(
      { name: 'checkout', namespace: 'shop', body: { spec: { replicas: 3 } }, dryRun: 'All', fieldManager: 'vigil' },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(scaled.spec?.replicas).toBe(3);
    expect(kube.audit.at(-1)).toMatchObject({ user: 'system:serviceaccount:vigil:vigil-executor', verb: 'patch', dryRun: true });
    expect((await apiError(apps.readNamespacedDeployment({ name: 'checkout', namespace: 'shop' }))).code).toBe(403);
    clock = new Date('2025-03-01T12:11:00Z');
    expect((await apiError(apps.readNamespacedDeploymentScale({ name: 'checkout', namespace: 'shop' }))).code).toBe(401);
    clock = new Date('2025-03-01T12:00:00Z');
    const other = await apiError(
      core.createNamespacedServiceAccountToken({ name: 'x', namespace: 'shop', body: { spec: { expirationSeconds: 600 } } }),
    );
    expect(other.code).toBe(403);
  });

  it('honours impersonation headers when allowed, and records who impersonated and the extras', async () => {
    const kc = kube.kubeConfigFor('bot-token', { impersonateUser: 'system:serviceaccount:vigil:vigil-executor' });
    const apps = kc.makeApiClient(AppsV1Api);
    const out = await apps.patchNamespacedDeploymentScale(
      { name: 'checkout', namespace: 'shop', body: { spec: { replicas: 3 } }, fieldManager: 'vigil' },
      { middleware: [], ...setHeaderOptions('Content-Type', PatchStrategy.MergePatch) },
    );
    expect(out.spec?.replicas).toBe(3);

    const withExtra = kube.kubeConfigFor('bot-token', { impersonateUser: 'system:serviceaccount:vigil:vigil-executor' }).makeApiClient(AppsV1Api);
    await withExtra.readNamespacedDeploymentScale({ name: 'checkout', namespace: 'shop' }, setHeaderOptions('Impersonate-Extra-approved-by', 'U123ABC'));
    expect(kube.audit.at(-1)).toMatchObject({
      user: 'system:serviceaccount:vigil:vigil-executor',
      impersonatedBy: 'system:serviceaccount:vigil:vigil-bot',
      extra: { 'approved-by': ['U123ABC'] },
      verb: 'get',
      status: 200,
    });
    const lastRequest = kube.requests.at(-1)!;
    expect(lastRequest.headers['impersonate-user']).toBe('system:serviceaccount:vigil:vigil-executor');

    const denied = kube.kubeConfigFor('reader-token', { impersonateUser: 'system:serviceaccount:vigil:vigil-executor' }).makeApiClient(AppsV1Api);
    const err = await apiError(denied.readNamespacedDeploymentScale({ name: 'checkout', namespace: 'shop' }));
    expect(err.code).toBe(403);
    expect(JSON.parse(err.body as string).message).toContain('cannot impersonate resource "serviceaccounts"');
  });
});

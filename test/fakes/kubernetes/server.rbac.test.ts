/**
 * The fake API server enforcing RBAC loaded from deploy/'s manifests, over HTTP: what it refuses, how
 * each impersonation header is authorised, TokenRequest tokens resolved through the same bindings, and
 * the three review APIs answering from the rules it enforces.
 */
import { AuthorizationV1Api, CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployManifests, EXECUTOR_USER, READER_USER } from './deploy-rbac.js';
import { FULL_ACCESS } from './rbac.js';
import { startFakeKube, type FakeKube } from './server.js';

let kube: FakeKube;
let tokenKube: FakeKube;

const objects = [
  { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'checkout', namespace: 'shop' }, spec: { replicas: 0, selector: { matchLabels: { app: 'checkout' } } } },
  { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'coredns', namespace: 'kube-system' }, spec: { replicas: 2, selector: { matchLabels: { app: 'coredns' } } } },
  { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'vigil-slack', namespace: 'vigil' }, data: { SLACK_BOT_TOKEN: 'eG94Yi0x' } },
];

beforeAll(async () => {
  const serviceAccounts = deployManifests().filter((d) => (d as { kind: string }).kind === 'ServiceAccount');
  const identities = { admin: { user: 'kubernetes-admin', groups: ['system:masters'], rules: FULL_ACCESS } };
  kube = await startFakeKube({ objects: [...objects, ...serviceAccounts], rbac: { objects: deployManifests('impersonate'), tokens: { bot: READER_USER } }, identities });
  tokenKube = await startFakeKube({ objects: [...objects, ...serviceAccounts], rbac: { objects: deployManifests('token'), tokens: { bot: READER_USER } } });
});
afterAll(async () => {
  await kube.close();
  await tokenKube.close();
});

/** One raw request, so every header is exactly what the test says. */
async function call(k: FakeKube, token: string, method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<{ status: number; body: { message?: string; status?: { allowed?: boolean; reason?: string } } & Record<string, unknown> }> {
  const res = await fetch(`${k.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json', ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as never };
}
const SCALE_SHOP = '/apis/apps/v1/namespaces/shop/deployments/checkout/scale';
const SCALE_KUBE_SYSTEM = '/apis/apps/v1/namespaces/kube-system/deployments/coredns/scale';
const asExecutor = { 'Impersonate-User': EXECUTOR_USER, 'Impersonate-Extra-approved-by': 'U0VIGILSRE', 'Impersonate-Extra-incident': 'inc-1' };

describe('fake kube with deploy/ RBAC', () => {
  it('refuses an unknown token (no admin fallback once RBAC is configured)', async () => {
    expect((await call(kube, 'who-knows', 'GET', '/api/v1/pods')).status).toBe(401);
  });

  it('the reader reads, and every write is 403 with the real wording', async () => {
    expect((await call(kube, 'bot', 'GET', '/api/v1/pods')).status).toBe(200);
    const patch = await call(kube, 'bot', 'PATCH', SCALE_SHOP, {}, { spec: { replicas: 3 } });
    expect(patch.status).toBe(403);
    expect(patch.body.message).toBe(
      'deployments.apps "checkout" is forbidden: User "system:serviceaccount:vigil:vigil" cannot patch resource "deployments/scale" in API group "apps" in the namespace "shop"',
    );
    expect((await call(kube, 'bot', 'GET', '/api/v1/namespaces/vigil/secrets/vigil-slack')).status).toBe(403);
    expect((await call(kube, 'bot', 'GET', '/api/v1/secrets')).status).toBe(403);
    expect((await call(kube, 'bot', 'GET', '/api/v1/namespaces/shop/secrets')).status).toBe(200);
  });

  it('impersonating the executor with the two extras: scale in shop yes, in kube-system no', async () => {
    expect((await call(kube, 'bot', 'PATCH', SCALE_SHOP, asExecutor, { spec: { replicas: 3 } })).status).toBe(200);
    expect(kube.audit.at(-1)).toMatchObject({ user: EXECUTOR_USER, impersonatedBy: READER_USER, extra: { 'approved-by': ['U0VIGILSRE'], incident: ['inc-1'] }, status: 200 });
    const denied = await call(kube, 'bot', 'PATCH', SCALE_KUBE_SYSTEM, asExecutor, { spec: { replicas: 0 } });
    expect(denied.status).toBe(403);
    expect(denied.body.message).toContain(`User "${EXECUTOR_USER}" cannot patch resource "deployments/scale" in API group "apps" in the namespace "kube-system"`);
  });

  it('authorises every impersonation header on its own: another SA, a group, or an extra key not granted is 403', async () => {
    const otherSa = await call(kube, 'bot', 'GET', '/api/v1/pods', { 'Impersonate-User': 'system:serviceaccount:kube-system:replicaset-controller' });
    expect(otherSa.status).toBe(403);
    expect(otherSa.body.message).toContain('cannot impersonate resource "serviceaccounts" in API group "" in the namespace "kube-system"');
    const user = await call(kube, 'bot', 'GET', '/api/v1/pods', { 'Impersonate-User': 'kubernetes-admin' });
    expect(user.body.message).toContain('cannot impersonate resource "users" in API group "" at the cluster scope');
    const group = await call(kube, 'bot', 'GET', '/api/v1/pods', { 'Impersonate-User': EXECUTOR_USER, 'Impersonate-Group': 'system:masters' });
    expect(group.status).toBe(403);
    expect(group.body.message).toContain('cannot impersonate resource "groups"');
    const extra = await call(kube, 'bot', 'GET', '/api/v1/pods', { 'Impersonate-User': EXECUTOR_USER, 'Impersonate-Extra-scopes': 'all' });
    expect(extra.status).toBe(403);
    expect(extra.body.message).toBe('userextras.authentication.k8s.io "all" is forbidden: User "system:serviceaccount:vigil:vigil" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope');
  });

  it('SelfSubjectAccessReview answers what the server enforces, with the binding as the reason', async () => {
    const authz = kube.kubeConfigFor('bot').makeApiClient(AuthorizationV1Api);
    const cases: [verb: string, group: string, resource: string, sub: string | undefined, ns: string | undefined, name: string | undefined, path: string, method: string][] = [
      ['patch', 'apps', 'deployments', 'scale', 'shop', 'checkout', SCALE_SHOP, 'PATCH'],
      ['list', '', 'pods', undefined, undefined, undefined, '/api/v1/pods', 'GET'],
      ['list', '', 'secrets', undefined, undefined, undefined, '/api/v1/secrets', 'GET'],
      ['list', '', 'secrets', undefined, 'shop', undefined, '/api/v1/namespaces/shop/secrets', 'GET'],
      ['get', '', 'secrets', undefined, 'vigil', 'vigil-slack', '/api/v1/namespaces/vigil/secrets/vigil-slack', 'GET'],
      ['delete', 'apps', 'deployments', undefined, 'kube-system', 'coredns', '/apis/apps/v1/namespaces/kube-system/deployments/coredns', 'DELETE'],
    ];
    for (const [verb, group, resource, subresource, namespace, name, path, method] of cases) {
      const review = await authz.createSelfSubjectAccessReview({
        body: { spec: { resourceAttributes: { verb, group, resource, ...(subresource ? { subresource } : {}), ...(namespace ? { namespace } : {}), ...(name ? { name } : {}) } } },
      });
      const real = await call(kube, 'bot', method, path, {}, method === 'PATCH' ? { spec: { replicas: 3 } } : undefined);
      expect(review.status?.allowed ?? false, `${verb} ${resource} ${namespace ?? '*'}`).toBe(real.status < 400);
    }
    const allowed = await authz.createSelfSubjectAccessReview({ body: { spec: { resourceAttributes: { verb: 'list', resource: 'pods' } } } });
    expect(allowed.status?.reason).toBe('RBAC: allowed by ClusterRoleBinding "vigil-reader" of ClusterRole "vigil-reader" to ServiceAccount "vigil/vigil"');
  });

  it('SelfSubjectRulesReview lists the rules of a namespace; SubjectAccessReview needs its own grant', async () => {
    const rules = await call(kube, 'bot', 'POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', asExecutor, { spec: { namespace: 'shop' } });
    expect(rules.status).toBe(201);
    const resourceRules = (rules.body['status'] as { resourceRules: { verbs: string[]; resources: string[] }[] }).resourceRules;
    expect(resourceRules).toContainEqual({ verbs: ['get', 'patch'], apiGroups: ['apps'], resources: ['deployments', 'deployments/scale', 'statefulsets', 'statefulsets/scale'] });
    const inKubeSystem = await call(kube, 'bot', 'POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', asExecutor, { spec: { namespace: 'kube-system' } });
    expect((inKubeSystem.body['status'] as { resourceRules: { resources: string[] }[] }).resourceRules.flatMap((r) => r.resources)).toEqual(['nodes']);

    const sar = { spec: { user: EXECUTOR_USER, groups: ['system:serviceaccounts', 'system:serviceaccounts:vigil'], resourceAttributes: { verb: 'patch', group: 'apps', resource: 'deployments', subresource: 'scale', namespace: 'shop' } } };
    expect((await call(kube, 'bot', 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {}, sar)).status).toBe(403);
    const asAdmin = await call(kube, 'admin', 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {}, sar);
    expect(asAdmin.body.status).toMatchObject({ allowed: true, reason: expect.stringContaining('RoleBinding "vigil-executor/shop"') });
    const elsewhere = await call(kube, 'admin', 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {}, { spec: { ...sar.spec, resourceAttributes: { ...sar.spec.resourceAttributes, namespace: 'kube-system' } } });
    expect(elsewhere.body.status).toEqual({ allowed: false });
  });

  it('an RBAC object added at run time takes effect at once', async () => {
    const path = '/apis/apps/v1/namespaces/shop/deployments/checkout';
    expect((await call(kube, 'bot', 'DELETE', path)).status).toBe(403);
    kube.rbac!.add(
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'too-much' }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'too-much', namespace: 'payments' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'too-much' }, subjects: [{ kind: 'ServiceAccount', name: 'vigil', namespace: 'vigil' }] },
    );
    // Bound in payments only: shop stays refused.
    expect((await call(kube, 'bot', 'DELETE', path)).status).toBe(403);
    expect((await call(kube, 'bot', 'GET', '/api/v1/namespaces/payments/secrets')).status).toBe(200);
    kube.rbac!.remove('RoleBinding', 'too-much', 'payments');
  });
});

describe('fake kube with deploy/ RBAC, TokenRequest mode (executor-token.yaml)', () => {
  it('mints tokens for vigil-executor only; the token acts as the executor through its bindings', async () => {
    const core = tokenKube.kubeConfigFor('bot').makeApiClient(CoreV1Api);
    const tr = await core.createNamespacedServiceAccountToken({ name: 'vigil-executor', namespace: 'vigil', body: { spec: { audiences: [], expirationSeconds: 600 } } });
    const token = tr.status?.token ?? "";
    expect((await call(tokenKube, token, 'PATCH', SCALE_SHOP, {}, { spec: { replicas: 3 } })).status).toBe(200);
    expect(tokenKube.audit.at(-1)).toMatchObject({ user: EXECUTOR_USER, status: 200 });
    expect((await call(tokenKube, token, 'PATCH', SCALE_KUBE_SYSTEM, {}, { spec: { replicas: 0 } })).status).toBe(403);
    expect((await call(tokenKube, token, 'GET', '/api/v1/namespaces/vigil/secrets/vigil-slack')).status).toBe(403);
    // No other SA's token, and no impersonation in this mode.
    expect((await call(tokenKube, 'bot', 'POST', '/api/v1/namespaces/vigil/serviceaccounts/vigil/token', {}, { spec: { expirationSeconds: 600 } })).status).toBe(403);
    expect((await call(tokenKube, 'bot', 'GET', '/api/v1/pods', { 'Impersonate-User': EXECUTOR_USER })).status).toBe(403);
  });
});

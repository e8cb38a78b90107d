/**
 * The fake's RBAC from manifests: the loader (deploy/'s own files, validation) and the Kubernetes
 * semantics the authoriser must follow — binding scope, subjects, resourceNames, subresources,
 * nonResourceURLs.
 */
import { describe, expect, it } from 'vitest';
import { clusterRbac, deployManifests, EXECUTOR_SA, executorTemplates, pickTemplate, READER_SA } from './deploy-rbac.js';
import { allowingRule, isAllowed, serviceAccountUser, userInfoOf, type Identity, type RequestAttributes } from './rbac.js';
import { RbacRules, roleBinding } from './rbac-manifests.js';

const rbacGroup = 'rbac.authorization.k8s.io';
const clusterRole = (name: string, rules: object[]) => ({ apiVersion: `${rbacGroup}/v1`, kind: 'ClusterRole', metadata: { name }, rules });
const role = (namespace: string, name: string, rules: object[]) => ({ apiVersion: `${rbacGroup}/v1`, kind: 'Role', metadata: { name, namespace }, rules });
const crb = (name: string, roleName: string, subjects: object[]) => ({
  apiVersion: `${rbacGroup}/v1`,
  kind: 'ClusterRoleBinding',
  metadata: { name },
  roleRef: { apiGroup: rbacGroup, kind: 'ClusterRole', name: roleName },
  subjects,
});
const rb = (namespace: string, name: string, roleRef: { kind: string; name: string }, subjects: object[]) => ({
  apiVersion: `${rbacGroup}/v1`,
  kind: 'RoleBinding',
  metadata: { name, namespace },
  roleRef: { apiGroup: rbacGroup, ...roleRef },
  subjects,
});

const can = (rbac: RbacRules, who: { user: string; groups: string[] }, attrs: RequestAttributes): boolean =>
  isAllowed({ user: who.user, rules: rbac.rulesFor(who) } satisfies Identity, attrs);

const reader = serviceAccountUser(READER_SA.namespace, READER_SA.name);
const executor = serviceAccountUser(EXECUTOR_SA.namespace, EXECUTOR_SA.name);

describe('RBAC from deploy/ manifests', () => {
  const rbac = new RbacRules(deployManifests('impersonate'));

  it('reads every document of the files, roles and bindings alike, and ignores the other kinds', () => {
    const docs = deployManifests('impersonate') as { kind: string }[];
    expect(docs.filter((d) => d.kind === 'ServiceAccount')).toHaveLength(2);
    expect(rbac.listBindings().map((b) => `${b.kind}/${b.namespace ?? ''}/${b.name}`)).toEqual(
      expect.arrayContaining(['ClusterRoleBinding//vigil-reader', 'RoleBinding/vigil/vigil-impersonate-executor', 'RoleBinding/shop/vigil-executor', 'ClusterRoleBinding//vigil-executor-nodes']),
    );
    expect(executorTemplates(docs)).toEqual(['vigil-executor-production', 'vigil-executor-staging']);
  });

  it('ServiceAccount tokens carry the SA user and its groups', () => {
    expect(reader).toEqual({ user: 'system:serviceaccount:vigil:vigil', groups: ['system:serviceaccounts', 'system:serviceaccounts:vigil', 'system:authenticated'] });
    expect(userInfoOf('alice')).toEqual({ user: 'alice', groups: ['system:authenticated'] });
  });

  it('the reader reads cluster-wide (a ClusterRoleBinding) and writes nothing anywhere', () => {
    expect(can(rbac, reader, { verb: 'list', group: '', resource: 'pods' })).toBe(true);
    expect(can(rbac, reader, { verb: 'list', group: '', resource: 'nodes' })).toBe(true);
    expect(can(rbac, reader, { verb: 'get', group: '', resource: 'pods/log', namespace: 'kube-system', name: 'x' })).toBe(true);
    for (const verb of ['create', 'update', 'patch', 'delete', 'deletecollection'])
      for (const [group, resource] of [['apps', 'deployments'], ['apps', 'deployments/scale'], ['', 'pods'], ['', 'configmaps'], ['', 'secrets'], [rbacGroup, 'clusterrolebindings']] as const) {
        expect(can(rbac, reader, { verb, group, resource, namespace: 'shop', name: 'x' }), `${verb} ${resource}`).toBe(false);
        expect(can(rbac, reader, { verb, group, resource }), `${verb} ${resource} cluster-wide`).toBe(false);
      }
  });

  it('Secrets: only in the namespaces deploy/ binds vigil-reader-secrets in, never across all namespaces, never in vigil', () => {
    expect(can(rbac, reader, { verb: 'list', group: '', resource: 'secrets', namespace: 'shop' })).toBe(true);
    expect(can(rbac, reader, { verb: 'list', group: '', resource: 'secrets' })).toBe(false);
    expect(can(rbac, reader, { verb: 'get', group: '', resource: 'secrets', namespace: 'vigil', name: 'vigil-slack' })).toBe(false);
    expect(can(rbac, reader, { verb: 'get', group: '', resource: 'secrets', namespace: 'kube-system', name: 'x' })).toBe(false);
    expect(can(rbac, reader, { verb: 'watch', group: '', resource: 'secrets', namespace: 'shop' })).toBe(false);
  });

  it('a RoleBinding to a ClusterRole grants only in its namespace', () => {
    const scale = { verb: 'patch', group: 'apps', resource: 'deployments/scale', name: 'checkout' };
    expect(can(rbac, executor, { ...scale, namespace: 'shop' })).toBe(true);
    expect(can(rbac, executor, { ...scale, namespace: 'kube-system' })).toBe(false);
    expect(can(rbac, executor, { ...scale, namespace: 'shop-dr' })).toBe(false);
    // Not cluster-wide either: a cluster-scoped question is not in the binding's namespace.
    expect(can(rbac, executor, { verb: 'patch', group: 'apps', resource: 'deployments' })).toBe(false);
    // The one ClusterRoleBinding of the executor: patch nodes.
    expect(can(rbac, executor, { verb: 'patch', group: '', resource: 'nodes', name: 'node-1' })).toBe(true);
    expect(can(rbac, executor, { verb: 'delete', group: '', resource: 'nodes', name: 'node-1' })).toBe(false);
    expect(can(rbac, executor, { verb: 'patch', group: 'batch', resource: 'cronjobs', namespace: 'shop', name: 'x' })).toBe(false);
    expect(can(rbac, executor, { verb: 'patch', group: 'batch', resource: 'cronjobs', namespace: 'shop-staging', name: 'x' })).toBe(true);
  });

  it('resourceNames: impersonate only the executor SA, by namespace and name', () => {
    const imp = { verb: 'impersonate', group: '', resource: 'serviceaccounts' };
    expect(can(rbac, reader, { ...imp, namespace: 'vigil', name: 'vigil-executor' })).toBe(true);
    expect(can(rbac, reader, { ...imp, namespace: 'vigil', name: 'vigil' })).toBe(false);
    expect(can(rbac, reader, { ...imp, namespace: 'shop', name: 'vigil-executor' })).toBe(false);
    expect(can(rbac, reader, { ...imp, namespace: 'vigil' })).toBe(false);
    expect(can(rbac, reader, { ...imp })).toBe(false);
    expect(can(rbac, reader, { verb: 'impersonate', group: '', resource: 'users', name: 'admin' })).toBe(false);
    expect(can(rbac, reader, { verb: 'impersonate', group: '', resource: 'groups', name: 'system:masters' })).toBe(false);
  });

  it('userextras/<key>: the two audit extras with any value, no other key', () => {
    const extra = (key: string, value: string): RequestAttributes => ({ verb: 'impersonate', group: 'authentication.k8s.io', resource: `userextras/${key}`, name: value });
    expect(can(rbac, reader, extra('approved-by', 'U0VIGILSRE'))).toBe(true);
    expect(can(rbac, reader, extra('incident', 'cmx123'))).toBe(true);
    expect(can(rbac, reader, extra('scopes', 'anything'))).toBe(false);
    expect(can(rbac, reader, { verb: 'impersonate', group: '', resource: 'userextras/approved-by', name: 'U0' })).toBe(false);
  });

  it('token mode: create serviceaccounts/token for vigil-executor only (the name is in the URL)', () => {
    const token = new RbacRules(deployManifests('token'));
    const mint = { verb: 'create', group: '', resource: 'serviceaccounts/token', namespace: 'vigil' };
    expect(can(token, reader, { ...mint, name: 'vigil-executor' })).toBe(true);
    expect(can(token, reader, { ...mint, name: 'vigil' })).toBe(false);
    expect(can(token, reader, { ...mint })).toBe(false);
    expect(can(token, reader, { verb: 'impersonate', group: '', resource: 'serviceaccounts', namespace: 'vigil', name: 'vigil-executor' })).toBe(false);
    // And impersonate mode cannot mint.
    expect(can(rbac, reader, { ...mint, name: 'vigil-executor' })).toBe(false);
  });

  it('allow reasons name the binding, the role and the subject as RBAC does', () => {
    const rule = allowingRule(rbac.rulesFor(executor), { verb: 'patch', group: 'apps', resource: 'deployments/scale', namespace: 'shop', name: 'checkout' });
    expect(rule?.grantedBy).toBe('RoleBinding "vigil-executor/shop" of ClusterRole "vigil-executor-production" to ServiceAccount "vigil-executor/vigil"');
  });
});

describe('RBAC semantics', () => {
  it('resourceNames restrict get/update/patch/delete but never grant list, watch, deletecollection or create', () => {
    const rbac = new RbacRules([
      role('shop', 'one-config', [{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['app-config'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'] }]),
      rb('shop', 'one-config', { kind: 'Role', name: 'one-config' }, [{ kind: 'User', apiGroup: rbacGroup, name: 'alice' }]),
    ]);
    const alice = userInfoOf('alice');
    const cm = { group: '', resource: 'configmaps', namespace: 'shop' };
    for (const verb of ['get', 'update', 'patch', 'delete']) {
      expect(can(rbac, alice, { ...cm, verb, name: 'app-config' }), verb).toBe(true);
      expect(can(rbac, alice, { ...cm, verb, name: 'other' }), `${verb} other`).toBe(false);
    }
    for (const verb of ['list', 'watch', 'deletecollection', 'create']) expect(can(rbac, alice, { ...cm, verb }), verb).toBe(false);
  });

  it('subjects: User by name, Group by the user\'s groups, ServiceAccount by its user (a RoleBinding subject without namespace is the binding\'s)', () => {
    const rbac = new RbacRules([
      clusterRole('pods-reader', [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }]),
      rb('shop', 'by-user', { kind: 'ClusterRole', name: 'pods-reader' }, [{ kind: 'User', apiGroup: rbacGroup, name: 'alice' }]),
      rb('team', 'by-group', { kind: 'ClusterRole', name: 'pods-reader' }, [{ kind: 'Group', apiGroup: rbacGroup, name: 'system:serviceaccounts:ci' }]),
      rb('build', 'by-sa', { kind: 'ClusterRole', name: 'pods-reader' }, [{ kind: 'ServiceAccount', name: 'builder' }]),
      crb('everyone', 'pods-reader', [{ kind: 'Group', apiGroup: rbacGroup, name: 'system:authenticated' }]),
    ]);
    const get = (namespace: string) => ({ verb: 'get', group: '', resource: 'pods', namespace, name: 'p' });
    expect(can(rbac, userInfoOf('alice'), get('shop'))).toBe(true);
    expect(can(rbac, userInfoOf('bob', []), get('shop'))).toBe(true); // via system:authenticated, which every user has
    expect(can(rbac, { user: 'bob', groups: [] }, get('shop'))).toBe(false);
    expect(can(rbac, { user: 'bob', groups: [] }, get('team'))).toBe(false);
    expect(can(rbac, { ...serviceAccountUser('ci', 'runner'), groups: ['system:serviceaccounts:ci'] }, get('team'))).toBe(true);
    expect(can(rbac, { user: 'system:serviceaccount:build:builder', groups: [] }, get('build'))).toBe(true);
    expect(can(rbac, { user: 'system:serviceaccount:other:builder', groups: [] }, get('build'))).toBe(false);
  });

  it('a ClusterRoleBinding grants everywhere: every namespace, all-namespace lists and cluster-scoped kinds', () => {
    const rbac = new RbacRules([clusterRole('viewer', [{ apiGroups: [''], resources: ['pods', 'nodes'], verbs: ['list'] }]), crb('viewer', 'viewer', [{ kind: 'User', name: 'v' }])]);
    const v = userInfoOf('v');
    expect(can(rbac, v, { verb: 'list', group: '', resource: 'pods' })).toBe(true);
    expect(can(rbac, v, { verb: 'list', group: '', resource: 'pods', namespace: 'anything' })).toBe(true);
    expect(can(rbac, v, { verb: 'list', group: '', resource: 'nodes' })).toBe(true);
    expect(can(rbac, v, { verb: 'list', group: 'apps', resource: 'pods' })).toBe(false);
  });

  it('subresources: exact, "*" and "*/scale" match; "deployments" alone does not grant deployments/scale', () => {
    const rbac = new RbacRules([
      clusterRole('r', [
        { apiGroups: ['apps'], resources: ['deployments'], verbs: ['patch'] },
        { apiGroups: ['apps'], resources: ['*/scale'], verbs: ['get'] },
        { apiGroups: [''], resources: ['*'], verbs: ['watch'] },
      ]),
      crb('r', 'r', [{ kind: 'User', name: 'u' }]),
    ]);
    const u = userInfoOf('u');
    expect(can(rbac, u, { verb: 'patch', group: 'apps', resource: 'deployments', namespace: 'a', name: 'd' })).toBe(true);
    expect(can(rbac, u, { verb: 'patch', group: 'apps', resource: 'deployments/scale', namespace: 'a', name: 'd' })).toBe(false);
    expect(can(rbac, u, { verb: 'get', group: 'apps', resource: 'statefulsets/scale', namespace: 'a', name: 's' })).toBe(true);
    expect(can(rbac, u, { verb: 'get', group: 'apps', resource: 'statefulsets', namespace: 'a', name: 's' })).toBe(false);
    expect(can(rbac, u, { verb: 'watch', group: '', resource: 'pods/log', namespace: 'a' })).toBe(true);
  });

  it('nonResourceURLs: exact or trailing-* prefix, from a ClusterRoleBinding only; a Role may not carry them', () => {
    const rbac = new RbacRules([
      clusterRole('probe', [{ nonResourceURLs: ['/healthz', '/metrics/*'], verbs: ['get'] }]),
      crb('probe', 'probe', [{ kind: 'User', name: 'prom' }]),
      rb('shop', 'probe', { kind: 'ClusterRole', name: 'probe' }, [{ kind: 'User', name: 'ns-only' }]),
    ]);
    expect(can(rbac, userInfoOf('prom'), { verb: 'get', path: '/healthz' })).toBe(true);
    expect(can(rbac, userInfoOf('prom'), { verb: 'get', path: '/metrics/cadvisor' })).toBe(true);
    expect(can(rbac, userInfoOf('prom'), { verb: 'get', path: '/healthz/etcd' })).toBe(false);
    expect(can(rbac, userInfoOf('prom'), { verb: 'post', path: '/healthz' })).toBe(false);
    expect(can(rbac, userInfoOf('ns-only'), { verb: 'get', path: '/healthz' })).toBe(false);
    expect(() => new RbacRules([role('shop', 'bad', [{ nonResourceURLs: ['/x'], verbs: ['get'] }])])).toThrow(/namespaced rules cannot apply to non-resource URLs/);
  });

  it('a binding to a role that does not exist grants nothing; objects added later take effect; removed ones stop', () => {
    const rbac = new RbacRules([crb('dangling', 'not-there', [{ kind: 'User', name: 'u' }])]);
    const u = userInfoOf('u');
    const attrs = { verb: 'get', group: '', resource: 'pods', namespace: 'a', name: 'p' };
    expect(can(rbac, u, attrs)).toBe(false);
    rbac.add(clusterRole('not-there', [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }]));
    expect(can(rbac, u, attrs)).toBe(true);
    expect(rbac.remove('ClusterRoleBinding', 'dangling')).toBe(true);
    expect(can(rbac, u, attrs)).toBe(false);
  });

  it('refuses manifests the API server would refuse', () => {
    expect(() => new RbacRules([clusterRole('x', [{ apiGroups: [''], resources: ['pods'] }])])).toThrow(/verbs: Required value/);
    expect(() => new RbacRules([clusterRole('x', [{ resources: ['pods'], verbs: ['get'] }])])).toThrow(/apiGroups: Required value/);
    expect(() => new RbacRules([clusterRole('x', [{ apiGroups: [''], resources: ['pods'], nonResourceURLs: ['/x'], verbs: ['get'] }])])).toThrow(/both regular resources and non-resource URLs/);
    expect(() => new RbacRules([{ ...crb('x', 'y', []), roleRef: { apiGroup: rbacGroup, kind: 'Role', name: 'y' } }])).toThrow(/supported values: "ClusterRole"/);
    expect(() => new RbacRules([crb('x', 'y', [{ kind: 'ServiceAccount', name: 'sa' }])])).toThrow(/subjects\[0\]\.namespace: Required value/);
    expect(() => new RbacRules([{ ...role('a', 'r', []), metadata: { name: 'r' } }])).toThrow(/metadata\.namespace: Required value/);
  });
});

describe('deploy/ RBAC bound in a cluster\'s own namespaces', () => {
  it('binds the narrowest executor template that covers what is needed, with RoleBindings only', () => {
    const docs = deployManifests();
    expect(pickTemplate(docs, [{ verb: 'patch', group: 'apps', resource: 'deployments/scale' }])).toBe('vigil-executor-production');
    expect(pickTemplate(docs, [{ verb: 'patch', group: 'batch', resource: 'cronjobs' }])).toBe('vigil-executor-staging');
    const built = clusterRbac({ executorNamespaces: { orders: 'vigil-executor-production', shop: 'vigil-executor-production' }, readerSecretNamespaces: ['orders', 'shop'] });
    // shop is deploy/'s own binding: nothing generated there.
    expect(built.generated).toEqual([
      roleBinding({ name: 'vigil-executor', namespace: 'orders', roleRef: { kind: 'ClusterRole', name: 'vigil-executor-production' }, serviceAccount: EXECUTOR_SA, labels: expect.any(Object) }),
      roleBinding({ name: 'vigil-reader-secrets', namespace: 'orders', roleRef: { kind: 'ClusterRole', name: 'vigil-reader-secrets' }, serviceAccount: READER_SA, labels: expect.any(Object) }),
    ]);
    const rbac = new RbacRules(built.rbac);
    expect(can(rbac, executor, { verb: 'patch', group: 'apps', resource: 'deployments/scale', namespace: 'orders', name: 'api' })).toBe(true);
    expect(can(rbac, executor, { verb: 'patch', group: 'apps', resource: 'deployments/scale', namespace: 'billing', name: 'api' })).toBe(false);
    expect(can(rbac, reader, { verb: 'list', group: '', resource: 'secrets', namespace: 'orders' })).toBe(true);
  });
});

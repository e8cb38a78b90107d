import type { V1ClusterRole, V1ClusterRoleBinding, V1CronJob, V1Deployment, V1ManagedFieldsEntry, V1ReplicaSet, V1Role, V1RoleBinding } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { KubeEvidence } from '../../../src/evidence/kubernetes/gather.js';
import { emptySurroundings, type ContainerLogs } from '../../../src/evidence/kubernetes/surroundings.js';
import type { ClusterTriageInput, TriageInput } from '../../../src/triage/analyzer.js';
import { parseDenial, rbacDenied } from '../../../src/triage/cluster/rbac-denied.js';
import { buildTopology } from '../../../src/topology/graph.js';
import { emptySnapshot, type ClusterSnapshot } from '../../../src/topology/snapshot.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const at = (min: number) => new Date(ONSET.getTime() + min * 60_000);
const iso = (min: number) => at(min).toISOString();

const DENIED =
  'E0301 11:58:02.114072       1 reflector.go:147] k8s.io/client-go/tools/cache/reflector.go:229: Failed to watch *v1.ConfigMap: failed to list *v1.ConfigMap: configmaps is forbidden: User "system:serviceaccount:shop:config-watcher" cannot list resource "configmaps" in API group "" in the namespace "shop"';
const TEMPLATE =
  'E<NUM> <TS> <NUM> reflector.go:<NUM>] k8s.io/client-go/tools/cache/reflector.go:<NUM>: Failed to watch *v1.ConfigMap: failed to list *v1.ConfigMap: configmaps is forbidden: User "system:serviceaccount:shop:config-watcher" cannot list resource "configmaps" in API group "" in the namespace "shop"';

function deployment(name: string, sa: string): V1Deployment {
  return {
    metadata: { name, namespace: 'shop', annotations: { 'deployment.kubernetes.io/revision': '5' } },
    spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { serviceAccountName: sa, containers: [{ name, image: `registry.example.com/${name}:1.2.0` }] } } },
  };
}

function logs(example: string, template: string, count = 96): ContainerLogs {
  return { pod: 'config-watcher-6c8f9d7b4-x2x9k', container: 'config-watcher', previous: false, running: true, patterns: [{ template, example, count, first: at(-2), last: at(0), level: 'error' }], tail: [example] };
}

function kube(containerLogs: ContainerLogs[], over: Partial<KubeEvidence> = {}): KubeEvidence {
  return {
    ...emptySurroundings(),
    onset: ONSET,
    target: { kind: 'Deployment', namespace: 'shop', name: 'config-watcher' },
    workload: deployment('config-watcher', 'config-watcher'),
    replicaSets: [],
    pods: [],
    services: [{ service: { metadata: { name: 'config-watcher', namespace: 'shop' } } }],
    events: [],
    related: [],
    dependents: [],
    unhealthyPods: [],
    warningEvents: [],
    gaps: [],
    server: 'https://k8s.test',
    containerLogs,
    ...over,
  };
}

const candidate = (k: KubeEvidence): TriageInput => ({ alert: { labels: {}, labelValues: [] } as unknown as TriageInput['alert'], onset: ONSET, kube: k, changes: [] });

function cluster(inputs: TriageInput[], rbac: Partial<Pick<ClusterSnapshot, 'roles' | 'roleBindings' | 'clusterRoles' | 'clusterRoleBindings' | 'cronJobs'>>, jobs: ClusterTriageInput['jobs'] = []): ClusterTriageInput {
  const snapshot: ClusterSnapshot = { ...emptySnapshot(), readAt: ONSET, ...rbac };
  return { alert: { labels: {}, labelValues: [] } as unknown as ClusterTriageInput['alert'], onset: ONSET, cluster: { snapshot, topology: buildTopology(snapshot), walk: { subjects: [], starts: [], reached: new Map(), candidates: [] }, subjects: [] }, inputs, changes: [], metrics: [], jobs };
}

const edit = (manager: string, min: number, fields: Record<string, unknown>): V1ManagedFieldsEntry => ({ manager, operation: 'Update', time: at(min), fieldsType: 'FieldsV1', fieldsV1: fields });
const applied = (min: number, fields: Record<string, unknown>): V1ManagedFieldsEntry => ({ manager: 'kubectl-client-side-apply', operation: 'Update', time: at(min), fieldsType: 'FieldsV1', fieldsV1: fields });

const reader = (rules = [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }], managedFields: V1ManagedFieldsEntry[] = [applied(-30 * 24 * 60, { 'f:rules': {} })]): V1Role => ({
  metadata: { name: 'configmap-reader', namespace: 'shop', managedFields },
  rules,
});
const saSubject = { kind: 'ServiceAccount', name: 'config-watcher', namespace: 'shop' };
const binding = (subjects: { kind: string; name: string; namespace?: string }[], managedFields: V1ManagedFieldsEntry[] = [applied(-30 * 24 * 60, { 'f:subjects': {}, 'f:roleRef': {} })], roleName = 'configmap-reader'): V1RoleBinding => ({
  metadata: { name: 'config-watcher-read-configmaps', namespace: 'shop', managedFields },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: roleName },
  subjects,
});

describe('rbac-denied', () => {
  it('localises to the RoleBinding that a recent edit stripped of the ServiceAccount', () => {
    const rb = binding([{ kind: 'ServiceAccount', name: 'report-builder', namespace: 'shop' }], [applied(-30 * 24 * 60, { 'f:roleRef': {} }), edit('kubectl-edit', -3, { 'f:subjects': {} })]);
    const [f, ...rest] = rbacDenied.analyze(cluster([candidate(kube([logs(DENIED, TEMPLATE)]))], { roles: [reader()], roleBindings: [rb] }));
    expect(rest).toEqual([]);
    expect(f).toMatchObject({
      key: 'rbac-denied:shop/RoleBinding/config-watcher-read-configmaps',
      analyzer: 'rbac-denied',
      family: 'rbac-denied',
      status: 'supported',
      component: { kind: 'RoleBinding', namespace: 'shop', name: 'config-watcher-read-configmaps' },
      facts: { serviceAccount: 'shop/config-watcher', verb: 'list', resource: 'configmaps', apiGroup: '', namespace: 'shop', role: 'Role/configmap-reader', manager: 'kubectl-edit', changedAt: iso(-3), reason: 'subject_removed' },
    });
    expect(f!.confidence).toBeGreaterThanOrEqual(0.85);
    expect(f!.mitigation).toBeUndefined();
    const refs = f!.supporting.map((e) => e.citation.ref);
    expect(refs).toContain('api/v1/namespaces/shop/pods/config-watcher-6c8f9d7b4-x2x9k/log?container=config-watcher');
    expect(refs).toContain('apis/rbac.authorization.k8s.io/v1/namespaces/shop/rolebindings/config-watcher-read-configmaps#metadata.managedFields[1]');
    expect(f!.affected).toEqual([{ kind: 'Deployment', namespace: 'shop', name: 'config-watcher' }, { kind: 'Service', namespace: 'shop', name: 'config-watcher' }]);
  });

  it('localises to the Role whose rule an edit removed, and to a Role that simply lacks it when nothing changed', () => {
    const rb = binding([saSubject]);
    const edited = reader([{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }], [applied(-30 * 24 * 60, { 'f:metadata': {} }), edit('kubectl-edit', -6, { 'f:rules': {} })]);
    const [f] = rbacDenied.analyze(cluster([candidate(kube([logs(DENIED, TEMPLATE)]))], { roles: [edited], roleBindings: [rb] }));
    expect(f).toMatchObject({ status: 'supported', component: { kind: 'Role', namespace: 'shop', name: 'configmap-reader' }, facts: { role: 'Role/configmap-reader', binding: 'RoleBinding/config-watcher-read-configmaps', manager: 'kubectl-edit', changedAt: iso(-6), reason: 'rule_missing' } });
    expect(f!.supporting.some((e) => e.citation.ref === 'apis/rbac.authorization.k8s.io/v1/namespaces/shop/roles/configmap-reader#rules')).toBe(true);

    const [plain] = rbacDenied.analyze(cluster([candidate(kube([logs(DENIED, TEMPLATE)]))], { roles: [reader([{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }])], roleBindings: [rb] }));
    expect(plain).toMatchObject({ status: 'supported', component: { kind: 'Role', name: 'configmap-reader' }, facts: { reason: 'rule_missing' } });
    expect(plain!.facts!['changedAt']).toBeUndefined();
    expect(plain!.confidence).toBeLessThan(0.85);
  });

  it("uses kubectl's last-applied configuration to find the ClusterRoleBinding that used to list the ServiceAccount", () => {
    const cr: V1ClusterRole = { metadata: { name: 'namespace-viewer' }, rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] }] };
    const crb: V1ClusterRoleBinding = {
      metadata: {
        name: 'platform-viewers',
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ roleRef: { kind: 'ClusterRole', name: 'namespace-viewer' }, subjects: [saSubject, { kind: 'Group', name: 'platform-team' }] }) },
      },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'namespace-viewer' },
      subjects: [{ kind: 'Group', name: 'platform-team' }],
    };
    const line = 'time="2026-03-01T11:58:40Z" level=error msg="listing namespaces" error="namespaces is forbidden: User \\"system:serviceaccount:shop:config-watcher\\" cannot list resource \\"namespaces\\" in API group \\"\\" at the cluster scope"';
    const [f] = rbacDenied.analyze(cluster([candidate(kube([logs(line, line, 12)]))], { clusterRoles: [cr], clusterRoleBindings: [crb] }));
    expect(f).toMatchObject({ status: 'supported', component: { kind: 'ClusterRoleBinding', name: 'platform-viewers' }, facts: { serviceAccount: 'shop/config-watcher', verb: 'list', resource: 'namespaces', role: 'ClusterRole/namespace-viewer', reason: 'subject_removed' } });
    expect(f!.component!.namespace).toBeUndefined();
    expect(f!.supporting.some((e) => /last-applied-configuration lists ServiceAccount shop\/config-watcher/.test(e.summary))).toBe(true);
  });

  it('names a binding whose role does not exist', () => {
    const [f] = rbacDenied.analyze(cluster([candidate(kube([logs(DENIED, TEMPLATE)]))], { roles: [], roleBindings: [binding([saSubject])] }));
    expect(f).toMatchObject({ status: 'supported', component: { kind: 'Role', namespace: 'shop', name: 'configmap-reader' }, facts: { reason: 'role_missing', role: 'Role/configmap-reader' } });
  });

  it('is inconclusive when current RBAC grants the refused call', () => {
    const [f] = rbacDenied.analyze(cluster([candidate(kube([logs(DENIED, TEMPLATE)]))], { roles: [reader()], roleBindings: [binding([saSubject])] }));
    expect(f).toMatchObject({ status: 'inconclusive' });
    expect(f!.refuting.length).toBeGreaterThan(0);
  });

  it('keeps a bare 403 from the API as an open lead on the ServiceAccount, and ignores other 403s and clean logs', () => {
    const bare = 'ERROR kubernetes client: GET https://kubernetes.default.svc/api/v1/namespaces/shop/secrets returned 403 Forbidden';
    const [f] = rbacDenied.analyze(cluster([candidate(kube([logs(bare, bare, 30)]))], {}));
    expect(f).toMatchObject({ status: 'open', component: { kind: 'ServiceAccount', namespace: 'shop', name: 'config-watcher' }, facts: {} });
    const access = '10.0.3.7 - - [01/Mar/2026:11:58:00 +0000] "GET /api/v1/kubernetes/clusters HTTP/1.1" 403 153 "-" "curl/8.5.0"';
    expect(rbacDenied.analyze(cluster([candidate(kube([logs(access, access, 30)]))], {}))).toEqual([]);
    const s3 = 'ERROR upload failed: S3 PutObject returned 403 Forbidden (AccessDenied)';
    expect(rbacDenied.analyze(cluster([candidate(kube([logs(s3, s3, 30)]))], {}))).toEqual([]);
    expect(rbacDenied.analyze(cluster([candidate(kube([logs('INFO synced 12 configmaps', 'INFO synced <NUM> configmaps', 30)]))], {}))).toEqual([]);
  });

  it("reads kubectl's Forbidden in a failed CronJob run and blames the binding edited before it", () => {
    const cj: V1CronJob = {
      metadata: { name: 'db-backup-rotate', namespace: 'shop' },
      spec: { schedule: '*/10 * * * *', jobTemplate: { spec: { template: { spec: { serviceAccountName: 'backup', restartPolicy: 'Never', containers: [{ name: 'kubectl', image: 'bitnami/kubectl:1.30' }] } } } } },
    };
    const role: V1Role = { metadata: { name: 'secret-rotator', namespace: 'shop' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'update', 'patch'] }] };
    const rb: V1RoleBinding = {
      metadata: { name: 'backup-secret-rotator', namespace: 'shop', managedFields: [applied(-90 * 24 * 60, { 'f:roleRef': {} }), edit('kubectl-patch', -14, { 'f:subjects': {} })] },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'secret-rotator' },
      subjects: [],
    };
    const line = 'Error from server (Forbidden): secrets "db-backup-key" is forbidden: User "system:serviceaccount:shop:backup" cannot patch resource "secrets" in API group "" in the namespace "shop"';
    const jobs: ClusterTriageInput['jobs'] = [
      { owner: { kind: 'CronJob', namespace: 'shop', name: 'db-backup-rotate' }, jobs: [], pods: [], logs: [{ pod: 'db-backup-rotate-29012340-x7k2p', container: 'kubectl', previous: false, patterns: [{ template: line, example: line, count: 1, first: at(-10), last: at(-10) }], tail: [line] }] },
    ];
    const [f] = rbacDenied.analyze(cluster([], { roles: [role], roleBindings: [rb], cronJobs: [cj] }, jobs));
    expect(f).toMatchObject({ status: 'supported', component: { kind: 'RoleBinding', namespace: 'shop', name: 'backup-secret-rotator' }, facts: { serviceAccount: 'shop/backup', verb: 'patch', resource: 'secrets', manager: 'kubectl-patch', changedAt: iso(-14) } });
    expect(f!.affected).toEqual([{ kind: 'CronJob', namespace: 'shop', name: 'db-backup-rotate' }]);
    expect(f!.supporting.some((e) => e.citation.ref === 'api/v1/namespaces/shop/pods/db-backup-rotate-29012340-x7k2p/log?container=kubectl')).toBe(true);
  });

  it('blames a rollout that switched the pods to a ServiceAccount without the permission', () => {
    const rs = (rev: number, min: number, sa: string): V1ReplicaSet => ({
      metadata: { name: `config-watcher-rev${rev}`, namespace: 'shop', creationTimestamp: at(min), annotations: { 'deployment.kubernetes.io/revision': String(rev) } },
      spec: { selector: { matchLabels: { app: 'config-watcher' } }, template: { spec: { serviceAccountName: sa, containers: [{ name: 'config-watcher', image: 'x' }] } } },
    });
    const k = kube([logs(DENIED, TEMPLATE)], { replicaSets: [rs(4, -5000, 'config-reader'), rs(5, -4, 'config-watcher')] });
    const rb = { ...binding([{ kind: 'ServiceAccount', name: 'config-reader', namespace: 'shop' }]), metadata: { name: 'config-reader-binding', namespace: 'shop' } };
    const [f] = rbacDenied.analyze(cluster([candidate(k)], { roles: [reader()], roleBindings: [rb] }));
    expect(f).toMatchObject({ status: 'supported', component: { kind: 'Deployment', namespace: 'shop', name: 'config-watcher' }, facts: { reason: 'service_account_changed', changedAt: iso(-4) } });
    expect(f!.mechanism).toMatch(/from ServiceAccount config-reader to config-watcher/);
  });

  it('parses the authorizer sentence in its client wordings', () => {
    expect(parseDenial(DENIED)).toEqual({ user: 'system:serviceaccount:shop:config-watcher', sa: { namespace: 'shop', name: 'config-watcher' }, verb: 'list', resource: 'configmaps', group: '', namespace: 'shop', clusterScope: false });
    expect(
      parseDenial('error retrieving resource lock shop/leader: leases.coordination.k8s.io "leader" is forbidden: User "system:serviceaccount:shop:operator" cannot get resource "leases" in API group "coordination.k8s.io" in the namespace "shop"'),
    ).toMatchObject({ verb: 'get', resource: 'leases', group: 'coordination.k8s.io', objectName: 'leader', sa: { name: 'operator' } });
    expect(parseDenial('Error from server (Forbidden): pods "web-0" is forbidden: User "system:serviceaccount:ci:deployer" cannot create resource "pods/exec" in API group "" in the namespace "shop"')).toMatchObject({
      verb: 'create',
      resource: 'pods/exec',
      namespace: 'shop',
      sa: { namespace: 'ci', name: 'deployer' },
    });
    expect(parseDenial('HTTP response body: {"kind":"Status","message":"deployments.apps is forbidden: User \\"system:serviceaccount:ops:reporter\\" cannot list resource \\"deployments\\" in API group \\"apps\\" at the cluster scope","reason":"Forbidden","code":403}')).toMatchObject({
      verb: 'list',
      resource: 'deployments',
      group: 'apps',
      clusterScope: true,
    });
    expect(parseDenial('User "system:serviceaccount:shop:legacy" cannot list pods in the namespace "shop".')).toMatchObject({ verb: 'list', resource: 'pods', group: '', namespace: 'shop' });
    expect(parseDenial('GET /healthz 200')).toBeUndefined();
  });
});

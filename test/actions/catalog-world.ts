/** A small shop namespace with one of each target the catalog writes to, plus a namespace the executor may not touch. */
import type { PolicyRule } from '../fakes/kubernetes/rbac.js';

const labels = { app: 'web' };
const container = (image: string, dbUrl: string) => ({
  name: 'web',
  image,
  env: [{ name: 'DATABASE_URL', value: dbUrl }],
  resources: { requests: { cpu: '100m', memory: '128Mi' } },
});
const webUid = '11111111-0000-0000-0000-000000000001';

export const CATALOG_OBJECTS: object[] = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } },
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'jobs' } },
  {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'shop', uid: webUid, generation: 5, labels, annotations: { 'deployment.kubernetes.io/revision': '2', 'team': 'storefront' } },
    spec: {
      replicas: 2,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [container('registry.example.com/web:2.0-bad', 'postgres://web:NEWs3cret@db:5432/web')] } },
    },
    status: { observedGeneration: 5, replicas: 2, updatedReplicas: 2, readyReplicas: 1, availableReplicas: 1 },
  },
  ...[
    { rev: '1', hash: 'aaa111', image: 'registry.example.com/web:1.0', db: 'postgres://web:OLDs3cret@db:5432/web' },
    { rev: '2', hash: 'bbb222', image: 'registry.example.com/web:2.0-bad', db: 'postgres://web:NEWs3cret@db:5432/web' },
  ].map((r) => ({
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: `web-${r.hash}`,
      namespace: 'shop',
      labels: { ...labels, 'pod-template-hash': r.hash },
      annotations: { 'deployment.kubernetes.io/revision': r.rev, 'deployment.kubernetes.io/desired-replicas': '2', 'team': 'storefront' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: webUid, controller: true }],
    },
    spec: {
      replicas: r.rev === '2' ? 2 : 0,
      selector: { matchLabels: { ...labels, 'pod-template-hash': r.hash } },
      template: { metadata: { labels: { ...labels, 'pod-template-hash': r.hash } }, spec: { containers: [container(r.image, r.db)] } },
    },
  })),
  {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web-bbb222-x1',
      namespace: 'shop',
      uid: '11111111-0000-0000-0000-0000000000a1',
      labels: { ...labels, 'pod-template-hash': 'bbb222' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-bbb222', controller: true }],
    },
    spec: { containers: [{ name: 'web', image: 'registry.example.com/web:2.0-bad' }] },
    status: { phase: 'Running' },
  },
  {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'db', namespace: 'shop', generation: 3 },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'db' } },
      template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'db', image: 'postgres:16', resources: { requests: { memory: '256Mi' }, limits: { memory: '256Mi' } } }] } },
    },
    status: { observedGeneration: 3, replicas: 1, readyReplicas: 0 },
  },
  { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'report', namespace: 'shop' }, spec: { schedule: '*/5 * * * *', suspend: false, jobTemplate: { spec: {} } } },
  { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'cleanup', namespace: 'jobs' }, spec: { schedule: '0 * * * *', jobTemplate: { spec: {} } } },
];

/** The executor may change workloads in shop only. */
export const CATALOG_EXECUTOR_RULES: PolicyRule[] = [
  { verbs: ['patch'], apiGroups: ['apps'], resources: ['deployments', 'deployments/scale', 'statefulsets', 'statefulsets/scale'], namespaces: ['shop'] },
  { verbs: ['patch'], apiGroups: ['batch'], resources: ['cronjobs'], namespaces: ['shop'] },
  { verbs: ['patch', 'delete'], apiGroups: [''], resources: ['pods'], namespaces: ['shop'] },
  { verbs: ['patch'], apiGroups: [''], resources: ['configmaps'], namespaces: ['shop'] },
];

/**
 * A shop namespace with ConfigMaps whose previous content is known in each way restore_config knows it,
 * and one whose is not, plus the workloads that read them in each way (volume, env, subPath, a CronJob).
 * Every password here is planted: the tests check none reaches a stored plan, a card or a log.
 */
import { helmHistorySecrets } from '../fakes/kubernetes/helm-release.js';
import type { PolicyRule } from '../fakes/kubernetes/rbac.js';

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
export const EDITED_AT = minutesAgo(14);

/** Planted: the redis password before and after the edit, a password key the edit added, and Helm values. */
export const PLANTED = ['OLDs3cretRedis1', 'NEWs3cretRedis2', 'AdminPl4nted77', 'HelmPl4ntedOld1', 'HelmPl4ntedNew2'];

const redisConf = (password: string, maxmemory: string) =>
  `bind 0.0.0.0\nport 6379\nrequirepass ${password}\nmaxmemory ${maxmemory}\nmaxmemory-policy allkeys-lru\n`;

/** What `kubectl apply` last applied, and what `kubectl edit` made of it. */
export const APPLIED_DATA = { 'redis.conf': redisConf('OLDs3cretRedis1', '2gb'), LOG_LEVEL: 'info' };
export const EDITED_DATA = { 'redis.conf': redisConf('NEWs3cretRedis2', '64mb'), LOG_LEVEL: 'debug', ADMIN_PASSWORD: 'AdminPl4nted77' };

const lastApplied = (name: string, namespace: string, data: Record<string, string>) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { annotations: {}, name, namespace }, data });

const appliedThenEdited = (name: string, namespace: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name,
    namespace,
    annotations: { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied(name, namespace, APPLIED_DATA) },
    managedFields: [
      {
        manager: 'kubectl-client-side-apply',
        operation: 'Update',
        apiVersion: 'v1',
        time: minutesAgo(30 * 24 * 60),
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { '.': {}, 'f:redis.conf': {}, 'f:LOG_LEVEL': {} }, 'f:metadata': { 'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} } } },
      },
      { manager: 'kubectl-edit', operation: 'Update', apiVersion: 'v1', time: EDITED_AT, fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:redis.conf': {}, 'f:LOG_LEVEL': {}, 'f:ADMIN_PASSWORD': {} } } },
    ],
  },
  data: EDITED_DATA,
});

const HELM_MANIFEST = `---
# Source: app/templates/config.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config
data:
  FEATURE_MODE: "{{ .Values.mode }}"
  app.properties: |
    db.url=jdbc:postgresql://db:5432/app
    db.password={{ .Values.dbPassword }}
    pool.size={{ .Values.pool }}
---
# Source: app/templates/flags.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: app-flags
data:
  flags: "{{ .Values.flags }}"
`;

const appProperties = (password: string, pool: string) => `db.url=jdbc:postgresql://db:5432/app\ndb.password=${password}\npool.size=${pool}\n`;
/** What Helm revisions 1 and 2 render for app-config (revision 2, deployed, is live). */
export const HELM_REV1_DATA = { FEATURE_MODE: 'classic', 'app.properties': appProperties('HelmPl4ntedOld1', '10') };
export const HELM_REV2_DATA = { FEATURE_MODE: 'turbo', 'app.properties': appProperties('HelmPl4ntedNew2', '2') };

const helmManaged = (name: string, data: Record<string, string>, managedFields: object[]) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name,
    namespace: 'shop',
    labels: { 'app.kubernetes.io/managed-by': 'Helm' },
    annotations: { 'meta.helm.sh/release-name': 'app', 'meta.helm.sh/release-namespace': 'shop' },
    managedFields,
  },
  data,
});

const helmWrote = (at: string) => ({ manager: 'helm', operation: 'Update', apiVersion: 'v1', time: at, fieldsType: 'FieldsV1', fieldsV1: { 'f:data': {} } });

const container = (extra: object = {}) => ({ name: 'main', image: 'registry.example.com/app:1.0', ...extra });
const workload = (kind: 'Deployment' | 'StatefulSet', name: string, replicas: number, spec: object) => ({
  apiVersion: 'apps/v1',
  kind,
  metadata: { name, namespace: 'shop', generation: 3, annotations: {} },
  spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec } },
  status: { observedGeneration: 3, replicas, readyReplicas: replicas, updatedReplicas: replicas, availableReplicas: replicas },
});

export const CONFIG_OBJECTS: object[] = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } },
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'jobs' } },
  appliedThenEdited('cache-config', 'shop'),
  // The same story where the executor may not write.
  appliedThenEdited('cache-config', 'jobs'),
  // Created by hand, never applied, not Helm's: nobody knows its previous content.
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'plain-config', namespace: 'shop' }, data: { MODE: 'fast' } },
  // Helm upgraded app-config to revision 2; app-flags was edited by hand after revision 2.
  helmManaged('app-config', HELM_REV2_DATA, [helmWrote(minutesAgo(120))]),
  helmManaged('app-flags', { flags: 'beta=on' }, [helmWrote(minutesAgo(120)), { manager: 'kubectl-edit', operation: 'Update', apiVersion: 'v1', time: EDITED_AT, fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:flags': {} } } }]),
  // Once `kubectl apply`-ed, later taken over by Helm, which rewrote it: its last-applied annotation is stale.
  {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'mixed-config',
      namespace: 'shop',
      annotations: { 'meta.helm.sh/release-name': 'app', 'meta.helm.sh/release-namespace': 'shop', 'kubectl.kubernetes.io/last-applied-configuration': lastApplied('mixed-config', 'shop', { MODE: 'ancient' }) },
      managedFields: [
        { manager: 'kubectl-client-side-apply', operation: 'Update', apiVersion: 'v1', time: minutesAgo(30 * 24 * 60), fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:annotations': { 'f:kubectl.kubernetes.io/last-applied-configuration': {} } }, 'f:data': {} } },
        helmWrote(minutesAgo(120)),
      ],
    },
    data: { MODE: 'helm' },
  },
  ...helmHistorySecrets({
    name: 'app',
    namespace: 'shop',
    manifest: HELM_MANIFEST,
    revisions: [
      { version: 1, status: 'superseded', chart: 'app-1.0.0', appVersion: '1.0', description: 'Install complete', deployedAt: minutesAgo(3 * 24 * 60), values: { mode: 'classic', dbPassword: 'HelmPl4ntedOld1', pool: '10', flags: 'beta=off' } },
      { version: 2, status: 'deployed', chart: 'app-1.1.0', appVersion: '1.1', description: 'Upgrade complete', deployedAt: minutesAgo(120), values: { mode: 'turbo', dbPassword: 'HelmPl4ntedNew2', pool: '2', flags: 'beta=off' } },
    ],
  }),
  // Readers of cache-config, one per way of reading it.
  workload('StatefulSet', 'cache', 1, {
    containers: [container({ volumeMounts: [{ name: 'config', mountPath: '/etc/redis' }] })],
    volumes: [{ name: 'config', configMap: { name: 'cache-config' } }],
  }),
  workload('Deployment', 'api', 2, {
    containers: [container({ env: [{ name: 'LOG_LEVEL', valueFrom: { configMapKeyRef: { name: 'cache-config', key: 'LOG_LEVEL' } } }], envFrom: [{ configMapRef: { name: 'app-config' } }] })],
  }),
  workload('Deployment', 'worker', 1, {
    containers: [container({ volumeMounts: [{ name: 'redis', mountPath: '/etc/redis/redis.conf', subPath: 'redis.conf' }] })],
    volumes: [{ name: 'redis', projected: { sources: [{ configMap: { name: 'cache-config' } }] } }],
  }),
  workload('Deployment', 'web', 2, { containers: [container()] }),
  {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: 'report', namespace: 'shop' },
    spec: { schedule: '0 * * * *', jobTemplate: { spec: { template: { spec: { containers: [container({ envFrom: [{ configMapRef: { name: 'cache-config' } }] })] } } } } },
  },
];

/** The executor may patch ConfigMaps in shop only (as deploy/executor-rbac.yaml for the example policy). */
export const CONFIG_EXECUTOR_RULES: PolicyRule[] = [{ verbs: ['patch'], apiGroups: [''], resources: ['configmaps'], namespaces: ['shop'] }];

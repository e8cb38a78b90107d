/**
 * A fake Kubernetes API server with the identities the actions meet in production: a reader (get/list/
 * watch only), the bot (may impersonate the executor SA and mint tokens for it, nothing else), the
 * executor SA (only the writes the example policy allows), and an admin standing in for the controllers.
 */
import { AppsV1Api, CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { TargetReader } from '../../src/actions/reader.js';
import type { ExecutorCredentials } from '../../src/actions/executor.js';
import { FULL_ACCESS, type PolicyRule } from '../fakes/kubernetes/rbac.js';
import { startFakeKube, type FakeKube, type Identity } from '../fakes/kubernetes/server.js';

export const EXECUTOR_USER = 'system:serviceaccount:vigil:vigil-executor';
export const BOT_USER = 'system:serviceaccount:vigil:vigil-bot';

export const READER: Identity = {
  user: 'system:serviceaccount:vigil:vigil-reader',
  rules: [{ verbs: ['get', 'list', 'watch'], apiGroups: ['', 'apps', 'batch', 'networking.k8s.io', 'autoscaling', 'networking.istio.io', 'chaos-mesh.org', 'litmuschaos.io'], resources: ['*'] }],
};
export const BOT: Identity = {
  user: BOT_USER,
  rules: [{ verbs: ['create'], apiGroups: [''], resources: ['serviceaccounts/token'], namespaces: ['vigil'] }],
  canImpersonate: [EXECUTOR_USER],
};
/** What the example policy lets the executor do: scale and patch deployments, and patch configmaps (restore_config) and services (restore_object), in shop. */
export const POLICY_EXECUTOR_RULES: PolicyRule[] = [
  { verbs: ['patch'], apiGroups: ['apps'], resources: ['deployments', 'deployments/scale'], namespaces: ['shop'] },
  { verbs: ['patch'], apiGroups: [''], resources: ['configmaps'], namespaces: ['shop'] },
  { verbs: ['patch'], apiGroups: [''], resources: ['services'], namespaces: ['shop'] },
];

export interface ActionWorld {
  kube: FakeKube;
  reader: TargetReader;
  impersonation: ExecutorCredentials;
  token: ExecutorCredentials;
  /** Sets status fields as the deployment controller would. */
  setDeploymentStatus(namespace: string, name: string, status: Record<string, unknown>): Promise<void>;
  /** An out-of-band change (someone else's kubectl). */
  patchDeployment(namespace: string, name: string, body: unknown): Promise<void>;
  /** An out-of-band merge patch of a ConfigMap (someone's `kubectl edit`). */
  patchConfigMap(namespace: string, name: string, body: unknown): Promise<void>;
  /** Creates an object as an admin would (`kubectl create`). */
  createConfigMap(namespace: string, body: object): Promise<void>;
  close(): Promise<void>;
}

const executorNamespace = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'vigil' } },
  { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'vigil-executor', namespace: 'vigil' } },
];

export async function startActionWorld(objects: object[], executorRules: PolicyRule[] = POLICY_EXECUTOR_RULES, now?: () => Date): Promise<ActionWorld> {
  const kube = await startFakeKube({
    objects: [...objects, ...executorNamespace],
    identities: {
      'reader-token': READER,
      'bot-token': BOT,
      // Registered so the fake knows the SA's rules; nobody holds this token.
      'executor-unused-token': { user: EXECUTOR_USER, rules: executorRules },
      'admin-token': { user: 'system:kube-controller-manager', rules: FULL_ACCESS },
    },
    ...(now ? { now } : {}),
  });
  const admin = kube.kubeConfigFor('admin-token').makeApiClient(AppsV1Api);
  const adminCore = kube.kubeConfigFor('admin-token').makeApiClient(CoreV1Api);
  const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  return {
    kube,
    reader: new TargetReader(kube.kubeConfigFor('reader-token')),
    impersonation: { mode: 'impersonate', base: kube.kubeConfigFor('bot-token') },
    token: { mode: 'token', base: kube.kubeConfigFor('bot-token'), ...(now ? { now } : {}) },
    async setDeploymentStatus(namespace, name, status) {
      await admin.patchNamespacedDeploymentStatus({ namespace, name, body: { status }, fieldManager: 'kube-controller-manager' }, merge);
    },
    async patchDeployment(namespace, name, body) {
      await admin.patchNamespacedDeployment({ namespace, name, body, fieldManager: 'kubectl-edit' }, merge);
    },
    async patchConfigMap(namespace, name, body) {
      await adminCore.patchNamespacedConfigMap({ namespace, name, body, fieldManager: 'kubectl-edit' }, merge);
    },
    async createConfigMap(namespace, body) {
      await adminCore.createNamespacedConfigMap({ namespace, body, fieldManager: 'kubectl-create' });
    },
    close: () => kube.close(),
  };
}

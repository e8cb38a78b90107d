/**
 * Reads the action targets with the READER identity (GET/LIST only): plans and verification use it,
 * writes never do. 404 reads as undefined so "target exists" is a plain check.
 */
import * as k8s from '@kubernetes/client-node';
import { KIND_INFO, isObjectKind } from './objects/kinds.js';
import type { KubeObject, ObjectRef } from './types.js';
import { DEFAULT_KUBE_TIMEOUT_MS, makeTimedApiClient } from '../evidence/kubernetes/client.js';

export class TargetReader {
  private readonly apps: k8s.AppsV1Api;
  private readonly batch: k8s.BatchV1Api;
  private readonly core: k8s.CoreV1Api;
  private readonly custom: k8s.CustomObjectsApi;

  /** `kc` is the reader's KubeConfig (e.g. `KubeReader.kc`). */
  constructor(kc: k8s.KubeConfig) {
    this.apps = makeTimedApiClient(kc, k8s.AppsV1Api, DEFAULT_KUBE_TIMEOUT_MS);
    this.batch = makeTimedApiClient(kc, k8s.BatchV1Api, DEFAULT_KUBE_TIMEOUT_MS);
    this.core = makeTimedApiClient(kc, k8s.CoreV1Api, DEFAULT_KUBE_TIMEOUT_MS);
    this.custom = makeTimedApiClient(kc, k8s.CustomObjectsApi, DEFAULT_KUBE_TIMEOUT_MS);
  }

  async get(ref: ObjectRef): Promise<KubeObject | undefined> {
    const p = { namespace: ref.namespace, name: ref.name };
    return optional(async () => {
      switch (ref.kind) {
        case 'Deployment':
          return this.apps.readNamespacedDeployment(p);
        case 'StatefulSet':
          return this.apps.readNamespacedStatefulSet(p);
        case 'CronJob':
          return this.batch.readNamespacedCronJob(p);
        case 'Pod':
          return this.core.readNamespacedPod(p);
        case 'ConfigMap':
          return this.core.readNamespacedConfigMap(p);
        case 'Service':
          return this.core.readNamespacedService(p);
        case 'Node':
          return this.core.readNode({ name: ref.name });
        default: {
          // Ingress, NetworkPolicy, HPA, Istio and chaos objects: one path for every /apis group.
          if (!isObjectKind(ref.kind)) throw new Error(`${ref.kind} ${ref.name} is not a Kubernetes object`);
          const k = KIND_INFO[ref.kind];
          return this.custom.getNamespacedCustomObject({ group: k.group, version: k.version, namespace: ref.namespace, plural: k.plural, name: ref.name }) as Promise<KubeObject>;
        }
      }
    });
  }

  async listNodes(): Promise<KubeObject[]> {
    return (await this.core.listNode({ limit: 1000 })).items.map(toJson);
  }

  /** Pods scheduled on a node, all namespaces (a cordon's blast radius). `complete` is false when the list was cut. */
  async podsOnNode(node: string): Promise<{ pods: KubeObject[]; complete: boolean }> {
    const list = await this.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}`, limit: 1000 });
    return { pods: list.items.map(toJson), complete: !list.metadata?._continue };
  }

  /**
   * Every pod template owner in a namespace (Deployments, StatefulSets, DaemonSets, CronJobs): who may
   * read a ConfigMap. `complete` is false when a list was cut at its limit (so readers may be missing).
   */
  async podTemplateOwners(namespace: string): Promise<{ objects: KubeObject[]; complete: boolean }> {
    const limit = 500;
    const lists = await Promise.all([
      this.apps.listNamespacedDeployment({ namespace, limit }).then((l) => ({ l, kind: 'Deployment' })),
      this.apps.listNamespacedStatefulSet({ namespace, limit }).then((l) => ({ l, kind: 'StatefulSet' })),
      this.apps.listNamespacedDaemonSet({ namespace, limit }).then((l) => ({ l, kind: 'DaemonSet' })),
      this.batch.listNamespacedCronJob({ namespace, limit }).then((l) => ({ l, kind: 'CronJob' })),
    ]);
    return {
      // List items carry no `kind`; it is the list's.
      objects: lists.flatMap(({ l, kind }) => l.items.map((i) => ({ ...toJson(i), kind }))),
      complete: lists.every(({ l }) => !l.metadata?._continue),
    };
  }

  /** The Secrets Helm 3 keeps for a release (one per revision, labelled `owner=helm,name=<release>`). */
  async helmReleaseSecrets(namespace: string, release: string): Promise<k8s.V1Secret[]> {
    const list = await this.core.listNamespacedSecret({ namespace, labelSelector: `owner=helm,name=${release}`, limit: 500 });
    return list.items.filter((s) => s.type === 'helm.sh/release.v1');
  }

  async getReplicaSet(namespace: string, name: string): Promise<KubeObject | undefined> {
    return optional(() => this.apps.readNamespacedReplicaSet({ namespace, name }));
  }

  /** ReplicaSets matching the Deployment's selector (its revisions). */
  async replicaSetsOf(deployment: KubeObject): Promise<KubeObject[]> {
    const namespace = deployment.metadata?.namespace ?? '';
    const list = await this.apps.listNamespacedReplicaSet({ namespace, labelSelector: selectorOf(deployment), limit: 500 });
    const uid = deployment.metadata?.uid;
    // Owned ones only, when ownership is recorded: another Deployment may share labels.
    return list.items.map(toJson).filter((rs) => !uid || !rs.metadata?.ownerReferences?.length || rs.metadata.ownerReferences.some((o) => o.uid === uid));
  }
}

/** `matchLabels` as a label selector string. */
export function selectorOf(workload: KubeObject): string {
  const labels = ((workload.spec?.['selector'] as { matchLabels?: Record<string, string> } | undefined)?.matchLabels ?? {}) as Record<string, string>;
  return Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

/** client-node's typed objects as plain JSON (dates as strings), the shape plans store and patches send. */
function toJson(obj: unknown): KubeObject {
  return JSON.parse(JSON.stringify(obj)) as KubeObject;
}

async function optional<T>(fn: () => Promise<T>): Promise<KubeObject | undefined> {
  try {
    return toJson(await fn());
  } catch (err) {
    if (err instanceof k8s.ApiException && err.code === 404) return undefined;
    throw err;
  }
}

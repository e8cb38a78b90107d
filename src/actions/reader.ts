/**
 * Reads the action targets with the READER identity (GET/LIST only): plans and verification use it,
 * writes never do. 404 reads as undefined so "target exists" is a plain check.
 */
import * as k8s from '@kubernetes/client-node';
import type { KubeObject, ObjectRef } from './types.js';
import { DEFAULT_KUBE_TIMEOUT_MS, makeTimedApiClient } from '../evidence/kubernetes/client.js';

export class TargetReader {
  private readonly apps: k8s.AppsV1Api;
  private readonly batch: k8s.BatchV1Api;
  private readonly core: k8s.CoreV1Api;

  /** `kc` is the reader's KubeConfig (e.g. `KubeReader.kc`). */
  constructor(kc: k8s.KubeConfig) {
    this.apps = makeTimedApiClient(kc, k8s.AppsV1Api, DEFAULT_KUBE_TIMEOUT_MS);
    this.batch = makeTimedApiClient(kc, k8s.BatchV1Api, DEFAULT_KUBE_TIMEOUT_MS);
    this.core = makeTimedApiClient(kc, k8s.CoreV1Api, DEFAULT_KUBE_TIMEOUT_MS);
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
      }
    });
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

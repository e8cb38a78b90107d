/** Reading the parts of a workload object that the catalog actions change. */
import { KIND_INFO } from './objects/kinds.js';
import type { KubeObject, ObjectRef } from './types.js';

export interface Container {
  name: string;
  image?: string;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  [k: string]: unknown;
}

export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';

export function podTemplate(obj: KubeObject): { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: { containers?: Container[] } } {
  return (obj.spec?.['template'] ?? {}) as ReturnType<typeof podTemplate>;
}

export function containersOf(obj: KubeObject): Container[] {
  return obj.kind === 'Pod' ? ((obj.spec?.['containers'] ?? []) as Container[]) : (podTemplate(obj).spec?.containers ?? []);
}

/** spec.replicas, which the API defaults to 1. */
export function desiredReplicas(obj: KubeObject): number {
  const r = obj.spec?.['replicas'];
  return typeof r === 'number' ? r : 1;
}

export function revisionOf(obj: KubeObject): number | undefined {
  const v = obj.metadata?.annotations?.[REVISION_ANNOTATION];
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined;
}

export const ref = (o: ObjectRef): string => `${o.kind.toLowerCase()}/${o.name}`;

/** The `kubectl … -n ns` suffix. */
export const kubectlTarget = (o: ObjectRef): string => `${o.kind.toLowerCase()}/${o.name} -n ${o.namespace}`;

/** RBAC resource name for a target kind. */
export function resourceOf(o: ObjectRef): { group: string; resource: string } {
  switch (o.kind) {
    case 'Deployment':
      return { group: 'apps', resource: 'deployments' };
    case 'StatefulSet':
      return { group: 'apps', resource: 'statefulsets' };
    case 'CronJob':
      return { group: 'batch', resource: 'cronjobs' };
    case 'Pod':
      return { group: '', resource: 'pods' };
    case 'ConfigMap':
      return { group: '', resource: 'configmaps' };
    case 'FeatureFlag':
    case 'PullRequest':
      throw new Error(`${o.kind} ${o.name} is not a Kubernetes object`);
    default:
      return { group: KIND_INFO[o.kind].group, resource: KIND_INFO[o.kind].plural };
  }
}

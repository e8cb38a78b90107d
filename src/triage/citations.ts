import type { Citation } from '../evidence/types.js';

const GROUP_PATH: Record<string, string> = {
  Deployment: 'apis/apps/v1',
  StatefulSet: 'apis/apps/v1',
  DaemonSet: 'apis/apps/v1',
  ReplicaSet: 'apis/apps/v1',
  ControllerRevision: 'apis/apps/v1',
  HorizontalPodAutoscaler: 'apis/autoscaling/v2',
  NetworkPolicy: 'apis/networking.k8s.io/v1',
  Ingress: 'apis/networking.k8s.io/v1',
  StorageClass: 'apis/storage.k8s.io/v1',
  EndpointSlice: 'apis/discovery.k8s.io/v1',
  Job: 'apis/batch/v1',
  CronJob: 'apis/batch/v1',
};

const PLURAL: Record<string, string> = {
  Endpoints: 'endpoints',
  StorageClass: 'storageclasses',
  Ingress: 'ingresses',
  NetworkPolicy: 'networkpolicies',
  PersistentVolumeClaim: 'persistentvolumeclaims',
  PersistentVolume: 'persistentvolumes',
};

/** `apis/apps/v1/namespaces/shop/deployments/checkout#metadata.managedFields[2]` — an object path a reviewer can GET. */
export function objectCitation(kind: string, namespace: string | undefined, name: string, fragment?: string): Citation {
  const plural = PLURAL[kind] ?? `${kind.toLowerCase()}s`;
  const base = GROUP_PATH[kind] ?? 'api/v1';
  const ns = namespace ? `namespaces/${namespace}/` : '';
  return { source: 'kubernetes', ref: `${base}/${ns}${plural}/${name}${fragment ? `#${fragment}` : ''}` };
}

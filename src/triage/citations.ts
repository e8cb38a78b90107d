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
  ValidatingWebhookConfiguration: 'apis/admissionregistration.k8s.io/v1',
  MutatingWebhookConfiguration: 'apis/admissionregistration.k8s.io/v1',
  Role: 'apis/rbac.authorization.k8s.io/v1',
  RoleBinding: 'apis/rbac.authorization.k8s.io/v1',
  ClusterRole: 'apis/rbac.authorization.k8s.io/v1',
  ClusterRoleBinding: 'apis/rbac.authorization.k8s.io/v1',
  PodDisruptionBudget: 'apis/policy/v1',
  Certificate: 'apis/cert-manager.io/v1',
  CertificateRequest: 'apis/cert-manager.io/v1',
  VirtualService: 'apis/networking.istio.io/v1',
  DestinationRule: 'apis/networking.istio.io/v1',
  ServiceEntry: 'apis/networking.istio.io/v1',
  Gateway: 'apis/networking.istio.io/v1',
  Sidecar: 'apis/networking.istio.io/v1',
  PeerAuthentication: 'apis/security.istio.io/v1',
  AuthorizationPolicy: 'apis/security.istio.io/v1',
  PodChaos: 'apis/chaos-mesh.org/v1alpha1',
  NetworkChaos: 'apis/chaos-mesh.org/v1alpha1',
  ClusterPolicy: 'apis/kyverno.io/v1',
  Policy: 'apis/kyverno.io/v1',
  StressChaos: 'apis/chaos-mesh.org/v1alpha1',
  IOChaos: 'apis/chaos-mesh.org/v1alpha1',
  DNSChaos: 'apis/chaos-mesh.org/v1alpha1',
  TimeChaos: 'apis/chaos-mesh.org/v1alpha1',
  HTTPChaos: 'apis/chaos-mesh.org/v1alpha1',
  ChaosEngine: 'apis/litmuschaos.io/v1alpha1',
  ScaledObject: 'apis/keda.sh/v1alpha1',
  Application: 'apis/argoproj.io/v1alpha1',
  Rollout: 'apis/argoproj.io/v1alpha1',
};

const PLURAL: Record<string, string> = {
  Endpoints: 'endpoints',
  StorageClass: 'storageclasses',
  Ingress: 'ingresses',
  NetworkPolicy: 'networkpolicies',
  PersistentVolumeClaim: 'persistentvolumeclaims',
  PersistentVolume: 'persistentvolumes',
  PodChaos: 'podchaos',
  NetworkChaos: 'networkchaos',
  ClusterPolicy: 'clusterpolicies',
  Policy: 'policies',
  StressChaos: 'stresschaos',
  IOChaos: 'iochaos',
  DNSChaos: 'dnschaos',
  TimeChaos: 'timechaos',
  HTTPChaos: 'httpchaos',
  ServiceEntry: 'serviceentries',
  PeerAuthentication: 'peerauthentications',
  AuthorizationPolicy: 'authorizationpolicies',
  DestinationRule: 'destinationrules',
  VirtualService: 'virtualservices',
  PodDisruptionBudget: 'poddisruptionbudgets',
};

/** `apis/apps/v1/namespaces/shop/deployments/checkout#metadata.managedFields[2]` — an object path a reviewer can GET. */
export function objectCitation(kind: string, namespace: string | undefined, name: string, fragment?: string): Citation {
  const plural = PLURAL[kind] ?? `${kind.toLowerCase()}s`;
  const base = GROUP_PATH[kind] ?? 'api/v1';
  const ns = namespace ? `namespaces/${namespace}/` : '';
  return { source: 'kubernetes', ref: `${base}/${ns}${plural}/${name}${fragment ? `#${fragment}` : ''}` };
}

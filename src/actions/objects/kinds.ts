/**
 * The API kinds the catalog writes to beyond workloads and ConfigMaps: where each is served (group,
 * version, plural) and whether it is namespaced. Core kinds (Service, Node) go through CoreV1Api; every
 * other one through CustomObjectsApi, which serves any `/apis/<group>/<version>` path (built-in groups
 * such as networking.k8s.io and autoscaling too), so one code path reads and patches all of them.
 */
export interface KindInfo {
  group: string;
  version: string;
  plural: string;
  namespaced: boolean;
}

/** Objects whose previous spec `restore_object` can put back. */
export const RESTORABLE_KINDS = ['Service', 'Ingress', 'NetworkPolicy', 'HorizontalPodAutoscaler', 'VirtualService', 'DestinationRule'] as const;
export type RestorableKind = (typeof RESTORABLE_KINDS)[number];

/** Chaos Mesh experiments (paused by annotation) and Litmus ChaosEngine (stopped by `spec.engineState`). */
export const CHAOS_MESH_KINDS = ['PodChaos', 'NetworkChaos', 'StressChaos', 'IOChaos', 'DNSChaos', 'TimeChaos', 'HTTPChaos', 'KernelChaos', 'JVMChaos', 'AWSChaos', 'GCPChaos'] as const;
export const CHAOS_KINDS = [...CHAOS_MESH_KINDS, 'ChaosEngine'] as const;
export type ChaosKind = (typeof CHAOS_KINDS)[number];

const chaosMesh = (plural: string): KindInfo => ({ group: 'chaos-mesh.org', version: 'v1alpha1', plural, namespaced: true });

export const KIND_INFO: Record<RestorableKind | ChaosKind | 'Node', KindInfo> = {
  Service: { group: '', version: 'v1', plural: 'services', namespaced: true },
  Ingress: { group: 'networking.k8s.io', version: 'v1', plural: 'ingresses', namespaced: true },
  NetworkPolicy: { group: 'networking.k8s.io', version: 'v1', plural: 'networkpolicies', namespaced: true },
  HorizontalPodAutoscaler: { group: 'autoscaling', version: 'v2', plural: 'horizontalpodautoscalers', namespaced: true },
  VirtualService: { group: 'networking.istio.io', version: 'v1', plural: 'virtualservices', namespaced: true },
  DestinationRule: { group: 'networking.istio.io', version: 'v1', plural: 'destinationrules', namespaced: true },
  Node: { group: '', version: 'v1', plural: 'nodes', namespaced: false },
  PodChaos: chaosMesh('podchaos'),
  NetworkChaos: chaosMesh('networkchaos'),
  StressChaos: chaosMesh('stresschaos'),
  IOChaos: chaosMesh('iochaos'),
  DNSChaos: chaosMesh('dnschaos'),
  TimeChaos: chaosMesh('timechaos'),
  HTTPChaos: chaosMesh('httpchaos'),
  KernelChaos: chaosMesh('kernelchaos'),
  JVMChaos: chaosMesh('jvmchaos'),
  AWSChaos: chaosMesh('awschaos'),
  GCPChaos: chaosMesh('gcpchaos'),
  ChaosEngine: { group: 'litmuschaos.io', version: 'v1alpha1', plural: 'chaosengines', namespaced: true },
};

export type ObjectKind = keyof typeof KIND_INFO;

export const isObjectKind = (kind: string): kind is ObjectKind => Object.hasOwn(KIND_INFO, kind);
export const isChaosKind = (kind: string): kind is ChaosKind => (CHAOS_KINDS as readonly string[]).includes(kind);
export const isChaosMeshKind = (kind: string): boolean => (CHAOS_MESH_KINDS as readonly string[]).includes(kind);

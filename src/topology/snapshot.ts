/**
 * One read of the whole cluster per investigation: the objects the topology is built from and the
 * cluster-level analyzers read. Every list is bounded (`limit`, no continuation: a list cut short is
 * reported as a gap) and every failure is a gap, never an exception. Custom resources are read only
 * for the API groups the cluster actually serves (discovery first), so a cluster without Istio or
 * cert-manager costs nothing for them.
 *
 * Never kept: ConfigMap values (only key names and the service host names found in them) and Secret
 * data (Secrets are not listed here at all).
 */
import * as k8s from '@kubernetes/client-node';
import type {
  CoreV1Event,
  V1ConfigMap,
  V1CronJob,
  V1DaemonSet,
  V1Deployment,
  V1Endpoints,
  V1Ingress,
  V1Job,
  V1LimitRange,
  V1ServiceAccount,
  V1APIService,
  V1ControllerRevision,
  V1PodDisruptionBudget,
  V1MutatingWebhookConfiguration,
  V1Namespace,
  V1NetworkPolicy,
  V1Node,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1Pod,
  V1ReplicaSet,
  V1ResourceQuota,
  V1Service,
  V1StatefulSet,
  V1StorageClass,
  V1ValidatingWebhookConfiguration,
  V1Role,
  V1RoleBinding,
  V1ClusterRole,
  V1ClusterRoleBinding,
  V2HorizontalPodAutoscaler,
} from '@kubernetes/client-node';
import type { KubeReader } from '../evidence/kubernetes/client.js';
import { KubeReadError } from '../evidence/kubernetes/client.js';
import { hostReferences } from './references.js';
import { isNetworkFailure, isTransientStatus, retryAfterMs, TransientSourceError } from '../evidence/transient.js';
import { withSlices } from '../evidence/kubernetes/endpoint-slices.js';

/** A custom resource as the API returns it (only the fields the analyzers read are typed). */
export interface CustomObject {
  apiVersion: string;
  kind: string;
  metadata: k8s.V1ObjectMeta;
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

/** A ConfigMap without its values: key names, and the service hosts its values name. */
export interface ConfigMapSummary {
  metadata: k8s.V1ObjectMeta;
  keys: string[];
  /** Host names (and host:port) found in its values: `payments-api.payments.svc:8080`, `api.stripe.com`. */
  hosts: string[];
  /** Names of the cluster's Kafka topics its values mention (`payments.events`): who consumes or produces them. */
  topics?: string[];
}

export interface ClusterSnapshot {
  readAt: Date;
  namespaces: V1Namespace[];
  nodes: V1Node[];
  deployments: V1Deployment[];
  statefulSets: V1StatefulSet[];
  daemonSets: V1DaemonSet[];
  replicaSets: V1ReplicaSet[];
  pods: V1Pod[];
  services: V1Service[];
  endpoints: V1Endpoints[];
  ingresses: V1Ingress[];
  networkPolicies: V1NetworkPolicy[];
  hpas: V2HorizontalPodAutoscaler[];
  pvcs: V1PersistentVolumeClaim[];
  pvs: V1PersistentVolume[];
  storageClasses: V1StorageClass[];
  jobs: V1Job[];
  cronJobs: V1CronJob[];
  configMaps: ConfigMapSummary[];
  resourceQuotas: V1ResourceQuota[];
  limitRanges: V1LimitRange[];
  /** PodDisruptionBudgets: what a drain may evict (a budget with 0 disruptions allowed blocks it). */
  pdbs: V1PodDisruptionBudget[];
  validatingWebhooks: V1ValidatingWebhookConfiguration[];
  mutatingWebhooks: V1MutatingWebhookConfiguration[];
  /** RBAC objects: what the workloads' ServiceAccounts may do, and who changed it. */
  roles: V1Role[];
  roleBindings: V1RoleBinding[];
  clusterRoles: V1ClusterRole[];
  clusterRoleBindings: V1ClusterRoleBinding[];
  /** ServiceAccounts: their cloud-identity annotations (IRSA role, GKE/Azure workload identity) and who changed them. */
  serviceAccounts: V1ServiceAccount[];
  /** DaemonSet/StatefulSet revisions: what a rollout changed in the template (a DaemonSet's requests on every node). */
  controllerRevisions: V1ControllerRevision[];
  /** Aggregated APIs (custom/external metrics for HPAs): which Service backs each and whether it is Available. */
  apiServices: V1APIService[];
  /** Warning events, all namespaces (Normal ones are read per namespace of interest). */
  warningEvents: CoreV1Event[];
  /** Custom resources of the groups below that the cluster serves, by kind. */
  custom: Record<string, CustomObject[]>;
  gaps: string[];
}

/** Custom resources worth reading when the cluster serves them: meshes, certificates, chaos, autoscalers, GitOps. */
export const CUSTOM_RESOURCES: { group: string; plural: string; kind: string; namespaced: boolean }[] = [
  { group: 'networking.istio.io', plural: 'virtualservices', kind: 'VirtualService', namespaced: true },
  { group: 'networking.istio.io', plural: 'destinationrules', kind: 'DestinationRule', namespaced: true },
  { group: 'networking.istio.io', plural: 'serviceentries', kind: 'ServiceEntry', namespaced: true },
  { group: 'networking.istio.io', plural: 'gateways', kind: 'Gateway', namespaced: true },
  { group: 'networking.istio.io', plural: 'sidecars', kind: 'Sidecar', namespaced: true },
  { group: 'security.istio.io', plural: 'peerauthentications', kind: 'PeerAuthentication', namespaced: true },
  { group: 'security.istio.io', plural: 'authorizationpolicies', kind: 'AuthorizationPolicy', namespaced: true },
  { group: 'cert-manager.io', plural: 'certificates', kind: 'Certificate', namespaced: true },
  { group: 'cert-manager.io', plural: 'certificaterequests', kind: 'CertificateRequest', namespaced: true },
  { group: 'acme.cert-manager.io', plural: 'orders', kind: 'Order', namespaced: true },
  { group: 'kyverno.io', plural: 'clusterpolicies', kind: 'ClusterPolicy', namespaced: false },
  { group: 'kyverno.io', plural: 'policies', kind: 'Policy', namespaced: true },
  { group: 'chaos-mesh.org', plural: 'podchaos', kind: 'PodChaos', namespaced: true },
  { group: 'chaos-mesh.org', plural: 'networkchaos', kind: 'NetworkChaos', namespaced: true },
  { group: 'chaos-mesh.org', plural: 'stresschaos', kind: 'StressChaos', namespaced: true },
  { group: 'chaos-mesh.org', plural: 'iochaos', kind: 'IOChaos', namespaced: true },
  { group: 'chaos-mesh.org', plural: 'dnschaos', kind: 'DNSChaos', namespaced: true },
  { group: 'chaos-mesh.org', plural: 'timechaos', kind: 'TimeChaos', namespaced: true },
  { group: 'chaos-mesh.org', plural: 'httpchaos', kind: 'HTTPChaos', namespaced: true },
  { group: 'litmuschaos.io', plural: 'chaosengines', kind: 'ChaosEngine', namespaced: true },
  { group: 'keda.sh', plural: 'scaledobjects', kind: 'ScaledObject', namespaced: true },
  { group: 'autoscaling.k8s.io', plural: 'verticalpodautoscalers', kind: 'VerticalPodAutoscaler', namespaced: true },
  { group: 'argoproj.io', plural: 'applications', kind: 'Application', namespaced: true },
  { group: 'argoproj.io', plural: 'rollouts', kind: 'Rollout', namespaced: true },
  { group: 'external-secrets.io', plural: 'externalsecrets', kind: 'ExternalSecret', namespaced: true },
  // Gateway API routes (Envoy Gateway, Istio, Cilium, GKE, NGINX Gateway Fabric). Keyed by kind, so the
  // Gateway API's own `Gateway` is left out: it would share the key with Istio's.
  { group: 'gateway.networking.k8s.io', plural: 'httproutes', kind: 'HTTPRoute', namespaced: true },
  { group: 'gateway.networking.k8s.io', plural: 'grpcroutes', kind: 'GRPCRoute', namespaced: true },
  // Strimzi topics: retention, partitions and cleanup policy live here, not in the consumers' config.
  { group: 'kafka.strimzi.io', plural: 'kafkatopics', kind: 'KafkaTopic', namespaced: true },
];

export const emptySnapshot = (gaps: string[] = []): ClusterSnapshot => ({
  readAt: new Date(0),
  namespaces: [],
  nodes: [],
  deployments: [],
  statefulSets: [],
  daemonSets: [],
  replicaSets: [],
  pods: [],
  services: [],
  endpoints: [],
  ingresses: [],
  networkPolicies: [],
  hpas: [],
  pvcs: [],
  pvs: [],
  storageClasses: [],
  jobs: [],
  cronJobs: [],
  configMaps: [],
  resourceQuotas: [],
  limitRanges: [],
  pdbs: [],
  validatingWebhooks: [],
  mutatingWebhooks: [],
  roles: [],
  roleBindings: [],
  clusterRoles: [],
  clusterRoleBindings: [],
  serviceAccounts: [],
  apiServices: [],
  controllerRevisions: [],
  warningEvents: [],
  custom: {},
  gaps,
});

interface Listed<T> {
  items: T[];
  metadata?: { _continue?: string };
}

/**
 * Read the cluster. `limits` bound each list (real clusters run tens of thousands of pods: the first
 * page is what Vigil sees, and it says so).
 */
export async function readClusterSnapshot(reader: KubeReader, opts: { now?: Date; signal?: AbortSignal } = {}): Promise<ClusterSnapshot> {
  const s = emptySnapshot();
  s.readAt = opts.now ?? new Date();
  const gap = (what: string, err: unknown) => {
    if (err instanceof k8s.ApiException && err.code === 404) return; // a kind this cluster does not serve
    s.gaps.push(err instanceof KubeReadError ? err.message : `${what}: ${err instanceof k8s.ApiException ? `HTTP ${err.code} ${bodyMessage(err)}` : err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
  };
  // Without pods and workloads there is nothing to diagnose: when those lists fail for a moment the read
  // is retried (TransientSourceError), instead of reporting an empty cluster. Other kinds become gaps.
  let unavailable: TransientSourceError | undefined;
  const list = async <T>(what: string, limit: number, fn: () => Promise<Listed<T>>): Promise<T[]> => {
    try {
      const res = await fn();
      if (res.metadata?._continue) s.gaps.push(`${what}: more than ${limit} objects; only the first ${limit} were read`);
      return res.items ?? [];
    } catch (err) {
      if (CORE_LISTS.has(what)) unavailable ??= transientKubeError(what, err);
      gap(what, err);
      return [];
    }
  };
  const core = reader.core;
  const apps = reader.apps;
  const batch = reader.makeApiClient(k8s.BatchV1Api);
  const net = reader.makeApiClient(k8s.NetworkingV1Api);
  const auto = reader.makeApiClient(k8s.AutoscalingV2Api);
  const storage = reader.makeApiClient(k8s.StorageV1Api);
  const admission = reader.makeApiClient(k8s.AdmissionregistrationV1Api);
  const rbac = reader.makeApiClient(k8s.RbacAuthorizationV1Api);

  const [namespaces, nodes, deployments, statefulSets, daemonSets, replicaSets, pods, services, endpoints, ingresses, networkPolicies, hpas, pvcs, pvs, storageClasses, jobs, cronJobs, configMaps, quotas, limitRanges, vwh, mwh, warnings, custom] =
    await Promise.all([
      list('list namespaces', 500, () => core.listNamespace({ limit: 500 })),
      list('list nodes', 1000, () => core.listNode({ limit: 1000 })),
      list('list deployments', 2000, () => apps.listDeploymentForAllNamespaces({ limit: 2000 })),
      list('list statefulsets', 1000, () => apps.listStatefulSetForAllNamespaces({ limit: 1000 })),
      list('list daemonsets', 1000, () => apps.listDaemonSetForAllNamespaces({ limit: 1000 })),
      list('list replicasets', 5000, () => apps.listReplicaSetForAllNamespaces({ limit: 5000 })),
      list('list pods', 5000, () => core.listPodForAllNamespaces({ limit: 5000 })),
      list('list services', 2000, () => core.listServiceForAllNamespaces({ limit: 2000 })),
      list('list endpoints', 2000, () => core.listEndpointsForAllNamespaces({ limit: 2000 })),
      list('list ingresses', 1000, () => net.listIngressForAllNamespaces({ limit: 1000 })),
      list('list networkpolicies', 1000, () => net.listNetworkPolicyForAllNamespaces({ limit: 1000 })),
      list('list horizontalpodautoscalers', 1000, () => auto.listHorizontalPodAutoscalerForAllNamespaces({ limit: 1000 })),
      list('list persistentvolumeclaims', 2000, () => core.listPersistentVolumeClaimForAllNamespaces({ limit: 2000 })),
      list('list persistentvolumes', 2000, () => core.listPersistentVolume({ limit: 2000 })),
      list('list storageclasses', 200, () => storage.listStorageClass({ limit: 200 })),
      list('list jobs', 2000, () => batch.listJobForAllNamespaces({ limit: 2000 })),
      list('list cronjobs', 1000, () => batch.listCronJobForAllNamespaces({ limit: 1000 })),
      list('list configmaps', 2000, () => core.listConfigMapForAllNamespaces({ limit: 2000 })),
      list('list resourcequotas', 500, () => core.listResourceQuotaForAllNamespaces({ limit: 500 })),
      list('list limitranges', 500, () => core.listLimitRangeForAllNamespaces({ limit: 500 })),
      list('list validatingwebhookconfigurations', 200, () => admission.listValidatingWebhookConfiguration({ limit: 200 })),
      list('list mutatingwebhookconfigurations', 200, () => admission.listMutatingWebhookConfiguration({ limit: 200 })),
      list('list warning events', 2000, () => core.listEventForAllNamespaces({ fieldSelector: 'type=Warning', limit: 2000 })),
      readCustomResources(reader, list),
    ]);
  if (unavailable) throw unavailable;
  const policy = reader.makeApiClient(k8s.PolicyV1Api);
  const registration = reader.makeApiClient(k8s.ApiregistrationV1Api);
  const discovery = reader.makeApiClient(k8s.DiscoveryV1Api);
  const [roles, roleBindings, clusterRoles, clusterRoleBindings, pdbs, serviceAccounts, apiServices, controllerRevisions, slices] = await Promise.all([
    list('list roles', 2000, () => rbac.listRoleForAllNamespaces({ limit: 2000 })),
    list('list rolebindings', 2000, () => rbac.listRoleBindingForAllNamespaces({ limit: 2000 })),
    list('list clusterroles', 2000, () => rbac.listClusterRole({ limit: 2000 })),
    list('list clusterrolebindings', 2000, () => rbac.listClusterRoleBinding({ limit: 2000 })),
    list('list poddisruptionbudgets', 2000, () => policy.listPodDisruptionBudgetForAllNamespaces({ limit: 2000 })),
    list('list serviceaccounts', 5000, () => core.listServiceAccountForAllNamespaces({ limit: 5000 })),
    list('list apiservices', 500, () => registration.listAPIService({ limit: 500 })),
    list('list controllerrevisions', 2000, () => apps.listControllerRevisionForAllNamespaces({ limit: 2000 })),
    list('list endpointslices', 5000, () => discovery.listEndpointSliceForAllNamespaces({ limit: 5000 })),
  ]);
  Object.assign(s, { roles, roleBindings, clusterRoles, clusterRoleBindings, pdbs, serviceAccounts, apiServices, controllerRevisions });
  Object.assign(s, { namespaces, nodes, deployments, statefulSets, daemonSets, replicaSets, pods, services, endpoints: withSlices(endpoints, slices), ingresses, networkPolicies, hpas, pvcs, pvs, storageClasses, jobs, cronJobs });
  const topics = topicNames(custom);
  s.configMaps = (configMaps as V1ConfigMap[]).map((cm) => summariseConfigMap(cm, topics));
  s.resourceQuotas = quotas;
  s.limitRanges = limitRanges;
  s.validatingWebhooks = vwh;
  s.mutatingWebhooks = mwh;
  s.warningEvents = warnings;
  s.custom = custom;
  return s;
}

/** The lists a diagnosis cannot do without. */
const CORE_LISTS = new Set(['list pods', 'list deployments', 'list namespaces']);

/** A list that failed because the API server could not answer now (429/5xx, timeout, no connection), as a retryable error. */
function transientKubeError(what: string, err: unknown): TransientSourceError | undefined {
  if (err instanceof k8s.ApiException) {
    if (!isTransientStatus(err.code)) return undefined;
    const body = (typeof err.body === 'string' ? safeParse(err.body) : err.body) as { details?: { retryAfterSeconds?: number } } | undefined;
    const asked = retryAfterMs(err.headers) ?? (typeof body?.details?.retryAfterSeconds === 'number' ? body.details.retryAfterSeconds * 1000 : undefined);
    return new TransientSourceError('kubernetes', `${what}: HTTP ${err.code} ${bodyMessage(err)}`, asked);
  }
  if (err instanceof KubeReadError) return isTransientStatus(err.status) || (err.status === undefined && /time|abort|fetch failed|ECONN/i.test(err.message)) ? new TransientSourceError('kubernetes', err.message) : undefined;
  return isNetworkFailure(err) ? new TransientSourceError('kubernetes', `${what}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`) : undefined;
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** ConfigMap values may hold anything (even secrets): keep key names and the hosts they name, drop the rest. */
export function summariseConfigMap(cm: V1ConfigMap, topics: readonly string[] = []): ConfigMapSummary {
  const { annotations, ...meta } = cm.metadata ?? {};
  const kept = Object.fromEntries(Object.entries(annotations ?? {}).filter(([k]) => k !== 'kubectl.kubernetes.io/last-applied-configuration'));
  const values = Object.values(cm.data ?? {});
  const named = topics.filter((t) => values.some((v) => mentionsName(v, t)));
  return {
    metadata: { ...meta, ...(Object.keys(kept).length ? { annotations: kept } : {}) },
    keys: [...Object.keys(cm.data ?? {}), ...Object.keys(cm.binaryData ?? {})],
    hosts: [...new Set(values.flatMap((v) => hostReferences(v)))].slice(0, 100),
    ...(named.length ? { topics: named.slice(0, 20) } : {}),
  };
}

/** The Kafka topic names of the cluster's KafkaTopic objects (`spec.topicName`, else the object's name). */
export function topicNames(custom: Record<string, CustomObject[]>): string[] {
  return [...new Set((custom['KafkaTopic'] ?? []).map((t) => String(t.spec?.['topicName'] ?? t.metadata.name ?? '')).filter((n) => n.length >= 3))];
}

/** `name` as a whole word of `text` (topic names hold dots and dashes, so word boundaries are spelled out). */
export function mentionsName(text: string, name: string): boolean {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^A-Za-z0-9_.-])${escaped}($|[^A-Za-z0-9_-])`).test(text);
}

async function readCustomResources(
  reader: KubeReader,
  list: <T>(what: string, limit: number, fn: () => Promise<Listed<T>>) => Promise<T[]>,
): Promise<Record<string, CustomObject[]>> {
  const out: Record<string, CustomObject[]> = {};
  let groups: k8s.V1APIGroup[];
  try {
    groups = (await reader.makeApiClient(k8s.ApisApi).getAPIVersions()).groups ?? [];
  } catch {
    return out; // discovery refused: the core kinds still stand
  }
  const custom = reader.makeApiClient(k8s.CustomObjectsApi);
  await Promise.all(
    CUSTOM_RESOURCES.map(async (r) => {
      const group = groups.find((g) => g.name === r.group);
      const version = group?.preferredVersion?.version ?? group?.versions[0]?.version;
      if (!version) return;
      const items = await list<CustomObject>(`list ${r.plural}.${r.group}`, 500, async () =>
        (r.namespaced
          ? await custom.listCustomObjectForAllNamespaces({ group: r.group, version, resourcePlural: r.plural, limit: 500 })
          : await custom.listClusterCustomObject({ group: r.group, version, plural: r.plural, limit: 500 })) as Listed<CustomObject>,
      );
      if (items.length) out[r.kind] = items.map((o) => ({ ...o, kind: o.kind ?? r.kind }));
    }),
  );
  return out;
}

function bodyMessage(err: k8s.ApiException<unknown>): string {
  try {
    const body = typeof err.body === 'string' ? (JSON.parse(err.body) as { message?: string }) : (err.body as { message?: string });
    return body?.message ?? '';
  } catch {
    return String(err.body).slice(0, 120);
  }
}

/** The metadata of an object the snapshot holds, by kind (core lists, ConfigMap summaries, custom kinds). */
export function objectMeta(s: ClusterSnapshot, ref: { kind: string; namespace?: string; name: string }): k8s.V1ObjectMeta | undefined {
  const core: Record<string, { metadata?: k8s.V1ObjectMeta }[]> = {
    ConfigMap: s.configMaps,
    NetworkPolicy: s.networkPolicies,
    Ingress: s.ingresses,
    Service: s.services,
    Deployment: s.deployments,
    StatefulSet: s.statefulSets,
    DaemonSet: s.daemonSets,
    HorizontalPodAutoscaler: s.hpas,
    CronJob: s.cronJobs,
  };
  return (core[ref.kind] ?? s.custom[ref.kind] ?? []).find((o) => o.metadata?.name === ref.name && (!ref.namespace || o.metadata?.namespace === ref.namespace))?.metadata;
}

/**
 * Which REST resource serves which kind, as the real API server's discovery documents say.
 * Kinds outside this table (CRDs in a scenario) are derived from their apiVersion with the usual
 * English plural, and are namespaced when the world object has a namespace.
 */

export interface ResourceType {
  kind: string;
  /** The path segment: `deployments`. */
  plural: string;
  singular: string;
  /** '' for the core group. */
  group: string;
  version: string;
  namespaced: boolean;
  shortNames?: string[];
  /** Subresources the fake serves (`status` is only listed). */
  subresources?: string[];
}

const RW = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

function t(
  kind: string,
  plural: string,
  group: string,
  version: string,
  namespaced: boolean,
  extra: Partial<ResourceType> = {},
): ResourceType {
  return { kind, plural, singular: kind.toLowerCase(), group, version, namespaced, ...extra };
}

export const KNOWN_TYPES: ResourceType[] = [
  t('Pod', 'pods', '', 'v1', true, { shortNames: ['po'], subresources: ['status', 'log'] }),
  t('Service', 'services', '', 'v1', true, { shortNames: ['svc'], subresources: ['status'] }),
  t('Endpoints', 'endpoints', '', 'v1', true, { shortNames: ['ep'] }),
  t('ConfigMap', 'configmaps', '', 'v1', true, { shortNames: ['cm'] }),
  t('Secret', 'secrets', '', 'v1', true),
  t('Event', 'events', '', 'v1', true, { shortNames: ['ev'] }),
  t('Node', 'nodes', '', 'v1', false, { shortNames: ['no'], subresources: ['status'] }),
  t('Namespace', 'namespaces', '', 'v1', false, { shortNames: ['ns'], subresources: ['status'] }),
  t('PersistentVolumeClaim', 'persistentvolumeclaims', '', 'v1', true, { shortNames: ['pvc'] }),
  t('PersistentVolume', 'persistentvolumes', '', 'v1', false, { shortNames: ['pv'] }),
  t('ServiceAccount', 'serviceaccounts', '', 'v1', true, { shortNames: ['sa'], subresources: ['token'] }),
  t('LimitRange', 'limitranges', '', 'v1', true),
  t('ResourceQuota', 'resourcequotas', '', 'v1', true, { shortNames: ['quota'] }),
  t('Deployment', 'deployments', 'apps', 'v1', true, { shortNames: ['deploy'], subresources: ['status', 'scale'] }),
  t('ReplicaSet', 'replicasets', 'apps', 'v1', true, { shortNames: ['rs'], subresources: ['status', 'scale'] }),
  t('StatefulSet', 'statefulsets', 'apps', 'v1', true, { shortNames: ['sts'], subresources: ['status', 'scale'] }),
  t('DaemonSet', 'daemonsets', 'apps', 'v1', true, { shortNames: ['ds'], subresources: ['status'] }),
  t('ControllerRevision', 'controllerrevisions', 'apps', 'v1', true),
  t('Job', 'jobs', 'batch', 'v1', true, { subresources: ['status'] }),
  t('CronJob', 'cronjobs', 'batch', 'v1', true, { shortNames: ['cj'], subresources: ['status'] }),
  t('HorizontalPodAutoscaler', 'horizontalpodautoscalers', 'autoscaling', 'v2', true, {
    shortNames: ['hpa'],
    subresources: ['status'],
  }),
  t('PodDisruptionBudget', 'poddisruptionbudgets', 'policy', 'v1', true, { shortNames: ['pdb'] }),
  t('NetworkPolicy', 'networkpolicies', 'networking.k8s.io', 'v1', true, { shortNames: ['netpol'] }),
  t('Ingress', 'ingresses', 'networking.k8s.io', 'v1', true, { shortNames: ['ing'], subresources: ['status'] }),
  t('IngressClass', 'ingressclasses', 'networking.k8s.io', 'v1', false),
  t('StorageClass', 'storageclasses', 'storage.k8s.io', 'v1', false, { shortNames: ['sc'] }),
  t('EndpointSlice', 'endpointslices', 'discovery.k8s.io', 'v1', true),
  t('Lease', 'leases', 'coordination.k8s.io', 'v1', true),
  t('Role', 'roles', 'rbac.authorization.k8s.io', 'v1', true),
  t('RoleBinding', 'rolebindings', 'rbac.authorization.k8s.io', 'v1', true),
  t('ClusterRole', 'clusterroles', 'rbac.authorization.k8s.io', 'v1', false),
  t('ClusterRoleBinding', 'clusterrolebindings', 'rbac.authorization.k8s.io', 'v1', false),
  t('PriorityClass', 'priorityclasses', 'scheduling.k8s.io', 'v1', false, { shortNames: ['pc'] }),
  t('APIService', 'apiservices', 'apiregistration.k8s.io', 'v1', false, { subresources: ['status'] }),
  // Served by every API server, so a reader without access meets 403 (not 404) here, as in a real cluster.
  t('ValidatingWebhookConfiguration', 'validatingwebhookconfigurations', 'admissionregistration.k8s.io', 'v1', false),
  t('MutatingWebhookConfiguration', 'mutatingwebhookconfigurations', 'admissionregistration.k8s.io', 'v1', false),
  t('SelfSubjectAccessReview', 'selfsubjectaccessreviews', 'authorization.k8s.io', 'v1', false),
  t('SelfSubjectReview', 'selfsubjectreviews', 'authentication.k8s.io', 'v1', false),
  t('SelfSubjectRulesReview', 'selfsubjectrulesreviews', 'authorization.k8s.io', 'v1', false),
  t('SubjectAccessReview', 'subjectaccessreviews', 'authorization.k8s.io', 'v1', false),
  t('CustomResourceDefinition', 'customresourcedefinitions', 'apiextensions.k8s.io', 'v1', false, {
    shortNames: ['crd'],
  }),
];

/** `apps/v1` → { group: 'apps', version: 'v1' }; `v1` → core. */
export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

export function apiVersionOf(type: Pick<ResourceType, 'group' | 'version'>): string {
  return type.group ? `${type.group}/${type.version}` : type.version;
}

/**
 * CRDs whose plural is not the English one (their CRD's `spec.names.plural`): Chaos Mesh names every
 * experiment kind's plural as the lowercased kind (`networkchaos`, not `networkchaoses`).
 */
const CRD_PLURALS: Record<string, string> = {
  PodChaos: 'podchaos', NetworkChaos: 'networkchaos', StressChaos: 'stresschaos', IOChaos: 'iochaos', DNSChaos: 'dnschaos',
  TimeChaos: 'timechaos', HTTPChaos: 'httpchaos', KernelChaos: 'kernelchaos', JVMChaos: 'jvmchaos', AWSChaos: 'awschaos',
  GCPChaos: 'gcpchaos', PhysicalMachineChaos: 'physicalmachinechaos', BlockChaos: 'blockchaos',
};

function guessPlural(kind: string): string {
  if (CRD_PLURALS[kind]) return CRD_PLURALS[kind];
  const lower = kind.toLowerCase();
  if (/(s|x|z|ch|sh)$/.test(lower)) return `${lower}es`;
  if (/[^aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ies`;
  return `${lower}s`;
}

/** The set of types a fake serves: the known table plus any other kind present in its world. */
export class ResourceRegistry {
  private readonly types: ResourceType[] = [...KNOWN_TYPES];

  /** Registers the type of a world object if it is not a known one (e.g. a CRD instance). */
  learn(obj: { apiVersion?: string; kind?: string; metadata?: { namespace?: string } }): ResourceType {
    if (!obj.apiVersion || !obj.kind) throw new Error('object without apiVersion/kind');
    const { group, version } = splitApiVersion(obj.apiVersion);
    const found = this.byKind(group, obj.kind);
    if (found) return found;
    const plural = guessPlural(obj.kind);
    const type = t(obj.kind, plural, group, version, Boolean(obj.metadata?.namespace));
    this.types.push(type);
    return type;
  }

  byKind(group: string, kind: string): ResourceType | undefined {
    return this.types.find((r) => r.group === group && r.kind === kind);
  }

  byPlural(group: string, version: string, plural: string): ResourceType | undefined {
    return this.types.find((r) => r.group === group && r.version === version && r.plural === plural);
  }

  groupVersions(): { group: string; version: string }[] {
    const seen = new Map<string, { group: string; version: string }>();
    for (const r of this.types) seen.set(`${r.group}/${r.version}`, { group: r.group, version: r.version });
    return [...seen.values()];
  }

  /** `GET /api`: the core APIVersions document. */
  apiVersions(): object {
    return {
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '127.0.0.1:6443' }],
    };
  }

  /** `GET /apis`: every non-core group with its single served version. */
  apiGroupList(): object {
    const groups = this.groupVersions()
      .filter((gv) => gv.group !== '')
      .map((gv) => {
        const groupVersion = `${gv.group}/${gv.version}`;
        return {
          name: gv.group,
          versions: [{ groupVersion, version: gv.version }],
          preferredVersion: { groupVersion, version: gv.version },
        };
      });
    return { kind: 'APIGroupList', apiVersion: 'v1', groups };
  }

  /** `GET /api/v1` or `/apis/<g>/<v>`: the APIResourceList KubernetesObjectApi reads. */
  apiResourceList(group: string, version: string): object | undefined {
    const types = this.types.filter((r) => r.group === group && r.version === version);
    if (types.length === 0) return undefined;
    const resources: object[] = [];
    for (const r of types) {
      resources.push({
        name: r.plural,
        singularName: r.singular,
        namespaced: r.namespaced,
        kind: r.kind,
        verbs: RW,
        ...(r.shortNames ? { shortNames: r.shortNames } : {}),
      });
      for (const sub of r.subresources ?? []) {
        const subKind = sub === 'scale' ? 'Scale' : sub === 'token' ? 'TokenRequest' : r.kind;
        const verbs = sub === 'log' ? ['get'] : sub === 'token' ? ['create'] : ['get', 'patch', 'update'];
        resources.push({
          name: `${r.plural}/${sub}`,
          singularName: '',
          namespaced: r.namespaced,
          ...(sub === 'scale' ? { group: 'autoscaling', version: 'v1' } : {}),
          kind: subKind,
          verbs,
        });
      }
    }
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: apiVersionOf({ group, version }), resources };
  }
}

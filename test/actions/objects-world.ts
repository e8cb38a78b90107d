/**
 * A shop namespace whose Service, Ingress, NetworkPolicy, HPA and VirtualService were each `kubectl
 * edit`-ed after a `kubectl apply` (so the last-applied annotation holds the previous spec), one Service
 * never applied (previous spec unknown), a Helm-managed DestinationRule edited after its release, two
 * nodes with pods, a running Chaos Mesh PodChaos and a Litmus ChaosEngine. The executor may patch exactly
 * what the example policy lets restore_object, cordon_node and pause_chaos write.
 */
import { helmHistorySecrets } from '../fakes/kubernetes/helm-release.js';
import type { PolicyRule } from '../fakes/kubernetes/rbac.js';

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
export const EDITED_AT = minutesAgo(9);
const APPLIED_AT = minutesAgo(20 * 24 * 60);

const applied = (apiVersion: string, kind: string, name: string, spec: object) => JSON.stringify({ apiVersion, kind, metadata: { annotations: {}, name, namespace: 'shop' }, spec });
const fields = (spec: object) => Object.fromEntries(Object.keys(spec).map((k) => [`f:${k}`, {}]));

/** An object applied with `spec` and then edited to `live` (managedFields say so). */
function appliedThenEdited(apiVersion: string, kind: string, name: string, spec: object, live: object, extra: object = {}) {
  return {
    apiVersion,
    kind,
    metadata: {
      name,
      namespace: 'shop',
      generation: 2,
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': applied(apiVersion, kind, name, spec) },
      managedFields: [
        { manager: 'kubectl-client-side-apply', operation: 'Update', apiVersion, time: APPLIED_AT, fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': fields(spec), 'f:metadata': { 'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} } } } },
        { manager: 'kubectl-edit', operation: 'Update', apiVersion, time: EDITED_AT, fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': fields(live) } },
      ],
    },
    spec: live,
    ...extra,
  };
}

const deployment = (name: string, replicas: number, labels: Record<string, string>) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: 'shop', generation: 1, annotations: {} },
  spec: { replicas, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name, image: `${name}:1`, ports: [{ name: 'http', containerPort: 8080 }] }] } } },
  status: { replicas, readyReplicas: replicas },
});

const pod = (name: string, node: string, namespace = 'shop', labels: Record<string, string> = { app: 'checkout' }) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace, labels },
  spec: { nodeName: node, containers: [{ name: 'c', image: 'x' }] },
  status: { phase: 'Running' },
});

export const SERVICE_APPLIED = { selector: { app: 'checkout' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] };
export const SERVICE_EDITED = { selector: { app: 'checkout-v2' }, ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] };

export const INGRESS_APPLIED = { rules: [{ host: 'shop.example.com', http: { paths: [{ path: '/api', pathType: 'Prefix', backend: { service: { name: 'checkout', port: { number: 80 } } } }] } }] };
export const INGRESS_EDITED = { rules: [{ host: 'shop.example.com', http: { paths: [{ path: '/api', pathType: 'Prefix', backend: { service: { name: 'storefront', port: { number: 80 } } } }] } }] };

export const NETPOL_APPLIED = { podSelector: { matchLabels: { app: 'checkout' } }, policyTypes: ['Ingress'], ingress: [{ from: [{ podSelector: { matchLabels: { app: 'storefront' } } }], ports: [{ port: 8080 }] }] };
export const NETPOL_EDITED = { podSelector: { matchLabels: { app: 'checkout' } }, policyTypes: ['Ingress'], ingress: [] };

export const NEW_POLICY = { podSelector: { matchLabels: { app: 'checkout' } }, policyTypes: ['Egress'], egress: [] };

export const HPA_APPLIED = { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'checkout' }, minReplicas: 2, maxReplicas: 10, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } }] };
export const HPA_EDITED = { ...HPA_APPLIED, maxReplicas: 3 };

export const VS_APPLIED = { hosts: ['checkout'], http: [{ route: [{ destination: { host: 'checkout' } }] }] };
export const VS_EDITED = { hosts: ['checkout'], http: [{ fault: { abort: { httpStatus: 503, percentage: { value: 50 } } }, route: [{ destination: { host: 'checkout' } }] }] };

const DR_MANIFEST = `---
# Source: mesh/templates/dr.yaml
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata:
  name: checkout
spec:
  host: checkout
  subsets:
    - name: stable
      labels:
        app: checkout
`;
export const DR_EDITED = { host: 'checkout', subsets: [{ name: 'stable', labels: { app: 'checkout', track: 'canary' } }] };

export const OBJECT_OBJECTS: object[] = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } },
  deployment('checkout', 3, { app: 'checkout' }),
  deployment('storefront', 2, { app: 'storefront' }),
  appliedThenEdited('v1', 'Service', 'checkout', SERVICE_APPLIED, SERVICE_EDITED),
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'storefront', namespace: 'shop' }, spec: { selector: { app: 'storefront' }, ports: [{ port: 80, targetPort: 8080 }] } },
  // Created by hand, never applied: its previous spec is unknown.
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'cart', namespace: 'shop' }, spec: { selector: { app: 'cart-v2' }, ports: [{ port: 80 }] } },
  appliedThenEdited('networking.k8s.io/v1', 'Ingress', 'shop-edge', INGRESS_APPLIED, INGRESS_EDITED),
  appliedThenEdited('networking.k8s.io/v1', 'NetworkPolicy', 'checkout-ingress', NETPOL_APPLIED, NETPOL_EDITED),
  // Added by hand right before the onset: no earlier spec is known.
  {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: 'deny-egress', namespace: 'shop', generation: 1, creationTimestamp: EDITED_AT, labels: { team: 'security' }, annotations: { 'security.example.com/ticket': 'SEC-12' } },
    spec: NEW_POLICY,
  },
  appliedThenEdited('autoscaling/v2', 'HorizontalPodAutoscaler', 'checkout', HPA_APPLIED, HPA_EDITED, { status: { currentReplicas: 3, desiredReplicas: 7 } }),
  appliedThenEdited('networking.istio.io/v1', 'VirtualService', 'checkout', VS_APPLIED, VS_EDITED),
  {
    apiVersion: 'networking.istio.io/v1',
    kind: 'DestinationRule',
    metadata: {
      name: 'checkout',
      namespace: 'shop',
      generation: 3,
      annotations: { 'meta.helm.sh/release-name': 'mesh', 'meta.helm.sh/release-namespace': 'shop' },
      labels: { 'app.kubernetes.io/managed-by': 'Helm' },
      managedFields: [
        { manager: 'helm', operation: 'Update', apiVersion: 'networking.istio.io/v1', time: minutesAgo(3 * 24 * 60), fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:host': {}, 'f:subsets': {} } } },
        { manager: 'kubectl-edit', operation: 'Update', apiVersion: 'networking.istio.io/v1', time: EDITED_AT, fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:subsets': {} } } },
      ],
    },
    spec: DR_EDITED,
  },
  ...helmHistorySecrets({
    name: 'mesh',
    namespace: 'shop',
    manifest: DR_MANIFEST,
    revisions: [{ version: 1, status: 'deployed', chart: 'mesh-1.0.0', appVersion: '1.0', description: 'Install complete', deployedAt: minutesAgo(3 * 24 * 60), values: {} }],
  }),
  // Nodes: node-1 runs two checkout pods and a monitoring pod; node-2 is spare.
  { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1', annotations: {} }, spec: {}, status: { conditions: [{ type: 'Ready', status: 'False', reason: 'KubeletNotReady' }] } },
  { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-2' }, spec: {}, status: { conditions: [{ type: 'Ready', status: 'True' }] } },
  pod('checkout-a', 'node-1'),
  pod('checkout-b', 'node-1'),
  pod('node-exporter-x', 'node-1', 'monitoring', { app: 'node-exporter' }),
  pod('checkout-c', 'node-2'),
  // Chaos: a running PodChaos and an active Litmus engine.
  {
    apiVersion: 'chaos-mesh.org/v1alpha1',
    kind: 'PodChaos',
    metadata: { name: 'checkout-kill', namespace: 'shop', generation: 1 },
    spec: { action: 'pod-kill', mode: 'one', selector: { labelSelectors: { app: 'checkout' } } },
    status: { experiment: { desiredPhase: 'Run' } },
  },
  {
    apiVersion: 'litmuschaos.io/v1alpha1',
    kind: 'ChaosEngine',
    metadata: { name: 'checkout-engine', namespace: 'shop', generation: 1, annotations: {} },
    spec: { engineState: 'active', appinfo: { appns: 'shop', applabel: 'app=checkout', appkind: 'deployment' } },
  },
];

/** What deploy/executor-rbac.yaml grants for these actions in shop, plus the cluster-wide `patch nodes`. */
export const OBJECT_EXECUTOR_RULES: PolicyRule[] = [
  { verbs: ['get', 'patch'], apiGroups: [''], resources: ['services'], namespaces: ['shop'] },
  { verbs: ['get', 'patch'], apiGroups: ['networking.k8s.io'], resources: ['ingresses', 'networkpolicies'], namespaces: ['shop'] },
  { verbs: ['delete', 'create'], apiGroups: ['networking.k8s.io'], resources: ['networkpolicies'], namespaces: ['shop'] },
  { verbs: ['get', 'patch'], apiGroups: ['autoscaling'], resources: ['horizontalpodautoscalers'], namespaces: ['shop'] },
  { verbs: ['get', 'patch'], apiGroups: ['networking.istio.io'], resources: ['virtualservices', 'destinationrules'], namespaces: ['shop'] },
  { verbs: ['get', 'patch'], apiGroups: ['chaos-mesh.org'], resources: ['podchaos'], namespaces: ['shop'] },
  { verbs: ['get', 'patch'], apiGroups: ['litmuschaos.io'], resources: ['chaosengines'], namespaces: ['shop'] },
  { verbs: ['get', 'patch'], apiGroups: [''], resources: ['nodes'] },
];

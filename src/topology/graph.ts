/**
 * The service graph of a cluster, discovered from the cluster itself: who depends on whom, and through
 * which object. Edges point from the dependent to what it depends on (a caller to the Service it calls,
 * a workload to the ConfigMap it reads, an Ingress to its backend Service), so a walk forward from an
 * alerted component finds candidate origins and a walk backward from an origin finds what it hurts.
 *
 * Sources of edges, each recorded as `via` so a path can be shown and cited:
 * - owner chains (Pod → ReplicaSet → Deployment, Job → CronJob) and Service selectors → workloads;
 * - Ingress rules → Services, TLS sections → Secrets, cert-manager Certificates → their Secrets;
 * - env vars, args and the ConfigMaps a workload reads that name service DNS names or host:port;
 * - ExternalName Services and Istio ServiceEntries (external hosts), VirtualServices/DestinationRules;
 * - ConfigMaps/Secrets/PVCs a pod spec mounts, PVC → StorageClass, pods → Nodes, HPAs → targets,
 *   NetworkPolicies → the pods they select, chaos experiments → their targets, quotas and webhooks;
 * - the service catalog's `dependsOn`, and service-graph metrics (Istio, OpenTelemetry, Linkerd) when
 *   Prometheus has them (added by the caller as `calls` edges).
 */
import type { V1Container, V1LabelSelector, V1Pod, V1PodTemplateSpec } from '@kubernetes/client-node';
import type { ComponentRef } from '../evidence/types.js';
import { serviceOfHost, settingHostRefs, hostRefs, type HostRef } from './references.js';
import { mentionsName, type ClusterSnapshot, type CustomObject } from './snapshot.js';
import { configMapFlags } from '../evidence/kubernetes/related.js';

export type EdgeKind =
  | 'routes' // Ingress/VirtualService/HTTPRoute → Service
  | 'selects' // Service → workload
  | 'calls' // workload → Service / external host
  | 'reads' // workload → ConfigMap / Secret
  | 'mounts' // workload → PVC, PVC → StorageClass
  | 'runs-on' // workload → Node
  | 'scaled-by' // workload → HPA / ScaledObject
  | 'metrics-from' // HPA → the APIService serving its metrics (custom/external/resource metrics)
  | 'isolated-by' // workload → NetworkPolicy
  | 'serves-tls' // Ingress → Secret, Secret → Certificate
  | 'configured-by' // Service → VirtualService / DestinationRule / PeerAuthentication
  | 'resolves-via' // workload → DNS (kube-dns)
  | 'limited-by' // workload → ResourceQuota / LimitRange / webhook
  | 'disrupted-by' // workload → chaos experiment
  | 'owns' // CronJob → Job (the CronJob depends on its Jobs succeeding)
  | 'consumes' // workload → topic/queue
  | 'hosted-by' // topic/queue → broker workload
  | 'served-by'; // Ingress → the ingress controller of its class (its config applies to every Ingress it serves)

export interface Edge {
  from: string;
  to: string;
  kind: EdgeKind;
  /** How it was found, for people: `env PAYMENTS_URL`, `selector app=checkout`, `rule shop.example.com/api`. */
  via: string;
}

export interface TopologyNode {
  ref: ComponentRef;
  /** For workloads: the pods they own (names). */
  pods?: string[];
}

export const WORKLOAD_KINDS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob', 'Rollout']);

export const nodeId = (r: ComponentRef): string => `${r.kind}/${r.namespace ?? ''}/${r.name}`;

export function refOfId(id: string): ComponentRef {
  const [kind, namespace, ...name] = id.split('/');
  return { kind: kind!, ...(namespace ? { namespace } : {}), name: name.join('/') };
}

/** Sidecars that are infrastructure, not the app: their logs and ports do not describe the workload. */
export const SIDECARS = new Set(['istio-proxy', 'linkerd-proxy', 'envoy', 'vault-agent', 'cloud-sql-proxy', 'fluent-bit', 'otel-collector', 'datadog-agent']);

export class Topology {
  readonly nodes = new Map<string, TopologyNode>();
  readonly out = new Map<string, Edge[]>();
  readonly in = new Map<string, Edge[]>();
  /** Pod name (ns/name) → the workload that owns it. */
  readonly podOwner = new Map<string, ComponentRef>();
  /** External host → its node id (ServiceEntry, ExternalName Service or ExternalService). */
  readonly externalHosts = new Map<string, string>();

  constructor(readonly snapshot: ClusterSnapshot) {}

  add(ref: ComponentRef, extra: Partial<TopologyNode> = {}): string {
    const id = nodeId(ref);
    const prev = this.nodes.get(id);
    this.nodes.set(id, { ...prev, ref, ...extra });
    return id;
  }

  link(from: ComponentRef, to: ComponentRef, kind: EdgeKind, via: string): void {
    const a = this.add(from);
    const b = nodeId(to);
    if (!this.nodes.has(b)) this.add(to);
    if (a === b) return;
    const list = this.out.get(a) ?? [];
    if (list.some((e) => e.to === b && e.kind === kind)) return;
    const edge: Edge = { from: a, to: b, kind, via };
    list.push(edge);
    this.out.set(a, list);
    this.in.set(b, [...(this.in.get(b) ?? []), edge]);
  }

  has(ref: ComponentRef): boolean {
    return this.nodes.has(nodeId(ref));
  }

  outgoing(id: string): Edge[] {
    return this.out.get(id) ?? [];
  }

  incoming(id: string): Edge[] {
    return this.in.get(id) ?? [];
  }

  /** The workload a pod belongs to (through its ReplicaSet/Job), or the pod itself when it has no owner. */
  workloadOf(namespace: string, pod: string): ComponentRef | undefined {
    return this.podOwner.get(`${namespace}/${pod}`);
  }

  /** A Service, workload or other object by kind and name. */
  find(kind: string, namespace: string | undefined, name: string): TopologyNode | undefined {
    return this.nodes.get(nodeId({ kind, ...(namespace ? { namespace } : {}), name }));
  }
}

function matches(selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean {
  if (!selector || Object.keys(selector).length === 0) return false;
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

/** A LabelSelector (matchLabels + matchExpressions In/NotIn/Exists/DoesNotExist) against labels. */
export function selectorMatches(selector: V1LabelSelector | undefined, labels: Record<string, string> | undefined): boolean {
  if (!selector) return false;
  const l = labels ?? {};
  if (selector.matchLabels && !Object.entries(selector.matchLabels).every(([k, v]) => l[k] === v)) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = e.key in l;
    if (e.operator === 'In' && !(has && (e.values ?? []).includes(l[e.key]!))) return false;
    if (e.operator === 'NotIn' && has && (e.values ?? []).includes(l[e.key]!)) return false;
    if (e.operator === 'Exists' && !has) return false;
    if (e.operator === 'DoesNotExist' && has) return false;
  }
  return true;
}

interface WorkloadLike {
  kind: string;
  metadata?: { name?: string; namespace?: string; uid?: string; labels?: Record<string, string> };
  spec?: { template?: V1PodTemplateSpec; selector?: V1LabelSelector; jobTemplate?: { spec?: { template?: V1PodTemplateSpec } } };
}

function containersOf(template: V1PodTemplateSpec | undefined): V1Container[] {
  return [...(template?.spec?.containers ?? []), ...(template?.spec?.initContainers ?? [])];
}

/** Build the graph. `catalogDeps` adds the catalog's dependsOn (by service name), as `calls` edges. */
export function buildTopology(snapshot: ClusterSnapshot, opts: { catalogDeps?: { from: ComponentRef; toName: string; toNamespace?: string }[] } = {}): Topology {
  const t = new Topology(snapshot);
  const services = snapshot.services;
  const serviceRef = (ns: string, name: string): ComponentRef => ({ kind: 'Service', namespace: ns, name });

  for (const n of snapshot.namespaces) t.add({ kind: 'Namespace', name: n.metadata?.name ?? '?' });
  for (const n of snapshot.nodes) t.add({ kind: 'Node', name: n.metadata?.name ?? '?' });
  for (const s of services) t.add(serviceRef(s.metadata?.namespace ?? '', s.metadata?.name ?? '?'));

  // ---- workloads, their pods (owner chains) and what their pod specs use
  const workloads: WorkloadLike[] = [
    ...snapshot.deployments.map((d) => ({ ...d, kind: 'Deployment' })),
    ...snapshot.statefulSets.map((d) => ({ ...d, kind: 'StatefulSet' })),
    ...snapshot.daemonSets.map((d) => ({ ...d, kind: 'DaemonSet' })),
    ...snapshot.cronJobs.map((c) => ({ ...c, kind: 'CronJob', spec: { template: c.spec?.jobTemplate?.spec?.template } })),
    ...snapshot.jobs.filter((j) => !(j.metadata?.ownerReferences ?? []).some((o) => o.kind === 'CronJob')).map((j) => ({ ...j, kind: 'Job' })),
    ...(snapshot.custom['Rollout'] ?? []).map((r) => ({ ...(r as unknown as WorkloadLike), kind: 'Rollout' })),
  ];
  const rsOwner = new Map<string, ComponentRef>();
  for (const rs of snapshot.replicaSets) {
    const owner = rs.metadata?.ownerReferences?.find((o) => o.kind === 'Deployment' || o.kind === 'Rollout');
    if (owner) rsOwner.set(`${rs.metadata?.namespace}/${rs.metadata?.name}`, { kind: owner.kind, namespace: rs.metadata?.namespace, name: owner.name });
  }
  const jobOwner = new Map<string, ComponentRef>();
  for (const j of snapshot.jobs) {
    const owner = j.metadata?.ownerReferences?.find((o) => o.kind === 'CronJob');
    const ns = j.metadata?.namespace;
    jobOwner.set(`${ns}/${j.metadata?.name}`, owner ? { kind: 'CronJob', namespace: ns, name: owner.name } : { kind: 'Job', namespace: ns, name: j.metadata?.name ?? '?' });
    if (owner) t.link({ kind: 'CronJob', namespace: ns, name: owner.name }, { kind: 'Job', namespace: ns, name: j.metadata?.name ?? '?' }, 'owns', 'job of the cronjob');
  }
  const podsBy = new Map<string, V1Pod[]>();
  for (const p of snapshot.pods) {
    const ns = p.metadata?.namespace ?? '';
    const ref = ownerOfPod(p, rsOwner, jobOwner);
    if (!ref) continue;
    t.podOwner.set(`${ns}/${p.metadata?.name}`, ref);
    const key = nodeId(ref);
    podsBy.set(key, [...(podsBy.get(key) ?? []), p]);
  }

  const cmHosts = new Map(snapshot.configMaps.map((c) => [`${c.metadata.namespace}/${c.metadata.name}`, c.hosts]));
  const cmTopics = new Map(snapshot.configMaps.filter((c) => c.topics?.length).map((c) => [`${c.metadata.namespace}/${c.metadata.name}`, c.topics!]));
  const kafkaTopics = new Map<string, ComponentRef>(
    (snapshot.custom['KafkaTopic'] ?? []).map((k) => [String(k.spec?.['topicName'] ?? k.metadata.name ?? ''), { kind: 'KafkaTopic', namespace: k.metadata.namespace, name: k.metadata.name ?? '?' }]),
  );
  for (const w of workloads) {
    const ns = w.metadata?.namespace ?? '';
    const ref: ComponentRef = { kind: w.kind, namespace: ns, name: w.metadata?.name ?? '?' };
    const pods = podsBy.get(nodeId(ref)) ?? [];
    t.add(ref, { pods: pods.map((p) => p.metadata?.name ?? '?') });
    const template = w.spec?.template;
    const podLabels = template?.metadata?.labels;

    // Services that select the workload's pods.
    for (const s of services) {
      if (s.metadata?.namespace !== ns || s.spec?.type === 'ExternalName') continue;
      if (matches(s.spec?.selector, podLabels) || pods.some((p) => matches(s.spec?.selector, p.metadata?.labels)))
        t.link(serviceRef(ns, s.metadata!.name!), ref, 'selects', `selector ${Object.entries(s.spec!.selector!).map(([k, v]) => `${k}=${v}`).join(',')}`);
    }
    // Config it reads, volumes it mounts.
    for (const c of containersOf(template)) {
      for (const e of c.env ?? []) {
        if (e.valueFrom?.configMapKeyRef?.name) t.link(ref, { kind: 'ConfigMap', namespace: ns, name: e.valueFrom.configMapKeyRef.name }, 'reads', `env ${e.name}`);
        if (e.valueFrom?.secretKeyRef?.name) t.link(ref, { kind: 'Secret', namespace: ns, name: e.valueFrom.secretKeyRef.name }, 'reads', `env ${e.name}`);
      }
      for (const e of c.envFrom ?? []) {
        if (e.configMapRef?.name) t.link(ref, { kind: 'ConfigMap', namespace: ns, name: e.configMapRef.name }, 'reads', 'envFrom');
        if (e.secretRef?.name) t.link(ref, { kind: 'Secret', namespace: ns, name: e.secretRef.name }, 'reads', 'envFrom');
      }
      for (const a of configMapFlags(c)) t.link(ref, { kind: 'ConfigMap', namespace: ns, name: a.name }, 'reads', `arg ${a.flag}`);
    }
    for (const v of template?.spec?.volumes ?? []) {
      if (v.configMap?.name) t.link(ref, { kind: 'ConfigMap', namespace: ns, name: v.configMap.name }, 'reads', `volume ${v.name}`);
      if (v.secret?.secretName) t.link(ref, { kind: 'Secret', namespace: ns, name: v.secret.secretName }, 'reads', `volume ${v.name}`);
      for (const src of v.projected?.sources ?? []) {
        if (src.configMap?.name) t.link(ref, { kind: 'ConfigMap', namespace: ns, name: src.configMap.name }, 'reads', `volume ${v.name}`);
        if (src.secret?.name) t.link(ref, { kind: 'Secret', namespace: ns, name: src.secret.name }, 'reads', `volume ${v.name}`);
      }
      if (v.persistentVolumeClaim?.claimName) t.link(ref, { kind: 'PersistentVolumeClaim', namespace: ns, name: v.persistentVolumeClaim.claimName }, 'mounts', `volume ${v.name}`);
    }
    if (w.kind === 'StatefulSet') {
      const claims = (w as { spec?: { volumeClaimTemplates?: { metadata?: { name?: string } }[] } }).spec?.volumeClaimTemplates ?? [];
      for (const claim of claims) {
        for (const p of pods) t.link(ref, { kind: 'PersistentVolumeClaim', namespace: ns, name: `${claim.metadata?.name}-${p.metadata?.name}` }, 'mounts', `volumeClaimTemplate ${claim.metadata?.name}`);
      }
    }
    for (const p of pods) if (p.spec?.nodeName) t.link(ref, { kind: 'Node', name: p.spec.nodeName }, 'runs-on', `pod ${p.metadata?.name}`);
    // Every pod resolves names through the cluster DNS, unless its dnsPolicy says otherwise.
    if (template?.spec?.dnsPolicy !== 'None' && template?.spec?.dnsPolicy !== 'Default') t.link(ref, serviceRef('kube-system', 'kube-dns'), 'resolves-via', 'cluster DNS');

    // Whom it calls: host names in env values, args, and the ConfigMaps it reads.
    const hosts: { ref: HostRef; via: string }[] = [];
    for (const c of containersOf(template)) {
      for (const e of c.env ?? []) if (e.value) for (const h of settingHostRefs(e.name, e.value)) hosts.push({ ref: h, via: `env ${e.name}` });
      for (const a of [...(c.command ?? []), ...(c.args ?? [])]) for (const h of hostRefs(a)) hosts.push({ ref: h, via: `args of ${c.name}` });
    }
    for (const e of t.outgoing(nodeId(ref)).filter((x) => x.kind === 'reads' && x.to.startsWith('ConfigMap/'))) {
      const cm = refOfId(e.to);
      for (const h of cmHosts.get(`${cm.namespace}/${cm.name}`) ?? []) hosts.push({ ref: { host: h.split(':')[0]!, ...(h.includes(':') ? { port: Number(h.split(':')[1]) } : {}) }, via: `configmap ${cm.name}` });
    }
    for (const h of hosts) linkHost(t, ref, ns, h.ref, h.via);

    // The Kafka topics it consumes or produces: a topic name in its env values, args or ConfigMaps.
    const values = containersOf(template).flatMap((c) => [...(c.env ?? []).map((e) => e.value ?? ''), ...(c.command ?? []), ...(c.args ?? [])]);
    for (const [topic, obj] of kafkaTopics) {
      const cm = t.outgoing(nodeId(ref)).find((e) => e.kind === 'reads' && e.to.startsWith('ConfigMap/') && (cmTopics.get(e.to.slice('ConfigMap/'.length)) ?? []).includes(topic));
      const via = values.some((v) => mentionsName(v, topic)) ? `topic ${topic} in its env/args` : cm ? `topic ${topic} in configmap ${refOfId(cm.to).name}` : undefined;
      if (via) t.link(ref, obj, 'consumes', via);
    }
  }

  // ---- Ingress → Service, TLS
  for (const ing of snapshot.ingresses) {
    const ns = ing.metadata?.namespace ?? '';
    const ref: ComponentRef = { kind: 'Ingress', namespace: ns, name: ing.metadata?.name ?? '?' };
    t.add(ref);
    const backend = ing.spec?.defaultBackend?.service?.name;
    if (backend) t.link(ref, serviceRef(ns, backend), 'routes', 'default backend');
    for (const rule of ing.spec?.rules ?? []) {
      for (const p of rule.http?.paths ?? []) {
        const svc = p.backend?.service?.name;
        if (svc) t.link(ref, serviceRef(ns, svc), 'routes', `rule ${rule.host ?? '*'}${p.path ?? '/'}`);
      }
    }
    for (const tls of ing.spec?.tls ?? []) if (tls.secretName) t.link(ref, { kind: 'Secret', namespace: ns, name: tls.secretName }, 'serves-tls', `tls ${(tls.hosts ?? []).join(',')}`);
    const cls = ing.spec?.ingressClassName ?? ing.metadata?.annotations?.['kubernetes.io/ingress.class'];
    for (const c of ingressControllers(snapshot, cls)) t.link(ref, c, 'served-by', `ingress class ${cls ?? '(default)'}`);
  }
  // ---- Gateway API routes → Services (backendRefs of every rule)
  for (const route of gatewayRoutes(snapshot)) {
    const ns = route.metadata.namespace ?? '';
    const ref: ComponentRef = { kind: route.kind, namespace: ns, name: route.metadata.name ?? '?' };
    t.add(ref);
    for (const b of routeBackends(route)) t.link(ref, serviceRef(b.namespace, b.name), 'routes', `rule ${b.rule}${b.path ? ` ${b.path}` : ''}`);
  }
  for (const c of snapshot.custom['Certificate'] ?? []) {
    const ns = c.metadata.namespace;
    const secret = (c.spec?.['secretName'] as string | undefined) ?? undefined;
    if (secret) t.link({ kind: 'Secret', namespace: ns, name: secret }, { kind: 'Certificate', namespace: ns, name: c.metadata.name ?? '?' }, 'serves-tls', 'cert-manager Certificate');
  }

  // ---- ExternalName Services and ServiceEntries name external hosts
  for (const s of services) {
    if (s.spec?.type === 'ExternalName' && s.spec.externalName) {
      const ns = s.metadata?.namespace ?? '';
      const ext = { kind: 'ExternalService', name: s.spec.externalName.toLowerCase() };
      t.link(serviceRef(ns, s.metadata!.name!), ext, 'calls', `externalName ${s.spec.externalName}`);
      t.externalHosts.set(ext.name, nodeId(serviceRef(ns, s.metadata!.name!)));
    }
  }
  for (const se of snapshot.custom['ServiceEntry'] ?? []) {
    const ref: ComponentRef = { kind: 'ServiceEntry', namespace: se.metadata.namespace, name: se.metadata.name ?? '?' };
    t.add(ref);
    for (const h of (se.spec?.['hosts'] as string[] | undefined) ?? []) t.externalHosts.set(h.toLowerCase(), nodeId(ref));
  }
  // Host edges to external names are re-pointed at their ServiceEntry when one exists.
  for (const [id, edges] of t.out) {
    for (const e of edges) {
      if (!e.to.startsWith('ExternalService/')) continue;
      const host = refOfId(e.to).name;
      const entry = [...t.externalHosts.entries()].find(([h]) => h === host || (h.startsWith('*.') && host.endsWith(h.slice(1))))?.[1];
      if (entry && entry !== id) t.link(refOfId(e.to), refOfId(entry), 'configured-by', `ServiceEntry for ${host}`);
    }
  }

  // ---- Istio routing and traffic policy
  for (const kind of ['VirtualService', 'DestinationRule', 'PeerAuthentication', 'AuthorizationPolicy', 'Sidecar']) {
    for (const o of snapshot.custom[kind] ?? []) linkMeshObject(t, o);
  }

  // ---- HPAs, NetworkPolicies, chaos, quotas, webhooks, storage
  for (const h of snapshot.hpas) {
    const ns = h.metadata?.namespace ?? '';
    const target = h.spec?.scaleTargetRef;
    if (target?.name) t.link({ kind: target.kind ?? 'Deployment', namespace: ns, name: target.name }, { kind: 'HorizontalPodAutoscaler', namespace: ns, name: h.metadata?.name ?? '?' }, 'scaled-by', 'scaleTargetRef');
  }
  // An HPA reads its metrics through an aggregated API; the APIService routes to the Service behind it
  // (prometheus-adapter, KEDA's metrics server, metrics-server). When that backend is gone the HPA freezes.
  for (const a of snapshot.apiServices) {
    const svc = a.spec?.service;
    if (svc?.name) t.link({ kind: 'APIService', name: a.metadata?.name ?? '?' }, { kind: 'Service', namespace: svc.namespace, name: svc.name }, 'routes', `APIService ${a.metadata?.name}`);
  }
  for (const h of snapshot.hpas) {
    const ns = h.metadata?.namespace ?? '';
    const groups = new Set<string>((h.spec?.metrics ?? []).map((m) => (m.type === 'Pods' || m.type === 'Object' ? 'custom.metrics.k8s.io' : m.type === 'External' ? 'external.metrics.k8s.io' : 'metrics.k8s.io')));
    for (const a of snapshot.apiServices) {
      if (a.spec?.group && groups.has(a.spec.group) && a.spec.service?.name) t.link({ kind: 'HorizontalPodAutoscaler', namespace: ns, name: h.metadata?.name ?? '?' }, { kind: 'APIService', name: a.metadata?.name ?? '?' }, 'metrics-from', `${a.spec.group} metrics`);
    }
  }
  for (const so of snapshot.custom['ScaledObject'] ?? []) {
    const target = so.spec?.['scaleTargetRef'] as { name?: string; kind?: string } | undefined;
    if (target?.name) t.link({ kind: target.kind ?? 'Deployment', namespace: so.metadata.namespace, name: target.name }, { kind: 'ScaledObject', namespace: so.metadata.namespace, name: so.metadata.name ?? '?' }, 'scaled-by', 'KEDA scaleTargetRef');
  }
  const workloadRefs = [...t.nodes.values()].map((n) => n.ref).filter((r) => WORKLOAD_KINDS.has(r.kind));
  const labelsOf = (r: ComponentRef): Record<string, string> | undefined => {
    const w = workloads.find((x) => x.kind === r.kind && x.metadata?.namespace === r.namespace && x.metadata?.name === r.name);
    return w?.spec?.template?.metadata?.labels;
  };
  for (const np of snapshot.networkPolicies) {
    const ns = np.metadata?.namespace ?? '';
    for (const r of workloadRefs.filter((w) => w.namespace === ns)) {
      const sel = np.spec?.podSelector;
      const all = !sel?.matchLabels && !sel?.matchExpressions?.length;
      if (all || selectorMatches(sel, labelsOf(r))) t.link(r, { kind: 'NetworkPolicy', namespace: ns, name: np.metadata?.name ?? '?' }, 'isolated-by', all ? 'selects every pod of the namespace' : 'podSelector');
    }
  }
  for (const [kind, objects] of Object.entries(snapshot.custom)) {
    if (!/Chaos$|^ChaosEngine$/.test(kind)) continue;
    for (const o of objects) for (const r of chaosTargets(o, workloadRefs, labelsOf)) t.link(r, { kind, namespace: o.metadata.namespace, name: o.metadata.name ?? '?' }, 'disrupted-by', `${kind} selector`);
  }
  for (const q of snapshot.resourceQuotas) for (const r of workloadRefs.filter((w) => w.namespace === q.metadata?.namespace)) t.link(r, { kind: 'ResourceQuota', namespace: q.metadata?.namespace, name: q.metadata?.name ?? '?' }, 'limited-by', 'namespace quota');
  for (const l of snapshot.limitRanges) for (const r of workloadRefs.filter((w) => w.namespace === l.metadata?.namespace)) t.link(r, { kind: 'LimitRange', namespace: l.metadata?.namespace, name: l.metadata?.name ?? '?' }, 'limited-by', 'namespace limit range');
  for (const pvc of snapshot.pvcs) {
    const ref: ComponentRef = { kind: 'PersistentVolumeClaim', namespace: pvc.metadata?.namespace, name: pvc.metadata?.name ?? '?' };
    if (pvc.spec?.storageClassName) t.link(ref, { kind: 'StorageClass', name: pvc.spec.storageClassName }, 'mounts', 'storageClassName');
  }

  // ---- the catalog's dependencies
  for (const d of opts.catalogDeps ?? []) {
    const target = services.find((s) => s.metadata?.name === d.toName && (!d.toNamespace || s.metadata?.namespace === d.toNamespace));
    const ns = target?.metadata?.namespace ?? d.toNamespace ?? d.from.namespace ?? '';
    t.link(d.from, target ? serviceRef(ns, d.toName) : { kind: 'Service', namespace: ns, name: d.toName }, 'calls', 'service catalog dependsOn');
  }
  return t;
}

function ownerOfPod(p: V1Pod, rsOwner: Map<string, ComponentRef>, jobOwner: Map<string, ComponentRef>): ComponentRef | undefined {
  const ns = p.metadata?.namespace ?? '';
  const owner = p.metadata?.ownerReferences?.find((o) => o.controller) ?? p.metadata?.ownerReferences?.[0];
  if (!owner) return undefined;
  if (owner.kind === 'ReplicaSet') return rsOwner.get(`${ns}/${owner.name}`) ?? { kind: 'Deployment', namespace: ns, name: owner.name.replace(/-[a-z0-9]{6,10}$/, '') };
  if (owner.kind === 'Job') return jobOwner.get(`${ns}/${owner.name}`) ?? { kind: 'Job', namespace: ns, name: owner.name };
  if (owner.kind === 'StatefulSet' || owner.kind === 'DaemonSet') return { kind: owner.kind, namespace: ns, name: owner.name };
  return undefined;
}

/** An Ingress rule host (`*.example.com` wildcards match one label) against a host name. */
function ingressHostMatches(pattern: string, host: string): boolean {
  const p = pattern.toLowerCase();
  if (p.startsWith('*.')) return host.endsWith(p.slice(1)) && !host.slice(0, -(p.length - 1)).includes('.');
  return p === host;
}

/** A host a workload names → the Service (or external host) it means. */
function linkHost(t: Topology, from: ComponentRef, ns: string, h: HostRef, via: string): void {
  const svc = serviceOfHost(h.host, ns);
  const existing = svc && t.snapshot.services.find((s) => s.metadata?.namespace === svc.namespace && s.metadata?.name === svc.name);
  if (existing) {
    t.link(from, { kind: 'Service', namespace: svc!.namespace, name: svc!.name }, 'calls', via);
    return;
  }
  // A cluster name of a Service that does not exist (deleted, mistyped): keep the edge, the Service is missing.
  if (svc && /\.svc$|\.svc\.cluster\.local$/.test(h.host)) {
    t.link(from, { kind: 'Service', namespace: svc.namespace, name: svc.name }, 'calls', `${via} (no such Service)`);
    return;
  }
  if (h.host.includes('.') && !/^\d+\.\d+\.\d+\.\d+$/.test(h.host) && !svc?.pod) {
    // The cluster's own public name (`https://login.example.com/jwks`): the call goes out and back in
    // through the Ingress that serves it, and fails with it.
    const ingress = t.snapshot.ingresses.find((i) => (i.spec?.rules ?? []).some((r) => r.host && ingressHostMatches(r.host, h.host)));
    if (ingress) {
      t.link(from, { kind: 'Ingress', namespace: ingress.metadata?.namespace, name: ingress.metadata?.name ?? '?' }, 'calls', `${via} (served by Ingress ${ingress.metadata?.name})`);
      return;
    }
    const routes = gatewayRoutes(t.snapshot).filter((r) => routeHostnames(r).some((x) => ingressHostMatches(x, h.host)));
    if (routes.length) {
      for (const r of routes) t.link(from, { kind: r.kind, namespace: r.metadata.namespace, name: r.metadata.name ?? '?' }, 'calls', `${via} (served by ${r.kind} ${r.metadata.name})`);
      return;
    }
    if (svc && t.snapshot.namespaces.some((n) => n.metadata?.name === svc.namespace)) {
      t.link(from, { kind: 'Service', namespace: svc.namespace, name: svc.name }, 'calls', `${via} (no such Service)`);
      return;
    }
    t.link(from, { kind: 'ExternalService', name: h.host }, 'calls', via);
    return;
  }
  // A bare name under an address setting that matches no Service here: a missing Service of this namespace.
  if (!h.host.includes('.') && /(^|_)(HOST|ADDR|ADDRESS|SERVICE|SVC|URL|ENDPOINT)/i.test(via)) t.link(from, { kind: 'Service', namespace: ns, name: h.host }, 'calls', `${via} (no such Service)`);
}

/** The Gateway API routes of the snapshot (HTTPRoute, GRPCRoute). */
export function gatewayRoutes(snapshot: ClusterSnapshot): CustomObject[] {
  return [...(snapshot.custom['HTTPRoute'] ?? []), ...(snapshot.custom['GRPCRoute'] ?? [])];
}

export function routeHostnames(route: CustomObject): string[] {
  return ((route.spec?.['hostnames'] as string[] | undefined) ?? []).map((h) => h.toLowerCase());
}

/** One backendRef of a Gateway API route rule: a Service (the default kind) with its port. */
export interface RouteBackend {
  /** Index of the rule in `spec.rules` (Envoy Gateway's `httproute/<ns>/<name>/rule/<i>`). */
  rule: number;
  /** The rule's first path match (`/api/orders`), or the gRPC method's service. */
  path?: string;
  namespace: string;
  name: string;
  port?: number;
}

interface RouteRuleSpec {
  matches?: { path?: { value?: string }; method?: { service?: string } }[];
  backendRefs?: { group?: string; kind?: string; name?: string; namespace?: string; port?: number }[];
}

export function routeBackends(route: CustomObject): RouteBackend[] {
  const ns = route.metadata.namespace ?? '';
  const rules = (route.spec?.['rules'] as RouteRuleSpec[] | undefined) ?? [];
  return rules.flatMap((r, i) => {
    const m = r.matches?.[0];
    const path = m?.path?.value ?? m?.method?.service;
    return (r.backendRefs ?? [])
      .filter((b) => b.name && (b.kind ?? 'Service') === 'Service' && !b.group)
      .map((b) => ({ rule: i, ...(path ? { path } : {}), namespace: b.namespace ?? ns, name: b.name!, ...(b.port !== undefined ? { port: b.port } : {}) }));
  });
}

function linkMeshObject(t: Topology, o: CustomObject): void {
  const ns = o.metadata.namespace ?? '';
  const ref: ComponentRef = { kind: o.kind, namespace: ns, name: o.metadata.name ?? '?' };
  t.add(ref);
  const spec = o.spec ?? {};
  const hostNames: string[] = [
    ...((spec['hosts'] as string[] | undefined) ?? []),
    ...(typeof spec['host'] === 'string' ? [spec['host'] as string] : []),
  ];
  // Routes of a VirtualService name destination hosts.
  const routes = [...((spec['http'] as unknown[] | undefined) ?? []), ...((spec['tcp'] as unknown[] | undefined) ?? []), ...((spec['tls'] as unknown[] | undefined) ?? [])];
  const destinations = routes.flatMap((r) => ((r as { route?: { destination?: { host?: string } }[] }).route ?? []).map((x) => x.destination?.host).filter((h): h is string => !!h));
  for (const h of hostNames) {
    const svc = serviceOfHost(h, ns);
    if (svc) t.link({ kind: 'Service', namespace: svc.namespace, name: svc.name }, ref, 'configured-by', `${o.kind} host ${h}`);
    else t.link({ kind: 'ExternalService', name: h.toLowerCase() }, ref, 'configured-by', `${o.kind} host ${h}`);
  }
  for (const h of destinations) {
    const svc = serviceOfHost(h, ns);
    if (svc) t.link(ref, { kind: 'Service', namespace: svc.namespace, name: svc.name }, 'routes', `route to ${h}`);
  }
  // Workload-selecting policies (PeerAuthentication, AuthorizationPolicy, Sidecar) apply to pods.
  const selector = (spec['selector'] as { matchLabels?: Record<string, string> } | undefined) ?? (spec['workloadSelector'] as { labels?: Record<string, string> } | undefined);
  const labels = (selector as { matchLabels?: Record<string, string> })?.matchLabels ?? (selector as { labels?: Record<string, string> })?.labels;
  if (labels) {
    for (const w of t.snapshot.deployments.filter((d) => d.metadata?.namespace === ns && matches(labels, d.spec?.template?.metadata?.labels))) {
      t.link({ kind: 'Deployment', namespace: ns, name: w.metadata?.name ?? '?' }, ref, 'configured-by', `${o.kind} selector`);
    }
  }
}

/** The workloads a chaos experiment selects (Chaos Mesh `selector`, Litmus `appinfo`). */
function chaosTargets(o: CustomObject, workloads: ComponentRef[], labelsOf: (r: ComponentRef) => Record<string, string> | undefined): ComponentRef[] {
  const spec = o.spec ?? {};
  const sel = (spec['selector'] as { namespaces?: string[]; labelSelectors?: Record<string, string>; pods?: Record<string, string[]> } | undefined) ?? undefined;
  const app = spec['appinfo'] as { appns?: string; applabel?: string; appkind?: string } | undefined;
  const namespaces = sel?.namespaces ?? (app?.appns ? [app.appns] : [o.metadata.namespace ?? '']);
  let labels = sel?.labelSelectors;
  if (!labels && app?.applabel) {
    const [k, v] = app.applabel.split('=');
    if (k && v) labels = { [k]: v };
  }
  return workloads.filter((w) => namespaces.includes(w.namespace ?? '') && (labels ? matches(labels, labelsOf(w)) : !!sel?.pods?.[w.namespace ?? '']?.some((p) => p.startsWith(w.name))));
}

/**
 * The controllers that serve an Ingress of class `cls`: workloads whose flags claim it (`--ingress-class=nginx`,
 * traefik's `--providers.kubernetesingress.ingressclass=…`), else, for the nginx class or no class, the
 * ingress-nginx controller (its `/nginx-ingress-controller` entry point) when the cluster runs exactly one.
 */
export function ingressControllers(snapshot: ClusterSnapshot, cls: string | undefined): ComponentRef[] {
  const workloads = [...snapshot.deployments.map((d) => ({ w: d, kind: 'Deployment' })), ...snapshot.daemonSets.map((d) => ({ w: d, kind: 'DaemonSet' }))];
  const flags = (w: (typeof workloads)[number]['w']) => (w.spec?.template?.spec?.containers ?? []).flatMap((c) => [...(c.command ?? []), ...(c.args ?? [])]);
  const ref = (x: (typeof workloads)[number]): ComponentRef => ({ kind: x.kind, namespace: x.w.metadata?.namespace ?? '', name: x.w.metadata?.name ?? '?' });
  if (cls) {
    const claimed = workloads.filter((x) => flags(x.w).some((a) => a === `--ingress-class=${cls}` || a === `--providers.kubernetesingress.ingressclass=${cls}`));
    if (claimed.length) return claimed.map(ref);
  }
  if (cls && cls !== 'nginx') return [];
  const nginx = workloads.filter((x) => flags(x.w).some((a) => a.endsWith('/nginx-ingress-controller')));
  return nginx.length === 1 ? nginx.map(ref) : [];
}

/**
 * What an alert is about, as objects of the cluster: the subjects an investigation starts from. An
 * alert rarely names a workload: it names a URL (a blackbox probe), a host or an Ingress (an SLO on the
 * front door), a Service, a namespace, a node, a PVC, a Job or CronJob, an HPA, a certificate, a
 * queue's consumer group. Each of those is resolved to the objects behind it; labels win over keyless
 * values, which win over names found in the text.
 *
 * A grouped post's alerts are resolved one by one (each with the labels it shares with the others),
 * so one incident can have several subjects.
 */
import type { Alert } from '../alerts/types.js';
import { extractTargetHints } from '../alerts/parse/targets.js';
import type { ComponentRef } from '../evidence/types.js';
import { hostRefs } from './references.js';
import { gatewayRoutes, nodeId, routeHostnames, WORKLOAD_KINDS, type Topology } from './graph.js';

export interface Subject {
  ref: ComponentRef;
  /** How it was found, for the board: `label deployment=checkout`, `probe URL https://shop.example.com/`. */
  how: string;
}

const NAMESPACE_LABELS = ['namespace', 'kubernetes_namespace', 'exported_namespace', 'k8s_namespace_name', 'kube_namespace', 'destination_workload_namespace', 'destination_service_namespace', 'dst_namespace', 'target_namespace', 'service_namespace'];
const WORKLOAD_LABELS: [string, string][] = [
  ['deployment', 'Deployment'],
  ['kube_deployment', 'Deployment'],
  ['k8s_deployment_name', 'Deployment'],
  ['dst_deployment', 'Deployment'],
  ['statefulset', 'StatefulSet'],
  ['k8s_statefulset_name', 'StatefulSet'],
  ['dst_statefulset', 'StatefulSet'],
  ['daemonset', 'DaemonSet'],
  ['k8s_daemonset_name', 'DaemonSet'],
  ['cronjob', 'CronJob'],
  ['k8s_cronjob_name', 'CronJob'],
  ['job_name', 'Job'],
  ['k8s_job_name', 'Job'],
  ['rollout', 'Rollout'],
];
const POD_LABELS = ['pod', 'k8s_pod_name', 'pod_name', 'exported_pod', 'kubernetes_pod_name'];
const NAME_LABELS = ['destination_workload', 'workload', 'service', 'destination_service_name', 'destination_service', 'service_name', 'exported_service', 'kube_service', 'app', 'app_kubernetes_io_name', 'application', 'k8s_app', 'container', 'server', 'upstream', 'backend', 'job'];
const SLO_SERVICE_LABELS = ['sloth_service', 'slo_service'];
const NODE_LABELS = ['node', 'kubernetes_node', 'k8s_node_name', 'nodename', 'hostname'];
const URL_LABELS = ['instance', 'url', 'target', 'probe_url', 'endpoint', 'host', 'server_address', 'http_host'];
const QUEUE_LABELS = ['consumergroup', 'consumer_group', 'group', 'topic', 'queue', 'stream_name', 'consumer_name', 'messaging_destination_name'];

/** Pod name → workload name, for pods that are no longer in the cluster (`checkout-7d9f8b6c5-x2x9z` → `checkout`). */
const POD_SUFFIX = /-[a-z0-9]{6,10}-[a-z0-9]{5}$|-[0-9]+$|-[a-z0-9]{5}$/;

export function resolveSubjects(alert: Alert, topology: Topology): Subject[] {
  const out = new Map<string, Subject>();
  const add = (ref: ComponentRef | undefined, how: string) => {
    if (!ref) return;
    const id = nodeId(ref);
    if (!out.has(id)) out.set(id, { ref, how });
  };
  const sets = alert.members?.length ? alert.members.map((m) => ({ ...alert.labels, ...m.labels })) : [alert.labels];
  for (const labels of sets) for (const s of fromLabels(labels, topology)) add(s.ref, s.how);
  if (out.size === 0 || [...out.values()].every((s) => s.ref.kind === 'Namespace')) {
    for (const s of fromValues(alert, topology)) add(s.ref, s.how);
  }
  if (out.size === 0 || [...out.values()].every((s) => s.ref.kind === 'Namespace')) {
    for (const s of fromText(alert, topology)) add(s.ref, s.how);
  }
  if (out.size === 0 || [...out.values()].every((s) => s.ref.kind === 'Namespace')) {
    const ns = [...out.values()].find((s) => s.ref.kind === 'Namespace')?.ref.name;
    for (const s of fromWords(alert, topology, ns)) add(s.ref, s.how);
  }
  // A namespace subject is only the whole story when nothing more precise was found in it.
  const precise = [...out.values()].filter((s) => s.ref.kind !== 'Namespace');
  const result = [...precise, ...[...out.values()].filter((s) => s.ref.kind === 'Namespace' && !precise.some((p) => p.ref.namespace === s.ref.name))];
  return result.slice(0, 12);
}

function fromLabels(labels: Record<string, string>, t: Topology): Subject[] {
  const out: Subject[] = [];
  const get = (k: string) => labels[k]?.trim();
  let ns = NAMESPACE_LABELS.map(get).find((v) => !!v && t.has({ kind: 'Namespace', name: v }));
  // Prometheus `job` is often `<namespace>/<service>`.
  const job = get('job');
  if (!ns && job?.includes('/')) {
    const [jns] = job.split('/');
    if (jns && t.has({ kind: 'Namespace', name: jns })) ns = jns;
  }

  for (const [label, kind] of WORKLOAD_LABELS) {
    const name = get(label);
    if (!name) continue;
    const found = findNamed(t, [kind], name, ns);
    if (found) out.push({ ref: kind === 'Job' ? ownerOfJob(t, found) : found, how: `label ${label}=${name}` });
  }
  for (const label of POD_LABELS) {
    const pod = get(label);
    if (!pod) continue;
    const owner = ns ? t.workloadOf(ns, pod) : [...t.podOwner.entries()].find(([k]) => k.endsWith(`/${pod}`))?.[1];
    const guessed = owner ?? findNamed(t, [...WORKLOAD_KINDS], pod.replace(POD_SUFFIX, ''), ns);
    if (guessed) out.push({ ref: guessed, how: `label ${label}=${pod}` });
  }
  const replicaset = get('replicaset');
  if (replicaset) {
    const found = findNamed(t, ['Deployment', 'Rollout'], replicaset.replace(/-[a-z0-9]{6,10}$/, ''), ns);
    if (found) out.push({ ref: found, how: `label replicaset=${replicaset}` });
  }
  const hpa = get('horizontalpodautoscaler') ?? get('hpa');
  if (hpa) {
    const found = findNamed(t, ['HorizontalPodAutoscaler'], hpa, ns);
    const target = found && t.outgoing(nodeId(found)).length === 0 ? t.incoming(nodeId(found)).find((e) => e.kind === 'scaled-by') : undefined;
    if (found) out.push({ ref: found, how: `label horizontalpodautoscaler=${hpa}` });
    if (target) out.push({ ref: refFromId(target.from), how: `target of HPA ${hpa}` });
  }
  const pvc = get('persistentvolumeclaim') ?? get('pvc');
  if (pvc) {
    const found = findNamed(t, ['PersistentVolumeClaim'], pvc, ns);
    if (found) out.push({ ref: found, how: `label persistentvolumeclaim=${pvc}` });
  }
  const ingress = get('ingress') ?? get('exported_ingress');
  if (ingress) {
    const found = findNamed(t, ['Ingress'], ingress, ns);
    if (found) out.push({ ref: found, how: `label ingress=${ingress}` });
  }
  for (const k of ['certificate', 'secret_name', 'secret']) {
    const v = get(k);
    if (!v) continue;
    const found = findNamed(t, k === 'certificate' ? ['Certificate', 'Secret'] : ['Secret', 'Certificate'], v, ns);
    if (found) out.push({ ref: found, how: `label ${k}=${v}` });
  }
  if (get('configmap')) {
    const found = findNamed(t, ['ConfigMap'], get('configmap')!, ns);
    if (found) out.push({ ref: found, how: `label configmap=${get('configmap')}` });
  }
  for (const label of NODE_LABELS) {
    const v = get(label);
    if (v && t.has({ kind: 'Node', name: v })) out.push({ ref: { kind: 'Node', name: v }, how: `label ${label}=${v}` });
  }
  // `instance` is a node, a URL or a scrape address.
  for (const label of URL_LABELS) {
    const v = get(label);
    if (!v) continue;
    const node = v.replace(/:\d+$/, '');
    if (t.has({ kind: 'Node', name: node })) {
      out.push({ ref: { kind: 'Node', name: node }, how: `label ${label}=${v}` });
      continue;
    }
    for (const h of hostRefs(v.includes('://') ? v : `//${v}`)) {
      for (const ref of byHost(t, h.host, ns)) out.push({ ref, how: `${label} ${v}` });
    }
    if (!v.includes('://') && !v.includes(':')) for (const ref of byHost(t, v.toLowerCase(), ns)) out.push({ ref, how: `label ${label}=${v}` });
  }
  for (const label of QUEUE_LABELS) {
    const v = get(label);
    if (!v) continue;
    for (const ref of consumersOf(t, v, ns)) out.push({ ref, how: `${label} ${v}` });
  }
  if (out.length === 0) {
    for (const label of NAME_LABELS) {
      let v = get(label);
      if (!v) continue;
      if (label === 'job' && v.includes('/')) v = v.split('/').pop()!;
      const found = findNamed(t, ['Service', ...WORKLOAD_KINDS], v, ns) ?? findNamed(t, ['Service', ...WORKLOAD_KINDS], v.replace(/-(svc|service)$/, ''), ns);
      if (found) {
        out.push({ ref: found, how: `label ${label}=${v}` });
        break;
      }
    }
  }
  // An SLO's service (Sloth's `sloth_service`, OpenSLO's and Pyrra's `service` on the burn rules) names
  // what users see: a workload or Service of that name, else its front door (an Ingress or route of
  // that name), else the namespace of that name.
  if (out.length === 0) {
    for (const label of SLO_SERVICE_LABELS) {
      const v = get(label);
      if (!v) continue;
      const found = findNamed(t, ['Service', ...WORKLOAD_KINDS], v, ns) ?? findNamed(t, ['Ingress', 'HTTPRoute', 'GRPCRoute'], v, ns);
      if (found) out.push({ ref: found, how: `label ${label}=${v}` });
      else if (!ns && t.has({ kind: 'Namespace', name: v })) out.push({ ref: { kind: 'Namespace', name: v }, how: `label ${label}=${v}` });
      if (out.length) break;
    }
  }
  if (out.length === 0 && ns) out.push({ ref: { kind: 'Namespace', name: ns }, how: `label namespace=${ns}` });
  return out;
}

/** Alertmanager's default title carries label values without keys: match them against the cluster. */
function fromValues(alert: Alert, t: Topology): Subject[] {
  const values = alert.labelValues.map((v) => v.trim()).filter(Boolean);
  // `(thumbnail.requests critical media media)`: the same namespace may come twice (namespace and vhost).
  const namespaces = [...new Set(values.filter((v) => t.has({ kind: 'Namespace', name: v })))];
  const ns = namespaces.length === 1 ? namespaces[0] : undefined;
  const out: Subject[] = [];
  for (const v of values) {
    if (namespaces.includes(v)) continue;
    if (/^https?:\/\//.test(v) || /^[a-z0-9.-]+\.[a-z]{2,}(:\d+)?(\/.*)?$/i.test(v)) {
      const before = out.length;
      for (const h of hostRefs(v.includes('://') ? v : `//${v}`)) for (const ref of byHost(t, h.host, ns)) out.push({ ref, how: `value ${v}` });
      // `thumbnail.requests` looks like a host name too: when no host matches, try it as a queue below.
      if (out.length > before || v.includes('://') || v.includes('/')) continue;
    }
    if (t.has({ kind: 'Node', name: v })) {
      out.push({ ref: { kind: 'Node', name: v }, how: `value ${v}` });
      continue;
    }
    const found =
      findNamed(t, [...WORKLOAD_KINDS], v, ns) ??
      findNamed(t, ['Service', 'Ingress', 'PersistentVolumeClaim', 'HorizontalPodAutoscaler', 'Certificate'], v, ns) ??
      (POD_SUFFIX.test(v) ? (ns ? t.workloadOf(ns, v) : undefined) ?? findNamed(t, [...WORKLOAD_KINDS], v.replace(POD_SUFFIX, ''), ns) : undefined);
    if (found) {
      out.push({ ref: found, how: `value ${v}` });
      continue;
    }
    // A queue, topic or consumer group (`thumbnail.requests`, `orders-events`): the workloads consuming it.
    if (/^[a-z0-9][a-z0-9_.-]*[._-][a-z0-9_.-]*[a-z0-9]$/i.test(v)) for (const ref of consumersOf(t, v, ns)) out.push({ ref, how: `value ${v} (its consumer)` });
  }
  if (out.length === 0 && ns) out.push({ ref: { kind: 'Namespace', name: ns }, how: `value ${ns}` });
  return out;
}

/** URLs, hosts, `svc.cluster.local` names and `kind/name` hints in the title, annotations and body. */
function fromText(alert: Alert, t: Topology): Subject[] {
  const text = [alert.title, ...Object.entries(alert.annotations).filter(([k]) => !TOOL_LINKS.has(k)).map(([, v]) => v), alert.text].join('\n');
  const out: Subject[] = [];
  // Links back to the alerting tool (the rule, a silence, a dashboard, the runbook) name the tool, not the target.
  const toolHosts = new Set([alert.link, ...[...TOOL_LINKS].map((k) => alert.annotations[k])].flatMap((v) => (v ? hostRefs(v).map((h) => h.host) : [])));
  for (const h of hostRefs(text)) {
    if (toolHosts.has(h.host)) continue;
    for (const ref of byHost(t, h.host, undefined)) out.push({ ref, how: `host ${h.host} in the alert text` });
  }
  const hints = extractTargetHints(text.slice(0, 2000));
  // `key=value` pairs in the body (a PagerDuty or Opsgenie field quoting the source alert's labels:
  // "service_name=frontend k8s_namespace_name=shop") are labels like the alert's own.
  for (const s of fromLabels(hints.labels, t)) out.push({ ref: s.ref, how: `${s.how.replace(/^label /, '')} in the alert text` });
  const ns = hints.labels['namespace'] && t.has({ kind: 'Namespace', name: hints.labels['namespace'] }) ? hints.labels['namespace'] : undefined;
  for (const [label, kind] of [['deployment', 'Deployment'], ['statefulset', 'StatefulSet'], ['daemonset', 'DaemonSet'], ['cronjob', 'CronJob'], ['service', 'Service'], ['node', 'Node'], ['persistentvolumeclaim', 'PersistentVolumeClaim'], ['ingress', 'Ingress']] as const) {
    const v = hints.labels[label];
    if (!v) continue;
    const found = kind === 'Node' ? (t.has({ kind: 'Node', name: v }) ? { kind: 'Node', name: v } : undefined) : findNamed(t, [kind], v, ns);
    if (found) out.push({ ref: found, how: `${label}/${v} in the alert text` });
  }
  for (const name of hints.names) {
    const found = findNamed(t, [...WORKLOAD_KINDS, 'Service'], name, ns);
    if (found) out.push({ ref: found, how: `${name} in the alert text` });
  }
  return out;
}

const TOOL_LINKS = new Set(['source', 'silence', 'dashboard', 'panel', 'runbook_url', 'generatorurl']);

/**
 * Names in the alert's words: the rule name split into words (`FrontendLatencyP95` → frontend latency
 * p95), the summary, the description, other label values (`team`, `slo`). A workload or Service whose
 * whole name appears there (`product-catalog` in "product catalog", "ProductCatalog") is a subject; the
 * rule name weighs most, longer names beat their prefixes.
 */
function fromWords(alert: Alert, t: Topology, ns: string | undefined): Subject[] {
  const sources: [string, number][] = [
    [alert.alertName, 3],
    [alert.labels['alertname'] ?? '', 3],
    [alert.annotations['summary'] ?? '', 2],
    [alert.annotations['title'] ?? '', 2],
    [alert.title.replace(/^\s*\[[^\]]*\]/, ''), 2],
    [alert.annotations['description'] ?? '', 1],
    [Object.entries(alert.labels).filter(([k]) => !['alertname', 'severity', 'namespace'].includes(k)).map(([, v]) => v).join(' '), 1],
  ];
  const tokenised = sources.map(([text, w]) => ({ tokens: words(text), w }));
  const scored = new Map<string, { ref: ComponentRef; score: number; how: string }>();
  for (const node of t.nodes.values()) {
    const r = node.ref;
    if (!(WORKLOAD_KINDS.has(r.kind) || r.kind === 'Service') || (ns && r.namespace !== ns)) continue;
    const parts = r.name.toLowerCase().split(/[-_.]/).filter(Boolean);
    if (parts.length === 0 || (parts.length === 1 && parts[0]!.length < 4)) continue;
    // `catalog-service` is "the catalog API" to the people who name alerts: the stem without a generic
    // suffix matches too, a little weaker than the whole name.
    const stem = parts.length > 1 && GENERIC_SUFFIX.has(parts[parts.length - 1]!) ? parts.slice(0, -1) : undefined;
    const stemOk = stem && (stem.length > 1 || stem[0]!.length >= 4);
    for (const { tokens, w } of tokenised) {
      const whole = containsRun(tokens, parts);
      if (!whole && !(stemOk && containsRun(tokens, stem!))) continue;
      const score = w * 10 + parts.length - (whole ? 0 : 1.5);
      const key = `${r.namespace}/${r.name}`;
      const cur = scored.get(key);
      // A workload and its Service share the name: keep the workload.
      if (!cur || score > cur.score || (score === cur.score && r.kind !== 'Service' && cur.ref.kind === 'Service')) scored.set(key, { ref: r, score, how: `"${r.name}" in the alert's words` });
    }
  }
  const ranked = [...scored.values()].sort((a, b) => b.score - a.score);
  const best = ranked[0]?.score;
  return ranked.filter((x) => x.score === best).slice(0, 3).map(({ ref, how }) => ({ ref, how }));
}

/** Name suffixes that say what a component is, not which one. */
const GENERIC_SUFFIX = new Set(['service', 'svc', 'api', 'server', 'app', 'backend', 'web', 'srv', 'deployment']);

/** Lower-case words of a text, CamelCase and snake_case split: `FrontendLatencyP95` → frontend, latency, p95. */
function words(text: string): string[] {
  return text
    .replace(/https?:\/\/\S+/g, ' ')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** `parts` appear consecutively in `tokens`, or joined as one token (`productcatalog`). */
function containsRun(tokens: string[], parts: string[]): boolean {
  const joined = parts.join('');
  if (tokens.includes(joined)) return true;
  for (let i = 0; i + parts.length <= tokens.length; i++) if (parts.every((p, j) => tokens[i + j] === p)) return true;
  return false;
}

/** The Ingresses serving a host, else a Service/ExternalName/ServiceEntry of that host name. */
export function byHost(t: Topology, host: string, ns: string | undefined): { kind: string; namespace?: string; name: string }[] {
  const h = host.toLowerCase();
  const ingresses = t.snapshot.ingresses.filter((i) => (i.spec?.rules ?? []).some((r) => r.host && hostMatches(r.host, h)) || (i.spec?.tls ?? []).some((x) => (x.hosts ?? []).some((th) => hostMatches(th, h))));
  if (ingresses.length) return ingresses.map((i) => ({ kind: 'Ingress', namespace: i.metadata?.namespace, name: i.metadata?.name ?? '?' }));
  const routes = gatewayRoutes(t.snapshot).filter((r) => routeHostnames(r).some((x) => hostMatches(x, h)));
  if (routes.length) return routes.map((r) => ({ kind: r.kind, namespace: r.metadata.namespace, name: r.metadata.name ?? '?' }));
  const gateways = (t.snapshot.custom['VirtualService'] ?? []).filter((v) => ((v.spec?.['hosts'] as string[] | undefined) ?? []).some((x) => hostMatches(x, h)));
  if (gateways.length) return gateways.map((v) => ({ kind: 'VirtualService', namespace: v.metadata.namespace, name: v.metadata.name ?? '?' }));
  const parts = h.replace(/\.cluster\.local$/, '').split('.');
  if (parts.length <= 3 && (parts.length < 3 || parts[2] === 'svc')) {
    const name = parts[0]!;
    const svcNs = parts[1] ?? ns;
    const svc = t.snapshot.services.find((s) => s.metadata?.name === name && (!svcNs || s.metadata?.namespace === svcNs));
    if (svc) return [{ kind: 'Service', namespace: svc.metadata?.namespace, name }];
  }
  const external = t.externalHosts.get(h);
  if (external) return [refFromId(external)];
  if (t.has({ kind: 'ExternalService', name: h })) return [{ kind: 'ExternalService', name: h }];
  return [];
}

function hostMatches(pattern: string, host: string): boolean {
  const p = pattern.toLowerCase();
  return p === host || (p.startsWith('*.') && host.endsWith(p.slice(1)));
}

/** Workloads whose config names a topic, queue or consumer group (env values and args), anywhere in the cluster. */
function consumersOf(t: Topology, name: string, ns: string | undefined): ComponentRef[] {
  const word = new RegExp(`(^|[^a-z0-9_.-])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^a-z0-9_-])`, 'i');
  const all = [
    ...t.snapshot.deployments.map((d) => ({ kind: 'Deployment', obj: d })),
    ...t.snapshot.statefulSets.map((d) => ({ kind: 'StatefulSet', obj: d })),
  ];
  // KEDA scales consumers on the queue itself: a trigger's queueName/topic/consumerGroup/stream names it.
  const scaled = new Set(
    (t.snapshot.custom['ScaledObject'] ?? [])
      .filter((so) => ((so.spec?.['triggers'] as { metadata?: Record<string, unknown> }[] | undefined) ?? []).some((tr) => Object.entries(tr.metadata ?? {}).some(([k, v]) => /queue|topic|group|stream|subscription/i.test(k) && typeof v === 'string' && v.toLowerCase() === name.toLowerCase())))
      .map((so) => `${so.metadata.namespace}/${(so.spec?.['scaleTargetRef'] as { name?: string } | undefined)?.name ?? ''}`),
  );
  const hits = all.filter(({ obj }) => {
    const values = (obj.spec?.template?.spec?.containers ?? []).flatMap((c) => [...(c.env ?? []).map((e) => e.value ?? ''), ...(c.args ?? [])]);
    return obj.metadata?.name === name || scaled.has(`${obj.metadata?.namespace}/${obj.metadata?.name}`) || values.some((v) => word.test(v));
  });
  // The namespace label of a queue alert is often the exporter's or the broker's: prefer consumers there, keep the rest.
  hits.sort((a, b) => Number(b.obj.metadata?.namespace === ns) - Number(a.obj.metadata?.namespace === ns));
  return hits.slice(0, 6).map(({ kind, obj }) => ({ kind, namespace: obj.metadata?.namespace, name: obj.metadata?.name ?? '?' }));
}

function findNamed(t: Topology, kinds: string[], name: string, ns: string | undefined): ComponentRef | undefined {
  const n = name.toLowerCase();
  for (const kind of kinds) {
    if (ns) {
      const hit = t.find(kind, ns, n);
      if (hit) return hit.ref;
    } else {
      for (const node of t.nodes.values()) if (node.ref.kind === kind && node.ref.name === n && node.ref.namespace) return node.ref;
    }
  }
  return undefined;
}

function ownerOfJob(t: Topology, job: ComponentRef): ComponentRef {
  const owner = t.incoming(nodeId(job)).find((e) => e.kind === 'owns');
  return owner ? refFromId(owner.from) : job;
}

function refFromId(id: string): ComponentRef {
  const [kind, namespace, ...name] = id.split('/');
  return { kind: kind!, ...(namespace ? { namespace } : {}), name: name.join('/') };
}

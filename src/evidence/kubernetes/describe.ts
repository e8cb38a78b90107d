/**
 * A `kubectl describe`-like summary of one object, as structured data: the spec that matters when
 * something is broken (images, resources, probes, env names), status, conditions, owner, recent
 * events and who last wrote which fields. Pure: the caller fetches the object and its events.
 * Env values are kept only when literal; the caller still passes the result through the Redactor.
 */
import type {
  CoreV1Event,
  V1Container,
  V1CronJob,
  V1DaemonSet,
  V1Deployment,
  V1Ingress,
  V1Job,
  V1NetworkPolicy,
  V1Node,
  V1PersistentVolumeClaim,
  V1Pod,
  V1PodSpec,
  V1Probe,
  V1ReplicaSet,
  V1Service,
  V1StatefulSet,
  V2HorizontalPodAutoscaler,
  V1NetworkPolicyPeer,
  V1NetworkPolicyPort,
  V1ObjectMeta,
} from '@kubernetes/client-node';
import { age, isoTime, selectorString, summariseManagedFields } from './objects.js';
import { groupEvents } from './tools/event-groups.js';

export const DESCRIBABLE_KINDS = [
  'Deployment',
  'StatefulSet',
  'DaemonSet',
  'ReplicaSet',
  'Pod',
  'Service',
  'Node',
  'PersistentVolumeClaim',
  'HorizontalPodAutoscaler',
  'Ingress',
  'NetworkPolicy',
  'CronJob',
  'Job',
] as const;
export type DescribableKind = (typeof DESCRIBABLE_KINDS)[number];

export interface ContainerSummary {
  name: string;
  image?: string;
  command?: string[];
  ports?: string[];
  requests?: Record<string, string>;
  limits?: Record<string, string>;
  probes?: Record<string, string>;
  /** Literal values only; references name their source, never its content. */
  env?: { name: string; value?: string; from?: string }[];
  envFrom?: string[];
  mounts?: string[];
}

export interface ConditionSummary {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransition?: string;
}

type Conditionish = { type: string; status: string; reason?: string; message?: string; lastTransitionTime?: unknown };

export function summariseConditions(conditions: Conditionish[] | undefined): ConditionSummary[] {
  return (conditions ?? []).map((c) => ({
    type: c.type,
    status: c.status,
    ...(c.reason ? { reason: c.reason } : {}),
    ...(c.message ? { message: c.message } : {}),
    ...(isoTime(c.lastTransitionTime) ? { lastTransition: isoTime(c.lastTransitionTime)! } : {}),
  }));
}

/** `httpGet /ready :http delay=5s period=5s timeout=1s failure=3`. */
export function describeProbe(p: V1Probe | undefined): string | undefined {
  if (!p) return undefined;
  let how = 'probe';
  if (p.httpGet) how = `httpGet ${p.httpGet.scheme === 'HTTPS' ? 'https ' : ''}${p.httpGet.path ?? '/'} :${p.httpGet.port}`;
  else if (p.tcpSocket) how = `tcpSocket :${p.tcpSocket.port}`;
  else if (p.grpc) how = `grpc :${p.grpc.port}${p.grpc.service ? ` ${p.grpc.service}` : ''}`;
  else if (p.exec) how = `exec ${(p.exec.command ?? []).join(' ')}`;
  const timing = [
    p.initialDelaySeconds !== undefined ? `delay=${p.initialDelaySeconds}s` : '',
    p.periodSeconds !== undefined ? `period=${p.periodSeconds}s` : '',
    p.timeoutSeconds !== undefined ? `timeout=${p.timeoutSeconds}s` : '',
    p.failureThreshold !== undefined ? `failure=${p.failureThreshold}` : '',
  ].filter(Boolean);
  return [how, ...timing].join(' ');
}

function quantities(r: Record<string, unknown> | undefined): Record<string, string> | undefined {
  if (!r || Object.keys(r).length === 0) return undefined;
  return Object.fromEntries(Object.entries(r).map(([k, v]) => [k, String(v)]));
}

export function summariseContainer(c: V1Container): ContainerSummary {
  const probe = describeProbe;
  const probes = Object.fromEntries(
    ([
      ['readiness', probe(c.readinessProbe)],
      ['liveness', probe(c.livenessProbe)],
      ['startup', probe(c.startupProbe)],
    ] as const).filter(([, v]) => v !== undefined),
  ) as Record<string, string>;
  const env = (c.env ?? []).map((e) => {
    const ref = e.valueFrom;
    let from: string | undefined;
    if (ref?.secretKeyRef) from = `secret ${ref.secretKeyRef.name}/${ref.secretKeyRef.key}`;
    else if (ref?.configMapKeyRef) from = `configMap ${ref.configMapKeyRef.name}/${ref.configMapKeyRef.key}`;
    else if (ref?.fieldRef) from = `field ${ref.fieldRef.fieldPath}`;
    else if (ref?.resourceFieldRef) from = `resource ${ref.resourceFieldRef.resource}`;
    return { name: e.name, ...(e.value !== undefined ? { value: e.value } : {}), ...(from ? { from } : {}) };
  });
  const envFrom = (c.envFrom ?? []).map((s) => (s.secretRef ? `secret ${s.secretRef.name}` : s.configMapRef ? `configMap ${s.configMapRef.name}` : '?'));
  return {
    name: c.name,
    ...(c.image ? { image: c.image } : {}),
    ...(c.command?.length ? { command: [...c.command, ...(c.args ?? [])] } : c.args?.length ? { command: c.args } : {}),
    ...(c.ports?.length ? { ports: c.ports.map((p) => `${p.name ? `${p.name}:` : ''}${p.containerPort}/${p.protocol ?? 'TCP'}`) } : {}),
    ...(quantities(c.resources?.requests) ? { requests: quantities(c.resources?.requests)! } : {}),
    ...(quantities(c.resources?.limits) ? { limits: quantities(c.resources?.limits)! } : {}),
    ...(Object.keys(probes).length ? { probes } : {}),
    ...(env.length ? { env } : {}),
    ...(envFrom.length ? { envFrom } : {}),
    ...(c.volumeMounts?.length ? { mounts: c.volumeMounts.map((m) => `${m.mountPath} ← ${m.name}${m.readOnly ? ' (ro)' : ''}`) } : {}),
  };
}

export function summarisePodSpec(spec: V1PodSpec | undefined): Record<string, unknown> {
  if (!spec) return {};
  return {
    containers: (spec.containers ?? []).map(summariseContainer),
    ...(spec.initContainers?.length ? { initContainers: spec.initContainers.map(summariseContainer) } : {}),
    ...(spec.serviceAccountName ? { serviceAccount: spec.serviceAccountName } : {}),
    ...(spec.nodeSelector ? { nodeSelector: spec.nodeSelector } : {}),
    ...(spec.tolerations?.length ? { tolerations: spec.tolerations.map((t) => `${t.key ?? '*'}${t.operator === 'Exists' ? '' : `=${t.value ?? ''}`}:${t.effect ?? '*'}`) } : {}),
    ...(spec.volumes?.length
      ? {
          volumes: spec.volumes.map((v) => {
            const source = Object.entries(v).find(([key]) => key !== 'name');
            const ref = source?.[1] as { name?: string; secretName?: string; claimName?: string } | undefined;
            return `${v.name}: ${source?.[0] ?? '?'}${ref?.name || ref?.secretName || ref?.claimName ? ` ${ref.name ?? ref.secretName ?? ref.claimName}` : ''}`;
          }),
        }
      : {}),
  };
}

function header(meta: V1ObjectMeta | undefined, kind: string, now: Date): Record<string, unknown> {
  const owner = (meta?.ownerReferences ?? []).find((o) => o.controller) ?? meta?.ownerReferences?.[0];
  const annotations = Object.fromEntries(
    Object.entries(meta?.annotations ?? {}).filter(([key]) => key !== 'kubectl.kubernetes.io/last-applied-configuration'),
  );
  return {
    kind,
    name: meta?.name,
    ...(meta?.namespace ? { namespace: meta.namespace } : {}),
    ...(isoTime(meta?.creationTimestamp) ? { created: isoTime(meta?.creationTimestamp), age: age(meta?.creationTimestamp, now) } : {}),
    ...(meta?.labels ? { labels: meta.labels } : {}),
    ...(Object.keys(annotations).length ? { annotations } : {}),
    ...(owner ? { owner: `${owner.kind}/${owner.name}` } : {}),
    ...(meta?.deletionTimestamp ? { deleting: isoTime(meta.deletionTimestamp) } : {}),
    ...(meta?.generation !== undefined ? { generation: meta.generation } : {}),
  };
}

function workload(o: V1Deployment | V1StatefulSet | V1DaemonSet | V1ReplicaSet, kind: string): Record<string, unknown> {
  const spec = o.spec as (V1Deployment['spec'] & V1StatefulSet['spec'] & V1DaemonSet['spec'] & V1ReplicaSet['spec']) | undefined;
  const status = (o.status ?? {}) as Record<string, unknown>;
  const num = (k: string) => (typeof status[k] === 'number' ? (status[k] as number) : 0);
  const replicas =
    kind === 'DaemonSet'
      ? { desired: num('desiredNumberScheduled'), current: num('currentNumberScheduled'), ready: num('numberReady'), updated: num('updatedNumberScheduled'), available: num('numberAvailable'), misscheduled: num('numberMisscheduled') }
      : { desired: spec?.replicas ?? 1, current: num('replicas'), ready: num('readyReplicas'), updated: num('updatedReplicas'), available: num('availableReplicas'), ...(num('unavailableReplicas') ? { unavailable: num('unavailableReplicas') } : {}) };
  const strategy = spec?.strategy ?? spec?.updateStrategy;
  return {
    replicas,
    selector: selectorString(spec?.selector),
    ...(strategy ? { strategy: strategy.type ?? 'RollingUpdate', ...(strategy.rollingUpdate ? { rollingUpdate: strategy.rollingUpdate } : {}) } : {}),
    ...(spec?.serviceName ? { serviceName: spec.serviceName } : {}),
    ...(spec?.paused ? { paused: true } : {}),
    ...(status['observedGeneration'] !== undefined ? { observedGeneration: status['observedGeneration'] } : {}),
    template: summarisePodSpec(spec?.template?.spec),
    conditions: summariseConditions(o.status?.conditions as Conditionish[] | undefined),
  };
}

function pod(p: V1Pod): Record<string, unknown> {
  const statuses = [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])];
  return {
    phase: p.status?.phase,
    ...(p.status?.reason ? { reason: p.status.reason, message: p.status.message } : {}),
    node: p.spec?.nodeName,
    podIP: p.status?.podIP,
    ...(p.status?.qosClass ? { qos: p.status.qosClass } : {}),
    ...(p.status?.nominatedNodeName ? { nominatedNode: p.status.nominatedNodeName } : {}),
    containerStatuses: statuses.map((c) => {
      const state = c.state?.waiting
        ? `waiting: ${c.state.waiting.reason ?? ''}${c.state.waiting.message ? ` (${c.state.waiting.message})` : ''}`
        : c.state?.terminated
          ? `terminated: ${c.state.terminated.reason ?? ''} exit ${c.state.terminated.exitCode}`
          : c.state?.running
            ? `running since ${isoTime(c.state.running.startedAt) ?? '?'}`
            : 'unknown';
      const last = c.lastState?.terminated;
      return {
        name: c.name,
        ready: c.ready,
        restarts: c.restartCount,
        state,
        ...(last ? { lastTermination: { reason: last.reason, exitCode: last.exitCode, ...(isoTime(last.finishedAt) ? { finishedAt: isoTime(last.finishedAt) } : {}) } } : {}),
        image: c.image,
      };
    }),
    spec: summarisePodSpec(p.spec),
    conditions: summariseConditions(p.status?.conditions as Conditionish[] | undefined),
  };
}

function service(s: V1Service): Record<string, unknown> {
  return {
    type: s.spec?.type ?? 'ClusterIP',
    clusterIP: s.spec?.clusterIP,
    ...(s.spec?.externalName ? { externalName: s.spec.externalName } : {}),
    ports: (s.spec?.ports ?? []).map((p) => `${p.name ? `${p.name} ` : ''}${p.port}→${p.targetPort ?? p.port}/${p.protocol ?? 'TCP'}${p.nodePort ? ` node:${p.nodePort}` : ''}`),
    selector: s.spec?.selector ?? null,
    ...(s.status?.loadBalancer?.ingress?.length ? { loadBalancer: s.status.loadBalancer.ingress.map((i) => i.ip ?? i.hostname) } : {}),
  };
}

function node(n: V1Node): Record<string, unknown> {
  return {
    unschedulable: n.spec?.unschedulable ?? false,
    taints: (n.spec?.taints ?? []).map((t) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`),
    addresses: (n.status?.addresses ?? []).map((a) => `${a.type} ${a.address}`),
    capacity: quantities(n.status?.capacity),
    allocatable: quantities(n.status?.allocatable),
    kubelet: n.status?.nodeInfo?.kubeletVersion,
    runtime: n.status?.nodeInfo?.containerRuntimeVersion,
    os: n.status?.nodeInfo?.osImage,
    conditions: summariseConditions(n.status?.conditions as Conditionish[] | undefined),
  };
}

function pvc(c: V1PersistentVolumeClaim): Record<string, unknown> {
  return {
    phase: c.status?.phase,
    storageClass: c.spec?.storageClassName,
    requested: c.spec?.resources?.requests?.['storage'] !== undefined ? String(c.spec.resources.requests['storage']) : undefined,
    capacity: c.status?.capacity?.['storage'] !== undefined ? String(c.status.capacity['storage']) : undefined,
    accessModes: c.spec?.accessModes,
    volume: c.spec?.volumeName,
    conditions: summariseConditions(c.status?.conditions as Conditionish[] | undefined),
  };
}

/** `cpu 85% (target 80% utilization)` for each metric, current status paired by position and name. */
export function hpaMetrics(h: V2HorizontalPodAutoscaler): { metric: string; current?: string; target: string }[] {
  const current = h.status?.currentMetrics ?? [];
  return (h.spec?.metrics ?? []).map((m) => {
    const src = (m.resource ?? m.containerResource ?? m.pods ?? m.object ?? m.external) as
      | { name?: string; metric?: { name?: string }; target?: { type?: string; averageUtilization?: number; averageValue?: unknown; value?: unknown } }
      | undefined;
    const name = src?.name ?? src?.metric?.name ?? '?';
    const t = src?.target;
    const target = t?.averageUtilization !== undefined ? `${t.averageUtilization}%` : t?.averageValue !== undefined ? `${String(t.averageValue)} avg` : t?.value !== undefined ? String(t.value) : '?';
    const cur = current.find((c) => {
      const s = (c.resource ?? c.containerResource ?? c.pods ?? c.object ?? c.external) as { name?: string; metric?: { name?: string } } | undefined;
      return c.type === m.type && (s?.name ?? s?.metric?.name) === name;
    });
    const cs = (cur?.resource ?? cur?.containerResource ?? cur?.pods ?? cur?.object ?? cur?.external) as
      | { current?: { averageUtilization?: number; averageValue?: unknown; value?: unknown } }
      | undefined;
    const c = cs?.current;
    const currentText = c?.averageUtilization !== undefined ? `${c.averageUtilization}%` : c?.averageValue !== undefined ? `${String(c.averageValue)} avg` : c?.value !== undefined ? String(c.value) : undefined;
    return { metric: `${m.type} ${name}`, ...(currentText ? { current: currentText } : {}), target };
  });
}

export interface HpaSummary {
  target: string;
  minReplicas: number;
  maxReplicas: number | undefined;
  currentReplicas: number;
  desiredReplicas: number;
  atMax: boolean;
  lastScale?: string;
  metrics: { metric: string; current?: string; target: string }[];
  conditions: ConditionSummary[];
}

export function hpaSummary(h: V2HorizontalPodAutoscaler): HpaSummary {
  const min = h.spec?.minReplicas ?? 1;
  const max = h.spec?.maxReplicas;
  const current = h.status?.currentReplicas ?? 0;
  const desired = h.status?.desiredReplicas ?? 0;
  return {
    target: `${h.spec?.scaleTargetRef?.kind}/${h.spec?.scaleTargetRef?.name}`,
    minReplicas: min,
    maxReplicas: max,
    currentReplicas: current,
    desiredReplicas: desired,
    atMax: max !== undefined && (current >= max || desired >= max),
    ...(isoTime(h.status?.lastScaleTime) ? { lastScale: isoTime(h.status?.lastScaleTime)! } : {}),
    metrics: hpaMetrics(h),
    conditions: summariseConditions(h.status?.conditions as Conditionish[] | undefined),
  };
}

function ingress(i: V1Ingress): Record<string, unknown> {
  const backend = (b: { service?: { name: string; port?: { number?: number; name?: string } } } | undefined) =>
    b?.service ? `${b.service.name}:${b.service.port?.number ?? b.service.port?.name ?? ''}` : '?';
  return {
    class: i.spec?.ingressClassName,
    ...(i.spec?.defaultBackend ? { defaultBackend: backend(i.spec.defaultBackend) } : {}),
    rules: (i.spec?.rules ?? []).flatMap((r) => (r.http?.paths ?? []).map((p) => `${r.host ?? '*'}${p.path ?? '/'} → ${backend(p.backend)}`)),
    tls: (i.spec?.tls ?? []).map((t) => ({ hosts: t.hosts ?? [], secret: t.secretName })),
    addresses: (i.status?.loadBalancer?.ingress ?? []).map((a) => a.ip ?? a.hostname),
  };
}

function peer(p: V1NetworkPolicyPeer): string {
  const parts: string[] = [];
  if (p.ipBlock) parts.push(`ipBlock ${p.ipBlock.cidr}${p.ipBlock.except?.length ? ` except ${p.ipBlock.except.join(',')}` : ''}`);
  if (p.namespaceSelector) parts.push(`namespaces {${selectorString(p.namespaceSelector) || 'all'}}`);
  if (p.podSelector) parts.push(`pods {${selectorString(p.podSelector) || 'all'}}`);
  return parts.join(' and ') || 'all';
}

function ports(list: V1NetworkPolicyPort[] | undefined): string {
  if (!list?.length) return 'all ports';
  return list.map((p) => `${p.port ?? '*'}${p.endPort ? `-${p.endPort}` : ''}/${p.protocol ?? 'TCP'}`).join(', ');
}

/** Rules as sentences: `from pods {app=storefront} on 8080/TCP`; an empty list for a type means deny all. */
export function networkPolicySummary(np: V1NetworkPolicy): Record<string, unknown> {
  const types = np.spec?.policyTypes ?? (np.spec?.egress ? ['Ingress', 'Egress'] : ['Ingress']);
  const ingressRules = np.spec?.ingress ?? [];
  const egressRules = np.spec?.egress ?? [];
  return {
    podSelector: selectorString(np.spec?.podSelector) || '(all pods in namespace)',
    policyTypes: types,
    ...(types.includes('Ingress')
      ? { ingress: ingressRules.length ? ingressRules.map((r) => `from ${(r._from ?? (r as { from?: V1NetworkPolicyPeer[] }).from ?? []).map(peer).join(' or ') || 'anywhere'} on ${ports(r.ports)}`) : ['deny all ingress'] }
      : {}),
    ...(types.includes('Egress') ? { egress: egressRules.length ? egressRules.map((r) => `to ${(r.to ?? []).map(peer).join(' or ') || 'anywhere'} on ${ports(r.ports)}`) : ['deny all egress'] } : {}),
  };
}

function job(j: V1Job): Record<string, unknown> {
  return {
    completions: j.spec?.completions,
    parallelism: j.spec?.parallelism,
    backoffLimit: j.spec?.backoffLimit,
    active: j.status?.active ?? 0,
    succeeded: j.status?.succeeded ?? 0,
    failed: j.status?.failed ?? 0,
    ...(isoTime(j.status?.startTime) ? { started: isoTime(j.status?.startTime) } : {}),
    ...(isoTime(j.status?.completionTime) ? { completed: isoTime(j.status?.completionTime) } : {}),
    template: summarisePodSpec(j.spec?.template?.spec),
    conditions: summariseConditions(j.status?.conditions as Conditionish[] | undefined),
  };
}

function cronJob(c: V1CronJob): Record<string, unknown> {
  return {
    schedule: c.spec?.schedule,
    ...(c.spec?.timeZone ? { timeZone: c.spec.timeZone } : {}),
    suspend: c.spec?.suspend ?? false,
    concurrencyPolicy: c.spec?.concurrencyPolicy ?? 'Allow',
    active: (c.status?.active ?? []).map((a) => a.name),
    ...(isoTime(c.status?.lastScheduleTime) ? { lastSchedule: isoTime(c.status?.lastScheduleTime) } : {}),
    ...(isoTime(c.status?.lastSuccessfulTime) ? { lastSuccess: isoTime(c.status?.lastSuccessfulTime) } : {}),
    template: summarisePodSpec(c.spec?.jobTemplate?.spec?.template?.spec),
  };
}

export interface DescribeInput {
  kind: DescribableKind;
  object: unknown;
  /** Events whose involvedObject is this object (any order). */
  events?: CoreV1Event[];
  now: Date;
}

/** The describe summary: header, kind-specific body, grouped events (newest first), managedFields. */
export function describeObject({ kind, object, events = [], now }: DescribeInput): Record<string, unknown> {
  const o = object as { metadata?: V1ObjectMeta };
  let body: Record<string, unknown>;
  switch (kind) {
    case 'Deployment':
    case 'StatefulSet':
    case 'DaemonSet':
    case 'ReplicaSet':
      body = workload(object as V1Deployment, kind);
      break;
    case 'Pod':
      body = pod(object as V1Pod);
      break;
    case 'Service':
      body = service(object as V1Service);
      break;
    case 'Node':
      body = node(object as V1Node);
      break;
    case 'PersistentVolumeClaim':
      body = pvc(object as V1PersistentVolumeClaim);
      break;
    case 'HorizontalPodAutoscaler':
      body = { ...hpaSummary(object as V2HorizontalPodAutoscaler) };
      break;
    case 'Ingress':
      body = ingress(object as V1Ingress);
      break;
    case 'NetworkPolicy':
      body = networkPolicySummary(object as V1NetworkPolicy);
      break;
    case 'Job':
      body = job(object as V1Job);
      break;
    case 'CronJob':
      body = cronJob(object as V1CronJob);
      break;
  }
  return {
    ...header(o.metadata, kind, now),
    ...body,
    events: groupEvents(events).slice(0, 20),
    managedFields: summariseManagedFields(o.metadata?.managedFields),
  };
}

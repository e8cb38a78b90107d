/**
 * Who reads a ConfigMap, and how, from the pod templates of a namespace. How decides when a reader sees
 * restored content (Kubernetes documentation, "ConfigMaps", "Mounted ConfigMaps are updated
 * automatically"): env variables (`envFrom`, `valueFrom.configMapKeyRef`) are resolved when a container
 * starts and never change; a `subPath` mount is a copy made at start and never updated; a volume mount is
 * updated by the kubelet on its periodic sync (about a minute, its sync period plus the cache TTL), after
 * which the process must still re-read the file.
 */
import type { ConfigReader, KubeObject } from '../types.js';

interface PodSpecLike {
  containers?: ContainerLike[];
  initContainers?: ContainerLike[];
  volumes?: { name: string; configMap?: { name?: string }; projected?: { sources?: { configMap?: { name?: string } }[] } }[];
}

interface ContainerLike {
  env?: { valueFrom?: { configMapKeyRef?: { name?: string } } }[];
  envFrom?: { configMapRef?: { name?: string } }[];
  volumeMounts?: { name: string; subPath?: string; subPathExpr?: string }[];
}

function podSpecOf(o: KubeObject): PodSpecLike | undefined {
  const spec = o.spec as { template?: { spec?: PodSpecLike }; jobTemplate?: { spec?: { template?: { spec?: PodSpecLike } } } } | undefined;
  return o.kind === 'CronJob' ? spec?.jobTemplate?.spec?.template?.spec : spec?.template?.spec;
}

function podsOf(o: KubeObject): number {
  if (o.kind === 'CronJob') return 0;
  if (o.kind === 'DaemonSet') {
    const n = (o.status as { desiredNumberScheduled?: unknown } | undefined)?.desiredNumberScheduled;
    return typeof n === 'number' ? n : 0;
  }
  const r = o.spec?.['replicas'];
  return typeof r === 'number' ? r : 1;
}

/** How one pod spec reads ConfigMap `name`; empty when it does not. */
export function readModes(spec: PodSpecLike | undefined, name: string): ConfigReader['via'] {
  const via = new Set<ConfigReader['via'][number]>();
  const containers = [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])];
  for (const c of containers) {
    if ((c.env ?? []).some((e) => e.valueFrom?.configMapKeyRef?.name === name)) via.add('env');
    if ((c.envFrom ?? []).some((e) => e.configMapRef?.name === name)) via.add('env');
  }
  const volumes = new Set(
    (spec?.volumes ?? []).filter((v) => v.configMap?.name === name || (v.projected?.sources ?? []).some((s) => s.configMap?.name === name)).map((v) => v.name),
  );
  for (const c of containers)
    for (const m of c.volumeMounts ?? []) if (volumes.has(m.name)) via.add(m.subPath || m.subPathExpr ? 'subPath' : 'volume');
  return [...via].sort();
}

/** The workloads among `owners` (one namespace) whose pod templates read ConfigMap `name`, by kind and name. */
export function readersOf(owners: KubeObject[], name: string): ConfigReader[] {
  const out: ConfigReader[] = [];
  for (const o of owners) {
    const via = readModes(podSpecOf(o), name);
    if (via.length && o.metadata?.name) out.push({ kind: o.kind as ConfigReader['kind'], name: o.metadata.name, via, pods: podsOf(o) });
  }
  return out.sort((a, b) => (a.name === b.name ? a.kind.localeCompare(b.kind) : a.name.localeCompare(b.name)));
}

/** Sees restored content only in new pods. */
export const needsRestart = (r: ConfigReader): boolean => r.via.includes('env') || r.via.includes('subPath');

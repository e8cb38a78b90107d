import type { Alert } from '../../alerts/types.js';
import type { KubeReader } from './client.js';

export type WorkloadKind = 'Deployment' | 'StatefulSet' | 'DaemonSet';

export interface WorkloadRef {
  kind: WorkloadKind;
  namespace: string;
  name: string;
}

const WORKLOAD_LABELS: [string, WorkloadKind][] = [
  ['deployment', 'Deployment'],
  ['statefulset', 'StatefulSet'],
  ['daemonset', 'DaemonSet'],
];
/** Labels that name a service or app rather than a workload kind; matched against workload names. */
const NAME_LABELS = ['service', 'app', 'app_kubernetes_io_name', 'job', 'container', 'workload'];
/** `checkout-7d9f8b6c5-x2x9k` → `checkout` (ReplicaSet hash + pod suffix). */
const POD_SUFFIX = /-[a-z0-9]{8,10}-[a-z0-9]{5}$|-[0-9]+$/;

/**
 * Find the workload an alert is about. Keyed labels win (`namespace` + `deployment`, …). Alertmanager's
 * default Slack title carries label values without keys, so bare values are matched against the
 * cluster's namespaces and workload names.
 */
export async function resolveTarget(alert: Alert, reader: KubeReader): Promise<WorkloadRef | undefined> {
  const labels = alert.labels;
  const ns = labels['namespace'] ?? labels['kubernetes_namespace'] ?? labels['exported_namespace'];
  for (const [label, kind] of WORKLOAD_LABELS) {
    const name = labels[label];
    if (ns && name) return { kind, namespace: ns, name };
  }
  const names = [
    ...NAME_LABELS.map((l) => labels[l]).filter((v): v is string => !!v),
    ...(labels['pod'] ? [labels['pod'].replace(POD_SUFFIX, '')] : []),
    ...alert.labelValues,
  ].map((v) => v.trim());

  let namespaces: string[];
  if (ns) namespaces = [ns];
  else {
    const all = (await reader.listNamespaces()).items.map((n) => n.metadata?.name ?? '');
    namespaces = all.filter((n) => names.includes(n));
  }

  const candidates = new Set(names);
  const search = namespaces.length ? namespaces : [undefined];
  for (const namespace of search) {
    const found = await findWorkload(reader, candidates, namespace);
    if (found) return found;
  }
  return undefined;
}

async function findWorkload(reader: KubeReader, names: Set<string>, namespace: string | undefined): Promise<WorkloadRef | undefined> {
  const lists: [WorkloadKind, () => Promise<{ items: { metadata?: { name?: string; namespace?: string } }[] }>][] = [
    ['Deployment', () => reader.listDeployments(namespace)],
    ['StatefulSet', () => (namespace ? reader.listStatefulSets(namespace) : reader.apps.listStatefulSetForAllNamespaces({ limit: 1000 }))],
    ['DaemonSet', () => (namespace ? reader.listDaemonSets(namespace) : reader.apps.listDaemonSetForAllNamespaces({ limit: 1000 }))],
  ];
  for (const [kind, list] of lists) {
    for (const w of (await list()).items) {
      if (names.has(w.metadata?.name ?? '')) return { kind, namespace: w.metadata!.namespace ?? namespace!, name: w.metadata!.name! };
    }
  }
  return undefined;
}

import * as k8s from '@kubernetes/client-node';
import type { V1ManagedFieldsEntry, V1PodSpec } from '@kubernetes/client-node';
import type { KubeReader } from './client.js';

/**
 * Objects around a workload whose edits can break it: the ConfigMaps and Secrets its pods read, the
 * NetworkPolicies of its namespace and the HPAs that scale it. Only metadata is kept (managedFields
 * for the change timeline, key names) — never ConfigMap or Secret values.
 */
export interface RelatedObject {
  kind: 'ConfigMap' | 'Secret' | 'NetworkPolicy' | 'HorizontalPodAutoscaler';
  namespace: string;
  name: string;
  createdAt?: Date;
  managedFields?: V1ManagedFieldsEntry[];
  /** Data keys (ConfigMap/Secret), never values. */
  keys?: string[];
  /** How the workload uses it, e.g. `env DATABASE_URL`, `volume config`. */
  usedBy?: string;
}

/** ConfigMap and Secret names a pod spec references, with how. */
export function configRefs(spec: V1PodSpec | undefined): { kind: 'ConfigMap' | 'Secret'; name: string; how: string }[] {
  const refs = new Map<string, { kind: 'ConfigMap' | 'Secret'; name: string; how: string }>();
  const add = (kind: 'ConfigMap' | 'Secret', name: string | undefined, how: string) => {
    if (name && !refs.has(`${kind}/${name}`)) refs.set(`${kind}/${name}`, { kind, name, how });
  };
  for (const c of [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])]) {
    for (const e of c.env ?? []) {
      add('ConfigMap', e.valueFrom?.configMapKeyRef?.name, `env ${e.name}`);
      add('Secret', e.valueFrom?.secretKeyRef?.name, `env ${e.name}`);
    }
    for (const e of c.envFrom ?? []) {
      add('ConfigMap', e.configMapRef?.name, 'envFrom');
      add('Secret', e.secretRef?.name, 'envFrom');
    }
  }
  for (const v of spec?.volumes ?? []) {
    add('ConfigMap', v.configMap?.name, `volume ${v.name}`);
    add('Secret', v.secret?.secretName, `volume ${v.name}`);
    for (const s of v.projected?.sources ?? []) {
      add('ConfigMap', s.configMap?.name, `volume ${v.name}`);
      add('Secret', s.secret?.name, `volume ${v.name}`);
    }
  }
  return [...refs.values()];
}

function keysOf(data: Record<string, unknown> | undefined, more?: Record<string, unknown>): string[] {
  return [...Object.keys(data ?? {}), ...Object.keys(more ?? {})];
}

function notFound(err: unknown): boolean {
  return err instanceof k8s.ApiException && err.code === 404;
}

export async function readRelated(
  reader: KubeReader,
  namespace: string,
  workload: { kind: string; name: string; podSpec?: V1PodSpec },
  onGap: (what: string, err: unknown) => void,
): Promise<RelatedObject[]> {
  const out: RelatedObject[] = [];
  for (const ref of configRefs(workload.podSpec)) {
    try {
      const obj =
        ref.kind === 'ConfigMap'
          ? await reader.core.readNamespacedConfigMap({ namespace, name: ref.name })
          : await reader.core.readNamespacedSecret({ namespace, name: ref.name });
      out.push({
        kind: ref.kind,
        namespace,
        name: ref.name,
        createdAt: obj.metadata?.creationTimestamp ? new Date(obj.metadata.creationTimestamp) : undefined,
        managedFields: obj.metadata?.managedFields,
        keys: keysOf(obj.data as Record<string, unknown> | undefined, (obj as { binaryData?: Record<string, unknown> }).binaryData),
        usedBy: ref.how,
      });
    } catch (err) {
      if (notFound(err)) out.push({ kind: ref.kind, namespace, name: ref.name, usedBy: `${ref.how} (missing!)` });
      else onGap(`get ${ref.kind.toLowerCase()} ${namespace}/${ref.name}`, err);
    }
  }
  try {
    const net = reader.kc.makeApiClient(k8s.NetworkingV1Api);
    for (const p of (await net.listNamespacedNetworkPolicy({ namespace, limit: 200 })).items) {
      out.push({ kind: 'NetworkPolicy', namespace, name: p.metadata!.name!, createdAt: p.metadata?.creationTimestamp ? new Date(p.metadata.creationTimestamp) : undefined, managedFields: p.metadata?.managedFields });
    }
  } catch (err) {
    onGap(`list networkpolicies in ${namespace}`, err);
  }
  try {
    const as = reader.kc.makeApiClient(k8s.AutoscalingV2Api);
    for (const h of (await as.listNamespacedHorizontalPodAutoscaler({ namespace, limit: 200 })).items) {
      if (h.spec?.scaleTargetRef?.name !== workload.name) continue;
      out.push({ kind: 'HorizontalPodAutoscaler', namespace, name: h.metadata!.name!, createdAt: h.metadata?.creationTimestamp ? new Date(h.metadata.creationTimestamp) : undefined, managedFields: h.metadata?.managedFields });
    }
  } catch (err) {
    onGap(`list horizontalpodautoscalers in ${namespace}`, err);
  }
  return out;
}

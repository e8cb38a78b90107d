import * as k8s from '@kubernetes/client-node';
import type { V1ManagedFieldsEntry, V1NetworkPolicy, V1ObjectMeta, V1PodSpec, V2HorizontalPodAutoscaler } from '@kubernetes/client-node';
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
    for (const a of configMapFlags(c)) add('ConfigMap', a.name, `arg ${a.flag}`);
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

/**
 * ConfigMaps a controller reads through the API, named by a flag (`--configmap=$(POD_NAMESPACE)/ingress-nginx-controller`,
 * `--tcp-services-configmap=…`): only those in the pod's own namespace (`$(POD_NAMESPACE)/name` or a bare name).
 */
export function configMapFlags(c: { args?: string[]; command?: string[] }): { flag: string; name: string }[] {
  const out: { flag: string; name: string }[] = [];
  for (const a of [...(c.command ?? []), ...(c.args ?? [])]) {
    const m = /^--([a-z-]*configmap)=(?:\$\(POD_NAMESPACE\)\/)?([a-z0-9][a-z0-9.-]*)$/.exec(a.trim());
    if (m) out.push({ flag: `--${m[1]}`, name: m[2]! });
  }
  return out;
}

function keysOf(data: Record<string, unknown> | undefined, more?: Record<string, unknown>): string[] {
  return [...Object.keys(data ?? {}), ...Object.keys(more ?? {})];
}

function notFound(err: unknown): boolean {
  return err instanceof k8s.ApiException && err.code === 404;
}

/** The ConfigMaps and Secrets the pod spec reads (metadata and key names only). */
export async function readConfigRefs(
  reader: KubeReader,
  namespace: string,
  podSpec: V1PodSpec | undefined,
  onGap: (what: string, err: unknown) => void,
): Promise<RelatedObject[]> {
  const out: RelatedObject[] = [];
  for (const ref of configRefs(podSpec)) {
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
  return out;
}

/** The namespace's NetworkPolicies and the target's HPAs, already listed with the surroundings, as related objects. */
export function relatedFromListed(namespace: string, policies: V1NetworkPolicy[], hpas: V2HorizontalPodAutoscaler[]): RelatedObject[] {
  const meta = (kind: RelatedObject['kind'], m: V1ObjectMeta | undefined): RelatedObject => ({
    kind,
    namespace,
    name: m?.name ?? '?',
    createdAt: m?.creationTimestamp ? new Date(m.creationTimestamp) : undefined,
    managedFields: m?.managedFields,
  });
  return [...policies.map((p) => meta('NetworkPolicy', p.metadata)), ...hpas.map((h) => meta('HorizontalPodAutoscaler', h.metadata))];
}

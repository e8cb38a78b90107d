/**
 * Sends one KubeWrite through client-node's typed APIs. Outside facts (client-node 2.x): generated
 * patch methods default to `application/json-patch+json`, so a merge patch must set its Content-Type per
 * call; `dryRun: 'All'` is the only valid dry-run value; errors are `ApiException` with `.code` and `.body`.
 */
import * as k8s from '@kubernetes/client-node';
import { KIND_INFO, isObjectKind } from './objects/kinds.js';
import type { KubeWrite, WriteOutcome } from './types.js';

export interface WriteApis {
  apps: k8s.AppsV1Api;
  batch: k8s.BatchV1Api;
  core: k8s.CoreV1Api;
  /** Every `/apis` kind beyond apps and batch (Ingress, NetworkPolicy, HPA, Istio, chaos experiments). */
  custom?: k8s.CustomObjectsApi;
}

export interface SendOptions {
  dryRun: boolean;
  fieldManager: string;
  /** Per-request headers (Impersonate-Extra-*). */
  headers: Record<string, string>;
}

/** `PATCH deployments/checkout/scale in shop` */
export function describeWrite(w: KubeWrite): string {
  const info = isObjectKind(w.target.kind) ? KIND_INFO[w.target.kind] : undefined;
  const plural = info?.plural ?? `${w.target.kind.toLowerCase()}s`;
  const sub = w.op === 'patch' && w.subresource ? `/${w.subresource}` : '';
  // A Node is cluster-scoped: its ObjectRef's namespace is the incident's (for the policy), not the object's.
  return `${w.op === 'patch' ? 'PATCH' : w.op === 'create' ? 'CREATE' : 'DELETE'} ${plural}/${w.target.name}${sub}${info && !info.namespaced ? '' : ` in ${w.target.namespace}`}`;
}

function options(w: KubeWrite, headers: Record<string, string>): k8s.ConfigurationOptions {
  let opts: k8s.ConfigurationOptions | undefined;
  if (w.op === 'patch') opts = k8s.setHeaderOptions('Content-Type', w.patchType === 'merge' ? k8s.PatchStrategy.MergePatch : k8s.PatchStrategy.JsonPatch);
  for (const [name, value] of Object.entries(headers)) opts = k8s.setHeaderOptions(name, value, opts);
  return opts ?? {};
}

async function call(apis: WriteApis, w: KubeWrite, o: SendOptions): Promise<unknown> {
  const { namespace, name } = w.target;
  const dryRun = o.dryRun ? 'All' : undefined;
  const opts = options(w, o.headers);
  if (w.op === 'create') {
    if (w.target.kind !== 'NetworkPolicy' || !apis.custom) throw new Error(`create of ${w.target.kind} is not in the catalog`);
    const k = KIND_INFO.NetworkPolicy;
    return apis.custom.createNamespacedCustomObject({ group: k.group, version: k.version, namespace, plural: k.plural, body: w.body, dryRun, fieldManager: o.fieldManager }, opts);
  }
  if (w.op === 'delete') {
    const body = w.uid ? { body: { preconditions: { uid: w.uid } } } : {};
    if (w.target.kind === 'NetworkPolicy') {
      const k = KIND_INFO.NetworkPolicy;
      if (!apis.custom) throw new Error('no API client for networking.k8s.io');
      return apis.custom.deleteNamespacedCustomObject({ group: k.group, version: k.version, namespace, plural: k.plural, name, dryRun, ...body }, opts);
    }
    if (w.target.kind !== 'Pod') throw new Error(`delete of ${w.target.kind} is not in the catalog`);
    return apis.core.deleteNamespacedPod({ namespace, name, dryRun, ...body }, opts);
  }
  const p = { namespace, name, body: w.body, dryRun, fieldManager: o.fieldManager };
  switch (w.target.kind) {
    case 'Deployment':
      return w.subresource === 'scale' ? apis.apps.patchNamespacedDeploymentScale(p, opts) : apis.apps.patchNamespacedDeployment(p, opts);
    case 'StatefulSet':
      return w.subresource === 'scale' ? apis.apps.patchNamespacedStatefulSetScale(p, opts) : apis.apps.patchNamespacedStatefulSet(p, opts);
    case 'CronJob':
      return apis.batch.patchNamespacedCronJob(p, opts);
    case 'Pod':
      return apis.core.patchNamespacedPod(p, opts);
    case 'ConfigMap':
      return apis.core.patchNamespacedConfigMap(p, opts);
    case 'Service':
      return apis.core.patchNamespacedService(p, opts);
    case 'Node':
      return apis.core.patchNode({ name, body: w.body, dryRun, fieldManager: o.fieldManager }, opts);
    default: {
      if (!isObjectKind(w.target.kind)) throw new Error(`${w.target.kind} ${name} is not a Kubernetes object`);
      if (!apis.custom) throw new Error(`no API client for ${KIND_INFO[w.target.kind].group}`);
      const k = KIND_INFO[w.target.kind];
      return apis.custom.patchNamespacedCustomObject({ group: k.group, version: k.version, plural: k.plural, ...p }, opts);
    }
  }
}

/** The write's outcome as data: a refusal by the API is a result (with its message), not an exception. */
export async function sendWrite(apis: WriteApis, w: KubeWrite, o: SendOptions): Promise<WriteOutcome> {
  const request = describeWrite(w);
  try {
    await call(apis, w, o);
    return { request, dryRun: o.dryRun, status: 'ok' };
  } catch (err) {
    if (err instanceof k8s.ApiException) {
      const body = parseStatus(err.body);
      // A 5xx on a real write says nothing about whether etcd took it.
      const uncertain = !o.dryRun && err.code >= 500;
      return { request, dryRun: o.dryRun, status: 'rejected', code: err.code, message: body.message ?? `HTTP ${err.code}`, ...(body.reason ? { reason: body.reason } : {}), ...(uncertain ? { uncertain } : {}) };
    }
    // No answer at all (timeout, connection reset): a real write may have been applied.
    return { request, dryRun: o.dryRun, status: 'rejected', message: err instanceof Error ? err.message : String(err), ...(o.dryRun ? {} : { uncertain: true }) };
  }
}

/** A Kubernetes Status body: `{ reason, message, code }`. */
export function parseStatus(body: unknown): { reason?: string; message?: string } {
  let v: unknown = body;
  if (typeof body === 'string') {
    try {
      v = JSON.parse(body);
    } catch {
      return { message: body.slice(0, 300) };
    }
  }
  const s = (v ?? {}) as { reason?: unknown; message?: unknown };
  return { ...(typeof s.reason === 'string' ? { reason: s.reason } : {}), ...(typeof s.message === 'string' ? { message: s.message } : {}) };
}

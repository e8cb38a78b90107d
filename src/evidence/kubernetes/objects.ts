/**
 * Generic read access to any Kubernetes kind (built-in or CRD) through client-node's
 * KubernetesObjectApi, plus the shared facts every evidence tool needs: kind names, API paths for
 * citations, failures as classified data, Secret scrubbing and managedFields summaries.
 */
import { ApiException, KubernetesObjectApi, type KubernetesListObject, type KubernetesObject, type V1APIResource, type V1LabelSelector, type V1ManagedFieldsEntry } from '@kubernetes/client-node';
import type { Redactor } from '../../redact/index.js';
import { KubeReadError, type KubeReader } from './client.js';

export interface KindInfo {
  apiVersion: string;
  kind: string;
  plural: string;
  namespaced: boolean;
}

function k(kind: string, plural: string, apiVersion: string, namespaced: boolean, ...aliases: string[]): [KindInfo, string[]] {
  return [{ kind, plural, apiVersion, namespaced }, aliases];
}

/** Built-in kinds the tools understand without an apiVersion; CRDs need theirs. */
const BUILTIN: [KindInfo, string[]][] = [
  k('Pod', 'pods', 'v1', true, 'po'),
  k('Service', 'services', 'v1', true, 'svc'),
  k('Endpoints', 'endpoints', 'v1', true, 'ep'),
  k('ConfigMap', 'configmaps', 'v1', true, 'cm'),
  k('Secret', 'secrets', 'v1', true),
  k('Event', 'events', 'v1', true, 'ev'),
  k('Node', 'nodes', 'v1', false, 'no'),
  k('Namespace', 'namespaces', 'v1', false, 'ns'),
  k('PersistentVolumeClaim', 'persistentvolumeclaims', 'v1', true, 'pvc'),
  k('PersistentVolume', 'persistentvolumes', 'v1', false, 'pv'),
  k('ServiceAccount', 'serviceaccounts', 'v1', true, 'sa'),
  k('LimitRange', 'limitranges', 'v1', true, 'limits'),
  k('ResourceQuota', 'resourcequotas', 'v1', true, 'quota'),
  k('Deployment', 'deployments', 'apps/v1', true, 'deploy'),
  k('ReplicaSet', 'replicasets', 'apps/v1', true, 'rs'),
  k('StatefulSet', 'statefulsets', 'apps/v1', true, 'sts'),
  k('DaemonSet', 'daemonsets', 'apps/v1', true, 'ds'),
  k('ControllerRevision', 'controllerrevisions', 'apps/v1', true),
  k('Job', 'jobs', 'batch/v1', true),
  k('CronJob', 'cronjobs', 'batch/v1', true, 'cj'),
  k('HorizontalPodAutoscaler', 'horizontalpodautoscalers', 'autoscaling/v2', true, 'hpa'),
  k('PodDisruptionBudget', 'poddisruptionbudgets', 'policy/v1', true, 'pdb'),
  k('NetworkPolicy', 'networkpolicies', 'networking.k8s.io/v1', true, 'netpol'),
  k('Ingress', 'ingresses', 'networking.k8s.io/v1', true, 'ing'),
  k('IngressClass', 'ingressclasses', 'networking.k8s.io/v1', false),
  k('StorageClass', 'storageclasses', 'storage.k8s.io/v1', false, 'sc'),
  k('EndpointSlice', 'endpointslices', 'discovery.k8s.io/v1', true),
  k('Lease', 'leases', 'coordination.k8s.io/v1', true),
  k('Role', 'roles', 'rbac.authorization.k8s.io/v1', true),
  k('RoleBinding', 'rolebindings', 'rbac.authorization.k8s.io/v1', true),
  k('ClusterRole', 'clusterroles', 'rbac.authorization.k8s.io/v1', false),
  k('ClusterRoleBinding', 'clusterrolebindings', 'rbac.authorization.k8s.io/v1', false),
  k('PriorityClass', 'priorityclasses', 'scheduling.k8s.io/v1', false, 'pc'),
  k('CustomResourceDefinition', 'customresourcedefinitions', 'apiextensions.k8s.io/v1', false, 'crd'),
];

const BY_NAME = new Map<string, KindInfo>();
for (const [info, aliases] of BUILTIN) {
  for (const n of [info.kind, info.plural, ...aliases]) BY_NAME.set(n.toLowerCase(), info);
}

/** `deploy`, `deployments`, `Deployment` → the Deployment kind; undefined for kinds that need an apiVersion. */
export function builtinKind(kind: string): KindInfo | undefined {
  return BY_NAME.get(kind.trim().toLowerCase());
}

/** The path a citation names: `apis/apps/v1/namespaces/shop/deployments/checkout` (no leading slash, like kubectl's --raw). */
export function apiPath(info: Pick<KindInfo, 'apiVersion' | 'plural' | 'namespaced'>, namespace?: string, name?: string): string {
  const base = info.apiVersion.includes('/') ? `apis/${info.apiVersion}` : `api/${info.apiVersion}`;
  const ns = info.namespaced && namespace ? `/namespaces/${namespace}` : '';
  return `${base}${ns}/${info.plural}${name ? `/${name}` : ''}`;
}

/** A failed read, classified so a tool can say `no_data` (404) or name the permission it lacks (403). */
export class KubeFailure extends Error {
  constructor(
    readonly status: number | undefined,
    readonly serverMessage: string,
    /** The RBAC verb tried: get, list. */
    readonly verb: string,
    /** `deployments.apps`, `pods/log`, `secrets`. */
    readonly resource: string,
    readonly namespace?: string,
  ) {
    super(serverMessage);
    this.name = 'KubeFailure';
  }
}

function serverMessage(err: unknown): { status: number | undefined; message: string } {
  if (err instanceof ApiException) {
    let body: unknown = err.body;
    if (typeof body === 'string') {
      try {
        body = JSON.parse(body);
      } catch {
        body = { message: (body as string).slice(0, 300) };
      }
    }
    const message = (body as { message?: string } | undefined)?.message ?? String(err.message).split('\n')[0] ?? 'error';
    return { status: err.code, message };
  }
  if (err instanceof KubeReadError) return { status: err.status, message: err.message };
  if (err instanceof KubeFailure) return { status: err.status, message: err.serverMessage };
  return { status: undefined, message: err instanceof Error ? err.message : String(err) };
}

/** Wrap any error from a read as a KubeFailure naming the verb and resource tried. */
export function toFailure(err: unknown, verb: string, resource: string, namespace?: string): KubeFailure {
  if (err instanceof KubeFailure) return err;
  const { status, message } = serverMessage(err);
  return new KubeFailure(status, message, verb, resource, namespace);
}

/** Run a read, turning its error into a KubeFailure. */
export async function attemptRead<T>(verb: string, resource: string, namespace: string | undefined, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toFailure(err, verb, resource, namespace);
  }
}

/** The sentence a 403 becomes, so escalation can say what the reader identity could not access. */
export function describeFailure(f: KubeFailure): string {
  if (f.status === 403) {
    const scope = f.namespace ? `in namespace "${f.namespace}"` : 'at cluster scope';
    return `forbidden: the reader identity lacks permission to ${f.verb} ${f.resource} ${scope} (${f.serverMessage})`;
  }
  if (f.status === 401) return `unauthorized: the reader identity's credentials were rejected (${f.serverMessage})`;
  return f.status ? `HTTP ${f.status} on ${f.verb} ${f.resource}: ${f.serverMessage}` : `${f.verb} ${f.resource}: ${f.serverMessage}`;
}

/** client-node's object API with discovery exposed, so a citation can name the real plural. */
class ObjectClient extends KubernetesObjectApi {
  discover(apiVersion: string, kind: string): Promise<V1APIResource | undefined> {
    return this.resource(apiVersion, kind);
  }
}

const clients = new WeakMap<KubeReader, ObjectClient>();

function objectClient(reader: KubeReader): ObjectClient {
  let c = clients.get(reader);
  if (!c) {
    c = reader.makeApiClient(ObjectClient);
    clients.set(reader, c);
  }
  return c;
}

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continueToken?: string;
}

export interface ListPage<T> {
  items: T[];
  /** Set when the server has more: pass it back as `continueToken`. */
  continueToken?: string;
  remaining?: number;
}

function qualified(info: Pick<KindInfo, 'apiVersion' | 'plural'>): string {
  const slash = info.apiVersion.indexOf('/');
  return slash < 0 ? info.plural : `${info.plural}.${info.apiVersion.slice(0, slash)}`;
}

/**
 * Read and list objects of any kind by apiVersion+kind (discovery tells scope and plural). Every call
 * is a GET under the reader identity; failures are KubeFailure.
 */
export class KubeObjects {
  constructor(readonly reader: KubeReader) {}

  /**
   * Kind name (alias, plural or Kind) plus optional apiVersion → what the server serves. An unknown
   * kind without apiVersion is an error that says to pass one.
   */
  async resolve(kind: string, apiVersion?: string): Promise<KindInfo> {
    const builtin = builtinKind(kind);
    const wantVersion = apiVersion ?? builtin?.apiVersion;
    if (!wantVersion) throw new KubeFailure(undefined, `unknown kind "${kind}": pass its apiVersion (e.g. cert-manager.io/v1) for a custom resource`, 'get', kind);
    const kindName = builtin && (!apiVersion || apiVersion === builtin.apiVersion) ? builtin.kind : kind;
    const found = await attemptRead('get', `discovery ${wantVersion}`, undefined, () => objectClient(this.reader).discover(wantVersion, kindName));
    if (!found) {
      if (builtin && builtin.apiVersion === wantVersion) return builtin;
      throw new KubeFailure(404, `the server does not serve kind "${kindName}" in ${wantVersion}`, 'get', kindName);
    }
    return { kind: found.kind, plural: found.name, apiVersion: wantVersion, namespaced: found.namespaced };
  }

  async get<T extends KubernetesObject = KubernetesObject>(info: KindInfo, namespace: string | undefined, name: string): Promise<T> {
    const ns = info.namespaced ? namespace : undefined;
    return attemptRead('get', qualified(info), ns, () =>
      objectClient(this.reader).read<T>({ apiVersion: info.apiVersion, kind: info.kind, metadata: { name, ...(ns ? { namespace: ns } : {}) } }),
    );
  }

  /** One page; `namespace` undefined lists all namespaces (or the cluster-scoped kind). */
  async list<T extends KubernetesObject = KubernetesObject>(info: KindInfo, opts: ListOptions = {}): Promise<ListPage<T>> {
    const ns = info.namespaced ? opts.namespace : undefined;
    const page = await attemptRead('list', qualified(info), ns, () => {
      // The object API looks core Events up as `V1EventList`, which does not exist, and so loses the
      // list's continue token; the typed CoreV1 call keeps it.
      if (info.kind === 'Event' && info.apiVersion === 'v1') {
        const q = { fieldSelector: opts.fieldSelector, labelSelector: opts.labelSelector, limit: opts.limit, _continue: opts.continueToken };
        return (ns ? this.reader.core.listNamespacedEvent({ namespace: ns, ...q }) : this.reader.core.listEventForAllNamespaces(q)) as unknown as Promise<KubernetesListObject<T>>;
      }
      return objectClient(this.reader).list<T>(info.apiVersion, info.kind, ns, undefined, undefined, undefined, opts.fieldSelector, opts.labelSelector, opts.limit, opts.continueToken);
    });
    const meta = page.metadata as { _continue?: string; continue?: string; remainingItemCount?: number } | undefined;
    const token = meta?._continue ?? meta?.continue;
    return {
      items: page.items ?? [],
      ...(token ? { continueToken: token } : {}),
      ...(meta?.remainingItemCount !== undefined ? { remaining: meta.remainingItemCount } : {}),
    };
  }

  /** Built-in kind by name, without discovery (for the tools' fixed kinds). */
  static kind(name: string): KindInfo {
    const info = builtinKind(name);
    if (!info) throw new Error(`not a built-in kind: ${name}`);
    return info;
  }
}

// ---------------------------------------------------------------- shared facts about objects

/** metav1.Time arrives as a Date from typed clients and as a string from raw JSON. */
export function isoTime(v: unknown): string | undefined {
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? undefined : v.toISOString();
  if (typeof v === 'string' && v) {
    const t = Date.parse(v);
    return Number.isNaN(t) ? undefined : new Date(t).toISOString();
  }
  return undefined;
}

export function timeMs(v: unknown): number | undefined {
  const s = isoTime(v);
  return s ? Date.parse(s) : undefined;
}

/** `3d4h`, `13s`: kubectl's AGE column. */
export function age(v: unknown, now: Date): string | undefined {
  const t = timeMs(v);
  if (t === undefined) return undefined;
  let s = Math.max(0, Math.floor((now.getTime() - t) / 1000));
  const d = Math.floor(s / 86400);
  s -= d * 86400;
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  if (d > 0) return h ? `${d}d${h}h` : `${d}d`;
  if (h > 0) return m ? `${h}h${m}m` : `${h}h`;
  if (m > 0) return s ? `${m}m${s}s` : `${m}m`;
  return `${s}s`;
}

export interface ManagedFieldsSummary {
  manager: string;
  operation: string;
  subresource?: string;
  time?: string;
  /** Top-level fields written (`spec.replicas`, `status`, `metadata.labels`…), two levels deep. */
  fields: string[];
  /** Index in metadata.managedFields, for a `#metadata.managedFields[i]` citation. */
  index: number;
}

function topFields(fieldsV1: unknown): string[] {
  if (!fieldsV1 || typeof fieldsV1 !== 'object') return [];
  const out: string[] = [];
  for (const [k1, v1] of Object.entries(fieldsV1 as Record<string, unknown>)) {
    if (!k1.startsWith('f:')) continue;
    const top = k1.slice(2);
    const children = v1 && typeof v1 === 'object' ? Object.keys(v1).filter((c) => c.startsWith('f:')) : [];
    // spec.template is huge; naming its presence is enough to tell a template change from a scale.
    if (children.length === 0 || top === 'status' || children.length > 6) out.push(top);
    else out.push(...children.map((c) => `${top}.${c.slice(2)}`));
  }
  return out;
}

/** Who wrote what, newest first, without the raw FieldsV1 trees. */
export function summariseManagedFields(entries: V1ManagedFieldsEntry[] | undefined): ManagedFieldsSummary[] {
  return (entries ?? [])
    .map((e, index) => ({
      manager: e.manager ?? 'unknown',
      operation: e.operation ?? 'Update',
      ...(e.subresource ? { subresource: e.subresource } : {}),
      ...(isoTime(e.time) ? { time: isoTime(e.time)! } : {}),
      fields: topFields(e.fieldsV1),
      index,
    }))
    .sort((a, b) => (b.time ?? '').localeCompare(a.time ?? ''));
}

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** The keys a Secret holds, with their sizes; never the values. */
export function secretKeys(data: Record<string, string> | undefined): { key: string; bytes: number }[] {
  return Object.entries(data ?? {}).map(([key, v]) => ({ key, bytes: Buffer.from(v ?? '', 'base64').length }));
}

/**
 * An object as a tool may return it: Secret `data`/`stringData` values dropped (keys and sizes kept),
 * managedFields summarised, then every remaining string through the Redactor (env values, annotations,
 * last-applied configuration).
 */
export function sanitizeObject(obj: unknown, redactor: Redactor): Record<string, unknown> {
  const o = { ...(obj as Record<string, unknown>) };
  const meta = o['metadata'] as { managedFields?: V1ManagedFieldsEntry[] } | undefined;
  if (meta) {
    const { managedFields, ...rest } = meta;
    o['metadata'] = managedFields ? { ...rest, managedFields: summariseManagedFields(managedFields) } : rest;
  }
  const isSecret = o['kind'] === 'Secret' || (typeof o['type'] === 'string' && ('data' in o || 'stringData' in o));
  if (isSecret) {
    const data = o['data'] as Record<string, string> | undefined;
    const stringData = o['stringData'] as Record<string, string> | undefined;
    delete o['data'];
    delete o['stringData'];
    o['dataKeys'] = [...secretKeys(data), ...Object.entries(stringData ?? {}).map(([key, v]) => ({ key, bytes: Buffer.byteLength(v ?? '') }))];
    o['note'] = 'Secret values are never returned; only key names and sizes.';
    // kubectl's last-applied annotation is the whole Secret again, values included.
    const m = o['metadata'] as { annotations?: Record<string, string> } | undefined;
    if (m?.annotations?.[LAST_APPLIED]) o['metadata'] = { ...m, annotations: { ...m.annotations, [LAST_APPLIED]: '(dropped: it repeats the Secret values)' } };
  }
  return redactor.redactK8sObject(o);
}

/** `matchLabels` + `matchExpressions` evaluated against an object's labels; an empty selector selects everything. */
export function labelSelectorMatches(selector: V1LabelSelector | undefined, labels: Record<string, string> | undefined): boolean {
  if (!selector) return false;
  const l = labels ?? {};
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) if (l[key] !== value) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(l, e.key);
    const values = e.values ?? [];
    if (e.operator === 'In' && !(has && values.includes(l[e.key]!))) return false;
    if (e.operator === 'NotIn' && has && values.includes(l[e.key]!)) return false;
    if (e.operator === 'Exists' && !has) return false;
    if (e.operator === 'DoesNotExist' && has) return false;
  }
  return true;
}

/** `a=b,c in (x,y)`: a label selector as the API's query string and kubectl print it. */
export function selectorString(selector: V1LabelSelector | Record<string, string> | undefined): string {
  if (!selector) return '';
  const s = selector as V1LabelSelector;
  if (!('matchLabels' in s) && !('matchExpressions' in s)) return Object.entries(selector as Record<string, string>).map(([a, b]) => `${a}=${b}`).join(',');
  const parts = Object.entries(s.matchLabels ?? {}).map(([a, b]) => `${a}=${b}`);
  for (const e of s.matchExpressions ?? []) {
    if (e.operator === 'In') parts.push(`${e.key} in (${(e.values ?? []).join(',')})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${(e.values ?? []).join(',')})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
  }
  return parts.join(',');
}

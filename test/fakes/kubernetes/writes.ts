/**
 * Writes on the fake cluster: create, replace, patch and delete of objects, their `status`
 * subresource, and the `scale` subresource of deployments, replica sets and stateful sets.
 * Every persisted (or dry-run) write records managedFields and bumps resourceVersion, and bumps
 * generation when the spec changed, as kube-apiserver does. A write that names a resourceVersion (a PUT
 * body, a merge or strategic patch setting `metadata.resourceVersion`, the Scale's) must name the stored
 * one (409 Conflict); a JSON patch whose `test` fails is 422 (patch.ts).
 */
import { changedPaths, recordUpdate, type ManagedFieldsEntry } from './managed-fields.js';
import { applyPatch, clone } from './patch.js';
import { apiVersionOf, type ResourceType } from './resources.js';
import type { KubeObject, ObjectStore } from './store.js';
import { alreadyExists, badRequest, conflict, invalid, notFound, pathNotFound, success, type StatusBody } from './status.js';

export interface WriteContext {
  store: ObjectStore;
  type: ResourceType;
  namespace?: string;
  name?: string;
  subresource?: string;
  dryRun: boolean;
  fieldManager: string;
  now: Date;
  contentType: string;
  body: unknown;
}

/** metav1.Time: RFC 3339 with whole seconds. */
export function kubeTime(d: Date): string {
  return new Date(Math.floor(d.getTime() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

const SCALABLE = new Set(['deployments', 'replicasets', 'statefulsets']);

function hasStatus(type: ResourceType): boolean {
  return type.subresources?.includes('status') ?? false;
}

function getAt(obj: unknown, path: string[]): unknown {
  let cur = obj;
  for (const p of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur;
}

function validate(type: ResourceType, obj: KubeObject, urlName: string | undefined, urlNamespace: string | undefined): void {
  if (obj.kind !== type.kind) throw badRequest(`the API version in the data (${obj.apiVersion}) does not match the expected API version (${apiVersionOf(type)})`);
  if (urlName !== undefined && obj.metadata?.name !== urlName)
    throw badRequest(`the name of the object (${obj.metadata?.name}) does not match the name on the URL (${urlName})`);
  if (type.namespaced && urlNamespace !== undefined && obj.metadata.namespace !== urlNamespace)
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  if (SCALABLE.has(type.plural)) {
    const replicas = getAt(obj, ['spec', 'replicas']);
    if (replicas !== undefined && (!Number.isInteger(replicas) || (replicas as number) < 0))
      throw invalid(type.kind, type.group, obj.metadata.name, 'spec.replicas', `Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0`);
  }
}

/** Records the write on `after` (managedFields, resourceVersion, generation) and persists unless dry run. */
function commit(ctx: WriteContext, before: KubeObject | undefined, after: KubeObject, subresource?: string): KubeObject {
  validate(ctx.type, after, ctx.name, ctx.namespace);
  const paths = changedPaths(before ?? {}, after);
  const removed = paths.filter((p) => getAt(after, p) === undefined);
  const changed = paths.filter((p) => getAt(after, p) !== undefined);
  const specChanged = paths.some((p) => p[0] !== 'metadata' && p[0] !== 'status');
  after.metadata.managedFields = recordUpdate(before?.metadata.managedFields as ManagedFieldsEntry[] | undefined, {
    manager: ctx.fieldManager,
    apiVersion: apiVersionOf(ctx.type),
    time: kubeTime(ctx.now),
    ...(subresource ? { subresource } : {}),
    changed,
    removed,
  });
  if (!before) after.metadata.generation = 1;
  else if (specChanged) after.metadata.generation = (before.metadata.generation ?? 1) + 1;
  if (ctx.dryRun) return after;
  after.metadata.resourceVersion = ctx.store.nextResourceVersion();
  ctx.store.put(ctx.type, after);
  return clone(after);
}

/**
 * Optimistic concurrency, as kube-apiserver's storage does it: an update (a PUT, or the object a PATCH of
 * any type produced) that names a resourceVersion other than the stored one is 409 Conflict; one that
 * names none is unconditional. Dry runs are checked the same way.
 */
function checkResourceVersion(ctx: WriteContext, before: KubeObject, next: unknown): void {
  const rv = getAt(next, ['metadata', 'resourceVersion']);
  if (rv !== undefined && rv !== null && rv !== '' && rv !== before.metadata.resourceVersion) throw conflict(ctx.type.plural, ctx.type.group, ctx.name!);
}

function current(ctx: WriteContext): KubeObject {
  const obj = ctx.store.get(ctx.type, ctx.namespace, ctx.name!);
  if (!obj) throw notFound(ctx.type.plural, ctx.type.group, ctx.name!);
  return obj;
}

/** Keeps the parts of `next` a write to the main resource (or to `status`) may change. */
function confine(type: ResourceType, before: KubeObject, next: KubeObject, subresource: string | undefined): KubeObject {
  const out = clone(next);
  const metadata: Record<string, unknown> = { ...out.metadata };
  for (const k of ['uid', 'creationTimestamp', 'generation', 'resourceVersion', 'managedFields'] as const) {
    if (before.metadata[k] === undefined) delete metadata[k];
    else metadata[k] = before.metadata[k];
  }
  out.metadata = metadata as KubeObject['metadata'];
  if (subresource === 'status') return { ...before, status: out['status'] } as KubeObject;
  if (hasStatus(type)) {
    if (before['status'] === undefined) delete out['status'];
    else out['status'] = before['status'];
  }
  return out;
}

function toScale(obj: KubeObject): KubeObject {
  const spec = (obj['spec'] ?? {}) as { replicas?: number; selector?: { matchLabels?: Record<string, string> } };
  const status = (obj['status'] ?? {}) as { replicas?: number };
  const selector = Object.entries(spec.selector?.matchLabels ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: obj.metadata.name,
      namespace: obj.metadata.namespace,
      uid: obj.metadata.uid,
      resourceVersion: obj.metadata.resourceVersion,
      creationTimestamp: obj.metadata.creationTimestamp,
    },
    spec: { replicas: spec.replicas ?? 1 },
    status: { replicas: status.replicas ?? 0, selector },
  } as KubeObject;
}

export function readScale(ctx: Pick<WriteContext, 'store' | 'type' | 'namespace' | 'name'>): KubeObject {
  if (!SCALABLE.has(ctx.type.plural)) throw pathNotFound();
  const obj = ctx.store.get(ctx.type, ctx.namespace, ctx.name!);
  if (!obj) throw notFound(ctx.type.plural, ctx.type.group, ctx.name!);
  return toScale(obj);
}

/** PATCH or PUT on `…/scale`: only spec.replicas reaches the parent; managedFields say subresource `scale`. */
function writeScale(ctx: WriteContext, method: 'PATCH' | 'PUT'): KubeObject {
  if (!SCALABLE.has(ctx.type.plural)) throw pathNotFound();
  const before = current(ctx);
  const scale = toScale(before);
  const next = (method === 'PATCH' ? applyPatch(scale, ctx.contentType, ctx.body) : ctx.body) as KubeObject;
  const replicas = getAt(next, ['spec', 'replicas']);
  if (!Number.isInteger(replicas) || (replicas as number) < 0)
    throw invalid('Scale', 'autoscaling', ctx.name!, 'spec.replicas', `Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0`);
  // The Scale carries its parent's resourceVersion; a PUT or PATCH that sets it is a precondition on the parent.
  checkResourceVersion(ctx, before, next);
  const after = clone(before);
  after['spec'] = { ...((after['spec'] as object) ?? {}), replicas };
  return toScale(commit(ctx, before, after, 'scale'));
}

/** Like kube-apiserver, a body may omit apiVersion, kind and namespace: the URL supplies them. */
function withDefaults(ctx: WriteContext, body: KubeObject | undefined): KubeObject {
  const obj = clone(body ?? ({} as KubeObject));
  obj.metadata ??= {} as KubeObject['metadata'];
  obj.apiVersion ??= apiVersionOf(ctx.type);
  obj.kind ??= ctx.type.kind;
  if (ctx.type.namespaced) obj.metadata.namespace ??= ctx.namespace;
  return obj;
}

export function create(ctx: WriteContext): KubeObject {
  if (ctx.name !== undefined) throw pathNotFound();
  const obj = withDefaults(ctx, ctx.body as KubeObject);
  if (!obj.metadata.name) throw invalid(ctx.type.kind, ctx.type.group, '', 'metadata.name', 'Required value: name or generateName is required');
  if (ctx.store.get(ctx.type, obj.metadata.namespace, obj.metadata.name))
    throw alreadyExists(ctx.type.plural, ctx.type.group, obj.metadata.name);
  delete obj.metadata.managedFields;
  obj.metadata.uid = crypto.randomUUID();
  obj.metadata.creationTimestamp = kubeTime(ctx.now);
  return commit({ ...ctx, name: obj.metadata.name }, undefined, obj);
}

export function replace(ctx: WriteContext): KubeObject {
  if (ctx.subresource === 'scale') return writeScale(ctx, 'PUT');
  if (ctx.subresource && ctx.subresource !== 'status') throw pathNotFound();
  const before = current(ctx);
  const body = withDefaults(ctx, ctx.body as KubeObject);
  checkResourceVersion(ctx, before, body);
  return commit(ctx, before, confine(ctx.type, before, body, ctx.subresource), ctx.subresource);
}

export function patch(ctx: WriteContext): KubeObject {
  if (ctx.subresource === 'scale') return writeScale(ctx, 'PATCH');
  if (ctx.subresource && ctx.subresource !== 'status') throw pathNotFound();
  const before = current(ctx);
  const next = applyPatch(before, ctx.contentType, ctx.body) as KubeObject;
  checkResourceVersion(ctx, before, next);
  return commit(ctx, before, confine(ctx.type, before, next, ctx.subresource), ctx.subresource);
}

export function remove(ctx: WriteContext): StatusBody {
  if (ctx.subresource) throw pathNotFound();
  const before = current(ctx);
  if (!ctx.dryRun) ctx.store.delete(ctx.type, ctx.namespace, ctx.name!);
  return success({ name: ctx.name!, group: ctx.type.group, kind: ctx.type.plural, uid: before.metadata.uid! });
}

/**
 * The fake cluster's object store: plain JSON objects keyed by group, plural, namespace and name,
 * with one cluster-wide resourceVersion counter like etcd's revision. Lists come back in key order
 * (namespace, then name), as etcd returns them.
 */
import { createHash } from 'node:crypto';
import { clone } from './patch.js';
import { ResourceRegistry, splitApiVersion, type ResourceType } from './resources.js';

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    creationTimestamp?: string;
    managedFields?: unknown[];
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

function key(type: ResourceType, namespace: string | undefined, name: string): string {
  return `${type.group}/${type.plural}/${namespace ?? ''}/${name}`;
}

/** A stable uid for a world object that has none, so repeated runs agree. */
function deterministicUid(seed: string): string {
  const h = createHash('sha256').update(seed).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export class ObjectStore {
  private readonly objects = new Map<string, KubeObject>();
  private revision = 1000;

  constructor(readonly registry: ResourceRegistry) {}

  get resourceVersion(): string {
    return String(this.revision);
  }

  nextResourceVersion(): string {
    this.revision += 1;
    return String(this.revision);
  }

  /** Adds a world object as given, filling uid/resourceVersion when absent. */
  seed(input: KubeObject): void {
    const obj = clone(input);
    if (!obj.metadata?.name) throw new Error(`world object ${obj.kind} without metadata.name`);
    const type = this.registry.learn(obj);
    obj.metadata.uid ??= deterministicUid(`${obj.kind}/${obj.metadata.namespace ?? ''}/${obj.metadata.name}`);
    // Keep the counter ahead of any resourceVersion the world brings, so later writes look newer.
    const given = Number(obj.metadata.resourceVersion);
    if (Number.isSafeInteger(given) && given > this.revision) this.revision = given;
    obj.metadata.resourceVersion ??= this.nextResourceVersion();
    this.objects.set(key(type, obj.metadata.namespace, obj.metadata.name), obj);
  }

  /**
   * The API server never serves an owner reference without its uid; a world written by hand often
   * leaves it out. Fill each missing one from the owner object the world holds (same namespace, or
   * cluster-scoped), so owner matching by uid works as on a real cluster.
   */
  linkOwners(): void {
    for (const obj of this.objects.values()) {
      for (const ref of (obj.metadata as { ownerReferences?: { apiVersion?: string; kind?: string; name?: string; uid?: string }[] }).ownerReferences ?? []) {
        if (ref.uid || !ref.kind || !ref.name) continue;
        const type = this.registry.byKind(splitApiVersion(ref.apiVersion ?? 'v1').group, ref.kind);
        const owner = type ? this.objects.get(key(type, type.namespaced ? obj.metadata.namespace : undefined, ref.name)) : undefined;
        if (owner?.metadata.uid) ref.uid = owner.metadata.uid;
      }
    }
  }

  typeOf(obj: Pick<KubeObject, 'apiVersion' | 'kind'>): ResourceType | undefined {
    return this.registry.byKind(splitApiVersion(obj.apiVersion).group, obj.kind);
  }

  get(type: ResourceType, namespace: string | undefined, name: string): KubeObject | undefined {
    const found = this.objects.get(key(type, type.namespaced ? namespace : undefined, name));
    return found ? clone(found) : undefined;
  }

  put(type: ResourceType, obj: KubeObject): void {
    this.objects.set(key(type, type.namespaced ? obj.metadata.namespace : undefined, obj.metadata.name), clone(obj));
  }

  delete(type: ResourceType, namespace: string | undefined, name: string): boolean {
    return this.objects.delete(key(type, type.namespaced ? namespace : undefined, name));
  }

  /** Objects of a type, in one namespace or (namespace undefined) all of them, sorted like etcd keys. */
  list(type: ResourceType, namespace: string | undefined): KubeObject[] {
    const prefix = `${type.group}/${type.plural}/${namespace !== undefined ? `${namespace}/` : ''}`;
    return [...this.objects.entries()]
      .filter(([k]) => k.startsWith(prefix))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, v]) => clone(v));
  }

  all(): KubeObject[] {
    return [...this.objects.values()].map((o) => clone(o));
  }
}

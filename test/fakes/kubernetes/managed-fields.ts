/**
 * `metadata.managedFields` bookkeeping for Update operations, as structured-merge-diff does it: the
 * writing manager's entry (keyed by manager + operation + subresource) gains the fields the write
 * changed, and those fields are taken away from every other manager (an Update never conflicts; it
 * takes ownership). Lists are treated as leaves (real FieldsV1 keys list items by `k:`/`v:`).
 */

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Update' | 'Apply';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Record<string, unknown>;
  subresource?: string;
}

type Path = string[];

function isMap(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Fields that belong to the server, never to a manager. */
const SERVER_OWNED: Path[] = [
  ['metadata', 'managedFields'],
  ['metadata', 'resourceVersion'],
  ['metadata', 'generation'],
  ['metadata', 'uid'],
  ['metadata', 'creationTimestamp'],
  ['metadata', 'name'],
  ['metadata', 'namespace'],
  ['apiVersion'],
  ['kind'],
];

function serverOwned(path: Path): boolean {
  return SERVER_OWNED.some((s) => s.length <= path.length && s.every((p, i) => path[i] === p));
}

/** Leaf paths whose value differs between `before` and `after` (set, changed or removed). */
export function changedPaths(before: unknown, after: unknown, prefix: Path = []): Path[] {
  if (serverOwned(prefix)) return [];
  if (isMap(before) && isMap(after)) {
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    return [...keys].flatMap((k) => changedPaths(before[k], after[k], [...prefix, k]));
  }
  if (isMap(after) && before === undefined) return changedPaths({}, after, prefix).concat(Object.keys(after).length ? [] : [prefix]);
  if (isMap(before) && after === undefined) return changedPaths(before, {}, prefix);
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [prefix];
}

export function toFieldsV1(paths: Path[]): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const path of paths) {
    let cur = root;
    for (const part of path) {
      const key = part === '.' ? '.' : `f:${part}`;
      cur[key] ??= {};
      cur = cur[key] as Record<string, unknown>;
    }
  }
  return root;
}

export function fromFieldsV1(fields: Record<string, unknown>, prefix: Path = []): Path[] {
  const out: Path[] = [];
  for (const [key, value] of Object.entries(fields)) {
    const part = key === '.' ? '.' : key.replace(/^[fkvi]:/, '');
    const path = [...prefix, part];
    const children = isMap(value) ? fromFieldsV1(value, path) : [];
    out.push(...(children.length ? children : [path]));
  }
  return out;
}

function startsWith(path: Path, prefix: Path): boolean {
  return prefix.length <= path.length && prefix.every((p, i) => path[i] === p);
}

export interface UpdateRecord {
  manager: string;
  apiVersion: string;
  time: string;
  subresource?: string;
  /** Leaf paths this write changed (see changedPaths). */
  changed: Path[];
  /** Paths the write removed: they leave every set, the writer's included. */
  removed: Path[];
}

/** Returns the new managedFields list after one persisted (or dry-run) Update. */
export function recordUpdate(entries: ManagedFieldsEntry[] | undefined, update: UpdateRecord): ManagedFieldsEntry[] {
  const touched = [...update.changed, ...update.removed];
  const isWriter = (e: ManagedFieldsEntry): boolean =>
    e.manager === update.manager && e.operation === 'Update' && (e.subresource ?? '') === (update.subresource ?? '');
  const out: ManagedFieldsEntry[] = [];
  let writer: ManagedFieldsEntry | undefined;
  for (const entry of entries ?? []) {
    if (isWriter(entry)) {
      writer = entry;
      continue;
    }
    const kept = fromFieldsV1(entry.fieldsV1).filter((p) => !touched.some((t) => startsWith(p, t)));
    if (kept.length > 0) out.push({ ...entry, fieldsV1: toFieldsV1(kept) });
  }
  const previous = writer ? fromFieldsV1(writer.fieldsV1).filter((p) => !update.removed.some((t) => startsWith(p, t))) : [];
  const owned = [...previous, ...update.changed.filter((p) => !previous.some((q) => startsWith(p, q)))];
  if (owned.length > 0 || writer) {
    out.push({
      manager: update.manager,
      operation: 'Update',
      apiVersion: update.apiVersion,
      time: update.time,
      fieldsType: 'FieldsV1',
      fieldsV1: toFieldsV1(owned),
      ...(update.subresource ? { subresource: update.subresource } : {}),
    });
  }
  return out;
}

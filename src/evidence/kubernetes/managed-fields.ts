import type { V1ManagedFieldsEntry } from '@kubernetes/client-node';

/** Who last wrote a field of an object, from `metadata.managedFields` (server-side field ownership). */
export interface FieldWrite {
  manager: string;
  operation: string;
  subresource?: string;
  time?: Date;
  /** Index in metadata.managedFields, for the citation. */
  index: number;
}

/** Does this FieldsV1 tree own the path, e.g. ['spec', 'replicas'] → f:spec → f:replicas. */
function ownsPath(fieldsV1: unknown, path: string[]): boolean {
  let node: unknown = fieldsV1;
  for (const part of path) {
    if (typeof node !== 'object' || node === null) return false;
    node = (node as Record<string, unknown>)[`f:${part}`];
    if (node === undefined) return false;
  }
  return true;
}

/** Entries that own `path`, newest first. */
export function writersOf(entries: V1ManagedFieldsEntry[] | undefined, path: string[]): FieldWrite[] {
  return (entries ?? [])
    .map((e, index) => ({ e, index }))
    .filter(({ e }) => ownsPath(e.fieldsV1, path))
    .map(({ e, index }) => ({
      manager: e.manager ?? 'unknown',
      operation: e.operation ?? 'Update',
      subresource: e.subresource || undefined,
      time: e.time ? new Date(e.time) : undefined,
      index,
    }))
    .sort((a, b) => (b.time?.getTime() ?? 0) - (a.time?.getTime() ?? 0));
}

/**
 * A human name for the tool behind a field manager: `kubectl` writing through the `scale` subresource
 * is `kubectl scale`; kubectl's other verbs use their own manager names (kubectl-edit, kubectl-patch, …).
 */
export function describeWriter(w: Pick<FieldWrite, 'manager' | 'subresource' | 'operation'>): string {
  const m = w.manager;
  if (m === 'kubectl' || m === 'kubectl-scale') return w.subresource === 'scale' || m === 'kubectl-scale' ? 'kubectl scale' : w.operation === 'Apply' ? 'kubectl apply --server-side' : 'kubectl';
  if (m.startsWith('kubectl-')) return `kubectl ${m.slice('kubectl-'.length).replace('client-side-apply', 'apply')}`;
  if (m === 'helm') return 'Helm';
  if (m === 'kube-controller-manager') return 'the controller manager';
  return m;
}

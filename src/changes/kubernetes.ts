import type { V1ManagedFieldsEntry, V1ReplicaSet } from '@kubernetes/client-node';
import type { KubeEvidence } from '../evidence/kubernetes/gather.js';
import { describeWriter } from '../evidence/kubernetes/managed-fields.js';
import { objectCitation } from '../triage/citations.js';
import type { ChangeEvent, ChangeKind } from './types.js';

/** Managers that are Kubernetes itself reconciling, not a change someone made. */
const CONTROLLERS = /^(kube-controller-manager|kube-scheduler|kubelet|deployment-controller|replicaset-controller|endpoint|horizontal-pod-autoscaler)/;

function owned(fields: unknown, path: string[]): boolean {
  let node: unknown = fields;
  for (const p of path) {
    if (typeof node !== 'object' || node === null) return false;
    node = (node as Record<string, unknown>)[`f:${p}`];
    if (node === undefined) return false;
  }
  return true;
}

function containsKey(fields: unknown, key: string): boolean {
  if (typeof fields !== 'object' || fields === null) return false;
  return Object.entries(fields).some(([k, v]) => k === key || containsKey(v, key));
}

/** What a managedFields write touched, as a change kind. */
function kindOfWrite(e: V1ManagedFieldsEntry): ChangeKind {
  if (e.subresource === 'scale') return 'scale';
  const f = e.fieldsV1;
  if (owned(f, ['spec', 'replicas']) && !owned(f, ['spec', 'template'])) return 'scale';
  if (containsKey(f, 'f:resources')) return 'resources';
  if (containsKey(f, 'f:image')) return 'image';
  return 'edit';
}

function topFields(f: unknown): string {
  if (typeof f !== 'object' || f === null) return '';
  const spec = (f as Record<string, unknown>)['f:spec'];
  const keys = Object.keys(typeof spec === 'object' && spec ? spec : (f as object)).filter((k) => k.startsWith('f:'));
  return keys.map((k) => k.slice(2)).slice(0, 4).join(', ');
}

/** Hand-made writes to an object, from its managedFields (the newest write of each manager is all the API keeps). */
export function managedFieldChanges(kind: string, namespace: string | undefined, name: string, entries: V1ManagedFieldsEntry[] | undefined): ChangeEvent[] {
  const out: ChangeEvent[] = [];
  (entries ?? []).forEach((e, index) => {
    if (!e.time || !e.manager || CONTROLLERS.test(e.manager) || e.subresource === 'status' || e.manager === 'helm') return;
    const k = kindOfWrite(e);
    const who = describeWriter({ manager: e.manager, subresource: e.subresource, operation: e.operation ?? 'Update' });
    out.push({
      at: new Date(e.time),
      actor: e.manager,
      kind: kind === 'ConfigMap' ? 'config' : kind === 'Secret' ? 'secret' : kind === 'NetworkPolicy' ? 'network_policy' : kind === 'HorizontalPodAutoscaler' ? 'hpa' : k,
      target: { kind, namespace, name },
      source: 'kubernetes',
      summary: `${who} ${e.operation === 'Apply' ? 'applied' : 'updated'} ${kind.toLowerCase()}/${name}${kind === 'ConfigMap' || kind === 'Secret' ? ' data (values not shown)' : ` (${k === 'scale' ? 'replicas' : topFields(e.fieldsV1) || 'fields'})`}`,
      citation: objectCitation(kind, namespace, name, `metadata.managedFields[${index}]`),
    });
  });
  return out;
}

function images(rs: V1ReplicaSet): string[] {
  return (rs.spec?.template?.spec?.containers ?? []).map((c) => `${c.name}=${c.image}`);
}

/** Each ReplicaSet is a rollout of the Deployment's pod template; an image difference makes it an image change. */
export function rolloutChanges(ev: KubeEvidence): ChangeEvent[] {
  const t = ev.target;
  if (!t) return [];
  const revisions = [...ev.replicaSets]
    .map((rs) => ({ rs, rev: Number(rs.metadata?.annotations?.['deployment.kubernetes.io/revision'] ?? 0) }))
    .filter((r) => r.rev > 0 && r.rs.metadata?.creationTimestamp)
    .sort((a, b) => a.rev - b.rev);
  return revisions.slice(1).map(({ rs, rev }, i) => {
    const prev = revisions[i]!.rs;
    const before = images(prev).join(', ');
    const after = images(rs).join(', ');
    const imageChanged = before !== after;
    return {
      at: new Date(rs.metadata!.creationTimestamp!),
      actor: 'deployment-controller',
      kind: imageChanged ? ('image' as const) : ('rollout' as const),
      target: { kind: t.kind, namespace: t.namespace, name: t.name },
      before: imageChanged ? before : `revision ${revisions[i]!.rev}`,
      after: imageChanged ? after : `revision ${rev}`,
      source: 'kubernetes',
      summary: imageChanged ? `rollout to revision ${rev}: ${after}` : `rollout to revision ${rev} (pod template changed)`,
      citation: objectCitation('ReplicaSet', t.namespace, rs.metadata?.name ?? '?'),
    };
  });
}

/** Helm revisions as changes: upgrades, rollbacks, installs. */
export function helmChanges(ev: KubeEvidence): ChangeEvent[] {
  const t = ev.target;
  if (!t || !ev.helm) return [];
  const revs = [...ev.helm.revisions].sort((a, b) => a.revision - b.revision);
  return revs
    .filter((r) => r.deployedAt)
    .map((r, i) => {
      const kind: ChangeKind = /rollback/i.test(r.description) ? 'helm_rollback' : r.revision === 1 ? 'helm_install' : 'helm_upgrade';
      return {
        at: r.deployedAt!,
        actor: 'helm',
        kind,
        target: { kind: 'HelmRelease', namespace: r.namespace, name: r.name },
        before: i > 0 ? `rev ${revs[i - 1]!.revision} (${revs[i - 1]!.chart})` : undefined,
        after: `rev ${r.revision} (${r.chart})`,
        source: 'helm',
        summary: `helm ${kind.replace('helm_', '')} ${r.name} to rev ${r.revision}: ${r.description}`,
        citation: objectCitation('Secret', r.namespace, r.secretName, 'data.release (decoded)'),
      };
    });
}

/** Every change the Kubernetes reads can date, for the investigation's timeline. */
export function kubernetesChanges(ev: KubeEvidence): ChangeEvent[] {
  const t = ev.target;
  const out: ChangeEvent[] = [...rolloutChanges(ev), ...helmChanges(ev)];
  if (t && ev.workload) out.push(...managedFieldChanges(t.kind, t.namespace, t.name, ev.workload.metadata?.managedFields));
  for (const obj of ev.related) out.push(...managedFieldChanges(obj.kind, obj.namespace, obj.name, obj.managedFields));
  return out.sort((a, b) => a.at.getTime() - b.at.getTime());
}

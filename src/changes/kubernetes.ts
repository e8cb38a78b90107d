import type { V1ManagedFieldsEntry, V1ObjectMeta, V1ReplicaSet } from '@kubernetes/client-node';
import type { ClusterSnapshot } from '../topology/snapshot.js';
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

/**
 * Changes anywhere in the cluster, from the snapshot alone (no extra reads): rollouts (a Deployment's
 * ReplicaSets by revision) and hand edits (managedFields) of workloads, ConfigMaps, Services, Ingresses,
 * NetworkPolicies, HPAs, quotas and RBAC objects since `since`. Helm's own writes count here (a Helm
 * upgrade of a workload Vigil did not read the release history of is still a change to clear).
 */
export function snapshotChanges(s: ClusterSnapshot, since: Date): ChangeEvent[] {
  const out: ChangeEvent[] = [];
  const recent = (t: string | Date | undefined) => !!t && new Date(t).getTime() >= since.getTime();
  const owners = new Map<string, V1ReplicaSet[]>();
  for (const rs of s.replicaSets) {
    const o = rs.metadata?.ownerReferences?.find((x) => x.kind === 'Deployment');
    if (!o) continue;
    const k = `${rs.metadata?.namespace}/${o.name}`;
    owners.set(k, [...(owners.get(k) ?? []), rs]);
  }
  for (const [k, rss] of owners) {
    const [ns, name] = k.split('/') as [string, string];
    const ordered = rss
      .map((rs) => ({ rs, rev: Number(rs.metadata?.annotations?.['deployment.kubernetes.io/revision'] ?? 0) }))
      .filter((r) => r.rev > 0 && r.rs.metadata?.creationTimestamp)
      .sort((a, b) => a.rev - b.rev);
    ordered.slice(1).forEach(({ rs, rev }, i) => {
      if (!recent(rs.metadata!.creationTimestamp)) return;
      const before = images(ordered[i]!.rs).join(', ');
      const after = images(rs).join(', ');
      out.push({
        at: new Date(rs.metadata!.creationTimestamp!),
        actor: 'deployment-controller',
        kind: before !== after ? 'image' : 'rollout',
        target: { kind: 'Deployment', namespace: ns, name },
        before: before !== after ? before : `revision ${ordered[i]!.rev}`,
        after: before !== after ? after : `revision ${rev}`,
        source: 'kubernetes',
        summary: before !== after ? `rollout of ${name} to revision ${rev}: ${after}` : `rollout of ${name} to revision ${rev} (pod template changed)`,
        citation: objectCitation('ReplicaSet', ns, rs.metadata?.name ?? '?'),
      });
    });
  }
  const edits: [string, { metadata?: V1ObjectMeta }[]][] = [
    ['Deployment', s.deployments],
    ['StatefulSet', s.statefulSets],
    ['DaemonSet', s.daemonSets],
    ['CronJob', s.cronJobs],
    ['ConfigMap', s.configMaps],
    ['Service', s.services],
    ['Ingress', s.ingresses],
    ['NetworkPolicy', s.networkPolicies],
    ['HorizontalPodAutoscaler', s.hpas],
    ['ResourceQuota', s.resourceQuotas],
    ['Role', s.roles],
    ['RoleBinding', s.roleBindings],
    // Mesh routing, certificates, autoscalers, chaos experiments, GitOps objects: edits there break traffic too.
    ...Object.entries(s.custom).map(([kind, objects]): [string, { metadata?: V1ObjectMeta }[]] => [kind, objects]),
  ];
  for (const [kind, objects] of edits) {
    for (const o of objects) {
      const meta = o.metadata;
      if (!meta?.name) continue;
      for (const c of managedFieldChanges(kind, meta.namespace, meta.name, meta.managedFields)) if (c.at.getTime() >= since.getTime()) out.push(c);
      // Helm's writes: an upgrade of a release whose history was not read.
      for (const e of meta.managedFields ?? []) {
        if (e.manager !== 'helm' || !recent(e.time) || (kind !== 'Deployment' && kind !== 'StatefulSet' && kind !== 'DaemonSet')) continue;
        out.push({
          at: new Date(e.time!),
          actor: 'helm',
          kind: 'helm_upgrade',
          target: { kind: 'HelmRelease', namespace: meta.namespace, name: meta.annotations?.['meta.helm.sh/release-name'] ?? meta.name },
          source: 'kubernetes',
          summary: `Helm wrote ${kind.toLowerCase()}/${meta.name} (release ${meta.annotations?.['meta.helm.sh/release-name'] ?? meta.name})`,
          citation: objectCitation(kind, meta.namespace, meta.name, 'metadata.managedFields'),
        });
      }
    }
  }
  return out.sort((a, b) => a.at.getTime() - b.at.getTime());
}

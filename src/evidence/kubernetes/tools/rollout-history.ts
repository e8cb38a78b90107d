import type { V1ControllerRevision, V1Deployment, V1PodTemplateSpec, V1ReplicaSet, V1StatefulSet } from '@kubernetes/client-node';
import { z } from 'zod';
import type { EvidenceTool } from '../../tool.js';
import type { KubeReader } from '../client.js';
import { apiPath, isoTime, KubeObjects, selectorString, timeMs } from '../objects.js';
import { failure, kubeCitation, noData, success } from './result.js';
import { diffPodTemplates, isEmptyDiff, type TemplateDiff } from './rollout-diff.js';

const parameters = z.object({
  kind: z.enum(['Deployment', 'StatefulSet', 'DaemonSet']).describe('Kind.'),
  namespace: z.string().min(1).describe('Namespace.'),
  name: z.string().min(1).describe('Name.'),
});

export interface RolloutRevision {
  revision: number;
  /** ReplicaSet or ControllerRevision name. */
  source: string;
  created?: string;
  images: string[];
  podTemplateHash?: string;
  replicas?: { desired: number; ready: number };
  current: boolean;
  /** Changes from the previous revision's pod template. */
  changes?: TemplateDiff;
  /** True when the pod template equals the previous revision's (e.g. a rollback's twin). */
  templateUnchanged?: boolean;
}

interface RawRevision {
  revision: number;
  source: string;
  created: unknown;
  template: V1PodTemplateSpec | undefined;
  hash?: string;
  replicas?: { desired: number; ready: number };
}

/** Oldest first → each revision diffed against the one before; returned newest first. */
export function buildRevisions(raw: RawRevision[], currentRevision: number | undefined): RolloutRevision[] {
  const sorted = [...raw].sort((a, b) => a.revision - b.revision);
  return sorted
    .map((r, i) => {
      const prev = sorted[i - 1];
      const changes = prev ? diffPodTemplates(prev.template, r.template) : undefined;
      return {
        revision: r.revision,
        source: r.source,
        ...(isoTime(r.created) ? { created: isoTime(r.created)! } : {}),
        images: [...(r.template?.spec?.initContainers ?? []), ...(r.template?.spec?.containers ?? [])].map((c) => c.image ?? '?'),
        ...(r.hash ? { podTemplateHash: r.hash } : {}),
        ...(r.replicas ? { replicas: r.replicas } : {}),
        current: r.revision === currentRevision,
        ...(changes ? (isEmptyDiff(changes) ? { templateUnchanged: true } : { changes }) : {}),
      };
    })
    .reverse();
}

function owned(o: { metadata?: { ownerReferences?: { uid: string }[] } }, uid: string | undefined): boolean {
  return !uid || (o.metadata?.ownerReferences ?? []).some((r) => r.uid === uid);
}

export function k8sRolloutHistoryTool(reader: KubeReader): EvidenceTool<typeof parameters> {
  return {
    name: 'k8s_rollout_history',
    description:
      'A workload\'s revisions (time, images, replicas, which is current) and what each changed in the pod template: images, env names, resources, probes. Ties an incident to a rollout, or rules one out.',
    parameters,
    effect: 'read',
    async execute(p, ctx) {
      const objects = new KubeObjects(reader);
      const info = KubeObjects.kind(p.kind);
      const citation = kubeCitation(apiPath(info, p.namespace, p.name));
      try {
        const workload = await objects.get<V1Deployment | V1StatefulSet>(info, p.namespace, p.name);
        const uid = workload.metadata?.uid;
        const labelSelector = selectorString(workload.spec?.selector);
        let raw: RawRevision[];
        let current: number | undefined;
        let sourceRef: string;
        if (p.kind === 'Deployment') {
          const rsInfo = KubeObjects.kind('ReplicaSet');
          sourceRef = `${apiPath(rsInfo, p.namespace)}?labelSelector=${labelSelector}`;
          const page = await objects.list<V1ReplicaSet>(rsInfo, { namespace: p.namespace, labelSelector, limit: 500 });
          raw = page.items
            .filter((rs) => owned(rs, uid))
            .map((rs) => ({
              revision: Number(rs.metadata?.annotations?.['deployment.kubernetes.io/revision'] ?? 0),
              source: rs.metadata?.name ?? '?',
              created: rs.metadata?.creationTimestamp,
              template: rs.spec?.template,
              ...(rs.metadata?.labels?.['pod-template-hash'] ? { hash: rs.metadata.labels['pod-template-hash'] } : {}),
              replicas: { desired: rs.spec?.replicas ?? 0, ready: rs.status?.readyReplicas ?? 0 },
            }));
          current = Number(workload.metadata?.annotations?.['deployment.kubernetes.io/revision'] ?? NaN);
        } else {
          const crInfo = KubeObjects.kind('ControllerRevision');
          sourceRef = `${apiPath(crInfo, p.namespace)}?labelSelector=${labelSelector}`;
          const page = await objects.list<V1ControllerRevision>(crInfo, { namespace: p.namespace, labelSelector, limit: 500 });
          const revs = page.items.filter((cr) => owned(cr, uid));
          raw = revs.map((cr) => ({
            revision: cr.revision,
            source: cr.metadata?.name ?? '?',
            created: cr.metadata?.creationTimestamp,
            // The revision's data is a patch holding the whole template (`spec.template`, `$patch: replace`).
            template: (cr.data as { spec?: { template?: V1PodTemplateSpec } } | undefined)?.spec?.template,
            ...(cr.metadata?.labels?.['controller-revision-hash'] ? { hash: cr.metadata.labels['controller-revision-hash'] } : {}),
          }));
          const updateName = (workload as V1StatefulSet).status?.updateRevision ?? (workload as V1StatefulSet).status?.currentRevision;
          current = revs.find((r) => r.metadata?.name === updateName)?.revision ?? Math.max(...raw.map((r) => r.revision));
        }
        if (raw.length === 0) return noData(kubeCitation(sourceRef), `no revisions found for ${p.kind} ${p.namespace}/${p.name} (selector ${labelSelector})`);
        const revisions = buildRevisions(raw, Number.isNaN(current) ? undefined : current);
        const data = { kind: p.kind, namespace: p.namespace, name: p.name, currentRevision: current, revisions: revisions.map((r) => (r.changes ? { ...r, changes: changedOnly(r.changes) } : r)) };
        // Evidence lines for the revisions that changed something (or the current one); the data lists them all.
        const evidence = revisions.slice(0, 3).filter((r) => r.current || r.changes).map((r) => ({
          kind: 'change' as const,
          summary: `${p.kind} ${p.namespace}/${p.name} revision ${r.revision}${r.current ? ' (current)' : ''} created ${r.created ?? '?'}: ${r.images.join(', ')}${r.changes ? ` — changed: ${describeChanges(r.changes)}` : ''}`,
          citation: kubeCitation(sourceRef),
          ...(timeMs(r.created) !== undefined ? { observedAt: new Date(timeMs(r.created)!) } : {}),
        }));
        return success(citation, data, ctx, evidence);
      } catch (err) {
        return failure(citation, err, ctx, 'get', info.plural, p.namespace);
      }
    },
  };
}

/** A diff as the model reads it: the lists that hold something, `otherChanges` only when true. */
function changedOnly(d: TemplateDiff): Partial<TemplateDiff> {
  return Object.fromEntries(Object.entries(d).filter(([, v]) => (Array.isArray(v) ? v.length > 0 : v !== false)));
}

function describeChanges(d: TemplateDiff): string {
  const parts = [
    ...d.images.map((i) => `image ${i.container} ${i.from ?? '∅'} → ${i.to ?? '∅'}`),
    d.envAdded.length ? `env added ${d.envAdded.join(',')}` : '',
    d.envRemoved.length ? `env removed ${d.envRemoved.join(',')}` : '',
    d.envChanged.length ? `env changed ${d.envChanged.join(',')}` : '',
    d.resources.length ? `resources ${d.resources.map((r) => r.container).join(',')}` : '',
    d.probes.length ? `probes ${d.probes.map((r) => `${r.container}/${r.probe}`).join(',')}` : '',
    d.otherChanges ? 'other template fields' : '',
  ].filter(Boolean);
  return parts.join('; ') || 'none';
}

import type { CoreV1Event, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { z } from 'zod';
import type { EvidenceTool } from '../../tool.js';
import type { KubeReader } from '../client.js';
import { age, apiPath, KubeObjects, toFailure } from '../objects.js';
import { groupEvents } from './event-groups.js';
import { failure, kubeCitation, noData, success } from './result.js';

const parameters = z.object({
  namespace: z.string().min(1).describe('Namespace.'),
  pvc: z.string().optional().describe('Omit for every PVC in the namespace.'),
});

export function k8sStorageTool(reader: KubeReader): EvidenceTool<typeof parameters> {
  return {
    name: 'k8s_storage',
    description:
      'PersistentVolumeClaims (phase, class, size, access modes, volume), their StorageClasses, and why Pending or Lost claims are stuck (their events).',
    onDemand: 'PVCs, StorageClasses, stuck claims',
    parameters,
    effect: 'read',
    async execute(p, ctx) {
      const objects = new KubeObjects(reader);
      const pvcInfo = KubeObjects.kind('PersistentVolumeClaim');
      const citation = kubeCitation(apiPath(pvcInfo, p.namespace, p.pvc));
      let claims: V1PersistentVolumeClaim[];
      try {
        claims = p.pvc ? [await objects.get<V1PersistentVolumeClaim>(pvcInfo, p.namespace, p.pvc)] : (await objects.list<V1PersistentVolumeClaim>(pvcInfo, { namespace: p.namespace, limit: 500 })).items;
      } catch (err) {
        return failure(citation, err, ctx, p.pvc ? 'get' : 'list', 'persistentvolumeclaims', p.namespace);
      }
      if (claims.length === 0) return noData(citation, `no PersistentVolumeClaims in ${p.namespace}`);
      const gaps: string[] = [];
      let classes: V1StorageClass[] = [];
      try {
        classes = (await objects.list<V1StorageClass>(KubeObjects.kind('StorageClass'), { limit: 200 })).items;
      } catch (err) {
        gaps.push(`storageclasses: ${toFailure(err, 'list', 'storageclasses.storage.k8s.io').message}`);
      }
      let events: CoreV1Event[] = [];
      if (claims.some((c) => c.status?.phase !== 'Bound')) {
        try {
          events = (await objects.list<CoreV1Event>(KubeObjects.kind('Event'), { namespace: p.namespace, fieldSelector: 'involvedObject.kind=PersistentVolumeClaim', limit: 500 })).items;
        } catch (err) {
          gaps.push(`events: ${toFailure(err, 'list', 'events', p.namespace).message}`);
        }
      }
      const defaultClass = classes.find((c) => c.metadata?.annotations?.['storageclass.kubernetes.io/is-default-class'] === 'true')?.metadata?.name;
      const rows = claims.map((c) => {
        const name = c.metadata?.name ?? '?';
        const reasons = c.status?.phase === 'Bound' ? [] : groupEvents(events.filter((e) => e.involvedObject?.name === name)).slice(0, 5);
        return {
          name,
          phase: c.status?.phase,
          age: age(c.metadata?.creationTimestamp, ctx.now),
          storageClass: c.spec?.storageClassName ?? (defaultClass ? `(default: ${defaultClass})` : '(none)'),
          requested: c.spec?.resources?.requests?.['storage'] !== undefined ? String(c.spec.resources.requests['storage']) : undefined,
          capacity: c.status?.capacity?.['storage'] !== undefined ? String(c.status.capacity['storage']) : undefined,
          accessModes: c.spec?.accessModes,
          volume: c.spec?.volumeName,
          ...(reasons.length ? { pendingReasons: reasons.map((r) => ({ type: r.type, reason: r.reason, count: r.count, lastSeen: r.lastSeen, message: r.message })) } : {}),
        };
      });
      const used = new Set(claims.map((c) => c.spec?.storageClassName ?? defaultClass));
      const storageClasses = classes
        .filter((c) => used.has(c.metadata?.name))
        .map((c) => ({
          name: c.metadata?.name,
          provisioner: c.provisioner,
          bindingMode: c.volumeBindingMode ?? 'Immediate',
          reclaimPolicy: c.reclaimPolicy ?? 'Delete',
          allowExpansion: c.allowVolumeExpansion ?? false,
          ...(c.metadata?.name === defaultClass ? { default: true } : {}),
        }));
      const missing = [...used].filter((n) => n && !classes.some((c) => c.metadata?.name === n) && !gaps.length);
      const data = { claims: rows, storageClasses, ...(missing.length ? { missingStorageClasses: missing } : {}), ...(gaps.length ? { gaps } : {}) };
      const pending = rows.filter((r) => r.phase !== 'Bound');
      return success(citation, data, ctx, [
        { kind: 'object', summary: `${rows.length} PVC(s) in ${p.namespace}; ${pending.length} not Bound${pending.length ? `: ${pending.map((r) => `${r.name} ${r.phase ?? '?'}${r.pendingReasons?.[0] ? ` (${r.pendingReasons[0].reason})` : ''}`).join(', ')}` : ''}`, citation, observedAt: ctx.now },
      ]);
    },
  };
}

/**
 * `storage-unavailable` after scheduling: the pod is on a node but its volume never attaches or mounts,
 * so it sits in ContainerCreating and what it serves is gone. The attach/detach controller and kubelet
 * say why in the pod's events:
 *   - `FailedAttachVolume`: `Multi-Attach error for volume "pvc-…" Volume is already exclusively attached
 *     to one node and can't be attached to another` (a ReadWriteOnce volume still held by the old node —
 *     a drain that stopped the instance, a NotReady node whose VolumeAttachment is never released);
 *     `AttachVolume.Attach failed for volume …` (the cloud refused: volume in another zone, attach limit);
 *   - `FailedMount`: `Unable to attach or mount volumes: … timed out waiting for the condition`,
 *     `MountVolume.SetUp failed …`.
 * Missing ConfigMaps/Secrets in FailedMount are missing-object's, not this.
 *
 * Localised to the PersistentVolumeClaim the pod mounts (from the PV the message names, or the pod's
 * claims). Supported when the events are recent (the last 2 h) and the pod is still not running.
 * Facts: `pvc`, `pv`, `storageClass`, `reason` (`multi_attach` | `attach_failed` | `mount_timeout`),
 * `pod`, `node` (where the pod waits), `heldBy` (a NotReady node that still lists the volume in use).
 * No mitigation: force-detaching a volume or tainting a node out-of-service is a human decision.
 */
import type { CoreV1Event, V1Pod } from '@kubernetes/client-node';
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import { affectedBy } from '../../topology/walk.js';
import type { ClusterAnalyzer, ClusterTriageInput } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime, relativeToOnset } from '../time.js';
import type { Finding } from '../types.js';
import { allEvents, eventEvidenceOf, eventFirstTime, eventTime } from './common.js';

const RECENT_MS = 2 * 3600_000;

export type AttachReason = 'multi_attach' | 'attach_failed' | 'mount_timeout';

/** What a pod event says about its volume, if anything (config/secret mounts are not volumes here). */
export function attachFailure(e: Pick<CoreV1Event, 'reason' | 'message'>): { reason: AttachReason; pv?: string } | undefined {
  const m = e.message ?? '';
  if (/configmap|secret|projected|serviceaccount-token|kube-api-access/i.test(m) && !/pvc-|persistentvolume/i.test(m)) return undefined;
  const pv = /volume "([\w.-]+)"/i.exec(m)?.[1];
  if (e.reason === 'FailedAttachVolume' && /Multi-Attach error/i.test(m)) return { reason: 'multi_attach', ...(pv ? { pv } : {}) };
  if (e.reason === 'FailedAttachVolume') return { reason: 'attach_failed', ...(pv ? { pv } : {}) };
  if (e.reason === 'FailedMount' && /Unable to attach or mount volumes|timed out waiting for the condition|MountVolume\.(?:SetUp|MountDevice|WaitForAttach) failed/i.test(m)) return { reason: 'mount_timeout', ...(pv ? { pv } : {}) };
  return undefined;
}

const running = (p: V1Pod) => p.status?.phase === 'Running' && (p.status.containerStatuses ?? []).every((c) => !!c.state?.running);

export const volumeAttach: ClusterAnalyzer = {
  name: 'volume-attach',
  analyze(input: ClusterTriageInput): Finding[] {
    const s = input.cluster.snapshot;
    const byPod = new Map<string, { pod: V1Pod; events: CoreV1Event[]; reasons: { reason: AttachReason; pv?: string }[] }>();
    for (const e of allEvents(input)) {
      if (e.involvedObject?.kind !== 'Pod') continue;
      const f = attachFailure(e);
      if (!f) continue;
      const last = eventTime(e);
      if (!last || Math.abs(input.onset.getTime() - last.getTime()) > RECENT_MS) continue;
      const ns = e.involvedObject.namespace ?? e.metadata?.namespace;
      const pod = s.pods.find((p) => p.metadata?.namespace === ns && p.metadata?.name === e.involvedObject?.name);
      if (!pod || running(pod)) continue;
      const key = `${ns}/${pod.metadata?.name}`;
      const cur = byPod.get(key) ?? { pod, events: [], reasons: [] };
      cur.events.push(e);
      cur.reasons.push(f);
      byPod.set(key, cur);
    }
    const out: Finding[] = [];
    const done = new Set<string>();
    for (const { pod, events, reasons } of byPod.values()) {
      const ns = pod.metadata?.namespace ?? '';
      const pvName = reasons.find((r) => r.pv)?.pv;
      const pv = pvName ? s.pvs.find((v) => v.metadata?.name === pvName) : undefined;
      const claimName = pv?.spec?.claimRef?.name ?? (pod.spec?.volumes ?? []).find((v) => v.persistentVolumeClaim)?.persistentVolumeClaim?.claimName;
      if (!claimName || done.has(`${ns}/${claimName}`)) continue;
      done.add(`${ns}/${claimName}`);
      const claim = s.pvcs.find((c) => c.metadata?.namespace === ns && c.metadata?.name === claimName);
      const reason: AttachReason = reasons.some((r) => r.reason === 'multi_attach') ? 'multi_attach' : reasons.some((r) => r.reason === 'attach_failed') ? 'attach_failed' : 'mount_timeout';
      const volume = pvName ?? claim?.spec?.volumeName;
      // The node still holding it: NotReady and listing the volume in use (or attached).
      const heldBy = s.nodes.find((n) => n.metadata?.name !== pod.spec?.nodeName && (n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status !== 'True') && (n.status?.volumesInUse ?? []).concat((n.status?.volumesAttached ?? []).map((a) => a.name)).some((v) => !!volume && v.includes(volume)));
      const first = events.map(eventFirstTime).filter((d): d is Date => !!d).sort((a, b) => a.getTime() - b.getTime())[0];
      const component: ComponentRef = { kind: 'PersistentVolumeClaim', namespace: ns, name: claimName };
      const owner = input.cluster.topology.podOwner.get(`${ns}/${pod.metadata?.name}`);
      const supporting: Evidence[] = [...events.sort((a, b) => (eventTime(b)?.getTime() ?? 0) - (eventTime(a)?.getTime() ?? 0)).slice(0, 3).map(eventEvidenceOf)];
      supporting.push({ kind: 'object', summary: `pod ${ns}/${pod.metadata?.name} on ${pod.spec?.nodeName ?? '?'}: ${pod.status?.phase ?? '?'}${(pod.status?.containerStatuses ?? [])[0]?.state?.waiting?.reason ? ` (${pod.status!.containerStatuses![0]!.state!.waiting!.reason})` : ''}, waiting for ${claimName}`, citation: objectCitation('Pod', ns, pod.metadata?.name ?? '?', 'status') });
      supporting.push({ kind: 'object', summary: `PVC ${ns}/${claimName}: ${claim?.status?.phase ?? 'Bound'}${volume ? ` to ${volume}` : ''}${claim?.spec?.accessModes?.length ? `, ${claim.spec.accessModes.join(',')}` : ''}${claim?.spec?.storageClassName ? `, class ${claim.spec.storageClassName}` : ''}`, citation: objectCitation('PersistentVolumeClaim', ns, claimName, 'status') });
      if (heldBy) supporting.push({ kind: 'object', summary: `node ${heldBy.metadata?.name} is not Ready and still lists ${volume} as in use: the attachment was never released`, citation: objectCitation('Node', undefined, heldBy.metadata?.name ?? '?', 'status.volumesInUse') });
      const scope = owner ? [owner, ...affectedBy(owner, input.cluster.topology, { limit: 10 })] : [];
      const what = reason === 'multi_attach' ? 'is still attached to another node (ReadWriteOnce: Multi-Attach refused)' : reason === 'attach_failed' ? 'cannot be attached to the node' : 'never mounted (attach or mount timed out)';
      out.push({
        key: `storage-unavailable:${ns}/PersistentVolumeClaim/${claimName}:attach`,
        analyzer: 'volume-attach',
        family: 'storage-unavailable',
        status: 'supported',
        confidence: reason === 'multi_attach' ? 0.92 : 0.85,
        title: `PVC ${ns}/${claimName}${volume ? ` (${volume})` : ''} ${what}: pod ${pod.metadata?.name} cannot start`,
        component,
        mechanism:
          `Pod ${ns}/${pod.metadata?.name} was scheduled to ${pod.spec?.nodeName ?? '?'} but its volume ${what}${first ? ` since ${clockTime(first)} (${relativeToOnset(first, input.onset)})` : ''}${heldBy ? `; node ${heldBy.metadata?.name} is not Ready and still holds it` : ''}, so the pod stays in ContainerCreating and ${owner ? `${owner.kind.toLowerCase()}/${owner.name}` : 'its workload'} serves nothing from it. ` +
          `Fix: release the old attachment (bring the node back, or mark it out-of-service with the node.kubernetes.io/out-of-service taint so the attach/detach controller detaches it, or force-detach the volume in the cloud); restarting or rolling back does not move a ReadWriteOnce volume.`,
        scope: `${owner ? owner.name : 'the workload'} and what calls it`,
        affected: [component, ...scope],
        facts: { pvc: claimName, ...(volume ? { pv: volume } : {}), ...(claim?.spec?.storageClassName ? { storageClass: claim.spec.storageClassName } : {}), reason, pod: pod.metadata?.name ?? '', ...(pod.spec?.nodeName ? { node: pod.spec.nodeName } : {}), ...(heldBy ? { heldBy: heldBy.metadata?.name ?? '' } : {}), ...(first ? { since: first.toISOString() } : {}) },
        supporting,
        refuting: [],
      });
    }
    return out;
  },
};

/**
 * How suspicious the snapshot makes a workload before any analyzer runs, to rank the candidates worth
 * reading evidence for: pods not ready or restarting, a rollout (new ReplicaSet) or a hand edit of it
 * in the day before the onset, warning events about it or its pods. A number, 0 when nothing stands out.
 */
import { refOfId } from './graph.js';
import type { ClusterSnapshot } from './snapshot.js';

const DAY_MS = 24 * 3600_000;
/** Managers that are Kubernetes reconciling, not a change. */
const CONTROLLERS = /^(kube-controller-manager|kube-scheduler|kubelet|deployment-controller|replicaset-controller|endpoint|horizontal-pod-autoscaler)/;

export function suspicionOf(s: ClusterSnapshot, id: string, onset: Date): number {
  const ref = refOfId(id);
  const ns = ref.namespace;
  const recent = (t: string | Date | undefined) => !!t && Math.abs(onset.getTime() - new Date(t).getTime()) <= DAY_MS && new Date(t).getTime() <= onset.getTime() + 5 * 60_000;
  const list = ref.kind === 'Deployment' ? s.deployments : ref.kind === 'StatefulSet' ? s.statefulSets : ref.kind === 'DaemonSet' ? s.daemonSets : ref.kind === 'CronJob' ? s.cronJobs : [];
  const w = (list as { metadata?: { name?: string; namespace?: string; uid?: string; managedFields?: { manager?: string; time?: Date | string; subresource?: string }[] } }[]).find((x) => x.metadata?.namespace === ns && x.metadata?.name === ref.name);
  if (!w) return 0;
  let score = 0;
  // Scaled to zero: nothing it serves answers, however long ago the scale-down was.
  if ((ref.kind === 'Deployment' || ref.kind === 'StatefulSet') && (w as { spec?: { replicas?: number } }).spec?.replicas === 0) score += 2;
  if ((w.metadata?.managedFields ?? []).some((m) => m.manager && !CONTROLLERS.test(m.manager) && m.subresource !== 'status' && recent(m.time))) score += 1;
  const uid = w.metadata?.uid;
  const rss = s.replicaSets.filter((r) => r.metadata?.namespace === ns && (r.metadata?.ownerReferences ?? []).some((o) => (uid ? o.uid === uid : o.name === ref.name)));
  if (rss.some((r) => recent(r.metadata?.creationTimestamp))) score += 1;
  const prefix = `${ref.name}-`;
  const pods = s.pods.filter((p) => p.metadata?.namespace === ns && p.metadata?.name?.startsWith(prefix));
  if (pods.some((p) => (p.status?.containerStatuses ?? []).some((c) => !c.ready || (c.restartCount ?? 0) > 0) || p.status?.phase === 'Pending')) score += 1.5;
  if (s.warningEvents.some((e) => e.involvedObject?.namespace === ns && (e.involvedObject?.name === ref.name || e.involvedObject?.name?.startsWith(prefix)) && recent(e.lastTimestamp ?? e.eventTime ?? undefined))) score += 1;
  return score;
}

/** One compact row per object for list results: name, namespace, age and the status a human scans for. */
import type { CoreV1Event, V1Deployment, V1Node, V1PersistentVolumeClaim, V1Pod, V1Service } from '@kubernetes/client-node';
import { age, isoTime, secretKeys } from '../objects.js';

export type Row = Record<string, unknown>;

function podRow(p: V1Pod): Row {
  const cs = p.status?.containerStatuses ?? [];
  const waiting = cs.map((c) => c.state?.waiting?.reason).find(Boolean);
  const lastTerm = cs.map((c) => c.lastState?.terminated?.reason).find(Boolean);
  return {
    phase: p.status?.phase,
    ready: `${cs.filter((c) => c.ready).length}/${p.spec?.containers?.length ?? cs.length}`,
    restarts: cs.reduce((n, c) => n + (c.restartCount ?? 0), 0),
    ...(waiting ? { waiting } : {}),
    ...(lastTerm ? { lastTermination: lastTerm } : {}),
    node: p.spec?.nodeName,
  };
}

function conditionsRow(conditions: { type: string; status: string; reason?: string }[] | undefined): Row {
  const notOk = (conditions ?? []).filter((c) => (c.type === 'Ready' || c.type === 'Available' ? c.status !== 'True' : false));
  return notOk.length ? { problems: notOk.map((c) => `${c.type}=${c.status}${c.reason ? ` (${c.reason})` : ''}`) } : {};
}

/** Key status fields per kind; unknown kinds (CRDs) show their Ready condition when they have one. */
export function compactRow(kind: string, obj: unknown, now: Date): Row {
  const o = obj as { metadata?: { name?: string; namespace?: string; creationTimestamp?: unknown }; status?: Record<string, unknown>; spec?: Record<string, unknown> };
  const base: Row = {
    name: o.metadata?.name,
    ...(o.metadata?.namespace ? { namespace: o.metadata.namespace } : {}),
    age: age(o.metadata?.creationTimestamp, now),
  };
  const st = (o.status ?? {}) as Record<string, unknown>;
  const n = (key: string) => (typeof st[key] === 'number' ? (st[key] as number) : 0);
  switch (kind) {
    case 'Pod':
      return { ...base, ...podRow(obj as V1Pod) };
    case 'Deployment': {
      const d = obj as V1Deployment;
      return { ...base, ready: `${n('readyReplicas')}/${d.spec?.replicas ?? 1}`, updated: n('updatedReplicas'), available: n('availableReplicas'), ...conditionsRow(d.status?.conditions) };
    }
    case 'StatefulSet':
      return { ...base, ready: `${n('readyReplicas')}/${(o.spec?.['replicas'] as number | undefined) ?? 1}` };
    case 'ReplicaSet':
      return { ...base, desired: (o.spec?.['replicas'] as number | undefined) ?? 1, current: n('replicas'), ready: n('readyReplicas') };
    case 'DaemonSet':
      return { ...base, desired: n('desiredNumberScheduled'), ready: n('numberReady'), available: n('numberAvailable') };
    case 'Service': {
      const s = obj as V1Service;
      return { ...base, type: s.spec?.type ?? 'ClusterIP', clusterIP: s.spec?.clusterIP, ports: (s.spec?.ports ?? []).map((p) => `${p.port}/${p.protocol ?? 'TCP'}`) };
    }
    case 'Node': {
      const nd = obj as V1Node;
      const ready = nd.status?.conditions?.find((c) => c.type === 'Ready');
      const pressure = (nd.status?.conditions ?? []).filter((c) => c.type !== 'Ready' && c.status === 'True').map((c) => c.type);
      return { ...base, ready: ready?.status ?? 'Unknown', ...(pressure.length ? { pressure } : {}), ...(nd.spec?.unschedulable ? { unschedulable: true } : {}), version: nd.status?.nodeInfo?.kubeletVersion };
    }
    case 'PersistentVolumeClaim': {
      const c = obj as V1PersistentVolumeClaim;
      return { ...base, phase: c.status?.phase, storageClass: c.spec?.storageClassName, capacity: c.status?.capacity?.['storage'] ?? c.spec?.resources?.requests?.['storage'], volume: c.spec?.volumeName };
    }
    case 'Event': {
      const e = obj as CoreV1Event;
      return { ...base, type: e.type, reason: e.reason, object: `${e.involvedObject?.kind}/${e.involvedObject?.name}`, count: e.count ?? 1, lastSeen: isoTime(e.lastTimestamp ?? e.eventTime), message: e.message };
    }
    case 'Secret': {
      const data = (obj as { data?: Record<string, string>; type?: string }).data;
      return { ...base, type: (obj as { type?: string }).type, keys: secretKeys(data).map((k) => k.key) };
    }
    case 'ConfigMap':
      return { ...base, keys: Object.keys((obj as { data?: Record<string, string> }).data ?? {}) };
    case 'Job':
      return { ...base, succeeded: n('succeeded'), failed: n('failed'), active: n('active') };
    case 'CronJob':
      return { ...base, schedule: o.spec?.['schedule'], suspend: o.spec?.['suspend'] ?? false, lastSchedule: isoTime(st['lastScheduleTime']) };
    case 'HorizontalPodAutoscaler':
      return { ...base, min: o.spec?.['minReplicas'] ?? 1, max: o.spec?.['maxReplicas'], current: n('currentReplicas'), desired: n('desiredReplicas') };
    case 'Namespace':
      return { ...base, phase: st['phase'] };
    default: {
      const conditions = Array.isArray(st['conditions']) ? (st['conditions'] as { type: string; status: string; reason?: string }[]) : [];
      const ready = conditions.find((c) => c.type === 'Ready');
      return { ...base, ...(ready ? { ready: ready.status, ...(ready.reason ? { reason: ready.reason } : {}) } : {}), ...(typeof st['phase'] === 'string' ? { phase: st['phase'] } : {}) };
    }
  }
}

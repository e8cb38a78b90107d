/**
 * The automatic-investigation throttle: at most `limit` automatic investigations per alert rule and service
 * in `windowMs` (default one per rule per hour). One rule firing for every container or pod of a service, or
 * an alert flapping past the reopen window (each time a new incident), then costs one investigation, not one
 * per notification. A re-fire that reopens its own incident is re-investigated (what fired may differ; the
 * incident's token cap bounds the model) and counts against the others. Only starts Vigil makes on its own
 * count and are limited: a responder's request (a reply, `/sre investigate`) always runs.
 *
 * The decision is taken inside the intake transaction, under a lock on the throttle key, and the starts are
 * rows in the store (AutoInvestigation): two replicas receiving two alerts of one rule at once admit one.
 */
import { workloadOfPod } from '../alerts/fingerprint.js';
import { isSeverityWord } from '../alerts/parse/severity.js';
import type { Alert } from '../alerts/types.js';
import { lockKey } from '../store/locks.js';
import type { DbTx } from '../store/tx.js';

export interface ThrottleSettings {
  /** Automatic investigations allowed per rule and service in the window. */
  limit: number;
  windowMs: number;
}

export const DEFAULT_THROTTLE: ThrottleSettings = { limit: 1, windowMs: 3_600_000 };

/** Why an automatic investigation did not start, and the one that holds the throttle (its thread is linked). */
export interface Throttled {
  /** `<rule>|<service>`. */
  key: string;
  rule: string;
  service: string;
  /** The incident whose automatic investigation counts against the throttle (the newest in the window). */
  byIncidentId: string;
  /** When that investigation started (ISO). */
  since: string;
  limit: number;
  windowMs: number;
}

/**
 * Labels that name the service, most specific first. The kind-specific ones lead: on kube-state-metrics
 * and exporter alerts `service`, `pod` and `job` name the exporter (`kube-state-metrics`), and the
 * object the alert is about is in `deployment`, `job_name`, `cronjob`…
 */
const TARGET_LABELS = ['deployment', 'statefulset', 'daemonset', 'cronjob', 'job_name', 'horizontalpodautoscaler', 'persistentvolumeclaim'];
const SERVICE_LABELS = ['service', 'app_kubernetes_io_name', 'app', 'job'];
/** Exporters whose own identity fills `service`/`pod`/`job` on the alerts about other objects. */
const EXPORTER = /kube-state-metrics|node-exporter|blackbox-exporter|kubelet|cadvisor/;

/**
 * The alert rule and the service it is about, as far as the alert says before triage: a service-naming label
 * (or the workload of its pod), qualified by namespace and cluster; for a keyless post (Alertmanager's default
 * title) its non-severity values. Empty when the alert names nothing: then the rule alone is the key.
 */
export function ruleAndService(alert: Alert): { rule: string; service: string } {
  const l = Object.fromEntries(Object.entries(alert.labels).map(([k, v]) => [k.toLowerCase(), v.trim().toLowerCase()]));
  const rule = (l['alertname'] || alert.alertName).trim().toLowerCase();
  const exporter = [l['job'], l['service'], l['container']].some((v) => !!v && EXPORTER.test(v));
  // A Job run's name is its CronJob's plus the schedule's minute: the CronJob is the service.
  const target = TARGET_LABELS.map((k) => (k === 'job_name' && l[k] ? l[k]!.replace(/-\d{6,}$/, '') : l[k])).find(Boolean);
  const pod = l['pod'] && !(exporter && EXPORTER.test(l['pod'])) ? workloadOfPod(l['pod']) : undefined;
  const named = target ?? (exporter ? pod : (SERVICE_LABELS.map((k) => l[k]).find(Boolean) ?? pod));
  let service: string;
  if (named || l['namespace']) service = [l['cluster'], l['namespace'], named].filter(Boolean).join('/');
  else service = alert.labelValues.map((v) => v.trim().toLowerCase()).filter((v) => v && v !== rule && !isSeverityWord(v)).map((v) => workloadOfPod(v, { ordinal: false })).join(' ');
  return { rule, service };
}

export function throttleKey(alert: Alert): string {
  const { rule, service } = ruleAndService(alert);
  return `${rule}|${service}`;
}

/**
 * In the intake transaction: admit an automatic investigation of `incidentId` for this alert (recording its
 * start), or say which one holds the throttle. Manual starts do not call this.
 */
export async function admitAutomatic(tx: DbTx, alert: Alert, incidentId: string, now: Date, settings: ThrottleSettings): Promise<Throttled | undefined> {
  // `now` is when the alert fired (see firedAt): a backlog replayed after an outage is judged by its own times.
  const { rule, service } = ruleAndService(alert);
  const key = `${rule}|${service}`;
  await lockKey(tx, `throttle:${key}`);
  const since = new Date(now.getTime() - settings.windowMs);
  // Starts older than the window count for nothing any more: the key's rows stay as few as its limit.
  await tx.autoInvestigation.deleteMany({ where: { key, at: { lt: since } } });
  // Within a window of its own time either way: a replayed older alert is not throttled by a newer one an hour on.
  const recent = await tx.autoInvestigation.findMany({ where: { key, at: { gte: since, lt: new Date(now.getTime() + settings.windowMs) } }, orderBy: { at: 'desc' }, take: settings.limit });
  if (recent.length >= settings.limit) {
    const by = recent[0]!;
    return { key, rule, service, byIncidentId: by.incidentId, since: by.at.toISOString(), limit: settings.limit, windowMs: settings.windowMs };
  }
  await tx.autoInvestigation.create({ data: { key, incidentId, at: now } });
  return undefined;
}

/** Record an automatic start that is not refused (a reopened incident's re-investigation), so it counts for the others. */
export async function recordAutomatic(tx: DbTx, alert: Alert, incidentId: string, now: Date): Promise<void> {
  const key = throttleKey(alert);
  await lockKey(tx, `throttle:${key}`);
  await tx.autoInvestigation.create({ data: { key, incidentId, at: now } });
}

/** The card's line for a skipped investigation (the thread note adds the link to the one that runs). */
export function throttledNotice(t: Throttled, byTitle: string | undefined): string {
  const h = t.windowMs / 3_600_000;
  const per = Number.isInteger(h) ? (h === 1 ? 'hour' : `${h} hours`) : `${Math.round(t.windowMs / 60_000)} minutes`;
  const what = `${t.rule}${t.service ? ` on ${t.service}` : ''}`;
  const by = byTitle ? `“${byTitle.slice(0, 160)}”` : 'another incident';
  return `Not investigated automatically: ${what} already had ${t.limit === 1 ? 'its automatic investigation' : `${t.limit} automatic investigations`} in the last ${per} (${by}, see the note in this thread; the limit is ${t.limit} per rule and service per ${per}). Reply in this thread or run \`/sre investigate\` to investigate this one now.`;
}

/**
 * When an alert fired, for the throttle: its Slack post's timestamp or its `startsAt`, never later than
 * now. Judged by receipt time, alerts a day apart replayed at once (Socket Mode reconnecting, a queue
 * draining) would throttle each other.
 */
export function firedAt(alert: Alert, messageTs: string | undefined, now: Date): Date {
  const posted = messageTs ? Number(messageTs.split('.')[0]) * 1000 : NaN;
  const at = Number.isFinite(posted) && posted > 0 ? posted : alert.startsAt?.getTime() ?? NaN;
  return Number.isFinite(at) && at < now.getTime() ? new Date(at) : now;
}

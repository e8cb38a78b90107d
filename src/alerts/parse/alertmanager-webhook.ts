/**
 * Alertmanager's `webhook_configs` JSON, version 4 (prometheus/alertmanager notify/webhook; captured from 0.25 in
 * test/fixtures/alerts/alertmanager-webhook-*.json). One Alert per alert in the group. Each Alert's `title` is the
 * subject Alertmanager's default Slack template would show for the group, so a webhook alert and the Slack post of
 * the same group get the same fingerprint.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Alert } from '../types.js';
import { pickSeverity } from './severity.js';

const labelSet = z.record(z.string(), z.string());
/** Alertmanager writes Go's zero time for "not ended". */
const GO_ZERO_TIME = '0001-01-01T00:00:00Z';

/** One alert of a notification, as Alertmanager sends it (Grafana's contact point sends the same, plus its own fields). */
export const webhookAlert = z.object({
  status: z.enum(['firing', 'resolved']),
  labels: labelSet,
  annotations: labelSet.default({}),
  startsAt: z.string(),
  endsAt: z.string().optional(),
  generatorURL: z.string().optional(),
  fingerprint: z.string().optional(),
});

export const alertmanagerWebhookSchema = z.object({
  version: z.literal('4'),
  groupKey: z.string(),
  truncatedAlerts: z.number().int().nonnegative().default(0),
  status: z.enum(['firing', 'resolved']),
  receiver: z.string(),
  groupLabels: labelSet,
  commonLabels: labelSet,
  commonAnnotations: labelSet.default({}),
  externalURL: z.string(),
  alerts: z.array(webhookAlert),
});

export type AlertmanagerWebhook = z.infer<typeof alertmanagerWebhookSchema>;

/** Thrown by `parseAlertmanagerWebhook` for a body that is not a v4 Alertmanager webhook. */
export class AlertWebhookError extends Error {
  override readonly name = 'AlertWebhookError';
  readonly code = 'alert_webhook_invalid';
  constructor(
    message: string,
    readonly issues: { path: string; message: string }[],
  ) {
    super(message);
  }
}

export function parseAlertmanagerWebhook(body: unknown): Alert[] {
  const parsed = alertmanagerWebhookSchema.safeParse(body);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({ path: issue.path.join('.') || '(body)', message: issue.message }));
    const summary = issues
      .slice(0, 5)
      .map((issue) => `${issue.path}: ${issue.message}`)
      .join('; ');
    throw new AlertWebhookError(`Not an Alertmanager v4 webhook body: ${summary}`, issues);
  }
  const hook = parsed.data;
  const title = groupSubject(hook);
  const link = `${hook.externalURL}/#/alerts?receiver=${encodeURIComponent(hook.receiver)}`;
  return hook.alerts.map((item) => {
    const alert: Alert = {
      source: 'alertmanager',
      status: item.status,
      title,
      alertName: item.labels.alertname ?? hook.commonLabels.alertname ?? title,
      labels: item.labels,
      labelValues: sortedValues(item.labels),
      annotations: item.annotations,
      count: 1,
      link: item.generatorURL || link,
      text: [item.annotations.summary, item.annotations.description].filter(Boolean).join('\n'),
    };
    const startsAt = new Date(item.startsAt);
    if (!Number.isNaN(startsAt.getTime()) && item.startsAt !== GO_ZERO_TIME) alert.startsAt = startsAt;
    const severity = pickSeverity(item.labels, []);
    if (severity) alert.severity = severity;
    return alert;
  });
}

/**
 * The whole group as ONE Alert, the shape the Slack path gives the same group's post (`labels` = what the alerts
 * share, `members` = each alert when there are several, `count` = the firing ones), so both paths open, join and
 * resolve the same incident. `deliveryKey` names this notification: Alertmanager's retry of it carries the same
 * group key, status and alerts (fingerprint and startsAt), so it is a duplicate; a change of the group is not.
 */
export function parseAlertmanagerWebhookGroup(body: unknown): { alert: Alert; deliveryKey: string; alerts: number } {
  const items = parseAlertmanagerWebhook(body);
  if (items.length === 0) throw new AlertWebhookError('Not an Alertmanager v4 webhook body: alerts: the group has no alerts', [{ path: 'alerts', message: 'the group has no alerts' }]);
  const hook = alertmanagerWebhookSchema.parse(body);
  const first = items[0]!;
  const firing = hook.alerts.filter((item) => item.status === 'firing').length;
  const groupKeys = new Set(Object.keys(hook.groupLabels));
  const common = Object.fromEntries(Object.entries(hook.commonLabels).filter(([key]) => !groupKeys.has(key)));
  const annotations = items.length === 1 ? first.annotations : hook.commonAnnotations;
  const alert: Alert = {
    source: 'alertmanager',
    status: hook.status,
    title: first.title,
    alertName: hook.commonLabels.alertname ?? hook.groupLabels.alertname ?? first.alertName,
    labels: items.length === 1 ? first.labels : hook.commonLabels,
    // In the order the Slack subject shows them: group values, then the other common values.
    labelValues: [...sortedValues(hook.groupLabels), ...sortedValues(common)],
    annotations,
    count: hook.status === 'firing' ? Math.max(firing, 1) : items.length,
    link: `${hook.externalURL}/#/alerts?receiver=${encodeURIComponent(hook.receiver)}`,
    text: [annotations.summary, annotations.description].filter(Boolean).join('\n') || first.text,
  };
  if (items.length > 1) alert.members = items.slice(0, 50).map((item) => ({ labels: item.labels, annotations: item.annotations }));
  const starts = items.map((item) => item.startsAt?.getTime()).filter((t): t is number => t !== undefined);
  if (starts.length > 0) alert.startsAt = new Date(Math.min(...starts));
  const severity = pickSeverity(alert.labels, []) ?? items.map((item) => item.severity).find(Boolean);
  if (severity) alert.severity = severity;
  const identity = hook.alerts
    .map((item) => `${item.status}:${item.fingerprint ?? JSON.stringify(Object.entries(item.labels).sort(([a], [b]) => a.localeCompare(b)))}@${item.startsAt}`)
    .sort()
    .join('\n');
  const digest = createHash('sha256').update(`${hook.groupKey}\n${hook.status}\n${identity}`).digest('hex').slice(0, 32);
  return { alert, deliveryKey: `alertmanager-webhook:${digest}`, alerts: items.length };
}

/** Alertmanager's default.tmpl `__subject`, computed from the webhook's group and common labels. */
function groupSubject(hook: AlertmanagerWebhook): string {
  const firing = hook.alerts.filter((item) => item.status === 'firing').length;
  const status = hook.status === 'firing' ? `[FIRING:${firing}]` : '[RESOLVED]';
  const groupKeys = new Set(Object.keys(hook.groupLabels));
  const rest = Object.fromEntries(Object.entries(hook.commonLabels).filter(([key]) => !groupKeys.has(key)));
  const common = sortedValues(rest);
  return `${status} ${sortedValues(hook.groupLabels).join(' ')} ${common.length > 0 ? `(${common.join(' ')})` : ''}`.trimEnd();
}

function sortedValues(labels: Record<string, string>): string[] {
  return Object.keys(labels)
    .sort()
    .map((key) => labels[key]!);
}

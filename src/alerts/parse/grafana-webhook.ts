/**
 * Grafana Alerting's webhook contact point (grafana/alerting receivers/webhook, payload `version: "1"`): the
 * Alertmanager webhook body (Grafana's alerting is an embedded Alertmanager) plus `orgId`, `title`, `state`,
 * `message` and, per alert, `silenceURL`, `dashboardURL`, `panelURL`, `values`, `valueString`. Documented at
 * https://grafana.com/docs/grafana/latest/alerting/configure-notifications/manage-contact-points/integrations/webhook-notifier/
 *
 * The group becomes ONE Alert the way an Alertmanager group does (alertmanager-webhook.ts), with Grafana's `title`
 * (its default title template is Alertmanager's subject, and the Slack contact point posts the same title) so the
 * webhook and the Grafana Slack post of the same group get the same fingerprint.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Alert } from '../types.js';
import { AlertWebhookError, parseAlertmanagerWebhookGroup, webhookAlert } from './alertmanager-webhook.js';
import { parseSubject } from './subject.js';

const labelSet = z.record(z.string(), z.string());

const grafanaAlert = webhookAlert.extend({
  silenceURL: z.string().optional(),
  dashboardURL: z.string().optional(),
  panelURL: z.string().optional(),
  values: z.record(z.string(), z.unknown()).nullish(),
  valueString: z.string().optional(),
});

export const grafanaWebhookSchema = z.object({
  receiver: z.string(),
  status: z.enum(['firing', 'resolved']),
  orgId: z.number().int().optional(),
  alerts: z.array(grafanaAlert),
  groupLabels: labelSet.default({}),
  commonLabels: labelSet.default({}),
  commonAnnotations: labelSet.default({}),
  externalURL: z.string().default(''),
  version: z.string().optional(),
  groupKey: z.string().default(''),
  truncatedAlerts: z.number().int().nonnegative().default(0),
  title: z.string().optional(),
  state: z.string().optional(),
  message: z.string().optional(),
});

export function parseGrafanaWebhookGroup(body: unknown): { alert: Alert; deliveryKey: string; alerts: number } {
  const parsed = grafanaWebhookSchema.safeParse(body);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({ path: issue.path.join('.') || '(body)', message: issue.message }));
    throw new AlertWebhookError(`Not a Grafana webhook body: ${issues.slice(0, 5).map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
  }
  const hook = parsed.data;
  if (hook.alerts.length === 0) throw new AlertWebhookError('Not a Grafana webhook body: alerts: the group has no alerts', [{ path: 'alerts', message: 'the group has no alerts' }]);
  // The Alertmanager part of the body, read by the Alertmanager group parser (same subject, members, count).
  const group = parseAlertmanagerWebhookGroup({
    version: '4',
    groupKey: hook.groupKey,
    truncatedAlerts: hook.truncatedAlerts,
    status: hook.status,
    receiver: hook.receiver,
    groupLabels: hook.groupLabels,
    commonLabels: hook.commonLabels,
    commonAnnotations: hook.commonAnnotations,
    externalURL: hook.externalURL,
    alerts: hook.alerts.map(({ status, labels, annotations, startsAt, endsAt, generatorURL, fingerprint }) => ({ status, labels, annotations, startsAt, endsAt, generatorURL, fingerprint })),
  });
  const first = hook.alerts[0]!;
  const alert: Alert = { ...group.alert, source: 'grafana' };
  // Grafana's own title when it reads as a subject (the default template); a custom one stays the computed subject.
  if (hook.title && parseSubject(hook.title)) alert.title = hook.title.slice(0, 1024);
  const link = first.generatorURL || first.dashboardURL || first.panelURL;
  if (link) alert.link = link;
  const values = hook.alerts.map((a) => a.valueString).filter((v): v is string => Boolean(v));
  if (values.length > 0 && !alert.text.includes(values[0]!)) alert.text = [alert.text, `Value: ${values[0]}`].filter(Boolean).join('\n');
  const identity = hook.alerts
    .map((a) => `${a.status}:${a.fingerprint ?? JSON.stringify(Object.entries(a.labels).sort(([x], [y]) => x.localeCompare(y)))}@${a.startsAt}`)
    .sort()
    .join('\n');
  const digest = createHash('sha256').update(`${hook.orgId ?? ''}\n${hook.groupKey}\n${hook.status}\n${identity}`).digest('hex').slice(0, 32);
  return { alert, deliveryKey: `grafana-webhook:${digest}`, alerts: group.alerts };
}

/**
 * PagerDuty V3 webhooks (a webhook subscription's deliveries): `{ event: { id, event_type, resource_type,
 * occurred_at, agent, client, data } }`, where `data` is the incident for `incident.*` events. Documented at
 * https://developer.pagerduty.com/docs/webhooks-overview (event types, payload) and
 * https://developer.pagerduty.com/docs/verifying-webhook-signatures (the signature, checked in src/http).
 *
 * `incident.triggered` (and `incident.reopened`) fire an Alert, `incident.resolved` resolves it; other event
 * types (acknowledged, annotated, priority_updated, `pagey.ping`, …) are answered and ignored. The Alert reads
 * like the PagerDuty Slack app's post of the same incident (alerts/parse/pagerduty.ts): the incident title as the
 * alert name, the service as `service`, so the webhook and the Slack post meet in one incident.
 */
import { z } from 'zod';
import type { Alert } from '../types.js';
import { AlertWebhookError } from './alertmanager-webhook.js';
import { normaliseTag } from './labels.js';
import { alertNameFromSubject, parseSubject } from './subject.js';

const ref = z.object({ id: z.string().optional(), summary: z.string().optional(), html_url: z.string().optional() }).passthrough();

const incident = z
  .object({
    id: z.string(),
    type: z.literal('incident'),
    self: z.string().optional(),
    html_url: z.string().optional(),
    number: z.number().int().optional(),
    status: z.string().optional(),
    incident_key: z.string().nullish(),
    created_at: z.string().optional(),
    title: z.string().min(1),
    service: ref.optional(),
    urgency: z.string().optional(),
    priority: ref.nullish(),
    /** Not in every payload: the incident body's details when the incident was created with them. */
    body: z.object({ details: z.unknown().optional() }).passthrough().nullish(),
    custom_details: z.record(z.string(), z.unknown()).nullish(),
  })
  .passthrough();

export const pagerdutyWebhookSchema = z.object({
  event: z
    .object({
      id: z.string(),
      event_type: z.string(),
      resource_type: z.string(),
      occurred_at: z.string(),
      agent: ref.nullish(),
      client: z.object({ name: z.string().optional() }).passthrough().nullish(),
      data: z.unknown(),
    })
    .passthrough(),
});

/** Event types that fire or resolve the incident's Alert; everything else is answered and ignored. */
const FIRING = new Set(['incident.triggered', 'incident.reopened']);
const RESOLVED = new Set(['incident.resolved']);

/** Keys of `custom_details` read as labels (Kubernetes objects, as Alertmanager and Datadog name them). */
const LABEL_KEYS = new Set(['namespace', 'deployment', 'statefulset', 'daemonset', 'cronjob', 'job_name', 'pod', 'container', 'service', 'cluster', 'node', 'instance', 'job', 'app', 'env', 'environment', 'severity', 'alertname']);

export type PagerDutyWebhookResult = { kind: 'alert'; alert: Alert; deliveryKey: string } | { kind: 'ignored'; eventType: string };

export function parsePagerDutyWebhook(body: unknown): PagerDutyWebhookResult {
  const parsed = pagerdutyWebhookSchema.safeParse(body);
  if (!parsed.success) throw invalid(parsed.error.issues);
  const { event } = parsed.data;
  const firing = FIRING.has(event.event_type);
  if (!firing && !RESOLVED.has(event.event_type)) return { kind: 'ignored', eventType: event.event_type.slice(0, 60) };
  const data = incident.safeParse(event.data);
  if (!data.success) throw invalid(data.error.issues, 'event.data');
  const inc = data.data;
  const labels: Record<string, string> = {};
  const details = inc.custom_details ?? (isRecord(inc.body?.details) ? inc.body.details : undefined);
  for (const [key, value] of Object.entries(details ?? {})) {
    const k = normaliseTag(key);
    if (LABEL_KEYS.has(k) && (typeof value === 'string' || typeof value === 'number') && String(value).trim()) labels[k] = String(value).trim().slice(0, 256);
  }
  // The service the incident belongs to, as the Slack app's `Service` field shows it.
  if (inc.service?.summary) labels['service'] = inc.service.summary;
  const subject = parseSubject(inc.title);
  const alert: Alert = {
    source: 'pagerduty',
    status: firing ? 'firing' : 'resolved',
    title: `[#${inc.number ?? inc.id}] ${inc.title}`.slice(0, 1024),
    alertName: ((subject && alertNameFromSubject(subject)) ?? inc.title).slice(0, 256),
    labels,
    labelValues: subject ? [...subject.groupValues, ...subject.commonValues] : [],
    annotations: {
      summary: inc.title.slice(0, 1024),
      ...(typeof inc.body?.details === 'string' ? { description: inc.body.details.slice(0, 4000) } : {}),
      ...(inc.incident_key ? { incident_key: inc.incident_key } : {}),
    },
    count: 1,
    text: [inc.title, inc.service?.summary ? `Service: ${inc.service.summary}` : '', inc.urgency ? `Urgency: ${inc.urgency}` : ''].filter(Boolean).join('\n'),
  };
  const severity = inc.priority?.summary ?? inc.urgency;
  if (severity) alert.severity = severity.toLowerCase();
  const startsAt = new Date(inc.created_at ?? event.occurred_at);
  if (!Number.isNaN(startsAt.getTime())) alert.startsAt = startsAt;
  if (inc.html_url) alert.link = inc.html_url;
  // PagerDuty retries a delivery with the same event id; a new event (re-trigger, resolve) has its own.
  return { kind: 'alert', alert, deliveryKey: `pagerduty-webhook:${event.id.slice(0, 100)}` };
}

function invalid(issues: z.core.$ZodIssue[], prefix?: string): AlertWebhookError {
  const list = issues.map((issue) => ({ path: [prefix, ...issue.path.map(String)].filter(Boolean).join('.') || '(body)', message: issue.message }));
  return new AlertWebhookError(`Not a PagerDuty V3 webhook body: ${list.slice(0, 5).map((i) => `${i.path}: ${i.message}`).join('; ')}`, list);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

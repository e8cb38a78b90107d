/**
 * Opsgenie's outgoing Webhook integration ("alert action data"): `{ action, alert: { alertId, message, tags,
 * tinyId, entity, alias, createdAt, updatedAt, username, userId, description?, details?, priority?, source, … },
 * source: { name, type }, integrationName, integrationId, integrationType }`. Documented at
 * https://docs.opsgenie.com/docs/marid-alert-action-data and https://docs.opsgenie.com/v1.0/docs/webhook-integration
 * (description and details are sent only when the integration's boxes are ticked, and only for Create).
 *
 * `Create` fires an Alert, `Close` resolves it; other actions (Acknowledge, AddNote, AssignOwnership, …) are
 * answered and ignored. Labels come from `details` (key: value) and `tags` (`key:value` tags, as Datadog writes
 * Kubernetes tags, e.g. `kube_namespace:shop`).
 */
import { z } from 'zod';
import type { Alert } from '../types.js';
import { AlertWebhookError } from './alertmanager-webhook.js';
import { normaliseTag } from './labels.js';
import { alertNameFromSubject, parseSubject } from './subject.js';

const epochMs = z.union([z.number(), z.string().regex(/^\d+$/).transform(Number)]);

export const opsgenieWebhookSchema = z
  .object({
    action: z.string().min(1),
    alert: z
      .object({
        alertId: z.string().min(1),
        message: z.string().default(''),
        tags: z.array(z.string()).default([]),
        tinyId: z.string().optional(),
        entity: z.string().optional(),
        alias: z.string().optional(),
        createdAt: epochMs.optional(),
        updatedAt: epochMs.optional(),
        username: z.string().optional(),
        userId: z.string().optional(),
        description: z.string().optional(),
        priority: z.string().optional(),
        details: z.record(z.string(), z.unknown()).default({}),
        source: z.string().optional(),
      })
      .passthrough(),
    source: z.object({ name: z.string().optional(), type: z.string().optional() }).passthrough().optional(),
    integrationName: z.string().optional(),
    integrationId: z.string().optional(),
    integrationType: z.string().optional(),
  })
  .passthrough();

const LABEL_KEYS = new Set(['namespace', 'deployment', 'statefulset', 'daemonset', 'cronjob', 'job_name', 'pod', 'container', 'service', 'cluster', 'node', 'instance', 'job', 'app', 'env', 'environment', 'severity', 'alertname']);

export type OpsgenieWebhookResult = { kind: 'alert'; alert: Alert; deliveryKey: string } | { kind: 'ignored'; action: string };

export function parseOpsgenieWebhook(body: unknown): OpsgenieWebhookResult {
  const parsed = opsgenieWebhookSchema.safeParse(body);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({ path: issue.path.join('.') || '(body)', message: issue.message }));
    throw new AlertWebhookError(`Not an Opsgenie webhook body: ${issues.slice(0, 5).map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
  }
  const hook = parsed.data;
  const action = hook.action.toLowerCase();
  if (action !== 'create' && action !== 'close') return { kind: 'ignored', action: hook.action.slice(0, 60) };
  const a = hook.alert;
  const message = a.message.trim() || a.alias || `Opsgenie alert ${a.tinyId ?? a.alertId}`;
  const labels: Record<string, string> = {};
  for (const tag of a.tags) {
    const m = /^([\w.-]+)[:=](.+)$/.exec(tag.trim());
    if (!m) continue;
    const key = normaliseTag(m[1]!);
    if (LABEL_KEYS.has(key) && !labels[key]) labels[key] = m[2]!.trim().slice(0, 256);
  }
  for (const [k, v] of Object.entries(a.details)) {
    const key = normaliseTag(k);
    if (LABEL_KEYS.has(key) && (typeof v === 'string' || typeof v === 'number') && String(v).trim()) labels[key] = String(v).trim().slice(0, 256);
  }
  const subject = parseSubject(message);
  const alert: Alert = {
    source: 'opsgenie',
    status: action === 'create' ? 'firing' : 'resolved',
    title: message.slice(0, 1024),
    alertName: ((subject && alertNameFromSubject(subject)) ?? labels['alertname'] ?? message).slice(0, 256),
    labels,
    labelValues: subject ? [...subject.groupValues, ...subject.commonValues] : [],
    annotations: {
      summary: message.slice(0, 1024),
      ...(a.description ? { description: a.description.slice(0, 4000) } : {}),
      ...(a.alias ? { alias: a.alias.slice(0, 512) } : {}),
      ...(a.entity ? { entity: a.entity.slice(0, 512) } : {}),
    },
    count: 1,
    text: [message, a.description ?? '', a.entity ? `Entity: ${a.entity}` : ''].filter(Boolean).join('\n').slice(0, 8000),
  };
  // Opsgenie's dedup identity (the alias, else the alert id): a Close carries no details, so not the same labels.
  alert.sourceKey = (a.alias || a.alertId).slice(0, 512);
  const severity = labels['severity'] ?? a.priority;
  if (severity) alert.severity = severity.toLowerCase();
  if (a.createdAt !== undefined && Number.isFinite(a.createdAt)) {
    // Opsgenie writes createdAt in ms; some payloads write updatedAt in ns, so only a plausible ms value counts.
    const ms = a.createdAt > 1e14 ? Math.floor(a.createdAt / 1e6) : a.createdAt;
    const at = new Date(ms);
    if (!Number.isNaN(at.getTime())) alert.startsAt = at;
  }
  // A retry of the same action on the same alert is a duplicate; the Close of the alert is a delivery of its own.
  return { kind: 'alert', alert, deliveryKey: `opsgenie-webhook:${a.alertId.slice(0, 100)}:${action}` };
}

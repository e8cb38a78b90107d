/**
 * `POST /webhooks/alertmanager`: Alertmanager's `webhook_configs` (payload version 4) straight to Vigil, with
 * no Slack post in between. Authenticated by a shared secret (`Authorization: Bearer <token>`, what
 * Alertmanager's `http_config.authorization` or `bearer_token` sends). A valid group is answered 202 at once and
 * handed on (the incident work continues after the answer); anything else gets a 4xx JSON `{ ok: false, error }`
 * the sender can read, and a log line. Never a 500 for a bad body.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Logger } from 'pino';
import { AlertWebhookError, parseAlertmanagerWebhookGroup } from '../alerts/parse/alertmanager-webhook.js';
import type { Alert } from '../alerts/types.js';
import type { Redactor } from '../redact/index.js';
import { cleanDeep } from '../store/sanitize.js';
import { BodyTooLargeError, bodySummary, readBody, sendJson, type Route } from './routes.js';

export const ALERTMANAGER_WEBHOOK_PATH = '/webhooks/alertmanager';

export interface WebhookAlert {
  alert: Alert;
  /** Identity of this notification: Alertmanager's retry of the same one is a duplicate. */
  deliveryKey: string;
}

export interface AlertmanagerWebhookRouteOptions {
  token: string;
  redactor: Redactor;
  log: Logger;
  /** Called after the 202 with the group's Alert; its failures are the callee's to report. */
  onAlert(a: WebhookAlert): void;
}

/** Whether `header` is `Bearer <expected>`, compared in constant time (hashes of equal length). */
export function bearerMatches(expected: string, header: string | undefined): boolean {
  const got = header?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim() ?? '';
  const a = createHash('sha256').update(expected).digest();
  const b = createHash('sha256').update(got).digest();
  return timingSafeEqual(a, b) && got.length > 0;
}

/** What a request body must be, checked step by step so the answer names the first problem. */
export function judgeAlertmanagerWebhook(raw: string, redactor: Redactor): { status: 202; alert: WebhookAlert; alerts: number } | { status: 400; error: string } {
  let body: unknown;
  try {
    // Cleaned at once: a `\u0000` or lone surrogate is valid JSON but not storable text (store/sanitize.ts).
    body = cleanDeep(JSON.parse(raw) as unknown);
  } catch {
    return { status: 400, error: 'body is not JSON' };
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return { status: 400, error: 'body is not a JSON object (an Alertmanager webhook notification)' };
  const version = (body as { version?: unknown }).version;
  if (version !== '4') {
    return { status: 400, error: `unsupported webhook payload version ${version === undefined ? '(none)' : JSON.stringify(version).slice(0, 20)}; Vigil reads Alertmanager's version "4"` };
  }
  if (!Array.isArray((body as { alerts?: unknown }).alerts)) return { status: 400, error: 'alerts: expected an array of alerts' };
  try {
    // Redacted before parsing, as alert posts are: the title and text are cut, which would break a secret's shape.
    const group = parseAlertmanagerWebhookGroup(redactor.redactValue(body));
    return { status: 202, alert: { alert: group.alert, deliveryKey: group.deliveryKey }, alerts: group.alerts };
  } catch (err) {
    if (err instanceof AlertWebhookError) return { status: 400, error: err.message.slice(0, 500) };
    throw err;
  }
}

export function alertmanagerWebhookRoute(o: AlertmanagerWebhookRouteOptions): Route {
  const path = ALERTMANAGER_WEBHOOK_PATH;
  return {
    path,
    method: ['POST'],
    handler: (req, res) => {
      if (!bearerMatches(o.token, req.headers.authorization)) {
        o.log.warn({ path, status: 401, auth: req.headers.authorization ? 'wrong token' : 'no Authorization header' }, 'alertmanager webhook refused');
        // The body is not read: say so to the client, and let it go.
        sendJson(res, 401, { ok: false, error: 'missing or wrong bearer token' }, { connection: 'close' });
        req.resume();
        return;
      }
      void (async () => {
        const raw = await readBody(req);
        const verdict = judgeAlertmanagerWebhook(raw, o.redactor);
        if (verdict.status !== 202) {
          // A refusal is the sender's to fix: say why in the log too, with the body's shape, not its content.
          o.log.warn({ path, status: verdict.status, error: verdict.error, body: bodySummary(raw) }, 'alertmanager webhook refused');
          return sendJson(res, verdict.status, { ok: false, error: verdict.error });
        }
        sendJson(res, 202, { ok: true, status: verdict.alert.alert.status, alerts: verdict.alerts });
        o.log.info({ path, status: verdict.alert.alert.status, alerts: verdict.alerts, alert: verdict.alert.alert.alertName, deliveryKey: verdict.alert.deliveryKey }, 'alertmanager webhook accepted');
        o.onAlert(verdict.alert);
      })().catch((err: unknown) => {
        // An oversized body was already answered 413 by readBody; only real failures are errors.
        if (err instanceof BodyTooLargeError) return o.log.warn({ path, status: 413 }, 'alertmanager webhook body too large');
        o.log.error({ path, err: String(err) }, 'alertmanager webhook failed');
        sendJson(res, 500, { ok: false, error: 'internal error; retry later' });
      });
    },
  };
}

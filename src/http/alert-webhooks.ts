/**
 * Alert sources over HTTP besides Alertmanager's (alertmanager-webhook.ts): Grafana Alerting's webhook contact
 * point, PagerDuty V3 webhook subscriptions and Opsgenie's outgoing Webhook integration. Each is normalised into
 * the one Alert model and handed to the same intake as an alert post (IncidentDesk.onWebhookAlert). The answers
 * follow the Alertmanager route: 202 for an accepted (or deliberately ignored) delivery, then the work; a 4xx JSON
 * `{ ok: false, error }` and a warn line (the body's shape, never its content) for anything else; never a crash.
 *
 * Authentication, as each product can send it:
 * - Grafana: the contact point's "Authorization header" (`Authorization: Bearer <token>`, the default scheme) or
 *   its HTTP basic auth (any user name, the token as password).
 * - PagerDuty: `X-PagerDuty-Signature: v1=<hex HMAC-SHA256 of the raw body, keyed with the subscription's secret>`;
 *   during a secret rotation several comma-separated signatures, any one of which may match.
 * - Opsgenie: a custom header the integration adds (`X-Vigil-Token: <token>`, or `Authorization: Bearer <token>`),
 *   or `?token=<token>` in the webhook URL when custom headers are not an option.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import { AlertWebhookError } from '../alerts/parse/alertmanager-webhook.js';
import { parseGrafanaWebhookGroup } from '../alerts/parse/grafana-webhook.js';
import { parseOpsgenieWebhook } from '../alerts/parse/opsgenie-webhook.js';
import { parsePagerDutyWebhook } from '../alerts/parse/pagerduty-webhook.js';
import type { Redactor } from '../redact/index.js';
import { cleanDeep } from '../store/sanitize.js';
import type { WebhookAlert } from './alertmanager-webhook.js';
import { BodyTooLargeError, bodySummary, readBody, sendJson, type Route } from './routes.js';

export const GRAFANA_WEBHOOK_PATH = '/webhooks/grafana';
export const PAGERDUTY_WEBHOOK_PATH = '/webhooks/pagerduty';
export const OPSGENIE_WEBHOOK_PATH = '/webhooks/opsgenie';

export type WebhookVerdict =
  | { status: 202; alert: WebhookAlert; alerts: number }
  /** A well-formed delivery Vigil has nothing to do with (an acknowledgement, a note, a ping). */
  | { status: 202; ignored: string }
  | { status: 400; error: string };

export interface AlertWebhookRouteOptions {
  redactor: Redactor;
  log: Logger;
  /** Called after the 202 with the delivery's Alert; its failures are the callee's to report. */
  onAlert(a: WebhookAlert): void;
}

/** Constant-time equality of two secrets (their hashes have equal length). */
export function secretMatches(expected: string, got: string | undefined): boolean {
  const a = createHash('sha256').update(expected).digest();
  const b = createHash('sha256').update(got ?? '').digest();
  return timingSafeEqual(a, b) && Boolean(got);
}

/** `Authorization: Bearer <token>`, or `Basic base64(<any user>:<token>)` (Grafana's basic auth). */
export function bearerOrBasicMatches(expected: string, header: string | undefined): boolean {
  const bearer = header?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim();
  if (bearer !== undefined) return secretMatches(expected, bearer);
  const basic = header?.match(/^Basic\s+([A-Za-z0-9+/=]+)\s*$/i)?.[1];
  if (basic === undefined) return false;
  const decoded = Buffer.from(basic, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon >= 0 && secretMatches(expected, decoded.slice(colon + 1));
}

/**
 * PagerDuty's `X-PagerDuty-Signature`: `v1=<hex>` entries, comma-separated; true when one is the HMAC-SHA256 of
 * the raw body with `secret`. Other versions are skipped (PagerDuty may add schemes).
 */
export function pagerdutySignatureMatches(secret: string, rawBody: Buffer | string, header: string | undefined): boolean {
  if (!header) return false;
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  let ok = false;
  for (const part of header.split(',')) {
    const m = /^\s*v1=([0-9a-fA-F]{64})\s*$/.exec(part);
    if (!m) continue;
    const got = Buffer.from(m[1]!, 'hex');
    // Every entry is compared, so the time taken does not say which one matched.
    if (timingSafeEqual(expected, got)) ok = true;
  }
  return ok;
}

/** The JSON body, cleaned of unstorable text and redacted, or the 400 that names why not. */
function readJsonObject(raw: string, redactor: Redactor, what: string): { body: Record<string, unknown> } | { status: 400; error: string } {
  let body: unknown;
  try {
    body = cleanDeep(JSON.parse(raw) as unknown);
  } catch {
    return { status: 400, error: 'body is not JSON' };
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return { status: 400, error: `body is not a JSON object (${what})` };
  return { body: redactor.redactValue(body as Record<string, unknown>) };
}

function judged<T>(fn: () => T): T | { status: 400; error: string } {
  try {
    return fn();
  } catch (err) {
    if (err instanceof AlertWebhookError) return { status: 400, error: err.message.slice(0, 500) };
    throw err;
  }
}

export function judgeGrafanaWebhook(raw: string, redactor: Redactor): WebhookVerdict {
  const read = readJsonObject(raw, redactor, 'a Grafana webhook notification');
  if ('status' in read) return read;
  if (!Array.isArray(read.body['alerts'])) return { status: 400, error: 'alerts: expected an array of alerts' };
  return judged(() => {
    const group = parseGrafanaWebhookGroup(read.body);
    return { status: 202 as const, alert: { alert: group.alert, deliveryKey: group.deliveryKey }, alerts: group.alerts };
  });
}

export function judgePagerDutyWebhook(raw: string, redactor: Redactor): WebhookVerdict {
  const read = readJsonObject(raw, redactor, 'a PagerDuty V3 webhook event');
  if ('status' in read) return read;
  return judged(() => {
    const r = parsePagerDutyWebhook(read.body);
    return r.kind === 'ignored' ? { status: 202 as const, ignored: r.eventType } : { status: 202 as const, alert: { alert: r.alert, deliveryKey: r.deliveryKey }, alerts: 1 };
  });
}

export function judgeOpsgenieWebhook(raw: string, redactor: Redactor): WebhookVerdict {
  const read = readJsonObject(raw, redactor, 'an Opsgenie webhook');
  if ('status' in read) return read;
  return judged(() => {
    const r = parseOpsgenieWebhook(read.body);
    return r.kind === 'ignored' ? { status: 202 as const, ignored: r.action } : { status: 202 as const, alert: { alert: r.alert, deliveryKey: r.deliveryKey }, alerts: 1 };
  });
}

interface WebhookSpec {
  path: string;
  /** For log lines: `grafana webhook refused`. */
  name: string;
  /** Checked before the body is read; a refusal is its reason. */
  authorize?(req: IncomingMessage): { ok: true } | { ok: false; reason: string; error: string };
  /** Checked on the raw body (a signature); a refusal is its reason. */
  authorizeBody?(req: IncomingMessage, raw: string): { ok: true } | { ok: false; reason: string; error: string };
  judge(raw: string, redactor: Redactor): WebhookVerdict;
}

function webhookRoute(spec: WebhookSpec, o: AlertWebhookRouteOptions): Route {
  const { path, name } = spec;
  return {
    path,
    method: ['POST'],
    handler: (req, res) => {
      const pre = spec.authorize?.(req);
      if (pre && !pre.ok) {
        o.log.warn({ path, status: 401, auth: pre.reason }, `${name} refused`);
        // The body is not read: say so to the client, and let it go.
        sendJson(res, 401, { ok: false, error: pre.error }, { connection: 'close' });
        req.resume();
        return;
      }
      void (async () => {
        const raw = await readBody(req);
        const post = spec.authorizeBody?.(req, raw);
        if (post && !post.ok) {
          o.log.warn({ path, status: 401, auth: post.reason, body: bodySummary(raw) }, `${name} refused`);
          return sendJson(res, 401, { ok: false, error: post.error });
        }
        const verdict = spec.judge(raw, o.redactor);
        if (verdict.status !== 202) {
          o.log.warn({ path, status: verdict.status, error: verdict.error, body: bodySummary(raw) }, `${name} refused`);
          return sendJson(res, verdict.status, { ok: false, error: verdict.error });
        }
        if ('ignored' in verdict) {
          o.log.info({ path, ignored: verdict.ignored }, `${name} ignored`);
          return sendJson(res, 202, { ok: true, ignored: verdict.ignored });
        }
        sendJson(res, 202, { ok: true, status: verdict.alert.alert.status, alerts: verdict.alerts });
        o.log.info({ path, status: verdict.alert.alert.status, alerts: verdict.alerts, alert: verdict.alert.alert.alertName, deliveryKey: verdict.alert.deliveryKey }, `${name} accepted`);
        o.onAlert(verdict.alert);
      })().catch((err: unknown) => {
        // An oversized body was already answered 413 by readBody; only real failures are errors.
        if (err instanceof BodyTooLargeError) return o.log.warn({ path, status: 413 }, `${name} body too large`);
        o.log.error({ path, err: String(err) }, `${name} failed`);
        sendJson(res, 500, { ok: false, error: 'internal error; retry later' });
      });
    },
  };
}

/** `POST /webhooks/grafana`: Grafana Alerting's webhook contact point, authenticated by bearer token or basic auth. */
export function grafanaWebhookRoute(o: AlertWebhookRouteOptions & { token: string }): Route {
  return webhookRoute(
    {
      path: GRAFANA_WEBHOOK_PATH,
      name: 'grafana webhook',
      authorize: (req) =>
        bearerOrBasicMatches(o.token, req.headers.authorization)
          ? { ok: true }
          : { ok: false, reason: req.headers.authorization ? 'wrong credentials' : 'no Authorization header', error: 'missing or wrong credentials (bearer token or basic auth password)' },
      judge: judgeGrafanaWebhook,
    },
    o,
  );
}

/** `POST /webhooks/pagerduty`: a PagerDuty V3 webhook subscription, verified by its signing secret. */
export function pagerdutyWebhookRoute(o: AlertWebhookRouteOptions & { secret: string }): Route {
  return webhookRoute(
    {
      path: PAGERDUTY_WEBHOOK_PATH,
      name: 'pagerduty webhook',
      authorizeBody: (req, raw) => {
        const header = req.headers['x-pagerduty-signature'];
        const value = Array.isArray(header) ? header.join(',') : header;
        if (pagerdutySignatureMatches(o.secret, Buffer.from(raw, 'utf8'), value)) return { ok: true };
        return { ok: false, reason: value ? 'no signature matches' : 'no X-PagerDuty-Signature header', error: 'missing or wrong X-PagerDuty-Signature' };
      },
      judge: judgePagerDutyWebhook,
    },
    o,
  );
}

/** `POST /webhooks/opsgenie`: Opsgenie's outgoing Webhook integration, with a shared token (header or query). */
export function opsgenieWebhookRoute(o: AlertWebhookRouteOptions & { token: string }): Route {
  return webhookRoute(
    {
      path: OPSGENIE_WEBHOOK_PATH,
      name: 'opsgenie webhook',
      authorize: (req) => {
        const header = req.headers['x-vigil-token'];
        const bearer = req.headers.authorization?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim();
        const query = new URL(req.url ?? '/', 'http://vigil').searchParams.get('token') ?? undefined;
        const got = (Array.isArray(header) ? header[0] : header)?.trim() || bearer || query;
        return secretMatches(o.token, got) ? { ok: true } : { ok: false, reason: got ? 'wrong token' : 'no token', error: 'missing or wrong token (X-Vigil-Token header, bearer, or ?token=)' };
      },
      judge: judgeOpsgenieWebhook,
    },
    o,
  );
}

/**
 * A fake PagerDuty Events API v2 on loopback (https://developer.pagerduty.com/docs/events-api-v2-overview), for the
 * real `PagerDutyEvents` client: `POST /v2/enqueue` validated as PagerDuty documents it — a JSON object, a
 * `routing_key` of exactly 32 characters that is a known integration, `event_action` trigger | acknowledge |
 * resolve, a `dedup_key` (≤255) for acknowledge/resolve, and for a trigger `payload.summary` (≤1024),
 * `payload.source` and `payload.severity` (critical | error | warning | info) — answered `202 { status: "success",
 * message: "Event processed", dedup_key }` or `400 { status: "invalid event", message: "Event object is invalid",
 * errors: [...] }`. Alerts are kept per routing key and dedup key like PagerDuty's: a second trigger with the same
 * key while open joins it (no new page), a resolve closes it. `throttleNext(n)` answers the next n requests 429.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakePdAlert {
  routingKey: string;
  dedupKey: string;
  status: 'triggered' | 'acknowledged' | 'resolved';
  summary: string;
  severity: string;
  source: string;
  customDetails?: unknown;
  links?: unknown;
  /** Trigger events for this alert (1 = paged once). */
  triggers: number;
  /** Pages (notifications) sent: a trigger that opens the alert pages, one that joins an open alert does not. */
  pages: number;
}

export interface FakePagerDuty {
  url: string;
  /** Every request: its status and body. */
  requests: { status: number; body: unknown }[];
  alerts: FakePdAlert[];
  throttleNext(n: number, retryAfterSeconds?: number): void;
  close(): Promise<void>;
}

const SEVERITIES = new Set(['critical', 'error', 'warning', 'info']);

export async function startFakePagerDuty(o: { routingKeys: string[] }): Promise<FakePagerDuty> {
  const requests: FakePagerDuty['requests'] = [];
  const alerts: FakePdAlert[] = [];
  let throttle = 0;
  let retryAfter: number | undefined;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        requests.push({ status, body: safeJson(raw) });
        res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
      };
      if (req.method !== 'POST' || req.url !== '/v2/enqueue') return answer(404, { status: 'not found' });
      if (throttle > 0) {
        throttle--;
        return answer(429, { status: 'throttle event', message: 'Requests for this service are arriving too quickly. Please retry later.' }, retryAfter !== undefined ? { 'retry-after': String(retryAfter) } : {});
      }
      const e = safeJson(raw) as Record<string, unknown> | undefined;
      if (!e || typeof e !== 'object' || Array.isArray(e)) return answer(400, { status: 'invalid event', message: 'Event object is invalid', errors: ['Request body is not a JSON object'] });
      const errors: string[] = [];
      const key = e['routing_key'];
      if (typeof key !== 'string') errors.push("'routing_key' is missing or blank");
      else if (key.length !== 32) errors.push("Length of 'routing_key' is incorrect (should be 32 characters)");
      const action = e['event_action'];
      if (action !== 'trigger' && action !== 'acknowledge' && action !== 'resolve') errors.push("'event_action' is invalid (must be one of the following: 'trigger', 'acknowledge' or 'resolve')");
      const dedup = e['dedup_key'];
      if (dedup !== undefined && (typeof dedup !== 'string' || dedup.length > 255)) errors.push("'dedup_key' must be a string of at most 255 characters");
      if (action !== 'trigger' && typeof dedup !== 'string') errors.push("'dedup_key' is missing or blank");
      const p = e['payload'] as Record<string, unknown> | undefined;
      if (action === 'trigger') {
        if (!p || typeof p !== 'object') errors.push("'payload' is missing or not an object");
        else {
          if (typeof p['summary'] !== 'string' || !p['summary']) errors.push("'payload.summary' is missing or blank");
          else if (p['summary'].length > 1024) errors.push("Length of 'payload.summary' is too long (maximum is 1024 characters)");
          if (typeof p['source'] !== 'string' || !p['source']) errors.push("'payload.source' is missing or blank");
          if (typeof p['severity'] !== 'string' || !SEVERITIES.has(p['severity'])) errors.push("'payload.severity' is invalid (must be one of the following: 'critical', 'warning', 'error' or 'info')");
        }
      }
      if (errors.length) return answer(400, { status: 'invalid event', message: 'Event object is invalid', errors });
      // A well-formed event for a key no integration has is accepted and dropped, as PagerDuty does.
      const known = o.routingKeys.includes(key as string);
      const dedupKey = (dedup as string | undefined) ?? randomBytes(16).toString('hex');
      if (known) {
        const open = alerts.find((a) => a.routingKey === key && a.dedupKey === dedupKey && a.status !== 'resolved');
        if (action === 'trigger') {
          if (open) open.triggers++;
          else
            alerts.push({
              routingKey: key as string,
              dedupKey,
              status: 'triggered',
              summary: p!['summary'] as string,
              severity: p!['severity'] as string,
              source: p!['source'] as string,
              customDetails: p!['custom_details'],
              links: e['links'],
              triggers: 1,
              pages: 1,
            });
        } else if (open) open.status = action === 'resolve' ? 'resolved' : 'acknowledged';
      }
      answer(202, { status: 'success', message: 'Event processed', dedup_key: dedupKey });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    alerts,
    throttleNext(n, seconds) {
      throttle = n;
      retryAfter = seconds;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function safeJson(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}

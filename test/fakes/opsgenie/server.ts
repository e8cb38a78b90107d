/**
 * A fake Opsgenie Alert API on loopback (https://docs.opsgenie.com/docs/alert-api), for the real `OpsgenieAlerts`
 * client: `POST /v2/alerts` (create) and `POST /v2/alerts/{identifier}/close?identifierType=alias|id|tiny`, each
 * with `Authorization: GenieKey <key>` (401 `{ message: "Could not authenticate" }` otherwise). Create is checked as
 * Opsgenie documents it — `message` required, at most 130 characters; `alias` ≤512; `description` ≤15000;
 * `priority` P1..P5; `details` a map — and answered `202 { result: "Request will be processed", took, requestId }`,
 * or `422 { message, errors }`. Opsgenie de-duplicates an open alert by alias: a create with the alias of an open
 * alert raises its count instead of notifying again. Close of an unknown alias is still 202 (Opsgenie processes the
 * request asynchronously). `throttleNext(n)` answers the next n requests 429 with `X-RateLimit-State: THROTTLED`.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeOgAlert {
  alias: string;
  message: string;
  description?: string;
  priority: string;
  details: Record<string, string>;
  entity?: string;
  source?: string;
  tags: string[];
  status: 'open' | 'closed';
  /** Creates seen for this alias while open (1 = notified once). */
  count: number;
  closeNote?: string;
}

export interface FakeOpsgenie {
  url: string;
  requests: { method: string; path: string; status: number; body: unknown; auth?: string }[];
  alerts: FakeOgAlert[];
  throttleNext(n: number): void;
  close(): Promise<void>;
}

export async function startFakeOpsgenie(o: { apiKeys: string[] }): Promise<FakeOpsgenie> {
  const requests: FakeOpsgenie['requests'] = [];
  const alerts: FakeOgAlert[] = [];
  let throttle = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url ?? '/', 'http://fake');
      const auth = req.headers.authorization;
      const answer = (status: number, body: Record<string, unknown>, headers: Record<string, string> = {}) => {
        requests.push({ method: req.method ?? '', path: `${url.pathname}${url.search}`, status, body: safeJson(raw), ...(auth ? { auth } : {}) });
        res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify({ ...body, took: 0.01, requestId: randomUUID() }));
      };
      const key = /^GenieKey\s+(\S+)$/.exec(auth ?? '')?.[1];
      if (!key || !o.apiKeys.includes(key)) return answer(401, { message: 'Could not authenticate' });
      if (throttle > 0) {
        throttle--;
        return answer(429, { message: 'You are making too many requests! To avoid errors, we recommend you limit requests.' }, { 'x-ratelimit-state': 'THROTTLED' });
      }
      const body = safeJson(raw) as Record<string, unknown> | undefined;
      if (req.method !== 'POST') return answer(404, { message: 'Not found' });
      if (url.pathname === '/v2/alerts') {
        if (!body || typeof body !== 'object' || Array.isArray(body)) return answer(400, { message: 'Could not parse the request body' });
        const errors: Record<string, string> = {};
        const message = body['message'];
        if (typeof message !== 'string' || !message.trim()) errors['message'] = 'Message can not be empty.';
        else if (message.length > 130) errors['message'] = 'Message can not be longer than 130 characters.';
        if (body['alias'] !== undefined && (typeof body['alias'] !== 'string' || body['alias'].length > 512)) errors['alias'] = 'Alias can not be longer than 512 characters.';
        if (typeof body['description'] === 'string' && body['description'].length > 15000) errors['description'] = 'Description can not be longer than 15000 characters.';
        if (body['priority'] !== undefined && !/^P[1-5]$/.test(String(body['priority']))) errors['priority'] = 'Priority should be one of [P1, P2, P3, P4, P5]';
        const details = body['details'];
        if (details !== undefined && (typeof details !== 'object' || details === null || Array.isArray(details))) errors['details'] = 'Details should be a map.';
        if (Object.keys(errors).length) return answer(422, { message: 'Request body is not processable. Please check the errors.', errors });
        const alias = (body['alias'] as string | undefined) ?? (message as string);
        const open = alerts.find((a) => a.alias === alias && a.status === 'open');
        if (open) open.count++;
        else
          alerts.push({
            alias,
            message: message as string,
            ...(typeof body['description'] === 'string' ? { description: body['description'] } : {}),
            priority: (body['priority'] as string | undefined) ?? 'P3',
            details: (details as Record<string, string> | undefined) ?? {},
            ...(typeof body['entity'] === 'string' ? { entity: body['entity'] } : {}),
            ...(typeof body['source'] === 'string' ? { source: body['source'] } : {}),
            tags: Array.isArray(body['tags']) ? (body['tags'] as string[]) : [],
            status: 'open',
            count: 1,
          });
        return answer(202, { result: 'Request will be processed' });
      }
      const close = /^\/v2\/alerts\/([^/]+)\/close$/.exec(url.pathname);
      if (close) {
        const type = url.searchParams.get('identifierType') ?? 'id';
        if (!['id', 'alias', 'tiny'].includes(type)) return answer(422, { message: 'Invalid identifierType' });
        const id = decodeURIComponent(close[1]!);
        const alert = type === 'alias' ? alerts.find((a) => a.alias === id && a.status === 'open') : undefined;
        if (alert) {
          alert.status = 'closed';
          if (body && typeof body['note'] === 'string') alert.closeNote = body['note'];
        }
        return answer(202, { result: 'Request will be processed' });
      }
      answer(404, { message: 'Not found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    alerts,
    throttleNext(n) {
      throttle = n;
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

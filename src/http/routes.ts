import type { IncomingMessage, ServerResponse } from 'node:http';

/** A plain HTTP route next to Slack's: health and webhooks. Used as Bolt customRoutes (HTTP mode) or by main.ts's server (Socket Mode). */
export interface Route {
  path: string;
  method: string[];
  handler(req: IncomingMessage, res: ServerResponse): void;
}

const MAX_BODY = 256 * 1024;

/** After a 413, how much more of the body is read and discarded so the client sees the answer (then the connection is cut). */
const MAX_DISCARD = 4 * MAX_BODY;

export class BodyTooLargeError extends Error {
  constructor() {
    super(`request body larger than ${MAX_BODY} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

/** Each request's response, so readBody can answer a body that is too large itself. */
const responses = new WeakMap<IncomingMessage, ServerResponse>();

/** A route whose handler can be answered 413 by readBody (and at once when Content-Length is already too large). */
export function limitBody(route: Route): Route {
  return {
    ...route,
    handler(req, res) {
      if (Number(req.headers['content-length'] ?? 0) > MAX_BODY) return void tooLarge(req, res);
      responses.set(req, res);
      route.handler(req, res);
    },
  };
}

/**
 * The request body as text, at most 256 KiB. A larger body rejects with BodyTooLargeError; on a route
 * wrapped by limitBody the client has then already been answered 413 with a JSON error.
 */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    const onData = (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) return void chunks.push(c);
      req.off('data', onData);
      const res = responses.get(req);
      if (res) tooLarge(req, res);
      else req.destroy();
      reject(new BodyTooLargeError());
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * Answer 413 before anything else, then stop keeping the body: the rest is read and dropped (a client
 * that is still sending would otherwise get a reset instead of the answer), up to a bound.
 */
function tooLarge(req: IncomingMessage, res: ServerResponse): void {
  sendJson(res, 413, { ok: false, error: `request body too large (limit ${MAX_BODY} bytes)` }, { connection: 'close' });
  let discarded = 0;
  req.on('data', (c: Buffer) => {
    discarded += c.length;
    if (discarded > MAX_DISCARD) req.destroy();
  });
  req.resume();
}

/**
 * What a log line may say about a request body: its size and shape (top-level keys, at most 20), never
 * its content. Bodies carry alert text, log lines and user input; a debug log is no place for them.
 */
export function bodySummary(body: unknown): { bytes?: number; shape: string; keys?: string[] } {
  if (typeof body === 'string') {
    const bytes = Buffer.byteLength(body);
    try {
      return { bytes, ...bodySummary(JSON.parse(body) as unknown) };
    } catch {
      return { bytes, shape: 'not JSON' };
    }
  }
  if (Array.isArray(body)) return { shape: `array of ${body.length}` };
  if (body !== null && typeof body === 'object') return { shape: 'object', keys: Object.keys(body).slice(0, 20) };
  return { shape: body === null ? 'null' : typeof body };
}

/** Answer with JSON; a no-op when the response was already answered (e.g. 413 by readBody). */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

/** Serve routes on a bare node:http handler (Socket Mode has no Bolt HTTP server). */
export function routeRequest(routes: Route[], req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '').split('?')[0];
  const route = routes.find((r) => r.path === path && r.method.includes(req.method ?? 'GET'));
  if (!route) return void sendJson(res, 404, { ok: false, error: 'not found' });
  limitBody(route).handler(req, res);
}

import type { IncomingMessage, ServerResponse } from 'node:http';

/** A plain HTTP route next to Slack's: health and webhooks. Used as Bolt customRoutes (HTTP mode) or by main.ts's server (Socket Mode). */
export interface Route {
  path: string;
  method: string[];
  handler(req: IncomingMessage, res: ServerResponse): void;
}

const MAX_BODY = 256 * 1024;

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new Error('body too large'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** Serve routes on a bare node:http handler (Socket Mode has no Bolt HTTP server). */
export function routeRequest(routes: Route[], req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '').split('?')[0];
  const route = routes.find((r) => r.path === path && r.method.includes(req.method ?? 'GET'));
  if (!route) return void sendJson(res, 404, { ok: false, error: 'not found' });
  route.handler(req, res);
}

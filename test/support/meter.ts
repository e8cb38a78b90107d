/**
 * A metering HTTP proxy for the bench: put in front of an evidence API (the fake Kubernetes API server,
 * the real Prometheus, the fake Loki, the fake GitHub), it forwards every request unchanged and counts
 * the response body bytes the upstream served to Vigil, by request. That is the raw evidence: what a
 * naive agent would have pasted into a model (every object, event, log line and sample as returned).
 *
 * `accept-encoding` is dropped on the way up, so the count is of identity (uncompressed) bodies, as a
 * model would be shown them, whatever compression the client asked for.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface MeteredResponse {
  source: string;
  method: string;
  /** Path and query as the client sent them. */
  path: string;
  status: number;
  bytes: number;
  at: number;
}

export interface Meter {
  /** The proxy's own `http://127.0.0.1:PORT` (paths are kept, so give clients this instead of the upstream). */
  url: string;
  responses: MeteredResponse[];
  close(): Promise<void>;
}

export async function startMeter(source: string, upstream: string, into: MeteredResponse[] = []): Promise<Meter> {
  const target = new URL(upstream);
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    // Host is kept (the proxy's), so absolute URLs an upstream builds from it (GitHub's Link pages) come back through here.
    const headers = { ...req.headers };
    delete headers['accept-encoding'];
    const up = httpRequest(
      { protocol: target.protocol, hostname: target.hostname, port: target.port, method: req.method, path: joinPath(target.pathname, req.url ?? '/'), headers },
      (answer: IncomingMessage) => {
        const record: MeteredResponse = { source, method: req.method ?? 'GET', path: req.url ?? '/', status: answer.statusCode ?? 0, bytes: 0, at: Date.now() };
        into.push(record);
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.on('data', (chunk: Buffer) => {
          record.bytes += chunk.length;
        });
        answer.pipe(res);
      },
    );
    up.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`meter: upstream ${source} failed: ${err.message}`);
    });
    req.pipe(up);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${target.pathname === '/' ? '' : target.pathname.replace(/\/+$/, '')}`,
    responses: into,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The upstream's base path (if any) and the request's path: the proxy URL carries the base path too, so requests arrive with it. */
function joinPath(base: string, path: string): string {
  return base === '/' || path.startsWith(base) ? path : `${base.replace(/\/+$/, '')}${path}`;
}

/** What a meter's responses add up to: bytes, and the same ≈ 4-characters-per-token estimate the model fake uses. */
export function meterTotals(responses: MeteredResponse[]): { requests: number; bytes: number; tokens: number } {
  const bytes = responses.reduce((n, r) => n + r.bytes, 0);
  return { requests: responses.length, bytes, tokens: Math.ceil(bytes / 4) };
}

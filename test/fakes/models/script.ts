/**
 * Shared plumbing of the fake model APIs: a loopback `node:http` server that records every request and
 * plays a script of steps — a reply, an injected HTTP failure, or a hang (to trip the client timeout).
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body (undefined when it was not JSON). */
  body: any;
  raw: string;
}

/** An injected failure: the status and headers (e.g. `retry-after-ms`) the real API would send. */
export interface FailureStep {
  status: number;
  headers?: Record<string, string>;
  message?: string;
}

export interface HangStep {
  hang: true;
}

export type ScriptStep<Reply> = Reply | ((req: RecordedRequest) => Reply) | FailureStep | HangStep;

export interface FakeServer {
  /** `http://127.0.0.1:PORT` */
  url: string;
  requests: RecordedRequest[];
  /** Steps not yet played. */
  remaining(): number;
  close(): Promise<void>;
}

export type Outcome<Reply> =
  | { kind: 'reply'; reply: Reply }
  | { kind: 'fail'; step: FailureStep }
  | { kind: 'hang' };

export interface ApiHooks<Reply> {
  /** Validate like the real API: return an error response (status + body) or undefined to continue. */
  validate(req: RecordedRequest): { status: number; body: unknown } | undefined;
  /** The JSON body for a failure step in the API's error shape. */
  errorBody(status: number, message: string): unknown;
  /** The JSON body for a reply step. */
  replyBody(reply: Reply, req: RecordedRequest): unknown;
}

export async function startScriptedServer<Reply>(
  name: string,
  script: ScriptStep<Reply>[],
  hooks: ApiHooks<Reply>,
): Promise<FakeServer> {
  const steps = [...script];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = raw === '' ? undefined : JSON.parse(raw);
      } catch {
        body = undefined;
      }
      const recorded: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, raw };
      requests.push(recorded);
      const invalid = hooks.validate(recorded);
      if (invalid) return sendJson(res, invalid.status, invalid.body, { 'x-should-retry': 'false' });
      const step = steps.shift();
      if (step === undefined) {
        const message = `fake model script "${name}" has run out of steps (request #${requests.length})`;
        // x-should-retry: false so the SDK does not retry into the same dead end.
        return sendJson(res, 500, hooks.errorBody(500, message), { 'x-should-retry': 'false' });
      }
      const outcome = play(step, recorded);
      if (outcome.kind === 'hang') return; // never answered; the socket is destroyed on close()
      if (outcome.kind === 'fail') {
        const message = outcome.step.message ?? `injected failure ${outcome.step.status} from script "${name}"`;
        return sendJson(res, outcome.step.status, hooks.errorBody(outcome.step.status, message), outcome.step.headers);
      }
      sendJson(res, 200, hooks.replyBody(outcome.reply, recorded));
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    remaining: () => steps.length,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function play<Reply>(step: ScriptStep<Reply>, req: RecordedRequest): Outcome<Reply> {
  if (typeof step === 'function') return { kind: 'reply', reply: (step as (r: RecordedRequest) => Reply)(req) };
  if (typeof step === 'object' && step !== null && 'hang' in step) return { kind: 'hang' };
  if (typeof step === 'object' && step !== null && 'status' in step && typeof step.status === 'number') {
    return { kind: 'fail', step: step as FailureStep };
  }
  return { kind: 'reply', reply: step as Reply };
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

let counter = 0;
/** A unique id with the API's prefix (`msg_`, `toolu_`, `chatcmpl-`, `call_`). */
export function fakeId(prefix: string): string {
  counter += 1;
  return `${prefix}${Date.now().toString(36)}${counter.toString(36).padStart(6, '0')}`;
}

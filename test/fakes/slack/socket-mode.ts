/**
 * Socket Mode, faked: a WebSocket endpoint that speaks Slack's envelope protocol (PLATFORM-FACTS A1/A7).
 * On connect it sends `hello`; `send()` delivers an envelope (`events_api`, `slash_commands`,
 * `interactive`) and resolves with the app's ack `{ envelope_id, payload? }` and how long it took.
 * Point the fake Web API's `apps.connections.open` at it with `fake.store.socketModeUrl = sm.url`.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export interface SocketAck {
  envelope_id: string;
  payload?: unknown;
  ackMs: number;
}

export class FakeSocketMode {
  private client?: WebSocket;
  private readonly pending = new Map<string, { started: number; resolve: (a: SocketAck) => void }>();
  private readonly connected: ((ws: WebSocket) => void)[] = [];

  private constructor(private readonly wss: WebSocketServer) {
    wss.on('connection', (ws) => {
      this.client = ws;
      ws.on('message', (data) => {
        const msg = JSON.parse(String(data)) as { envelope_id?: string; payload?: unknown };
        const p = msg.envelope_id ? this.pending.get(msg.envelope_id) : undefined;
        if (p && msg.envelope_id) {
          this.pending.delete(msg.envelope_id);
          p.resolve({ envelope_id: msg.envelope_id, payload: msg.payload, ackMs: performance.now() - p.started });
        }
      });
      ws.send(JSON.stringify({ type: 'hello', num_connections: 1, debug_info: { host: 'fake-socket-mode', approximate_connection_time: 18060 }, connection_info: { app_id: 'A0VIGIL' } }));
      for (const cb of this.connected.splice(0)) cb(ws);
    });
  }

  static async start(): Promise<FakeSocketMode> {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
    return new FakeSocketMode(wss);
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.wss.address() as AddressInfo).port}/link`;
  }

  /** Resolves once the app has connected (and been sent `hello`). */
  connectedClient(timeoutMs = 10_000): Promise<void> {
    if (this.client) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('fake Socket Mode: the app never connected')), timeoutMs);
      this.connected.push(() => (clearTimeout(t), resolve()));
    });
  }

  /** Deliver one envelope; resolves with the app's ack. */
  send(type: 'events_api' | 'slash_commands' | 'interactive', payload: unknown, opts: { retryAttempt?: number; timeoutMs?: number } = {}): Promise<SocketAck> {
    if (!this.client) return Promise.reject(new Error('fake Socket Mode: no app connected'));
    const envelope_id = randomUUID();
    const ack = new Promise<SocketAck>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`fake Socket Mode: no ack for ${type} within ${opts.timeoutMs ?? 5000} ms`)), opts.timeoutMs ?? 5000);
      this.pending.set(envelope_id, { started: performance.now(), resolve: (a) => (clearTimeout(t), resolve(a)) });
    });
    this.client.send(
      JSON.stringify({
        envelope_id,
        type,
        payload,
        accepts_response_payload: type !== 'events_api',
        ...(opts.retryAttempt ? { retry_attempt: opts.retryAttempt, retry_reason: 'timeout' } : { retry_attempt: 0, retry_reason: '' }),
      }),
    );
    return ack;
  }

  async close(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }
}

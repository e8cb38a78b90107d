/**
 * Socket Mode has no HTTP receiver, so the probes are served by Vigil's own server, listening from process
 * start (src/main.ts does the same with listenProbes): while Slack has not connected yet /livez answers 200
 * and /readyz 503 naming Slack — Kubernetes can tell "starting" from "dead" — and once the socket is up
 * /readyz is 200. A dropped socket makes it 503 again until the client reconnects.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { loadConfig } from '../../src/config/index.js';
import { VigilMetrics } from '../../src/http/metrics.js';
import { Probes, listenProbes } from '../../src/http/probes.js';
import type { Route } from '../../src/http/routes.js';
import { createLogger } from '../../src/log.js';
import { createRedactor } from '../../src/redact/index.js';
import { startVigil, type Vigil } from '../../src/vigil.js';
import { startWorld, type World } from '../support/world.js';
import { parsePrometheusText } from '../http/prometheus-text.js';
import { DEMO_SCENARIO, eventually } from './helpers.js';

const APP_TOKEN = 'xapp-1-A0VIGIL-1764430000-fakefakefake';

/** Slack's Socket Mode endpoint, with a gate: while closed, a connection attempt waits in its handshake. */
async function gatedSocketMode() {
  let open!: () => void;
  let gate = new Promise<void>((resolve) => (open = resolve));
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, verifyClient: (_info, cb) => void gate.then(() => cb(true)) });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  wss.on('connection', (ws) => {
    ws.on('message', () => undefined);
    ws.send(JSON.stringify({ type: 'hello', num_connections: 1, debug_info: { host: 'gated-socket-mode' }, connection_info: { app_id: 'A0VIGIL' } }));
  });
  return {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/link`,
    open: () => open(),
    close: () => (gate = new Promise<void>((resolve) => (open = resolve))),
    drop: () => wss.clients.forEach((c) => c.terminate()),
    stop: async () => {
      open();
      wss.clients.forEach((c) => c.terminate());
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

describe('Socket Mode probes', () => {
  let world: World;
  let socket: Awaited<ReturnType<typeof gatedSocketMode>>;
  let server: Server;
  let base: string;
  let vigil: Vigil | undefined;
  let starting: Promise<Vigil>;
  const probes = new Probes();
  const metrics = new VigilMetrics();
  let routes: Route[] = [...probes.routes(), metrics.route()];

  beforeAll(async () => {
    socket = await gatedSocketMode();
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, startApp: false, slackExtraTokens: [APP_TOKEN] });
    world.slack.store.socketModeUrl = socket.url;
    const config = loadConfig({ ...world.env, SLACK_APP_TOKEN: APP_TOKEN, SLACK_SIGNING_SECRET: '' });
    expect(config.slack.mode).toBe('socket');
    // As main.ts: the probe server first, then Vigil.
    server = await listenProbes(0, () => routes, '127.0.0.1');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const quiet = new Writable({ write: (_c, _e, done) => done() });
    starting = startVigil(config, createLogger('silent', createRedactor(), quiet), { probes, metrics, slackClientOptions: { retryConfig: { retries: 1, minTimeout: 50, maxTimeout: 100 } } });
    starting.then((v) => ((vigil = v), (routes = v.routes))).catch(() => undefined);
  });
  afterAll(async () => {
    socket?.open();
    await (vigil ?? (await starting.catch(() => undefined)))?.stop();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await socket?.stop();
    await world?.close();
  });

  it('answers /livez and /readyz 503 (naming Slack) before Slack connects, and /readyz 200 once it has', async () => {
    expect((await fetch(`${base}/livez`)).status).toBe(200);
    // The database opens and migrates; Slack is still waiting at the gate.
    const waiting = await eventually(async () => {
      const res = await fetch(`${base}/readyz`);
      const body = (await res.json()) as { notReady: string[]; checks: Record<string, { ok: boolean; error?: string }> };
      return res.status === 503 && body.notReady.join() === 'slack' ? body : undefined;
    }, 'readiness waiting for Slack alone');
    expect(waiting.checks['slack']!.error).toMatch(/not started yet|Socket Mode/);
    expect(vigil).toBeUndefined();
    expect((await fetch(`${base}/livez`)).status).toBe(200);
    // /metrics answers while starting too.
    const text = await (await fetch(`${base}/metrics`)).text();
    expect(() => parsePrometheusText(text)).not.toThrow();

    socket.open();
    await starting;
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ ok: true, checks: { slack: { ok: true } } });
  });

  it('is not ready while the socket is down, and ready again once the client reconnected', async () => {
    socket.close();
    socket.drop();
    const down = await eventually(async () => {
      const res = await fetch(`${base}/readyz`);
      return res.status === 503 ? ((await res.json()) as { notReady: string[] }) : undefined;
    }, 'readiness after the socket dropped');
    expect(down.notReady).toEqual(['slack']);
    expect((await fetch(`${base}/livez`)).status).toBe(200);
    socket.open();
    await eventually(async () => ((await fetch(`${base}/readyz`)).status === 200 ? true : undefined), 'readiness after reconnecting');
  });
});

/** A port nobody listens on right now. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

describe('Socket Mode probes of the real entry point (src/main.ts)', () => {
  let world: World;
  let socket: Awaited<ReturnType<typeof gatedSocketMode>>;
  let child: ChildProcess | undefined;
  const logs: string[] = [];

  beforeAll(async () => {
    socket = await gatedSocketMode();
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, startApp: false, slackExtraTokens: [APP_TOKEN] });
    world.slack.store.socketModeUrl = socket.url;
  });
  afterAll(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await socket?.stop();
    await world?.close();
  });

  it('listens on PORT from process start: /livez 200 and /readyz 503 naming Slack until it connects, then 200; SIGTERM exits cleanly', async () => {
    const port = await freePort();
    child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: fileURLToPath(new URL('../../', import.meta.url)),
      env: { ...process.env, ...world.env, SLACK_APP_TOKEN: APP_TOKEN, SLACK_SIGNING_SECRET: '', PORT: String(port), LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    for (const stream of [child.stdout!, child.stderr!]) stream.on('data', (b: Buffer) => logs.push(...b.toString().split('\n').filter(Boolean)));
    const base = `http://127.0.0.1:${port}`;
    const get = (path: string) => fetch(`${base}${path}`).catch(() => undefined);
    const waiting = await eventually(async () => {
      if (child!.exitCode !== null) throw new Error(`vigil exited with ${child!.exitCode}: ${logs.slice(-5).join('\n')}`);
      const res = await get('/readyz');
      const body = res ? ((await res.json()) as { notReady: string[] }) : undefined;
      return res?.status === 503 && body?.notReady.join() === 'slack' ? body : undefined;
    }, 'the probe server, waiting for Slack alone', 30_000);
    expect(waiting.notReady).toEqual(['slack']);
    expect((await get('/livez'))?.status).toBe(200);
    expect(logs.some((l) => /Vigil is listening/.test(l))).toBe(false);

    socket.open();
    await eventually(async () => ((await get('/readyz'))?.status === 200 ? true : undefined), 'readiness once Slack connected', 30_000);
    expect((await get('/livez'))?.status).toBe(200);

    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});

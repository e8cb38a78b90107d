/**
 * HTTP mode with VIGIL_PROBE_PORT: `npm start` (src/main.ts, a real process) answers the probes on their
 * own port from process start, before the database is migrated and Bolt listens on PORT. Kubernetes can
 * then point its probes at a port that never refuses while Vigil starts. /metrics is served there too,
 * and SIGTERM drains and exits 0.
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { parsePrometheusText } from '../http/prometheus-text.js';
import { startWorld, type World } from '../support/world.js';
import { DEMO_SCENARIO, eventually, freePort } from './helpers.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
let world: World | undefined;
let child: ChildProcess | undefined;
afterEach(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await world?.close();
  world = child = undefined;
});

const get = (port: number, path: string) => fetch(`http://127.0.0.1:${port}${path}`).then(async (r) => ({ status: r.status, body: await r.text() })).catch(() => undefined);

describe('VIGIL_PROBE_PORT in HTTP mode', () => {
  it('answers /livez and /readyz on its own port from start, then ready once Bolt listens; SIGTERM exits 0', async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, startApp: false });
    const [appPort, probePort] = [await freePort(), await freePort()];
    child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: root,
      env: { ...process.env, ...world.env, PORT: String(appPort), VIGIL_PROBE_PORT: String(probePort), LOG_LEVEL: 'warn' },
      stdio: 'ignore',
    });
    // The first answer on the probe port comes while Bolt is not listening on PORT yet.
    const first = await eventually(async () => {
      const live = await get(probePort, '/livez');
      return live ? { live, app: await get(appPort, '/healthz') } : undefined;
    }, 'the probe port to answer', 30_000);
    expect(first.live.status).toBe(200);
    expect(first.app).toBeUndefined();

    const ready = await eventually(async () => {
      const r = await get(probePort, '/readyz');
      return r?.status === 200 ? r : undefined;
    }, 'readiness on the probe port', 30_000);
    expect(JSON.parse(ready.body)).toMatchObject({ ok: true, checks: { database: { ok: true }, migrations: { ok: true }, slack: { ok: true } } });
    expect((await get(appPort, '/healthz'))?.status).toBe(200);
    const metrics = await get(probePort, '/metrics');
    expect(metrics?.status).toBe(200);
    expect(parsePrometheusText(metrics!.body).types.get('vigil_alerts_received_total')).toBe('counter');

    child.kill('SIGTERM');
    const code = await new Promise<number | null>((r) => child!.once('exit', (c) => r(c)));
    expect(code).toBe(0);
  }, 60_000);
});

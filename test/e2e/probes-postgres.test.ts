/**
 * A real database blip: Vigil on PostgreSQL through a TCP proxy that the test stops (every connection
 * cut, new ones refused) and starts again. /livez stays 200 throughout — restarting the pod would not
 * bring the database back — while /readyz is 503 naming the database, and 200 once it answers again.
 * Runs when VIGIL_TEST_DATABASE_URL points at a PostgreSQL server (npm run test:postgres, CI).
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, testProviders, type TestDatabase } from '../store/test-databases.js';
import { startWorld, type World } from '../support/world.js';
import { DEMO_SCENARIO, eventually } from './helpers.js';

/** A TCP proxy to host:port that can be stopped (connections cut, port closed) and started again on the same port. */
async function tcpProxy(host: string, port: number) {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let listenPort = 0;
  const start = () =>
    new Promise<void>((resolve) => {
      if (server) return resolve();
      server = createServer((client) => {
        const upstream = connect(port, host);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => undefined);
        }
        client.pipe(upstream).pipe(client);
      });
      server.listen(listenPort, '127.0.0.1', () => ((listenPort = (server!.address() as AddressInfo).port), resolve()));
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      if (!server) return resolve();
      server.close(() => resolve());
      server = undefined;
    });
  await start();
  return { port: () => listenPort, start, stop };
}

describe.skipIf(!testProviders.includes('postgresql'))('probes when PostgreSQL goes away', () => {
  let database: TestDatabase;
  let proxy: Awaited<ReturnType<typeof tcpProxy>>;
  let world: World;
  let base: string;

  beforeAll(async () => {
    database = await createTestDatabase('postgresql');
    const target = new URL(database.url);
    proxy = await tcpProxy(target.hostname, Number(target.port || 5432));
    const viaProxy = new URL(database.url);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port());
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, databaseUrl: viaProxy.toString() });
    base = `http://127.0.0.1:${world.vigil!.port}`;
  });
  afterAll(async () => {
    await proxy?.start().catch(() => undefined);
    await world?.close();
    await database?.drop();
  });

  it('keeps /livez at 200 while the database is down; /readyz is 503 naming it, and 200 after it is back', async () => {
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    await proxy.stop();
    const down = await eventually(async () => {
      const res = await fetch(`${base}/readyz`);
      return res.status === 503 ? ((await res.json()) as { notReady: string[]; checks: Record<string, { error?: string }> }) : undefined;
    }, 'readiness with the database down');
    expect(down.notReady).toEqual(['database']);
    expect(down.checks['database']!.error).toMatch(/database unreachable/);
    const t0 = performance.now();
    expect((await fetch(`${base}/livez`)).status).toBe(200);
    expect(performance.now() - t0).toBeLessThan(1000);

    await proxy.start();
    await eventually(async () => ((await fetch(`${base}/readyz`)).status === 200 ? true : undefined), 'readiness after the database is back');
    expect((await fetch(`${base}/livez`)).status).toBe(200);
  });
});

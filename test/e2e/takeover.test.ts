/**
 * Two real Vigil processes on one database; the one running an investigation is killed with SIGKILL in the
 * middle of a step. The survivor — which never received the alert, and is not told anything — takes the
 * investigation over once the dead worker's lease expires (its sweep), finishes it, and the thread has each
 * post once. PostgreSQL is the multi-replica store; SQLite (one file, two processes) is checked too.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/store/db.js';
import { createTestDatabase, testProviders, type TestDatabase } from '../store/test-databases.js';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';
import { acceptedPosts, DEMO_SCENARIO, eventually } from './helpers.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const LEASE_SECONDS = 2;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** The real entry point (src/main.ts) as its own process, against the fakes; resolves once /healthz answers. */
async function startVigilProcess(env: Record<string, string>, port: number, logs: string[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port), LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (b: Buffer) => logs.push(...b.toString().split('\n').filter(Boolean)));
  child.stderr!.on('data', (b: Buffer) => logs.push(...b.toString().split('\n').filter(Boolean)));
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`vigil exited early with ${child.exitCode}: ${logs.slice(-5).join('\n')}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return child;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error('vigil did not become healthy in 30 s');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.each(testProviders)('takeover of an orphaned investigation (%s)', (provider) => {
  let world: World | undefined;
  let database: TestDatabase | undefined;
  let db: Database | undefined;
  const children: ChildProcess[] = [];
  afterEach(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    children.length = 0;
    await db?.close();
    await world?.close();
    await database?.drop();
    world = database = db = undefined;
  });

  it('the surviving replica finishes what the killed one started, with no duplicate post', async () => {
    database = await createTestDatabase(provider);
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, startApp: false, databaseUrl: database.url, env: { VIGIL_LEASE_SECONDS: String(LEASE_SECONDS) } });
    db = await openDatabase(database.url);
    const [portA, portB] = [await freePort(), await freePort()];
    const logsA: string[] = [];
    const logsB: string[] = [];
    const a = await startVigilProcess(world.env, portA, logsA);
    children.push(a);
    const b = await startVigilProcess(world.env, portB, logsB);
    children.push(b);
    // Slack delivers events to replica A only (one replica behind the load balancer got the post).
    world.slack.setEventsTarget({ url: `http://127.0.0.1:${portA}/slack/events`, signingSecret: world.env.SLACK_SIGNING_SECRET! });

    // Slow Kubernetes: A is inside the evidence step when it dies.
    world.kube.setLatency(2_500);
    const { ts } = await world.postAlert();
    const running = await eventually(async () => {
      const i = await db!.prisma.investigation.findFirst();
      return i?.step === 'announced' && i.state === 'running' && i.leaseOwner ? i : undefined;
    }, 'replica A to start the evidence step');
    a.kill('SIGKILL');
    await new Promise((r) => a.once('exit', r));
    world.kube.setLatency(0);

    const done = await eventually(async () => {
      const i = await db!.prisma.investigation.findFirstOrThrow();
      return i.state === 'waiting' ? i : undefined;
    }, 'replica B to take over and finish', 30_000);
    expect(done.step).toBe('reported');
    expect(done.attempts).toBe(2);
    // B took it over by itself: nobody enqueued it there, and B says so in its log.
    expect(logsB.some((l) => l.includes('taking over an investigation whose worker stopped renewing its lease') && l.includes(running.leaseOwner!))).toBe(true);
    await new Promise((r) => setTimeout(r, 500)); // any late duplicate would be out by now
    const replies = world.slack.threadOf(ALERT_CHANNEL, ts).slice(1);
    expect(replies.map((m) => (m.metadata as { event_payload?: { purpose?: string } }).event_payload?.purpose)).toEqual(['header', 'board']);
    expect(acceptedPosts(world.slack).length).toBe(2);
    expect(await db.prisma.hypothesis.findFirstOrThrow({ where: { label: 'H1' } })).toMatchObject({ componentName: 'checkout', status: 'supported' });
  }, 90_000);
});

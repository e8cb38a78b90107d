/**
 * Two real Vigil processes on one database; the one running an investigation is killed with SIGKILL in the
 * middle of a step. The survivor — which never received the alert, and is not told anything — takes the
 * investigation over once the dead worker's lease expires (its sweep), finishes it, and the thread has each
 * post once. PostgreSQL is the multi-replica store; SQLite (one file, two processes) is checked too.
 */
import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/store/db.js';
import { createTestDatabase, testProviders, type TestDatabase } from '../store/test-databases.js';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';
import { acceptedPosts, DEMO_SCENARIO, eventually, freePort, startVigilProcess } from './helpers.js';

const LEASE_SECONDS = 2;

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
    const a = await startVigilProcess(world.env, portA, { logs: logsA, logLevel: 'info', timeoutMs: 30_000 });
    children.push(a);
    const b = await startVigilProcess(world.env, portB, { logs: logsB, logLevel: 'info', timeoutMs: 30_000 });
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

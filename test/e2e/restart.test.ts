import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/store/db.js';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';
import { acceptedPosts, DEMO_SCENARIO, eventually, freePort, startVigilProcess } from './helpers.js';

describe('durability: kill the process mid-investigation, start it again', () => {
  let world: World;
  let child: ChildProcess | undefined;
  let db: Database;

  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, startApp: false, env: { VIGIL_LEASE_SECONDS: '2' } });
    db = await openDatabase(world.env.DATABASE_URL!);
  });
  afterAll(async () => {
    child?.kill('SIGKILL');
    await db?.close();
    await world?.close();
  });

  it('resumes from the stored state and finishes without duplicating a Slack post', async () => {
    const port = await freePort();
    child = await startVigilProcess(world.env, port);
    world.slack.setEventsTarget({ url: `http://127.0.0.1:${port}/slack/events`, signingSecret: world.env.SLACK_SIGNING_SECRET! });

    // Slow Kubernetes: the evidence step is still running when the process dies.
    world.kube.setLatency(3_000);
    const { ts } = await world.postAlert();
    await world.slack.waitForMessage(ALERT_CHANNEL, (m) => m.thread_ts === ts && m.origin === 'app', { timeoutMs: 15_000 });
    // The header is out; the step is recorded right after it, and the slow evidence step is running.
    const inv = await eventually(async () => {
      const i = await db.prisma.investigation.findFirst();
      return i?.step === 'announced' ? i : undefined;
    }, 'the header step to be recorded');
    expect(inv.state).toBe('running');
    child.kill('SIGKILL');
    await new Promise((r) => child!.once('exit', r));

    world.kube.setLatency(0);
    const port2 = await freePort();
    child = await startVigilProcess(world.env, port2);
    const deadline = Date.now() + 20_000;
    for (;;) {
      const done = await db.prisma.investigation.findFirstOrThrow();
      if (done.state === 'waiting') break;
      if (Date.now() > deadline) throw new Error(`investigation did not finish after restart: ${JSON.stringify(done)}`);
      await new Promise((r) => setTimeout(r, 100));
    }

    const replies = world.slack.threadOf(ALERT_CHANNEL, ts).slice(1);
    expect(replies.map((m) => (m.metadata as { event_payload?: { purpose?: string } }).event_payload?.purpose)).toEqual(['header', 'board']);
    expect(acceptedPosts(world.slack).length).toBe(2);
    expect(await db.prisma.incident.count()).toBe(1);
    const finished = await db.prisma.investigation.findFirstOrThrow();
    expect(finished.step).toBe('reported');
    expect(finished.attempts).toBe(2);
    const h1 = await db.prisma.hypothesis.findFirstOrThrow({ where: { label: 'H1' } });
    expect(h1).toMatchObject({ componentName: 'checkout', status: 'supported' });
  });
});

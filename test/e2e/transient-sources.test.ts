/**
 * A Kubernetes API server that cannot answer for a moment (priority-and-fairness 429 with Retry-After, a
 * 503, a hang) is retried with backoff, waiting at least what it asked for, instead of ending the run as
 * "no hypotheses". When it stays down the thread says the investigation stopped and how to retry; the alert
 * firing again, or a reply, runs it again once the API is back. A run that ended with no hypothesis at all
 * runs again the same way.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.js';
import { DEMO_SCENARIO, eventually, threadText } from './helpers.js';

describe('transient Kubernetes failures at intake', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO });
  });
  afterAll(async () => world?.close());
  beforeEach(async () => {
    await world.settle();
    world.kube.clearFailures();
    const db = world.vigil!.db.prisma;
    await db.incident.deleteMany();
    await db.processedDelivery.deleteMany();
  });
  const db = () => world.vigil!.db.prisma;
  const podLists = () => world.kube.requests.filter((r) => r.method === 'GET' && r.path === '/api/v1/pods');

  it('waits out a 429 with Retry-After and diagnoses as if nothing happened', async () => {
    const before = podLists().length;
    world.kube.failNext(/^\/api\/v1\/pods$/, 429, { times: 2, retryAfterSeconds: 1 });
    const started = Date.now();
    await world.postAlert();
    const inv = await eventually(async () => {
      const i = await db().investigation.findFirst();
      return i?.state === 'waiting' ? i : undefined;
    }, 'the investigation to report');
    await world.settle();
    // Two refusals, each asking for 1 s: the third read succeeded, at least 2 s later.
    expect(podLists().length - before).toBeGreaterThanOrEqual(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    expect(inv).toMatchObject({ attempts: 3, step: 'reported' });
    const h1 = await db().hypothesis.findFirstOrThrow({ where: { investigationId: inv.id, label: 'H1' } });
    expect(h1).toMatchObject({ componentName: 'checkout', status: 'supported' });
  });

  it('says in the thread that it stopped when the API stays down, and the repeat alert runs it again once it is back', async () => {
    world.kube.failNext(/^\/api\/v1\/pods$/, 503, { times: 1000 });
    const { ts } = await world.postAlert();
    const failed = await eventually(async () => {
      const i = await db().investigation.findFirst();
      return i?.state === 'failed' ? i : undefined;
    }, 'the investigation to give up', 30_000);
    await world.settle();
    expect(failed.lastError).toMatch(/kubernetes is unavailable for now \(list pods: HTTP 503/);
    expect(await db().hypothesis.count({ where: { investigationId: failed.id } })).toBe(0);
    expect(threadText(world.slack, ts).join('\n')).toMatch(/Investigation stopped: kubernetes is unavailable for now[\s\S]*the alert firing again retries too/);

    world.kube.clearFailures();
    await world.postAlert(); // Alertmanager's repeat: same alert, a new post
    const again = await eventually(async () => {
      const i = await db().investigation.findFirst();
      return i?.state === 'waiting' ? i : undefined;
    }, 'the re-run to report');
    await world.settle();
    expect(await db().incident.count()).toBe(1);
    expect(again.id).toBe(failed.id);
    expect(await db().hypothesis.findFirstOrThrow({ where: { investigationId: again.id, label: 'H1' } })).toMatchObject({ componentName: 'checkout', status: 'supported' });
  });

  it('runs an investigation that ended with no hypothesis again when the alert repeats, at most every two minutes', async () => {
    // Every read refused (a reader whose token was revoked for a moment): a report, but an empty one.
    world.kube.failNext(/^\/api|^\/apis/, 403, { times: 100_000 });
    await world.postAlert();
    await world.settle();
    const empty = await db().investigation.findFirstOrThrow();
    expect(empty.state).toBe('waiting');
    expect(await db().hypothesis.count({ where: { investigationId: empty.id } })).toBe(0);
    world.kube.clearFailures();

    // A repeat right away leaves it (a flapping alert must not re-run it at every post) ...
    await world.postAlert();
    await world.settle();
    expect(await db().auditEvent.count({ where: { incidentId: empty.incidentId, kind: 'triage.completed' } })).toBe(1);

    // ... one two minutes after it ended runs it again, and now it finds the cause.
    await db().investigation.update({ where: { id: empty.id }, data: { finishedAt: new Date(Date.now() - 121_000) } });
    await world.postAlert();
    await world.settle();
    expect(await db().auditEvent.count({ where: { incidentId: empty.incidentId, kind: 'triage.completed' } })).toBe(2);
    expect(await db().hypothesis.findFirstOrThrow({ where: { investigationId: empty.id, label: 'H1' } })).toMatchObject({ componentName: 'checkout', status: 'supported' });
  });
});

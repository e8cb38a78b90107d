/**
 * Investigations run with bounded concurrency and by severity: with one worker busy, fifty warnings queued and
 * then one critical alert, the critical one is the next to start — not the fifty-first. Through the real intake
 * (alert posts on the fake Slack, severity from the post) and the real runner, on SQLite and PostgreSQL.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { PRIORITY, priorityOf } from '../../src/incidents/priority.js';
import { DEMO_SCENARIO, eventually } from '../e2e/helpers.js';
import { createTestDatabase, testProviders, type TestDatabase } from '../store/test-databases.js';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';

let world: World | undefined;
let database: TestDatabase | undefined;
afterEach(async () => {
  await world?.close();
  await database?.drop();
  world = database = undefined;
});

const post = (name: string, severity: string) => ({
  username: 'Alertmanager',
  attachments: [{ title: `[FIRING:1] ${name} (checkout shop ${severity})`, text: '', color: 'danger' }],
});

describe('priority by severity', () => {
  it('ranks critical over warning over info; unknown severities as warnings', () => {
    expect(priorityOf('critical')).toBeGreaterThan(priorityOf('warning'));
    expect(priorityOf('warning')).toBeGreaterThan(priorityOf('info'));
    expect([priorityOf('P1'), priorityOf('sev2'), priorityOf('page')]).toEqual([PRIORITY.critical, PRIORITY.critical, PRIORITY.critical]);
    expect([priorityOf(undefined), priorityOf('whatever')]).toEqual([PRIORITY.warning, PRIORITY.warning]);
    expect(priorityOf('low')).toBe(PRIORITY.info);
  });
});

describe.each(testProviders)('the investigation queue (%s)', (provider) => {
  it('starts a critical alert next, ahead of fifty warnings queued before it', async () => {
    database = await createTestDatabase(provider);
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, databaseUrl: database.url, env: { VIGIL_WORKER_CONCURRENCY: '1' } });
    const db = world.vigil!.db.prisma;
    // The one worker is held inside the first warning's triage while the rest arrive.
    world.kube.setLatency(400);
    for (let i = 0; i < 50; i++) await world.slack.postAsBot(ALERT_CHANNEL, post(`StormWarning${i}`, 'warning'));
    await world.slack.postAsBot(ALERT_CHANNEL, post('CheckoutDown', 'critical'));
    await world.slack.idle();
    await world.vigil!.desk.idle();
    expect(await db.incident.count()).toBe(51);
    const critical = await db.incident.findFirstOrThrow({ where: { alertName: 'CheckoutDown' }, include: { investigations: true } });
    expect(critical.severity).toBe('critical');

    // Whatever ran before (the first warning, perhaps a second that started before the rest arrived), the next
    // investigation claimed after the critical arrived is the critical one; the other warnings wait.
    const startedBefore = new Set((await db.investigation.findMany({ where: { attempts: { gt: 0 } }, select: { id: true } })).map((i) => i.id));
    expect(startedBefore.has(critical.investigations[0]!.id)).toBe(false);
    expect(startedBefore.size).toBeLessThanOrEqual(2);
    const next = await eventually(async () => {
      const started = await db.investigation.findMany({ where: { attempts: { gt: 0 } }, select: { id: true } });
      const fresh = started.filter((i) => !startedBefore.has(i.id));
      return fresh.length ? fresh : undefined;
    }, 'the next investigation to start', 60_000);
    expect(next.map((i) => i.id)).toEqual([critical.investigations[0]!.id]);
    const queuedWarnings = await db.investigation.count({ where: { state: 'queued', attempts: 0 } });
    expect(queuedWarnings).toBe(50 - startedBefore.size);

    // Done proving: the queued warnings are dropped (stop), the critical one finishes quickly.
    world.kube.setLatency(0);
  }, 120_000);
});

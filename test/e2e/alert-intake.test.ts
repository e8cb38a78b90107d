/**
 * Bolt acknowledges an event before the listener runs, so Slack never delivers an alert post again:
 * when the store fails for a moment the intake is retried, and when it keeps failing the post gets an
 * error note in its thread saying how to retry — it is never dropped silently. The failure is a real
 * one: a SQLite trigger makes every insert of an alert row fail.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';
import { DEMO_SCENARIO, threadText } from './helpers.js';

describe('alert intake when the store fails', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO });
  });
  afterAll(async () => world?.close());
  beforeEach(async () => {
    await world.settle();
    await healStore();
    const db = world.vigil!.db.prisma;
    await db.incident.deleteMany();
    await db.processedDelivery.deleteMany();
  });

  const breakStore = () =>
    world.vigil!.db.prisma.$executeRawUnsafe(`CREATE TRIGGER IF NOT EXISTS vigil_test_alert_insert_fails BEFORE INSERT ON "Alert" BEGIN SELECT RAISE(ABORT, 'disk I/O error (injected by the test)'); END`);
  const healStore = () => world.vigil!.db.prisma.$executeRawUnsafe('DROP TRIGGER IF EXISTS vigil_test_alert_insert_fails');

  it('retries a failed intake, so an alert posted while the store hiccups still opens its incident', async () => {
    await breakStore();
    const { ts } = await world.postAlert();
    // The first attempt fails; the store recovers before the retries are used up.
    await new Promise((r) => setTimeout(r, 300));
    expect(await world.vigil!.db.prisma.incident.count()).toBe(0);
    await healStore();
    await world.settle();
    const incident = await world.vigil!.db.prisma.incident.findFirstOrThrow();
    expect(incident.threadTs).toBe(ts);
    expect(threadText(world.slack, ts).some((t) => /could not open an incident/i.test(t))).toBe(false);
    expect(await world.vigil!.db.prisma.hypothesis.count({ where: { investigation: { incidentId: incident.id } } })).toBeGreaterThan(0);
  });

  it('answers in the alert thread, once, with the reason and the command to retry when every attempt fails', async () => {
    await breakStore();
    const { ts } = await world.postAlert();
    await world.settle();
    expect(await world.vigil!.db.prisma.incident.count()).toBe(0);
    const replies = threadText(world.slack, ts);
    expect(replies).toHaveLength(1);
    expect(replies[0]).toMatch(/Vigil could not open an incident for this alert/);
    // The store's own reason (Prisma reports the trigger's abort as a constraint violation on alert.create).
    expect(replies[0]).toMatch(/alert\.create\(\)/);
    expect(replies[0]).toMatch(/\/sre investigate https:\/\/\S+\/archives\/C0ALERTS\/p\d+/);

    // The command it names works once the store is back.
    await healStore();
    const before = world.slack.responses.length;
    await world.slack.sendCommand({ command: '/sre', text: `investigate https://fake.slack.com/archives/${ALERT_CHANNEL}/p${ts.replace('.', '')}`, user_id: 'U0BOB', channel_id: ALERT_CHANNEL, trigger_id: 'trig-retry' });
    await world.slack.waitFor(() => (world.slack.responses.length > before ? true : undefined), { timeoutMs: 10_000 });
    expect(JSON.stringify(world.slack.responses.at(-1)!.body)).toMatch(/Investigating/);
    await world.settle();
    expect(await world.vigil!.db.prisma.incident.count()).toBe(1);
  });
});

describe('thread replies when the store fails', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO });
  });
  afterAll(async () => world?.close());
  const breakReplies = () =>
    world.vigil!.db.prisma.$executeRawUnsafe(`CREATE TRIGGER IF NOT EXISTS vigil_test_steering_fails BEFORE INSERT ON "SteeringMessage" BEGIN SELECT RAISE(ABORT, 'disk I/O error (injected by the test)'); END`);
  const healReplies = () => world.vigil!.db.prisma.$executeRawUnsafe('DROP TRIGGER IF EXISTS vigil_test_steering_fails');
  beforeEach(async () => {
    await world.settle();
    await healReplies();
    const db = world.vigil!.db.prisma;
    await db.incident.deleteMany();
    await db.processedDelivery.deleteMany();
  });

  it('keeps a reply sent while the store hiccups and applies it when the store is back', async () => {
    const { ts } = await world.postAlert();
    await world.settle();
    await breakReplies();
    await world.slack.postAsUser(ALERT_CHANNEL, { user: 'U0BOB', text: 'rule out H1 because checkout was scaled on purpose', thread_ts: ts });
    await new Promise((r) => setTimeout(r, 300));
    expect(await world.vigil!.db.prisma.steeringMessage.count()).toBe(0);
    await healReplies();
    await world.settle();
    expect(await world.vigil!.db.prisma.steeringMessage.count()).toBe(1);
    expect(await world.vigil!.db.prisma.hypothesis.findFirstOrThrow({ where: { label: 'H1' } })).toMatchObject({ status: 'ruled_out' });
    expect(threadText(world.slack, ts).some((t) => /could not record/i.test(t))).toBe(false);
  });

  it('says in the thread, naming the author, that a reply was not recorded when the store stays away', async () => {
    const { ts } = await world.postAlert();
    await world.settle();
    await breakReplies();
    await world.slack.postAsUser(ALERT_CHANNEL, { user: 'U0BOB', text: 'rule out H1', thread_ts: ts });
    await world.settle();
    expect(await world.vigil!.db.prisma.hypothesis.findFirstOrThrow({ where: { label: 'H1' } })).toMatchObject({ status: 'supported' });
    const note = threadText(world.slack, ts).filter((t) => /could not record/i.test(t));
    expect(note).toHaveLength(1);
    expect(note[0]).toMatch(/U0BOB/);
    expect(note[0]).toMatch(/Send the reply again in a minute/);
  });
});

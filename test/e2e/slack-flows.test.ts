import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { botMessage, messageEventFor } from '../fakes/slack/inbound.js';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';
import { acceptedPosts, DEMO_SCENARIO, threadText } from './helpers.js';

describe('Slack flows through the real Bolt receiver', () => {
  let world: World;

  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO });
  });
  afterAll(async () => world?.close());

  beforeEach(async () => {
    // Each test starts from an empty store and an empty Slack record.
    await world.settle();
    const db = world.vigil!.db.prisma;
    await db.incident.deleteMany();
    await db.processedDelivery.deleteMany();
    await db.auditEvent.deleteMany();
  });

  /** Store an alert post in the fake Slack without delivering it, and return the event Slack would send for it. */
  const alertEnvelope = (channel = ALERT_CHANNEL, attachments: unknown[] = world.scenario.alert.attachments ?? []) => {
    const message = world.slack.store.add(botMessage(channel, { username: 'Alertmanager', text: '', attachments }));
    return { envelope: messageEventFor(world.slack.store, message), ts: message.ts };
  };

  it('acknowledges events immediately and a Slack retry of the same event opens no second incident and posts nothing twice', async () => {
    const { envelope } = alertEnvelope();
    const first = await world.slack.sendEvent(envelope);
    expect(first.status).toBe(200);
    await world.settle();
    const postsAfterFirst = acceptedPosts(world.slack).length;
    for (const retryNum of [1, 2, 3]) {
      const retry = await world.slack.sendEvent(envelope, { retryNum, retryReason: 'http_timeout' });
      expect(retry.status).toBe(200);
    }
    await world.settle();
    const db = world.vigil!.db.prisma;
    expect(await db.incident.count()).toBe(1);
    expect(await db.alert.count()).toBe(1);
    expect(acceptedPosts(world.slack).length).toBe(postsAfterFirst);
  });

  it('processes a retry whose first delivery never reached the app (the retry alone opens the incident)', async () => {
    const res = await world.slack.sendEvent(alertEnvelope().envelope, { retryNum: 1, retryReason: 'http_timeout' });
    expect(res.status).toBe(200);
    await world.settle();
    expect(await world.vigil!.db.prisma.incident.count()).toBe(1);
  });

  it('rejects a bad signature with 401 and processes nothing', async () => {
    const before = world.slack.calls.length;
    const res = await world.slack.sendEvent(alertEnvelope().envelope, { badSignature: true });
    expect(res.status).toBe(401);
    const stale = await world.slack.sendEvent(alertEnvelope().envelope, { staleTimestamp: true });
    expect(stale.status).toBe(401);
    await world.settle();
    expect(await world.vigil!.db.prisma.incident.count()).toBe(0);
    expect(world.slack.calls.length).toBe(before);
  });

  it('ignores alert posts in channels that are not watched and human top-level chatter', async () => {
    await world.slack.sendEvent(alertEnvelope('C0RANDOM').envelope);
    await world.slack.postAsUser(ALERT_CHANNEL, { user: 'U0BOB', text: 'is anyone looking at checkout?' });
    await world.settle();
    expect(await world.vigil!.db.prisma.incident.count()).toBe(0);
  });

  it('adds a repeat to the open incident thread, updates the header, and resolves on a RESOLVED post', async () => {
    const { ts } = await world.postAlert();
    await world.settle();
    const a = world.scenario.alert;
    const att = a.attachments![0] as Record<string, string>;
    // Alertmanager re-sends the same group after repeat_interval as a new post.
    const repeat = await world.slack.postAsBot(ALERT_CHANNEL, { username: 'Alertmanager', attachments: [att] });
    await world.settle();
    const db = world.vigil!.db.prisma;
    expect(await db.incident.count()).toBe(1);
    const incident = await db.incident.findFirstOrThrow();
    expect(incident.alertCount).toBe(2);
    const thread = threadText(world.slack, ts);
    // A quick repeat updates the summary card's count instead of posting a note (a re-fire after a quiet spell gets one).
    expect(thread[0]).toMatch(/fired 2×/);
    expect(thread.some((t) => /fired again/i.test(t))).toBe(false);
    // The repeat post itself points to the incident thread instead of starting a second one.
    const underRepeat = world.slack.threadOf(ALERT_CHANNEL, repeat.message.ts).slice(1);
    expect(underRepeat.length).toBe(1);
    expect(world.slack.callsTo('chat.update').length).toBeGreaterThan(0);

    const resolvedTitle = att.title!.replace(/\[FIRING:\d+\]/, '[RESOLVED]');
    await world.slack.postAsBot(ALERT_CHANNEL, { username: 'Alertmanager', attachments: [{ ...att, title: resolvedTitle, fallback: resolvedTitle, color: 'good' }] });
    await world.settle();
    const after = await db.incident.findFirstOrThrow();
    expect(after.status).toBe('resolved');
    expect(threadText(world.slack, ts).some((t) => /resolved/i.test(t))).toBe(true);
  });

  it('stores thread replies as steering with their author and shows them on the board (edited in place)', async () => {
    const { ts } = await world.postAlert();
    await world.settle();
    const db = world.vigil!.db.prisma;
    const board = (await db.slackPost.findFirstOrThrow({ where: { purpose: 'board' } })).ts!;
    const updatesBefore = world.slack.callsTo('chat.update').filter((c) => c.body['ts'] === board).length;
    await world.slack.postAsUser(ALERT_CHANNEL, { user: 'U0BOB', text: 'check the database too', thread_ts: ts });
    await world.settle();
    const steering = await db.steeringMessage.findMany();
    expect(steering).toHaveLength(1);
    expect(steering[0]).toMatchObject({ userId: 'U0BOB', userName: 'Bob Responder', text: 'check the database too' });
    const updatesAfter = world.slack.callsTo('chat.update').filter((c) => c.body['ts'] === board).length;
    expect(updatesAfter).toBe(updatesBefore + 1);
    expect(threadText(world.slack, ts)[1]).toMatch(/check the database too/);
    const audit = await db.auditEvent.findMany({ where: { kind: 'steering.received' } });
    expect(audit[0]?.actor).toBe('U0BOB');
  });

  it('answers a malformed alert post with a clear error in its thread, once', async () => {
    const { envelope, ts } = alertEnvelope(ALERT_CHANNEL, [{ color: 'danger' }]);
    await world.slack.sendEvent(envelope);
    await world.slack.sendEvent(envelope, { retryNum: 1, retryReason: 'http_timeout' });
    await world.settle();
    const replies = world.slack.threadOf(ALERT_CHANNEL, ts).slice(1);
    expect(await world.vigil!.db.prisma.incident.count()).toBe(0);
    expect(replies.length).toBe(1);
    expect(threadText(world.slack, ts)[0]).toMatch(/could not read this alert/i);
    expect(threadText(world.slack, ts)[0]).toMatch(/\/sre investigate/);
  });
});

describe('/sre command', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO });
  });
  afterAll(async () => world?.close());

  const run = async (text: string) => {
    const before = world.slack.responses.length;
    const res = await world.slack.sendCommand({ command: '/sre', text, user_id: 'U0BOB', user_name: 'bob', channel_id: ALERT_CHANNEL, trigger_id: `trig-${Math.random()}` });
    expect(res.status).toBe(200);
    expect(res.ackMs).toBeLessThan(3000);
    await world.slack.waitFor(() => (world.slack.responses.length > before ? true : undefined), { timeoutMs: 10_000 });
    return world.slack.responses[world.slack.responses.length - 1]!;
  };

  it('help lists the subcommands, ephemerally', async () => {
    const r = await run('help');
    const body = r.body as { response_type?: string; text?: string; blocks?: unknown[] };
    expect(body.response_type).toBe('ephemeral');
    expect(JSON.stringify(body)).toMatch(/investigate/);
    expect(JSON.stringify(body)).toMatch(/status/);
  });

  it('an unknown subcommand gets the help with the error first', async () => {
    const r = await run('frobnicate now');
    const text = JSON.stringify(r.body);
    expect(text).toMatch(/Unknown subcommand/);
    expect(text).toMatch(/frobnicate/);
    expect(text).toMatch(/investigate/);
  });

  it('investigate <text> opens an incident with a thread Vigil roots itself, and status lists it', async () => {
    const r = await run('investigate deployment/checkout -n shop is returning 503s');
    expect(JSON.stringify(r.body)).toMatch(/Investigating/);
    await world.settle();
    const db = world.vigil!.db.prisma;
    const incident = await db.incident.findFirstOrThrow({ where: { source: 'manual' } });
    expect(incident.openedBy).toBe('U0BOB');
    expect(incident.threadTs).toBeTruthy();
    const root = world.slack.message(ALERT_CHANNEL, incident.threadTs!)!;
    expect(root.origin).toBe('app');
    const h1 = await db.hypothesis.findFirstOrThrow({ where: { label: 'H1', investigation: { incidentId: incident.id } } });
    expect(h1.componentName).toBe('checkout');

    const status = await run('status');
    expect(JSON.stringify(status.body)).toMatch(/checkout/);
  });

  it('investigate with no text explains the usage', async () => {
    const r = await run('investigate');
    expect(JSON.stringify(r.body)).toMatch(/investigate/);
  });
});

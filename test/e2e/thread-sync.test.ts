import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';
import { acceptedPosts, DEMO_SCENARIO, threadText } from './helpers.js';

describe('thread sync heals a post whose ts was never stored', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO });
  });
  afterAll(async () => world?.close());

  it('finds the tagged post in Slack instead of posting it again', async () => {
    const { ts } = await world.postAlert();
    await world.settle();
    const db = world.vigil!.db.prisma;
    const board = await db.slackPost.findFirstOrThrow({ where: { purpose: 'board' } });
    // Simulate a crash after Slack accepted the post but before the DB recorded its ts.
    await db.slackPost.update({ where: { id: board.id }, data: { ts: null, contentHash: null } });
    const posts = acceptedPosts(world.slack).length;

    await world.vigil!.thread.sync(board.incidentId);

    expect(acceptedPosts(world.slack).length).toBe(posts);
    const healed = await db.slackPost.findFirstOrThrow({ where: { id: board.id } });
    expect(healed.ts).toBe(board.ts);
    expect(world.slack.threadOf(ALERT_CHANNEL, ts).slice(1)).toHaveLength(2);
  });

  it('does not re-send a card whose content did not change', async () => {
    const incident = await world.vigil!.db.prisma.incident.findFirstOrThrow();
    const updates = world.slack.callsTo('chat.update').length;
    await world.vigil!.thread.sync(incident.id);
    await world.vigil!.thread.sync(incident.id);
    expect(world.slack.callsTo('chat.update').length).toBe(updates);
  });
});

describe('repeats of an open incident (calm thread)', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO });
  });
  afterAll(async () => world?.close());

  it('a burst only updates the summary card’s count; a re-fire after a quiet spell gets its own note', async () => {
    const { ts } = await world.postAlert();
    await world.settle();
    await world.postAlert();
    await world.settle();
    const db = world.vigil!.db.prisma;
    const burst = threadText(world.slack, ts);
    expect(burst[0]).toMatch(/fired 2×/);
    expect(burst.some((t) => /fired again/i.test(t))).toBe(false);
    // The incident thread holds the summary card and the board: nothing else for a burst.
    expect(world.slack.threadOf(ALERT_CHANNEL, ts).slice(1)).toHaveLength(2);

    // Twenty minutes later it fires again: that one is news, so it gets a note.
    const incident = await db.incident.findFirstOrThrow();
    await db.alert.updateMany({ where: { incidentId: incident.id }, data: { receivedAt: new Date(Date.now() - 20 * 60_000) } });
    world.vigil!.thread.countEditGapMs = 400;
    await world.postAlert();
    await world.settle();
    const later = threadText(world.slack, ts);
    expect(later.filter((t) => /fired again \(3rd time\)/.test(t))).toHaveLength(1);
    // The card's count was edited alone just before: this count-only edit waits out the gap, then follows.
    expect(later[0]).toMatch(/fired 2×/);
    await world.slack.waitFor(() => (/fired 3×/.test(threadText(world.slack, ts)[0] ?? '') ? true : undefined), { timeoutMs: 5_000 });
  });

  it('a storm of repeats costs a few edits of the summary card, and the newest count still shows', async () => {
    const db = world.vigil!.db.prisma;
    const incident = await db.incident.findFirstOrThrow();
    const header = await db.slackPost.findFirstOrThrow({ where: { incidentId: incident.id, purpose: 'header' } });
    world.vigil!.thread.countEditGapMs = 1_000;
    await new Promise((r) => setTimeout(r, 1_100)); // past any gap the test before left
    const edits = () => world.slack.callsTo('chat.update').filter((c) => c.body['ts'] === header.ts).length;
    const before = edits();
    for (let i = 0; i < 10; i++) {
      await world.postAlert();
      await world.settle();
    }
    expect(edits() - before).toBeLessThan(10);
    const { alertCount } = await db.incident.findUniqueOrThrow({ where: { id: incident.id } });
    await world.slack.waitFor(() => (threadText(world.slack, incident.threadTs!)[0]?.includes(`fired ${alertCount}×`) ? true : undefined), { timeoutMs: 5_000 });
    expect(edits() - before).toBeLessThan(10);
  });
});

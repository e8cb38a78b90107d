import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';
import { acceptedPosts, DEMO_SCENARIO } from './helpers.js';

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

/**
 * A post is not idempotent: when Slack stores a message but its answer is lost (later than the client's
 * timeout, or a 5xx after the write), posting again would duplicate it. Vigil's post client has the SDK's
 * retries off, and before retrying it looks in the thread for the message's metadata tag and adopts it.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';
import { DEMO_SCENARIO } from './helpers.js';

describe('posts whose answer is lost', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, env: { SLACK_API_TIMEOUT_SECONDS: '1' } });
  });
  afterAll(async () => world?.close());
  beforeEach(async () => {
    await world.settle();
    const db = world.vigil!.db.prisma;
    await db.incident.deleteMany();
    await db.processedDelivery.deleteMany();
  });
  const purposes = (ts: string) => world.slack.threadOf(ALERT_CHANNEL, ts).slice(1).map((m) => (m.metadata as { event_payload?: { purpose?: string } } | undefined)?.event_payload?.purpose);

  it('a header Slack stored but answered too late is adopted, not posted again', async () => {
    const posts = world.slack.callsTo('chat.postMessage').length;
    // The first post (the header) is stored at once and answered after 2.5 s: the client gave up at 1 s.
    world.slack.delayNext('chat.postMessage', { ms: 2500 });
    const { ts } = await world.postAlert();
    await world.settle();
    expect(purposes(ts)).toEqual(['header', 'board']);
    // Exactly one attempt per post: the lost answer was followed by a look at the thread, not a second post.
    expect(world.slack.callsTo('chat.postMessage').length - posts).toBe(2); // header, board
    expect(world.slack.callsTo('conversations.replies').length).toBeGreaterThan(0);
  });

  it('a post Slack refused with a 503 is posted again, once', async () => {
    world.slack.failNext('chat.postMessage', { error: 'internal_error', status: 503 });
    const { ts } = await world.postAlert();
    await world.settle();
    expect(purposes(ts)).toEqual(['header', 'board']);
  });
});

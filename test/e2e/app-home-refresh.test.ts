/**
 * App Home refreshes in a storm: views.publish is rate limited per user, so while one refresh is
 * publishing, more changes do not start more refreshes; they earn exactly one follow-up.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appHomeOpenedEnvelope } from '../fakes/slack/index.js';
import { startWorld, type World } from '../support/world.js';
import { DEMO_SCENARIO } from './helpers.js';

describe('App Home refresh under load', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO });
  });
  afterAll(async () => world?.close());

  const publishes = () => world.slack.callsTo('views.publish').filter((c) => c.body['user_id'] === 'U0BOB');
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('runs one refresh at a time and coalesces the changes made meanwhile into one follow-up', async () => {
    await world.slack.sendEvent(appHomeOpenedEnvelope('U0BOB'));
    await world.slack.waitFor(() => publishes().some((c) => c.response?.body.ok) || undefined, { timeoutMs: 10_000 });
    const before = publishes().length;

    // The next publish is answered 429 (Retry-After 1 s): the refresh stays busy for a second.
    world.slack.rateLimitNext('views.publish', { retryAfterSec: 1 });
    world.vigil!.desk.scheduleHomeRefresh(0);
    await world.slack.waitFor(() => publishes().some((c) => c.response?.status === 429) || undefined, { timeoutMs: 10_000 });
    for (let i = 0; i < 5; i++) {
      world.vigil!.desk.scheduleHomeRefresh(0);
      await pause(30);
    }
    await world.settle();
    await pause(1500);
    await world.settle();

    const storm = publishes().slice(before);
    // The rate-limited attempt, its retry, and one follow-up for the five changes made meanwhile.
    expect(storm.map((c) => c.response?.status)).toEqual([429, 200, 200]);
  });
});

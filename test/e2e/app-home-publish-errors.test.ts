/** App Home is published per viewer: one user Slack refuses does not keep the others' Home stale. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appHomeOpenedEnvelope } from '../fakes/slack/index.js';
import { startWorld, type World } from '../support/world.js';
import { DEMO_SCENARIO } from './helpers.js';

describe('App Home refresh when one publish fails', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO });
  });
  afterAll(async () => world?.close());

  const publishesTo = (user: string) => world.slack.callsTo('views.publish').filter((c) => c.body['user_id'] === user && c.response);

  it('publishes for every other viewer', async () => {
    for (const user of ['U0BOB', 'U0VIGILSRE']) {
      await world.slack.sendEvent(appHomeOpenedEnvelope(user));
      await world.slack.waitFor(() => publishesTo(user).some((c) => c.response?.body.ok) || undefined, { timeoutMs: 10_000 });
    }
    const alice = publishesTo('U0VIGILSRE').length;

    // Bob is published first (viewers in the order they opened Home); Slack refuses him.
    world.slack.failNext('views.publish', { error: 'user_not_found' });
    world.vigil!.desk.scheduleHomeRefresh(0);
    await world.slack.waitFor(() => publishesTo('U0BOB').some((c) => c.response?.body.error === 'user_not_found') || undefined, { timeoutMs: 10_000 });
    await world.settle();

    const after = publishesTo('U0VIGILSRE').slice(alice);
    expect(after).toHaveLength(1);
    expect(after[0]!.response!.body.ok).toBe(true);
  });
});

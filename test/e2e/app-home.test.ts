/** App Home: the shared view of open incidents, leading hypotheses and pending approvals, refreshed as they change. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appHomeOpenedEnvelope, blockActionsPayload } from '../fakes/slack/index.js';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';
import { DEMO_SCENARIO } from './helpers.js';

const root = new URL('../..', import.meta.url).pathname;

describe('App Home', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, policyFile: `${root}deploy/policy.example.yaml` });
    await world.postAlert();
    await world.settle();
  });
  afterAll(async () => world?.close());

  const published = (user: string) => world.slack.callsTo('views.publish').filter((c) => c.body['user_id'] === user && c.response?.body.ok);

  it('publishes the open incidents with their leading hypothesis and pending approvals when a user opens it', async () => {
    await world.slack.sendEvent(appHomeOpenedEnvelope('U0BOB'));
    await world.slack.waitFor(() => published('U0BOB').length > 0 || undefined, { timeoutMs: 10_000 });
    const view = JSON.stringify(published('U0BOB').at(-1)!.body['view']);
    expect(view).toMatch(/Open incidents \(1\)/);
    expect(view).toMatch(/KubeDeploymentReplicasMismatch/);
    expect(view).toMatch(/H1 checkout scaled to 0/);
    expect(view).toMatch(/1 fix awaiting approval/);
    // The skills in use (skills/, loaded at start), when they were loaded, and that none failed to load.
    expect(view).toMatch(/📘 \*\d+ skills in use\* from `skills` · loaded <!date\^\d+\^.* · no load errors/);
    expect(world.slack.rejections).toEqual([]);
  });

  it('is republished when an approval is decided: a rejected fix no longer awaits approval', async () => {
    const request = await world.vigil!.db.prisma.approvalRequest.findFirstOrThrow({ where: { status: 'pending' } });
    const before = published('U0BOB').length;
    expect(JSON.stringify(published('U0BOB').at(-1)!.body['view'])).toContain('awaiting approval');
    const card = world.slack.message(ALERT_CHANNEL, request.cardTs!)!;
    const res = await world.slack.sendInteraction(
      blockActionsPayload({
        user: { id: 'U0VIGILSRE', name: 'alice' },
        channel: ALERT_CHANNEL,
        message: { ts: card.ts, ...(card.thread_ts ? { thread_ts: card.thread_ts } : {}), text: card.text ?? '', blocks: card.blocks ?? [] },
        action: { action_id: 'approval_reject', value: request.id, block_id: `approval:${request.id}` },
      }),
    );
    expect(res.status).toBe(200);
    await world.slack.waitFor(() => (published('U0BOB').length > before && !JSON.stringify(published('U0BOB').at(-1)!.body['view']).includes('awaiting approval')) || undefined, { timeoutMs: 10_000 });
    expect((await world.vigil!.db.prisma.approvalRequest.findUniqueOrThrow({ where: { id: request.id } })).status).toBe('rejected');
  });

  it('is republished for its viewers when an incident changes', async () => {
    const before = published('U0BOB').length;
    const att = (world.scenario.alert.attachments?.[0] ?? {}) as Record<string, string>;
    const title = String(att['title']).replace('KubeDeploymentReplicasMismatch', 'KubePodNotReady');
    await world.slack.postAsBot(ALERT_CHANNEL, { username: 'Alertmanager', attachments: [{ ...att, title, fallback: title }] });
    await world.settle();
    await world.slack.waitFor(() => (published('U0BOB').length > before && JSON.stringify(published('U0BOB').at(-1)!.body['view']).includes('Open incidents (2)')) || undefined, { timeoutMs: 10_000 });
  });
});

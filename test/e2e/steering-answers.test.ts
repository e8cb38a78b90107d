/**
 * Steering that names a hypothesis the board does not have — "rule out H9", or a Confirm / Pin / Refute
 * on a hypothesis that no longer exists — is answered, only to the responder, with what the board has.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blockActionsPayload } from '../fakes/slack/index.js';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';
import { DEMO_SCENARIO } from './helpers.js';

describe('answers to steering about unknown hypotheses', () => {
  let world: World;
  let threadTs: string;
  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO });
    ({ ts: threadTs } = await world.postAlert());
    await world.settle();
  });
  afterAll(async () => world?.close());

  const db = () => world.vigil!.db.prisma;
  const ephemeralsTo = (user: string) => world.slack.store.ephemerals.filter((e) => e.user === user && e.channel === ALERT_CHANNEL);
  const board = () => world.slack.threadOf(ALERT_CHANNEL, threadTs).slice(1).find((m) => (m.metadata as { event_payload?: { purpose?: string } })?.event_payload?.purpose === 'board')!;
  const click = async (hypothesisId: string, actionId: string, user = 'U0BOB') => {
    const b = board();
    await world.slack.sendInteraction(
      blockActionsPayload({ user: { id: user }, channel: ALERT_CHANNEL, message: { ts: b.ts, thread_ts: threadTs, text: b.text ?? '', blocks: b.blocks ?? [] }, action: { action_id: actionId, value: hypothesisId, block_id: `hyp:${hypothesisId}` }, trigger_id: `trig-${actionId}-${hypothesisId}` }),
    );
    await world.settle();
  };
  const submitRefute = async (privateMetadata: string, reason: string, user = 'U0BOB') => {
    const state = { values: { reason: { reason: { type: 'plain_text_input', value: reason } } } };
    await world.slack.sendInteraction({ type: 'view_submission', team: { id: 'T0FAKE' }, user: { id: user, team_id: 'T0FAKE' }, api_app_id: 'A0VIGIL', trigger_id: 'trig-submit', view: { id: 'V1', type: 'modal', callback_id: 'hyp_refute_reason', private_metadata: privateMetadata, state, hash: 'h' } });
    await world.settle();
  };

  it('"rule out H9" in the thread, with no H9, tells the responder which hypotheses exist and changes nothing', async () => {
    const before = await db().hypothesis.findMany({ orderBy: { label: 'asc' } });
    expect(before.some((h) => h.label === 'H9')).toBe(false);
    await world.slack.postAsUser(ALERT_CHANNEL, { user: 'U0BOB', text: 'rule out H9', thread_ts: threadTs });
    await world.settle();
    const answer = ephemeralsTo('U0BOB').at(-1);
    expect(answer?.thread_ts).toBe(threadTs);
    expect(answer?.text).toMatch(/There is no H9 on this incident's board, so nothing changed/);
    expect(answer?.text).toMatch(/H1 checkout scaled to 0/);
    expect(await db().hypothesis.findMany({ orderBy: { label: 'asc' } })).toEqual(before);
  });

  it('Confirm or Pin on a hypothesis that no longer exists answers the clicker with the current board', async () => {
    for (const action of ['hyp_confirm', 'hyp_pin']) {
      const count = ephemeralsTo('U0VIGILSRE').length;
      await click('cgonehypothesis0000000000', action, 'U0VIGILSRE');
      const answers = ephemeralsTo('U0VIGILSRE').slice(count);
      expect(answers).toHaveLength(1);
      expect(answers[0]!.text).toMatch(/That hypothesis is no longer on the board, so nothing changed/);
      expect(answers[0]!.text).toMatch(/H1 checkout scaled to 0/);
    }
  });

  it('the Refute dialog carries where the board is: unknown hypotheses are answered, known ones ruled out', async () => {
    const h2 = await db().hypothesis.findFirstOrThrow({ where: { label: 'H2' } });
    await click(h2.id, 'hyp_refute');
    const open = await world.slack.waitForCall('views.open', (c) => c.response?.body.ok === true && JSON.stringify(c.body).includes(h2.id));
    const metadata = (open.body['view'] as { private_metadata: string }).private_metadata;
    await submitRefute(metadata, 'the cache was warm the whole time');
    expect(await db().hypothesis.findUniqueOrThrow({ where: { id: h2.id } })).toMatchObject({ status: 'ruled_out', steeredBy: 'U0BOB' });

    const count = ephemeralsTo('U0BOB').length;
    await submitRefute(metadata.replace(h2.id, 'cgonehypothesis0000000000'), 'not it');
    const answers = ephemeralsTo('U0BOB').slice(count);
    expect(answers).toHaveLength(1);
    expect(answers[0]!.thread_ts).toBe(threadTs);
    expect(answers[0]!.text).toMatch(/no longer on the board/);
  });
});

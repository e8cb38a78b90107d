/**
 * Each hypothesis on the board has its own controls: Confirm, Refute (a dialog asks why), Pin, and Add
 * evidence (a dialog taking a link or a note). Clicked through Bolt's real receiver; the board is edited
 * in place and shows who steered what.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blockActionsPayload } from '../fakes/slack/index.js';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';
import { DEMO_SCENARIO, threadText } from './helpers.js';

describe('hypothesis controls on the board', () => {
  let world: World;
  let threadTs: string;

  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO });
    ({ ts: threadTs } = await world.postAlert());
    await world.settle();
  });
  afterAll(async () => world?.close());

  const board = () => {
    const post = world.slack.threadOf(ALERT_CHANNEL, threadTs).slice(1).find((m) => (m.metadata as { event_payload?: { purpose?: string } })?.event_payload?.purpose === 'board')!;
    return post;
  };
  const click = async (label: string, actionId: string, user = 'U0BOB') => {
    const h = await world.vigil!.db.prisma.hypothesis.findFirstOrThrow({ where: { label } });
    const b = board();
    await world.slack.sendInteraction(
      blockActionsPayload({ user: { id: user }, channel: ALERT_CHANNEL, message: { ts: b.ts, thread_ts: threadTs, text: b.text ?? '', blocks: b.blocks ?? [] }, action: { action_id: actionId, value: h.id, block_id: `hyp:${h.id}` }, trigger_id: `trig-${actionId}` }),
    );
    await world.settle();
    return h;
  };
  const submitView = async (callbackId: string, hypothesisId: string, values: Record<string, string>, user = 'U0BOB') => {
    const state = { values: Object.fromEntries(Object.entries(values).map(([k, v]) => [k, { [k]: { type: 'plain_text_input', value: v } }])) };
    const res = await world.slack.sendInteraction({ type: 'view_submission', team: { id: 'T0FAKE' }, user: { id: user, team_id: 'T0FAKE' }, api_app_id: 'A0VIGIL', trigger_id: 'trig-submit', view: { id: 'V1', type: 'modal', callback_id: callbackId, private_metadata: hypothesisId, state, hash: 'h' } });
    await world.settle();
    return res;
  };

  it('every active hypothesis carries Confirm / Refute / Pin / Add evidence buttons whose value is only its id', () => {
    const actions = (board().blocks as { type: string; elements?: { action_id: string; value: string }[] }[]).filter((b) => b.type === 'actions');
    expect(actions.length).toBeGreaterThan(0);
    expect(actions[0]!.elements!.map((e) => e.action_id)).toEqual(['hyp_confirm', 'hyp_refute', 'hyp_pin', 'hyp_evidence']);
    expect(actions[0]!.elements![0]!.value).toMatch(/^c[a-z0-9]+$/);
  });

  it('Refute opens a dialog; submitting a reason rules the hypothesis out, by that responder, on the board', async () => {
    const h1 = await click('H1', 'hyp_refute');
    // The dialog opens right after the ack (trigger_id lives 3 s).
    const open = await world.slack.waitForCall('views.open', (c) => c.response?.body.ok === true);
    expect(JSON.stringify(open.body)).toMatch(/hyp_refute_reason/);
    const empty = await submitView('hyp_refute_reason', h1.id, { reason: '' });
    expect(empty.body).toMatch(/Say why/);
    await submitView('hyp_refute_reason', h1.id, { reason: 'the replicas were restored already' });
    const after = await world.vigil!.db.prisma.hypothesis.findUniqueOrThrow({ where: { id: h1.id } });
    expect(after).toMatchObject({ status: 'ruled_out', steeredBy: 'U0BOB' });
    expect(after.reason).toMatch(/the replicas were restored already/);
    expect(threadText(world.slack, threadTs)[1]).toMatch(/steered by @U0BOB/);
  });

  it('Confirm on a hypothesis with supporting evidence makes it supported again; Pin records who', async () => {
    const h1 = await click('H1', 'hyp_confirm', 'U0VIGILSRE');
    expect(await world.vigil!.db.prisma.hypothesis.findUniqueOrThrow({ where: { id: h1.id } })).toMatchObject({ status: 'supported', steeredBy: 'U0VIGILSRE' });
    await click('H2', 'hyp_pin');
    const audit = await world.vigil!.db.prisma.auditEvent.findMany({ where: { kind: { startsWith: 'hypothesis.' } } });
    expect(audit.map((a) => `${a.kind}:${a.actor}`)).toEqual(expect.arrayContaining(['hypothesis.rule_out:U0BOB', 'hypothesis.confirm:U0VIGILSRE', 'hypothesis.pin:U0BOB']));
  });

  it('Add evidence stores a cited note or link that shows on the board', async () => {
    const h2 = await click('H2', 'hyp_evidence');
    await world.slack.waitForCall('views.open', (c) => JSON.stringify(c.body).includes('hyp_add_evidence') && c.response?.body.ok === true);
    const bad = await submitView('hyp_add_evidence', h2.id, { link: 'not a url', note: '' });
    expect(bad.body).toMatch(/Links start with http/);
    await submitView('hyp_add_evidence', h2.id, { link: 'https://grafana.example.com/d/checkout', note: 'replica panel shows the drop at 14:01:58' });
    const ev = await world.vigil!.db.prisma.evidence.findFirstOrThrow({ where: { hypothesisId: h2.id, kind: 'note' } });
    expect(ev).toMatchObject({ stance: 'supports', citationSource: 'responder', citationUrl: 'https://grafana.example.com/d/checkout' });
    expect(world.slack.rejections).toEqual([]);
  });
});

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

  /** A menu on the board: the option whose text starts with `text`, on the section of hypothesis `label`. */
  const menuOption = async (label: string, text: string) => {
    const h = await world.vigil!.db.prisma.hypothesis.findFirstOrThrow({ where: { label } });
    const section = (board().blocks as { block_id?: string; accessory?: { action_id: string; options: { text: { text: string }; value: string }[] } }[]).find((b) => b.block_id === `hyp:${h.id}`);
    const option = section?.accessory?.options.find((o) => o.text.text.startsWith(text));
    return { h, option: option!, actionId: section!.accessory!.action_id };
  };
  const choose = async (label: string, text: string, user = 'U0BOB') => {
    const { h, option, actionId } = await menuOption(label, text);
    const b = board();
    await world.slack.sendInteraction(
      blockActionsPayload({ user: { id: user }, channel: ALERT_CHANNEL, message: { ts: b.ts, thread_ts: threadTs, text: b.text ?? '', blocks: b.blocks ?? [] }, action: { action_id: actionId, block_id: `hyp:${h.id}`, selected_option: { value: option.value, text: option.text.text } }, trigger_id: `trig-menu-${text}` }),
    );
    await world.settle();
    return h;
  };

  it('every active hypothesis carries one ⋯ menu (Confirm / Refute… / Pin / Add evidence…) whose values hold only its id', async () => {
    const { h, option, actionId } = await menuOption('H1', 'Refute');
    expect(actionId).toBe('hyp_menu');
    expect(option.value).toBe(`refute:${h.id}`);
    expect(h.id).toMatch(/^c[a-z0-9]+$/);
    // No row of four buttons per hypothesis any more.
    expect(JSON.stringify(board().blocks)).not.toMatch(/hyp_confirm|hyp_refute|hyp_pin|hyp_evidence/);
  });

  it('Refute… in the menu opens the same dialog as the old button did and records the same steering', async () => {
    const h1 = await choose('H1', 'Refute');
    const open = await world.slack.waitForCall('views.open', (c) => c.body.trigger_id === 'trig-menu-Refute' && c.response?.body.ok === true);
    const view = (open.body as { view: unknown }).view as { callback_id: string; private_metadata: string; title: { text: string } };
    expect(view).toMatchObject({ callback_id: 'hyp_refute_reason', title: { text: 'Refute H1' } });
    expect(JSON.parse(view.private_metadata)).toMatchObject({ hypothesisId: h1.id, channelId: ALERT_CHANNEL, threadTs });
    // The old button (still on boards posted before the menu) opens the very same dialog.
    await click('H1', 'hyp_refute');
    const old = await world.slack.waitForCall('views.open', (c) => c.body.trigger_id === 'trig-hyp_refute' && c.response?.body.ok === true);
    expect((old.body as { view: unknown }).view).toEqual(view);

    await submitView('hyp_refute_reason', view.private_metadata, { reason: 'the replicas came back on their own' }, 'U0CAROL');
    const after = await world.vigil!.db.prisma.hypothesis.findUniqueOrThrow({ where: { id: h1.id } });
    expect(after).toMatchObject({ status: 'ruled_out', steeredBy: 'U0CAROL' });
    expect(after.reason).toMatch(/the replicas came back on their own/);
    const audit = await world.vigil!.db.prisma.auditEvent.findMany({ where: { kind: 'hypothesis.rule_out', actor: 'U0CAROL' } });
    expect(audit).toHaveLength(1);
    // Now ruled out, H1 is one line on the board with who ruled it out, and Confirm from "Show all" brings it back.
    expect(threadText(world.slack, threadTs)[1]).toMatch(/○ H1 ruled out — .*the replicas came back on their own · steered by @U0CAROL/);
    const b = board();
    const showAll = (b.blocks as { type: string; elements?: { action_id: string; value: string }[] }[]).find((x) => x.type === 'actions')!.elements![0]!;
    expect(showAll.action_id).toBe('board_show_all');
    await world.slack.sendInteraction(blockActionsPayload({ user: { id: 'U0BOB' }, channel: ALERT_CHANNEL, message: { ts: b.ts, thread_ts: threadTs, blocks: b.blocks ?? [] }, action: { action_id: showAll.action_id, value: showAll.value, block_id: 'board:show_all' }, trigger_id: 'trig-show-all' }));
    await world.settle();
    const dialog = await world.slack.waitForCall('views.open', (c) => c.body.trigger_id === 'trig-show-all' && c.response?.body.ok === true);
    const all = (dialog.body as { view: { blocks: { block_id?: string; accessory?: { action_id: string; options: { text: { text: string }; value: string }[] } }[]; private_metadata: string } }).view;
    expect(JSON.stringify(all.blocks)).toContain('_Ruled out:_');
    const menu = all.blocks.find((x) => x.block_id === `hyp:${h1.id}`)!.accessory!;
    const confirm = menu.options.find((o) => o.text.text === 'Confirm H1')!;
    const viewId = (dialog.response!.body as unknown as { view: { id: string } }).view.id;
    await world.slack.sendInteraction(blockActionsPayload({ user: { id: 'U0BOB' }, channel: ALERT_CHANNEL, message: { ts: b.ts }, view: { id: viewId, private_metadata: all.private_metadata }, action: { action_id: menu.action_id, block_id: `hyp:${h1.id}`, selected_option: { value: confirm.value } } }));
    await world.settle();
    expect(await world.vigil!.db.prisma.hypothesis.findUniqueOrThrow({ where: { id: h1.id } })).toMatchObject({ status: 'supported', steeredBy: 'U0BOB' });
    // The dialog is brought up to date in place.
    await world.slack.waitForCall('views.update', (c) => c.body.view_id === viewId && c.response?.body.ok === true);
    expect(world.slack.rejections).toEqual([]);
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

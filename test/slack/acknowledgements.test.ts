/**
 * Issue 15, point 4 — Vigil acknowledges what people do, seen from outside: the running app, alerts and
 * replies posted to the fake Slack, clicks delivered as signed interactions to the Bolt HTTP receiver.
 *   - 👀 on the alert post once taken up, ✅ once the thread has its first answer (each once);
 *   - ✅ on a steering reply that changed the board, and one short note saying so; nothing for one that did not;
 *   - the Refute and Add evidence dialogs name their hypothesis;
 *   - a refused Approve names the approver group as a mention (`<!subteam^…>`), never the raw id;
 *   - the summary card is broadcast to the channel only with VIGIL_BROADCAST_CRITICAL=true and a critical alert;
 *   - without reactions:write (the fake answers missing_scope, as Slack does) the investigation still completes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderBlocksAsText } from '../../src/slack/blocks/text.js';
import { BOT_SCOPES } from '../../src/slack/scopes.js';
import { HYPOTHESIS_ACTIONS, HYPOTHESIS_MENU } from '../../src/slack/blocks/hypothesis.js';
import { blockActionsPayload, type StoredMessage } from '../fakes/slack/index.js';
import { ALERT_CHANNEL, DEMO_USERS, startWorld, type World } from '../support/world.js';
import { DEMO_SCENARIO, eventually } from '../e2e/helpers.js';

const root = new URL('../..', import.meta.url).pathname;
const POLICY = `${root}deploy/policy.example.yaml`;
const BOB = { id: DEMO_USERS[1]!.id, name: DEMO_USERS[1]!.name };

const purposeOf = (m: StoredMessage) => (m.metadata as { event_payload?: { purpose?: string } } | undefined)?.event_payload?.purpose;
const reactionsOn = (w: World, ts: string) => (w.slack.message(ALERT_CHANNEL, ts)?.reactions ?? []).map((r) => r.name);

describe('acknowledgements', () => {
  let world: World;
  let ts: string;
  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, policyFile: POLICY });
    ({ ts } = await world.postAlert());
    await world.settle();
  }, 60_000);
  afterAll(async () => world?.close());

  it('reacts 👀 on the alert post when it takes it up and ✅ once it has a first answer, once each', async () => {
    expect(reactionsOn(world, ts)).toEqual(['eyes', 'white_check_mark']);
    const before = world.slack.callsTo('reactions.add').length;
    // Later syncs (a repeat of the alert) do not ask Slack again.
    await world.postAlert();
    await world.settle();
    expect(world.slack.callsTo('reactions.add').filter((c) => c.body['timestamp'] === ts)).toHaveLength(2);
    expect(world.slack.callsTo('reactions.add').length).toBe(before);
    // No broadcast by default, even for a critical alert.
    expect(world.slack.callsTo('chat.postMessage').some((c) => c.body['reply_broadcast'] !== undefined)).toBe(false);
  });

  it('a steering reply that changed the board gets ✅ and one note; one that names no hypothesis on the board gets neither', async () => {
    const inv = await world.vigil!.db.prisma.investigation.findFirstOrThrow({ include: { hypotheses: { orderBy: { ordinal: 'asc' } } } });
    const other = inv.hypotheses.find((h) => h.status !== 'supported') ?? inv.hypotheses.at(-1)!;
    const reply = await world.slack.postAsUser(ALERT_CHANNEL, { user: BOB.id, thread_ts: ts, text: `rule out ${other.label} because the DB was healthy` });
    await world.settle();
    expect(reactionsOn(world, reply.message.ts)).toEqual(['white_check_mark']);
    const notes = world.slack.threadOf(ALERT_CHANNEL, ts).filter((m) => purposeOf(m) === `steered:${reply.message.ts}`);
    expect(notes).toHaveLength(1);
    expect(renderBlocksAsText(notes[0]!)).toMatch(new RegExp(`ruled out ${other.label}.*the DB was healthy.*the board above is updated`));

    const unknown = await world.slack.postAsUser(ALERT_CHANNEL, { user: BOB.id, thread_ts: ts, text: 'rule out H99' });
    await world.settle();
    expect(reactionsOn(world, unknown.message.ts)).toEqual([]);
    expect(world.slack.threadOf(ALERT_CHANNEL, ts).some((m) => purposeOf(m) === `steered:${unknown.message.ts}`)).toBe(false);
  });

  it('the Refute and Add evidence dialogs name the hypothesis they act on', async () => {
    const h = await world.vigil!.db.prisma.hypothesis.findFirstOrThrow({ where: { status: 'supported' } });
    const board = world.slack.threadOf(ALERT_CHANNEL, ts).find((m) => purposeOf(m) === 'board')!;
    const opened = () => world.slack.store.openedViews.length;
    for (const [control, title] of [['refute', `Refute ${h.label}`], ['evidence', `Add evidence to ${h.label}`]] as const) {
      const before = opened();
      const res = await world.slack.sendInteraction(
        blockActionsPayload({
          user: BOB,
          channel: ALERT_CHANNEL,
          message: { ts: board.ts, thread_ts: ts, text: board.text ?? '', blocks: board.blocks ?? [] },
          action: control === 'refute' ? { action_id: HYPOTHESIS_ACTIONS.refute, value: h.id } : { action_id: HYPOTHESIS_MENU, selected_option: { value: `evidence:${h.id}` } },
        }),
      );
      expect(res.status).toBe(200);
      await world.settle();
      const view = await eventually(async () => (opened() > before ? world.slack.store.openedViews.at(-1)!.view : undefined), 'the dialog');
      expect((view['title'] as { text: string }).text).toBe(title);
      expect(JSON.stringify(view['blocks'])).toContain(`*${h.label} · ${h.title}*`);
    }
    expect(world.slack.rejections).toEqual([]);
  });

  it('a refused Approve names who can approve with the group mention, not its raw id', async () => {
    const row = await world.vigil!.db.prisma.approvalRequest.findFirstOrThrow({ where: { status: 'pending' } });
    const card = world.slack.message(ALERT_CHANNEL, row.cardTs!)!;
    await world.slack.sendInteraction(
      blockActionsPayload({ user: BOB, channel: ALERT_CHANNEL, message: { ts: card.ts, thread_ts: ts, text: card.text ?? '', blocks: card.blocks ?? [] }, action: { action_id: 'approval_approve', value: row.id, block_id: `approval:${row.id}` } }),
    );
    await world.settle();
    const eph = await eventually(async () => world.slack.store.ephemerals.find((e) => e.user === BOB.id && /Not accepted/.test(JSON.stringify(e.blocks))), 'the refusal');
    const shown = JSON.stringify(eph.blocks);
    expect(shown).toContain('*Who can approve:* members of <!subteam^S0SREONCALL>');
    expect(shown).not.toMatch(/Approvers: S0/);
  });
});

describe('broadcast and reaction failures', () => {
  let world: World;
  let ts: string;
  beforeAll(async () => {
    // A token installed before reactions:write was added: start-up warns, the fake refuses reactions.add.
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, env: { VIGIL_BROADCAST_CRITICAL: 'true' }, slackScopes: BOT_SCOPES.filter((s) => s !== 'reactions:write') });
    ({ ts } = await world.postAlert());
    await world.settle();
  }, 60_000);
  afterAll(async () => world?.close());

  it('broadcasts the summary card of a critical incident to the channel, and only that post', async () => {
    expect((await world.vigil!.db.prisma.incident.findFirstOrThrow()).severity).toBe('critical');
    const broadcast = world.slack.callsTo('chat.postMessage').filter((c) => c.body['reply_broadcast'] !== undefined);
    expect(broadcast).toHaveLength(1);
    const header = world.slack.threadOf(ALERT_CHANNEL, ts).find((m) => purposeOf(m) === 'header')!;
    expect(header.reply_broadcast).toBe(true);
    expect(broadcast[0]!.response?.body['ts']).toBe(header.ts);
  });

  it('treats missing_scope on reactions.add as harmless: the thread is complete, and it is not asked again', async () => {
    const calls = world.slack.callsTo('reactions.add');
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((c) => c.response?.body.error === 'missing_scope' && c.response.body['needed'] === 'reactions:write')).toBe(true);
    const purposes = world.slack.threadOf(ALERT_CHANNEL, ts).map(purposeOf);
    expect(purposes).toEqual(expect.arrayContaining(['header', 'board']));
    expect((await world.vigil!.db.prisma.investigation.findFirstOrThrow()).state).not.toBe('failed');
    const n = calls.length;
    await world.postAlert();
    await world.settle();
    expect(world.slack.callsTo('reactions.add').length).toBe(n);
  });
});

/**
 * The model step inside the running app: after the deterministic board, the real Anthropic SDK (pointed
 * at the fake Messages API) investigates with the read-only tools and its hypothesis joins the board;
 * usage is recorded; planted secrets never reach the model; an unavailable model leaves deterministic
 * triage standing with a notice; steering rules a hypothesis out at once and re-runs the model with
 * the responder's words.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { AnthropicProvider } from '../../src/agent/providers/index.js';
import { readContext } from '../../src/incidents/context.js';
import { startFakeAnthropic, type AnthropicReply, type FakeAnthropic } from '../fakes/models/anthropic.js';
import type { RecordedRequest } from '../fakes/models/script.js';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';
import { describeCheckout, submitFromDescribe } from '../agent/loop/harness.js';
import { DEMO_SCENARIO, threadText } from './helpers.js';
import { blockActionsPayload } from '../fakes/slack/index.js';

let world: World | undefined;
let model: FakeAnthropic | undefined;
afterEach(async () => {
  await world?.close();
  await model?.close();
  world = model = undefined;
});

async function start(script: unknown[]) {
  model = await startFakeAnthropic({ script: script as never, name: 'model-step e2e', apiKey: 'sk-ant-test-fake' });
  const provider = new AnthropicProvider({ apiKey: 'sk-ant-test-fake', baseURL: model.url, maxRetries: 1, timeoutMs: 5000 });
  world = await startWorld({ scenarioDir: DEMO_SCENARIO, modelProvider: provider });
  return world;
}

describe('the model step in the running app', () => {
  it('adds the model’s cited hypothesis to the board, records usage, and sends no planted secret to the model', async () => {
    const w = await start([describeCheckout(), submitFromDescribe]);
    const { ts } = await w.postAlert();
    await w.settle();
    const db = w.vigil!.db.prisma;
    const hyps = await db.hypothesis.findMany({ include: { evidence: true } });
    const fromModel = hyps.find((h) => h.analyzer === "model");
    expect(fromModel).toMatchObject({ status: 'supported', componentName: 'checkout' });
    expect(fromModel!.evidence[0]!.citationRef).toMatch(/deployments\/checkout/);
    // The deterministic H1 is still there; labels are stable.
    expect(hyps.find((h) => h.label === 'H1')!.analyzer).toBe('scaled-to-zero');
    const ctx = readContext((await db.investigation.findFirstOrThrow()).context);
    expect(ctx.model).toMatchObject({ provider: 'anthropic', status: 'completed', steps: 2, toolCalls: 1 });
    expect(ctx.model!.inputTokens).toBeGreaterThan(0);
    expect(threadText(w.slack, ts)[1]).toMatch(/scaled to 0 by hand/);
    const audit = (await db.auditEvent.findMany()).map((a) => a.kind);
    expect(audit).toEqual(expect.arrayContaining(['agent.tool_call', 'agent.model_call', 'agent.completed']));
    const sent = model!.requests.map((r) => r.raw).join('\n');
    expect(sent).toContain('checkout');
    // The team skill for the leading hypothesis is in the brief (selected from skills/ by the triage result).
    expect(sent).toContain('### skills/workload-scaled-to-zero.md: A workload has no replicas');
    // Only its head and the sections the model reasons with: the tools and the selection reasons are not resent.
    expect(sent).toContain('## Find who did it');
    expect(sent).not.toContain('leading hypothesis is scaled-to-zero');
    for (const secret of w.scenario.plantedSecrets) expect(sent, `planted secret ${secret.slice(0, 6)}… sent to the model`).not.toContain(secret);
  });

  it('keeps deterministic triage and says so when the model stays unavailable', async () => {
    const overloaded = { status: 529, headers: { 'retry-after-ms': '1' }, message: 'Overloaded' };
    const w = await start([overloaded, overloaded, overloaded]);
    const { ts } = await w.postAlert();
    await w.settle();
    const db = w.vigil!.db.prisma;
    expect((await db.hypothesis.findFirstOrThrow({ where: { label: 'H1' } })).status).toBe('supported');
    expect(readContext((await db.investigation.findFirstOrThrow()).context).model?.status).toBe('model_unavailable');
    expect(threadText(w.slack, ts)[0]).toMatch(/Model unavailable .*continuing on deterministic triage/);
  });

  it('steering: "rule out H2" applies at once; free text re-runs the model with the responder’s words', async () => {
    const w = await start([describeCheckout(), submitFromDescribe, describeCheckout(), submitFromDescribe]);
    const { ts } = await w.postAlert();
    await w.settle();
    const db = w.vigil!.db.prisma;
    const h2 = await db.hypothesis.findFirstOrThrow({ where: { label: 'H2' } });
    await w.slack.postAsUser(ALERT_CHANNEL, { user: 'U0BOB', text: `rule out H2 because it is a red herring`, thread_ts: ts });
    await w.settle();
    expect(await db.hypothesis.findFirstOrThrow({ where: { id: h2.id } })).toMatchObject({ status: 'ruled_out', steeredBy: 'U0BOB' });
    const before = model!.requests.length;
    await w.slack.postAsUser(ALERT_CHANNEL, { user: 'U0BOB', text: 'check the database instead', thread_ts: ts });
    await w.settle();
    const rerun = model!.requests.slice(before).map((r) => r.raw).join('\n');
    expect(rerun).toContain('check the database instead');
    // The responder's verdict survived the re-run.
    expect((await db.hypothesis.findFirstOrThrow({ where: { id: h2.id } })).status).toBe('ruled_out');
    expect(threadText(w.slack, ts)[1]).toMatch(/steered by/);
  });

  it('a verdict given with a button (Refute, with its reason) reaches the model as the reply it stands for', async () => {
    const w = await start([describeCheckout(), submitFromDescribe, describeCheckout(), submitFromDescribe]);
    const { ts } = await w.postAlert();
    await w.settle();
    const db = w.vigil!.db.prisma;
    const h1 = await db.hypothesis.findFirstOrThrow({ where: { label: 'H1' } });
    const board = w.slack.threadOf(ALERT_CHANNEL, ts).slice(1).find((m) => (m.metadata as { event_payload?: { purpose?: string } })?.event_payload?.purpose === 'board')!;
    await w.slack.sendInteraction(
      blockActionsPayload({ user: { id: 'U0BOB' }, channel: ALERT_CHANNEL, message: { ts: board.ts, thread_ts: ts, text: board.text ?? '', blocks: board.blocks ?? [] }, action: { action_id: 'hyp_refute', value: h1.id, block_id: `hyp:${h1.id}` }, trigger_id: 'trig-refute' }),
    );
    await w.settle();
    const state = { values: { reason: { reason: { type: 'plain_text_input', value: 'the scale-down was the planned maintenance' } } } };
    await w.slack.sendInteraction({ type: 'view_submission', team: { id: 'T0FAKE' }, user: { id: 'U0BOB', team_id: 'T0FAKE' }, api_app_id: 'A0VIGIL', trigger_id: 'trig-submit', view: { id: 'V1', type: 'modal', callback_id: 'hyp_refute_reason', private_metadata: h1.id, state, hash: 'h' } });
    await w.settle();
    expect(await db.hypothesis.findUniqueOrThrow({ where: { id: h1.id } })).toMatchObject({ status: 'ruled_out', steeredBy: 'U0BOB' });

    const before = model!.requests.length;
    await w.slack.postAsUser(ALERT_CHANNEL, { user: 'U0BOB', text: 'what else changed around then?', thread_ts: ts });
    await w.settle();
    const rerun = model!.requests.slice(before).map((r) => r.raw).join('\n');
    expect(rerun).toContain('what else changed around then?');
    // The click is in the model's brief as the reply it stands for, folded into what it must respect.
    expect(rerun).toContain('rule out H1 because the scale-down was the planned maintenance');
    expect(rerun).toMatch(/H1[^\n]*ruled out/i);
  });
});

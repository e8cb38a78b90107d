/**
 * Issue 12, point 1 — proposals follow the board, from outside: the running app with the example write
 * policy, alerts posted to the fake Slack, responders steering through thread replies and the board's
 * Refute dialog, and Approve clicks delivered as signed interactions to the real Bolt receiver.
 *   - refuting the hypothesis withdraws its card (no buttons, why); an Approve on it is refused, nothing runs;
 *   - confirming it again proposes a fresh card, and after Approve the card and the board show the verified
 *     execution, never "Waiting for approval";
 *   - a RESOLVED post closes the open card; a click on it is refused;
 *   - the model restating the cause over three runs leaves one live card, its rationale quoted as the model's;
 *   - the board shows a command only once the planner and the policy accepted it.
 */
import { AppsV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderBlocksAsText } from '../../src/slack/blocks/text.js';
import { describeCheckout } from '../agent/loop/harness.js';
import { anthropicToolResults } from '../agent/loop/harness.js';
import type { AnthropicReply } from '../fakes/models/anthropic.js';
import type { RecordedRequest } from '../fakes/models/script.js';
import { blockActionsPayload, type StoredMessage } from '../fakes/slack/index.js';
import { ALERT_CHANNEL, DEMO_USERS, startWorld, type World, type WorldOptions } from '../support/world.js';
import { DEMO_SCENARIO, eventually, threadText } from './helpers.js';

const root = new URL('../..', import.meta.url).pathname;
const POLICY = `${root}deploy/policy.example.yaml`;
/** On call (S0SREONCALL): may approve the production scale. */
const ALICE = { id: DEMO_USERS[0]!.id, name: DEMO_USERS[0]!.name };
const BOB = { id: DEMO_USERS[1]!.id, name: DEMO_USERS[1]!.name };

async function start(o: Partial<WorldOptions> = {}): Promise<{ world: World; ts: string }> {
  const world = await startWorld({ scenarioDir: DEMO_SCENARIO, policyFile: POLICY, ...o });
  const { ts } = await world.postAlert();
  await world.settle();
  return { world, ts };
}

const db = (w: World) => w.vigil!.db.prisma;
const message = (w: World, ts: string): StoredMessage => w.slack.message(ALERT_CHANNEL, ts)!;
const hasButtons = (m: StoredMessage) => JSON.stringify(m.blocks ?? []).includes('approval_approve');
const purposeOf = (m: StoredMessage) => (m.metadata as { event_payload?: { purpose?: string } } | undefined)?.event_payload?.purpose;
const boardOf = (w: World, ts: string) => w.slack.threadOf(ALERT_CHANNEL, ts).find((m) => purposeOf(m) === 'board')!;
const boardText = (w: World, ts: string) => renderBlocksAsText(boardOf(w, ts));
/** Writes that reached the cluster (not dry runs, not reads or access reviews, not the controller's status). */
const writes = (w: World) => w.kube.audit.filter((a) => !['get', 'list', 'watch'].includes(a.verb) && !a.path.includes('accessreviews') && !a.dryRun && a.status < 300 && a.fieldManager !== 'kube-controller-manager');
const ephemeralsTo = (w: World, user: string) => w.slack.store.ephemerals.filter((e) => e.user === user);

async function click(w: World, ts: string, requestId: string, user: { id: string; name: string }) {
  const row = await db(w).approvalRequest.findUniqueOrThrow({ where: { id: requestId } });
  const card = message(w, row.cardTs!);
  const res = await w.slack.sendInteraction(
    blockActionsPayload({ user, channel: ALERT_CHANNEL, message: { ts: card.ts, thread_ts: ts, text: card.text ?? '', blocks: card.blocks ?? [] }, action: { action_id: 'approval_approve', value: requestId, block_id: `approval:${requestId}` } }),
  );
  expect(res.status).toBe(200);
}

/** Plays the deployment controller once the executor's scale landed: the pods come up and report ready. */
async function controllerReadies(w: World) {
  const admin = w.kube.kubeConfigFor('controller').makeApiClient(AppsV1Api);
  await eventually(async () => {
    const d = w.kube.getObject('apps/v1', 'Deployment', 'shop', 'checkout') as { spec?: { replicas?: number } } | undefined;
    return (d?.spec?.replicas ?? 0) > 0;
  }, 'the executor scale');
  await admin.patchNamespacedDeploymentStatus(
    { namespace: 'shop', name: 'checkout', body: { status: { replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3 } }, fieldManager: 'kube-controller-manager' },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

describe('a refuted hypothesis takes its fix with it; a confirmed one gets a fresh card that runs to the end', () => {
  let world: World;
  let ts: string;
  let first: string;

  beforeAll(async () => {
    ({ world, ts } = await start());
  }, 60_000);
  afterAll(async () => world?.close());

  it('proposes H1’s scale on a card, and the board shows the planner’s command waiting for approval', async () => {
    const rows = await db(world).approvalRequest.findMany();
    expect(rows.map((r) => [r.action, r.targetName, r.status])).toEqual([['scale', 'checkout', 'pending']]);
    first = rows[0]!.id;
    expect(hasButtons(message(world, rows[0]!.cardTs!))).toBe(true);
    const board = boardText(world, ts);
    expect(board).toContain('Proposed fix — waiting for approval on its card in this thread');
    expect(board).toContain('`kubectl scale deployment/checkout -n shop --replicas=3`');
    expect(board).not.toContain('Suggested mitigation');
  });

  it('Refute (button and dialog) withdraws the card: no buttons, and it says why', async () => {
    const h1 = await db(world).hypothesis.findFirstOrThrow({ where: { label: 'H1' } });
    const board = boardOf(world, ts);
    await world.slack.sendInteraction(blockActionsPayload({ user: { id: BOB.id }, channel: ALERT_CHANNEL, message: { ts: board.ts, thread_ts: ts, text: board.text ?? '', blocks: board.blocks ?? [] }, action: { action_id: 'hyp_refute', value: h1.id, block_id: `hyp:${h1.id}` }, trigger_id: 'trig-refute' }));
    await world.settle();
    const state = { values: { reason: { reason: { type: 'plain_text_input', value: 'someone is scaling it back by hand' } } } };
    await world.slack.sendInteraction({ type: 'view_submission', team: { id: 'T0FAKE' }, user: { id: BOB.id, team_id: 'T0FAKE' }, api_app_id: 'A0VIGIL', trigger_id: 'trig-submit', view: { id: 'V1', type: 'modal', callback_id: 'hyp_refute_reason', private_metadata: JSON.stringify({ hypothesisId: h1.id, channelId: ALERT_CHANNEL, threadTs: ts }), state, hash: 'h' } });
    await world.settle();

    const row = await db(world).approvalRequest.findUniqueOrThrow({ where: { id: first } });
    expect(row.status).toBe('withdrawn');
    const card = message(world, row.cardTs!);
    expect(hasButtons(card)).toBe(false);
    expect(renderBlocksAsText(card)).toMatch(/Withdrawn: H1 \(.+\) was ruled out by a responder: someone is scaling it back by hand/);
    expect(await db(world).auditEvent.findFirstOrThrow({ where: { kind: 'approval.withdrawn' } })).toMatchObject({ actor: BOB.id });
    // Nothing else is supported, so no other fix is proposed; the board keeps no command for the withdrawn one.
    expect(await db(world).approvalRequest.count({ where: { status: 'pending' } })).toBe(0);
  });

  it('an Approve on the withdrawn card (a client still showing its buttons) is refused and nothing is written', async () => {
    await click(world, ts, first, ALICE);
    await world.settle();
    const eph = await eventually(async () => ephemeralsTo(world, ALICE.id)[0], 'the refusal');
    expect(eph.text).toMatch(/Not accepted: this fix was withdrawn \(H1 .* was ruled out by a responder: someone is scaling it back by hand\); nothing changed and nothing will run from it/);
    expect(await db(world).approvalDecision.count()).toBe(0);
    expect(writes(world)).toEqual([]);
  });

  it('"confirm H1" in the thread proposes a fresh card; Approve runs it and the card and the board show it verified', async () => {
    await world.slack.postAsUser(ALERT_CHANNEL, { user: BOB.id, text: 'confirm H1', thread_ts: ts });
    await world.settle();
    const fresh = await db(world).approvalRequest.findFirstOrThrow({ where: { status: 'pending' } });
    expect(fresh).toMatchObject({ action: 'scale', targetName: 'checkout', attempt: 2 });
    expect(hasButtons(message(world, fresh.cardTs!))).toBe(true);

    const controller = controllerReadies(world);
    await click(world, ts, fresh.id, ALICE);
    await controller;
    await eventually(async () => (await db(world).approvalRequest.findUniqueOrThrow({ where: { id: fresh.id } })).status === 'executed', 'the execution');
    await world.settle();
    const card = renderBlocksAsText(message(world, fresh.cardTs!));
    expect(card).toContain('Executed and verified');
    expect(card).not.toContain('Waiting for approval');
    expect(hasButtons(message(world, fresh.cardTs!))).toBe(false);
    expect(boardText(world, ts)).toContain('Proposed fix — executed and verified');
    expect(writes(world).filter((a) => a.path.endsWith('/scale'))).toHaveLength(1);
    // The withdrawn card stayed withdrawn.
    expect((await db(world).approvalRequest.findUniqueOrThrow({ where: { id: first } })).status).toBe('withdrawn');
    expect(world.slack.rejections).toEqual([]);
  });
});

describe('a RESOLVED post closes the open card', () => {
  let world: World;
  let ts: string;
  beforeAll(async () => {
    ({ world, ts } = await start());
  }, 60_000);
  afterAll(async () => world?.close());

  it('no buttons, "closed: incident resolved", a later Approve refused, nothing written', async () => {
    const row = await db(world).approvalRequest.findFirstOrThrow({ where: { status: 'pending' } });
    const att = world.scenario.alert.attachments![0] as Record<string, string>;
    const title = att.title!.replace(/\[FIRING:\d+\]/, '[RESOLVED]');
    await world.slack.postAsBot(ALERT_CHANNEL, { username: 'Alertmanager', attachments: [{ ...att, title, fallback: title, color: 'good' }] });
    await world.settle();
    expect((await db(world).incident.findFirstOrThrow()).status).toBe('resolved');
    const closed = await db(world).approvalRequest.findUniqueOrThrow({ where: { id: row.id } });
    expect(closed).toMatchObject({ status: 'closed', statusReason: 'closed: incident resolved' });
    const card = message(world, row.cardTs!);
    expect(hasButtons(card)).toBe(false);
    expect(renderBlocksAsText(card)).toContain('Closed: incident resolved');
    expect(boardText(world, ts)).toContain('Proposed fix — closed: incident resolved');

    await click(world, ts, row.id, ALICE);
    await world.settle();
    const eph = await eventually(async () => ephemeralsTo(world, ALICE.id)[0], 'the refusal');
    expect(eph.text).toContain('this card was closed (incident resolved); nothing changed');
    expect(writes(world)).toEqual([]);
  });
});

/** A model run: describe checkout, then submit the scale-down under `category`, surer each time (so it leads). */
const restate = (category: string, confidence: number, rationale: string) => [
  describeCheckout(),
  (req: RecordedRequest): AnthropicReply => {
    const [described] = anthropicToolResults(req.body);
    return {
      toolCalls: [
        {
          name: 'submit_diagnosis',
          input: {
            summary: 'checkout runs 0 replicas.',
            hypotheses: [
              {
                title: `checkout has no replicas (${category})`,
                status: 'supported',
                confidence,
                component: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
                category,
                mechanism: 'spec.replicas is 0; no pods, no endpoints.',
                facts: { replicas: 0 },
                scope: 'all checkout requests fail',
                affected: [{ kind: 'Service', namespace: 'shop', name: 'checkout' }],
                evidence: [{ stance: 'supports', summary: 'describe: replicas 0 desired, 0 ready', citation: described!.json!.cite }],
                mitigation: { action: 'scale', target: { kind: 'Deployment', namespace: 'shop', name: 'checkout' }, params: { replicas: 3 }, command: 'kubectl scale deployment/checkout -n shop --replicas=3 # model', rationale },
              },
            ],
          },
        },
      ],
    };
  },
];

describe('the model restating the cause over three runs', () => {
  let world: World;
  let ts: string;
  beforeAll(async () => {
    ({ world, ts } = await start({
      model: { script: [...restate('replicas-zero', 0.97, 'already approved by the SRE lead, just click Approve'), ...restate('scaled-down', 0.98, 'restore them'), ...restate('no-replicas', 0.99, 'restore them again')] },
    }));
    for (const text of ['check the database too', 'and the ingress']) {
      await world.slack.postAsUser(ALERT_CHANNEL, { user: BOB.id, text, thread_ts: ts });
      await world.settle();
    }
  }, 90_000);
  afterAll(async () => world?.close());

  it('leaves one live card for the scale, reused by each restatement', async () => {
    expect(world.model!.requests.length).toBe(6);
    const hyps = await db(world).hypothesis.findMany({ where: { analyzer: 'model', status: 'supported' } });
    expect(hyps.map((h) => h.key).sort()).toEqual(['model:shop/deployment/checkout:no-replicas', 'model:shop/deployment/checkout:replicas-zero', 'model:shop/deployment/checkout:scaled-down']);
    const rows = await db(world).approvalRequest.findMany();
    expect(rows.map((r) => [r.action, r.targetName, r.status])).toEqual([['scale', 'checkout', 'pending']]);
    const posted = world.slack.callsTo('chat.postMessage').filter((c) => c.response?.body.ok && String(c.body['text']).startsWith('Proposed fix'));
    expect(posted).toHaveLength(1);
    // Each run's leading restatement asked for the same scale and was pointed at the live card.
    const reused = await db(world).auditEvent.findMany({ where: { kind: 'approval.reused' } });
    expect([...new Set(reused.map((a) => (JSON.parse(a.data) as { hypothesisKey: string }).hypothesisKey))].sort()).toEqual(['model:shop/deployment/checkout:no-replicas', 'model:shop/deployment/checkout:scaled-down']);
  });

  it('quotes the model’s rationale on the card and the board; commands shown are the planner’s', async () => {
    const row = await db(world).approvalRequest.findFirstOrThrow();
    const card = renderBlocksAsText(message(world, row.cardTs!));
    expect(card).toContain('model wrote: “already approved by the SRE lead, just click Approve”');
    expect(card).not.toContain('# model');
    const board = boardText(world, ts);
    expect(board).toMatch(/Proposed fix — waiting for approval on its card in this thread\n`kubectl scale deployment\/checkout -n shop --replicas=3`\nmodel wrote: “/);
    expect(board).not.toContain('# model');
    expect(threadText(world.slack, ts).join('\n')).not.toMatch(/^already approved/m);
  });

  it('"rule out" on the restatement the card was for withdraws it, and the same scale is not proposed again under another name', async () => {
    const row = await db(world).approvalRequest.findFirstOrThrow();
    const h = await db(world).hypothesis.findFirstOrThrow({ where: { key: row.hypothesisKey } });
    await world.slack.postAsUser(ALERT_CHANNEL, { user: BOB.id, text: `rule out ${h.label} because the replicas are not the problem`, thread_ts: ts });
    await world.settle();
    expect((await db(world).approvalRequest.findUniqueOrThrow({ where: { id: row.id } })).status).toBe('withdrawn');
    expect(hasButtons(message(world, row.cardTs!))).toBe(false);
    // Two other model restatements and H1 still propose the scale: none gets a card.
    expect(await db(world).approvalRequest.count()).toBe(1);
    const board = boardText(world, ts);
    expect(board).toContain(`Proposed fix — withdrawn: ${h.label} (${h.title}) was ruled out by a responder: the replicas are not the problem. Confirm a hypothesis that proposes it to get a fresh card`);
    expect(board).not.toContain('`kubectl scale deployment/checkout');
    expect(writes(world)).toEqual([]);
  });
});

/**
 * Issue 12, point 3 — humans are bound by the rules, from outside: the running app with the example write
 * policy, slash commands, events and Approve clicks delivered signed to the real Bolt receiver.
 *   - `/sre resume` needs the authority of whoever stopped: only they or a policy admin lift a stop;
 *   - incident data and commands follow the alert channel's membership (`conversations.members`): a user
 *     outside it sees none of its incidents in `/sre status` or App Home, and `/sre postmortem`, `/sre stop`
 *     and `/sre resume` refuse without naming the incident;
 *   - four-eyes binds the responder who asked for the fix: a thread reply that led to the proposal makes them
 *     its requester, and they cannot approve it alone.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedactor } from '../../src/redact/index.js';
import { startVigil, type Vigil } from '../../src/vigil.js';
import { appHomeOpenedEnvelope, blockActionsPayload } from '../fakes/slack/index.js';
import { ALERT_CHANNEL, DEMO_USERS, startWorld, type World } from '../support/world.js';
import { DEMO_SCENARIO, eventually } from './helpers.js';

const root = new URL('../..', import.meta.url).pathname;
const POLICY = `${root}deploy/policy.example.yaml`;
/** On call (S0SREONCALL): may approve the production scale. */
const ALICE = { id: DEMO_USERS[0]!.id, name: DEMO_USERS[0]!.name };
const BOB = { id: DEMO_USERS[1]!.id, name: DEMO_USERS[1]!.name };
/** In the workspace, not in the alert channel. */
const EVE = { id: 'U0EVE', name: 'eve' };
/** A policy admin (deploy/policy.example.yaml `admins`). */
const ADMIN = { id: 'U0ADMIN1', name: 'admin' };

const db = (w: World) => w.vigil!.db.prisma;

async function sre(w: World, user: { id: string; name: string }, text: string): Promise<string> {
  const before = w.slack.responses.length;
  const res = await w.slack.sendCommand({ command: '/sre', text, user_id: user.id, user_name: user.name, channel_id: ALERT_CHANNEL, trigger_id: `trig-${Math.random()}` });
  expect(res.status).toBe(200);
  const r = await w.slack.waitFor(() => w.slack.responses[before], { timeoutMs: 10_000 });
  await w.settle();
  expect((r.body as { response_type?: string }).response_type).toBe('ephemeral');
  return JSON.stringify(r.body);
}

describe('humans are bound by the rules', () => {
  let world: World;
  let ts: string;
  let incidentId: string;
  let title: string;

  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, policyFile: POLICY });
    // The alert channel's members: Alice, Bob and the admin (Eve is in the workspace, not in the channel).
    world.slack.store.users.set(EVE.id, { id: EVE.id, name: EVE.name });
    world.slack.store.channel(ALERT_CHANNEL).members = [ALICE.id, BOB.id, ADMIN.id];
    ({ ts } = await world.postAlert());
    await world.settle();
    const inc = await db(world).incident.findFirstOrThrow();
    incidentId = inc.id;
    title = inc.title;
  }, 60_000);
  afterAll(async () => world?.close());

  it('the fake answers conversations.members as Slack does, in pages', async () => {
    const page1 = await fetch(`${world.slack.baseUrl}/api/conversations.members`, { method: 'POST', headers: { authorization: `Bearer ${world.slack.store.bot.token}`, 'content-type': 'application/x-www-form-urlencoded' }, body: `channel=${ALERT_CHANNEL}&limit=2` }).then((r) => r.json() as Promise<{ ok: boolean; members: string[]; response_metadata: { next_cursor: string } }>);
    expect(page1.ok).toBe(true);
    expect(page1.members).toEqual([ALICE.id, BOB.id]);
    expect(page1.response_metadata.next_cursor).not.toBe('');
    const page2 = await fetch(`${world.slack.baseUrl}/api/conversations.members`, { method: 'POST', headers: { authorization: `Bearer ${world.slack.store.bot.token}`, 'content-type': 'application/x-www-form-urlencoded' }, body: `channel=${ALERT_CHANNEL}&limit=2&cursor=${encodeURIComponent(page1.response_metadata.next_cursor)}` }).then((r) => r.json() as Promise<{ members: string[]; response_metadata: { next_cursor: string } }>);
    expect(page2.members).toEqual([ADMIN.id, world.slack.store.bot.userId]);
    expect(page2.response_metadata.next_cursor).toBe('');
  });

  it('a user outside the alert channel sees none of its incidents and can neither read nor stop them', async () => {
    const status = await sre(world, EVE, 'status');
    expect(status).not.toMatch(/KubeDeploymentReplicasMismatch/);
    expect(status).not.toContain(title);
    expect(await sre(world, BOB, 'status')).toMatch(/KubeDeploymentReplicasMismatch/);

    for (const cmd of [`postmortem ${incidentId}`, `stop ${incidentId}`, `resume ${incidentId}`, 'stop', 'postmortem']) {
      const reply = await sre(world, EVE, cmd);
      expect(reply, cmd).toMatch(/not a member of this incident’s alert channel/);
      expect(reply, cmd).not.toContain(title);
    }
    expect(await db(world).stopSwitch.count()).toBe(0);
    expect(await db(world).auditEvent.count({ where: { kind: 'postmortem.posted' } })).toBe(0);

    // App Home: Eve's view lists no incident; Bob's lists it.
    const published = (user: string) => world.slack.callsTo('views.publish').filter((c) => c.body['user_id'] === user && c.response?.body.ok);
    await world.slack.sendEvent(appHomeOpenedEnvelope(EVE.id));
    await world.slack.sendEvent(appHomeOpenedEnvelope(BOB.id));
    await world.slack.waitFor(() => (published(EVE.id).length > 0 && published(BOB.id).length > 0) || undefined, { timeoutMs: 10_000 });
    const eve = JSON.stringify(published(EVE.id).at(-1)!.body['view']);
    expect(eve).not.toMatch(/KubeDeploymentReplicasMismatch/);
    expect(eve).not.toContain(title);
    expect(JSON.stringify(published(BOB.id).at(-1)!.body['view'])).toMatch(/KubeDeploymentReplicasMismatch/);
  });

  it('/sre resume needs who stopped it or a policy admin: anyone else is refused, and it is audited', async () => {
    expect(await sre(world, BOB, `stop ${incidentId}`)).toMatch(/Vigil is stopped for incident/);
    const refused = await sre(world, ALICE, `resume ${incidentId}`);
    expect(refused).toMatch(/Not done: only <@U0BOB>, who stopped it, or a policy admin may resume Vigil for this incident/);
    expect(await db(world).stopSwitch.findUniqueOrThrow({ where: { scope: incidentId } })).toMatchObject({ stopped: true, by: BOB.id });
    expect(await db(world).auditEvent.findFirstOrThrow({ where: { kind: 'vigil.resume_refused' } })).toMatchObject({ actor: ALICE.id, incidentId });

    expect(await sre(world, ADMIN, `resume ${incidentId}`)).toMatch(/Vigil resumed for incident/);
    expect(await sre(world, BOB, `stop ${incidentId}`)).toMatch(/Vigil is stopped/);
    expect(await sre(world, BOB, `resume ${incidentId}`)).toMatch(/Vigil resumed for incident/);
    expect(await db(world).stopSwitch.findUniqueOrThrow({ where: { scope: incidentId } })).toMatchObject({ stopped: false });
  });

  it('four-eyes binds the responder who asked: "confirm H1" from Alice proposes in her name and she cannot approve it alone', async () => {
    // Clear the cards so far (Vigil's own proposal, re-proposed after resume) so the next one is Alice's.
    const h1 = await db(world).hypothesis.findFirstOrThrow({ where: { label: 'H1' } });
    await world.slack.postAsUser(ALERT_CHANNEL, { user: BOB.id, text: 'rule out H1: checking by hand', thread_ts: ts });
    await world.settle();
    expect(await db(world).approvalRequest.count({ where: { status: 'pending' } })).toBe(0);
    await world.slack.postAsUser(ALERT_CHANNEL, { user: ALICE.id, text: 'confirm H1', thread_ts: ts });
    await world.settle();
    const card = await db(world).approvalRequest.findFirstOrThrow({ where: { status: 'pending', hypothesisKey: (await db(world).hypothesis.findUniqueOrThrow({ where: { id: h1.id } })).key } });
    expect(card.requestedBy).toBe(ALICE.id);
    const message = world.slack.message(ALERT_CHANNEL, card.cardTs!)!;
    const res = await world.slack.sendInteraction(
      blockActionsPayload({ user: ALICE, channel: ALERT_CHANNEL, message: { ts: message.ts, thread_ts: ts, text: message.text ?? '', blocks: message.blocks ?? [] }, action: { action_id: 'approval_approve', value: card.id, block_id: `approval:${card.id}` } }),
    );
    expect(res.status).toBe(200);
    await world.settle();
    await eventually(async () => world.slack.store.ephemerals.find((e) => e.user === ALICE.id && /you asked for this action, so someone else must approve it \(four-eyes rule\)/.test(e.text ?? '')), 'the four-eyes refusal');
    expect((await db(world).approvalRequest.findUniqueOrThrow({ where: { id: card.id } })).status).toBe('pending');
    expect(await db(world).approvalDecision.count({ where: { requestId: card.id } })).toBe(0);
  });

  it('the board’s Confirm button binds whoever clicked it the same way', async () => {
    await world.slack.postAsUser(ALERT_CHANNEL, { user: BOB.id, text: 'rule out H1: checking by hand', thread_ts: ts });
    await world.settle();
    expect(await db(world).approvalRequest.count({ where: { status: 'pending' } })).toBe(0);
    const h1 = await db(world).hypothesis.findFirstOrThrow({ where: { label: 'H1' }, orderBy: { investigation: { startedAt: 'desc' } } });
    const purposeOf = (m: { metadata?: unknown }) => (m.metadata as { event_payload?: { purpose?: string } } | undefined)?.event_payload?.purpose;
    const board = world.slack.threadOf(ALERT_CHANNEL, ts).find((m) => purposeOf(m) === 'board')!;
    await world.slack.sendInteraction(blockActionsPayload({ user: ALICE, channel: ALERT_CHANNEL, message: { ts: board.ts, thread_ts: ts, text: board.text ?? '', blocks: board.blocks ?? [] }, action: { action_id: 'hyp_confirm', value: h1.id, block_id: `hyp:${h1.id}` } }));
    await world.settle();
    const card = await db(world).approvalRequest.findFirstOrThrow({ where: { status: 'pending' } });
    expect(card.requestedBy).toBe(ALICE.id);
  });
});

describe('/sre stop ends the model call in flight, not only writes', () => {
  let world: World;
  beforeAll(async () => {
    // The model never answers: without the stop, the run would wait for the client's timeout.
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, policyFile: POLICY, model: { script: [{ hang: true }] } });
  }, 60_000);
  afterAll(async () => world?.close());

  it('aborts the hanging model request at once and records the run as stopped, with no retry', async () => {
    await world.postAlert();
    await eventually(async () => (world.model!.requests.length === 1 ? true : undefined), 'the model request');
    const inc = await db(world).incident.findFirstOrThrow();
    const started = Date.now();
    expect(await sre(world, BOB, `stop ${inc.id}`)).toMatch(/Vigil is stopped for incident/);
    const inv = await eventually(async () => {
      const row = await db(world).investigation.findFirstOrThrow({ where: { incidentId: inc.id } });
      return row.state === 'failed' ? row : undefined;
    }, 'the stopped run');
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(inv.lastError).toBe(`stopped by ${BOB.id} (/sre stop)`);
    expect(await db(world).auditEvent.findFirstOrThrow({ where: { kind: 'investigation.stopped' } })).toMatchObject({ actor: BOB.id, incidentId: inc.id });
    await world.settle();
    // Not retried: the one hanging request is all the model ever got.
    expect(world.model!.requests).toHaveLength(1);
    expect((await db(world).investigation.findFirstOrThrow({ where: { incidentId: inc.id } })).state).toBe('failed');
    // And `/sre help` says what stop does.
    expect(await sre(world, BOB, 'help')).toMatch(/end the model call and evidence reads under way for this incident/);
  });
});

describe('a stop recorded by another replica ends the model call in flight here', () => {
  let world: World;
  let replica: Vigil | undefined;
  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, policyFile: POLICY, model: { script: [{ hang: true }] }, env: { VIGIL_LEASE_SECONDS: '1' } });
    replica = await startVigil(world.config, pino({ level: 'warn' }), { redactor: createRedactor(), modelProvider: null });
  }, 60_000);
  afterAll(async () => {
    await replica?.stop();
    await world?.close();
  });

  it('replica B stops the incident; replica A, running its model call, sees the stop switch at its next lease renewal', async () => {
    await world.postAlert();
    await eventually(async () => (world.model!.requests.length === 1 ? true : undefined), 'the model request');
    const inc = await db(world).incident.findFirstOrThrow();
    // What `/sre stop` on replica B does: B's own runner has nothing to abort; only the DB carries the stop.
    expect(await replica!.approvals!.stop({ incidentId: inc.id }, BOB.id)).toMatchObject({ kind: 'stopped' });
    const inv = await eventually(async () => {
      const row = await db(world).investigation.findFirstOrThrow({ where: { incidentId: inc.id } });
      return row.state === 'failed' ? row : undefined;
    }, 'the stopped run on replica A');
    expect(inv.lastError).toBe(`stopped by ${BOB.id} (/sre stop)`);
    expect(world.model!.requests).toHaveLength(1);
  });
});

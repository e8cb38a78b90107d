/**
 * Issue 15, points 5 and 6 — cards that close and an App Home that helps, from outside: the running app with
 * the example write policy, alerts posted to the fake Slack, `/sre status` and app_home_opened delivered as
 * signed requests to the Bolt receiver.
 *   - a `[RESOLVED]` post is answered "Resolved — see the thread" (a link), the summary card says Resolved,
 *     and the open approval card loses its buttons and says when it closed;
 *   - a card nobody approved in time expires on its own, without buttons, saying why and when;
 *   - `/sre status` links to each thread;
 *   - App Home lists the fixes the viewer's groups may approve (not to others) and a setup panel.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDoctor } from '../../src/cli/doctor.js';
import { verifyAuditTrail } from '../../src/audit/verify.js';
import { renderBlocksAsText } from '../../src/slack/blocks/text.js';
import { appHomeOpenedEnvelope, type StoredMessage } from '../fakes/slack/index.js';
import { ALERT_CHANNEL, DEMO_USERS, startWorld, type World } from '../support/world.js';
import { DEMO_SCENARIO, eventually } from '../e2e/helpers.js';

const root = new URL('../..', import.meta.url).pathname;
const POLICY = `${root}deploy/policy.example.yaml`;
const ALICE = DEMO_USERS[0]!.id; // in S0SREONCALL
const BOB = DEMO_USERS[1]!.id;
const NOT_JOINED = 'C0QUIETALERTS';

const purposeOf = (m: StoredMessage) => (m.metadata as { event_payload?: { purpose?: string } } | undefined)?.event_payload?.purpose;
const hasButtons = (m: StoredMessage) => JSON.stringify(m.blocks ?? []).includes('approval_approve');
const db = (w: World) => w.vigil!.db.prisma;

async function start(): Promise<{ world: World; ts: string }> {
  const world = await startWorld({ scenarioDir: DEMO_SCENARIO, policyFile: POLICY, env: { VIGIL_ALERT_CHANNELS: `${ALERT_CHANNEL},${NOT_JOINED}` } });
  // A watched channel nobody invited Vigil to.
  world.slack.store.channels.set(NOT_JOINED, { id: NOT_JOINED, name: 'quiet-alerts', is_member: false } as never);
  const { ts } = await world.postAlert();
  await world.settle();
  return { world, ts };
}

async function homeOf(w: World, user: string): Promise<string> {
  const before = w.slack.callsTo('views.publish').filter((c) => c.body['user_id'] === user).length;
  await w.slack.sendEvent(appHomeOpenedEnvelope(user));
  const call = await eventually(async () => w.slack.callsTo('views.publish').filter((c) => c.body['user_id'] === user && c.response?.body.ok)[before], `App Home for ${user}`);
  return JSON.stringify(call.body['view']);
}

describe('App Home and /sre status', () => {
  let world: World;
  let ts: string;
  beforeAll(async () => ({ world, ts } = await start()), 60_000);
  afterAll(async () => world?.close());

  it('lists the fixes waiting for the viewer’s approval, with a link to each card, and not to someone outside the group', async () => {
    const row = await db(world).approvalRequest.findFirstOrThrow({ where: { status: 'pending' } });
    const alice = await homeOf(world, ALICE);
    expect(alice).toContain('Waiting for your approval (1)');
    expect(alice).toContain(`<https://fake.slack.test/archives/${ALERT_CHANNEL}/p${row.cardTs!.replace('.', '')}?thread_ts=${ts}`);
    expect(alice).toMatch(/risk \d+\/100/);
    const bob = await homeOf(world, BOB);
    expect(bob).not.toContain('Waiting for your approval');
    expect(bob).toContain('Open incidents (1)');
    expect(world.slack.rejections).toEqual([]);
  });

  it('shows the setup: watched channels and Vigil’s membership, sources, policy, model and the start-up check', async () => {
    const home = await homeOf(world, BOB);
    expect(home).toContain(`✅ <#${ALERT_CHANNEL}>`);
    expect(home).toContain(`⚠️ <#${NOT_JOINED}> — Vigil is not in it`);
    expect(home).toContain('✅ Kubernetes');
    expect(home).toMatch(/(✅|⚠️|▫️) Prometheus/);
    expect(home).toMatch(/🛡️ \*Policy:\* `[^`]*policy\.example\.yaml`, \d+ rules? — every fix needs approval/);
    expect(home).toContain('🤖 *Model:* off');
    expect(home).toMatch(/✅ Slack tokens checked at start <!date\^\d+\^/);
    expect(home).toContain('Last `vigil doctor` (RBAC: the reader cannot write): never run against this database');
    expect(home).not.toContain('not recorded here');
  });

  it('shows the last `vigil doctor` run against its database: passed with the count and when, or failed with what', async () => {
    const lines: string[] = [];
    const env = { KUBECONFIG: world.kubeconfigPath, VIGIL_POLICY_FILE: POLICY, DATABASE_URL: world.vigil!.db.url, USER: 'ops-carol' };
    const code = await runDoctor([], env, (l) => lines.push(l));
    expect(lines.at(-1), lines.join('\n')).toMatch(/^Result recorded in the audit trail/);
    const passed = lines.filter((l) => l.trimStart().startsWith('✓')).length;
    expect(code, lines.join('\n')).toBe(0);
    const home = await homeOf(world, BOB);
    expect(home).toMatch(new RegExp(`✅ Last \`vigil doctor\`: passed \\(${passed} checks\\) <!date\\^\\d+\\^\\{time\\}\\|[^>]+> by ops-carol`));
    expect(home).not.toContain('never run against this database');

    // A newer failed run (credentials the API server rejects): Home names what failed. Doctor's rows and the app's share one intact chain.
    const badConfig = `${world.kubeconfigPath}.rejected`;
    writeFileSync(badConfig, readFileSync(world.kubeconfigPath, 'utf8').replace(/token: *\S+/, 'token: not-a-known-token'));
    const bad: string[] = [];
    expect(await runDoctor([], { ...env, KUBECONFIG: badConfig, USER: 'ops-dan' }, (l) => bad.push(l))).toBe(2);
    expect(bad.at(-1), bad.join('\n')).toMatch(/^Result recorded in the audit trail/);
    const failed = await homeOf(world, BOB);
    expect(failed).toMatch(/⚠️ Last `vigil doctor`: failed: cannot reach the Kubernetes API at \S+: the credentials were rejected \(HTTP 401\)[^<]* — <!date\^\d+\^/);
    expect(failed).toContain('by ops-dan');
    expect((await verifyAuditTrail(db(world))).ok).toBe(true);
  });

  it('/sre status links to each incident thread', async () => {
    await world.slack.sendCommand({ command: '/sre', text: 'status', user_id: BOB, channel_id: ALERT_CHANNEL, trigger_id: 't-status' });
    const answer = await eventually(async () => world.slack.responses.at(-1), 'the /sre status answer');
    expect(JSON.stringify(answer.body['blocks'])).toContain(`<https://fake.slack.test/archives/${ALERT_CHANNEL}/p${ts.replace('.', '')}|`);
  });

  it('a card nobody approved in time expires on its own: no buttons, why and when, and Home no longer asks', async () => {
    const row = await db(world).approvalRequest.findFirstOrThrow({ where: { status: 'pending' } });
    await db(world).approvalRequest.update({ where: { id: row.id }, data: { createdAt: new Date(Date.now() - 7 * 3_600_000) } });
    expect(await world.vigil!.approvals!.expireStale()).toBe(1);
    await world.settle();
    const card = world.slack.message(ALERT_CHANNEL, row.cardTs!)!;
    expect(hasButtons(card)).toBe(false);
    expect(JSON.stringify(card.blocks)).toMatch(/⌛ \*Expired:\* nobody approved it within 6 hours at <!date\^\d+\^/);
    expect(await homeOf(world, ALICE)).not.toContain('Waiting for your approval');
  });
});

describe('a [RESOLVED] post', () => {
  let world: World;
  let ts: string;
  beforeAll(async () => ({ world, ts } = await start()), 60_000);
  afterAll(async () => world?.close());

  it('is answered "Resolved — see the thread"; the summary card says Resolved; the open card closes, saying when', async () => {
    const row = await db(world).approvalRequest.findFirstOrThrow({ where: { status: 'pending' } });
    const att = world.scenario.alert.attachments![0] as Record<string, string>;
    const title = att.title!.replace(/\[FIRING:\d+\]/, '[RESOLVED]');
    const resolved = await world.slack.postAsBot(ALERT_CHANNEL, { username: 'Alertmanager', attachments: [{ ...att, title, fallback: title, color: 'good' }] });
    await world.settle();

    const answer = world.slack.threadOf(ALERT_CHANNEL, resolved.message.ts).slice(1);
    expect(answer).toHaveLength(1);
    expect(JSON.stringify(answer[0]!.blocks)).toContain(`✅ Resolved — <https://fake.slack.test/archives/${ALERT_CHANNEL}/p${ts.replace('.', '')}|see the thread>.`);
    expect(JSON.stringify(answer[0]!.blocks)).not.toContain('Already tracked');

    const header = world.slack.threadOf(ALERT_CHANNEL, ts).find((m) => purposeOf(m) === 'header')!;
    expect(renderBlocksAsText(header)).toMatch(/resolved/i);
    expect(renderBlocksAsText(header)).not.toMatch(/Triaged/);

    const card = world.slack.message(ALERT_CHANNEL, row.cardTs!)!;
    expect(hasButtons(card)).toBe(false);
    expect(JSON.stringify(card.blocks)).toMatch(/🔒 \*Closed:\* incident resolved at <!date\^\d+\^/);
    expect(JSON.stringify(card.blocks)).not.toMatch(/Needs \d approval/);
    expect(world.slack.rejections).toEqual([]);
  });
});

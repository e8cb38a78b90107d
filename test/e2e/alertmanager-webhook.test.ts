/**
 * Alertmanager's webhook (payload version 4) reaching Vigil over HTTP, live: a real Alertmanager (Debian's 0.25)
 * whose receiver has both a webhook (POST /webhooks/alertmanager with the bearer token) and a Slack config (the
 * fake Slack's incoming webhook) opens ONE incident for the group and resolves it. Then the two payloads a real
 * Alertmanager sent for a group (captured) are delivered in both orders — webhook first (Vigil posts the thread
 * root itself in VIGIL_ALERTMANAGER_WEBHOOK_CHANNEL) and Slack post first — and a retry of the same webhook
 * notification adds nothing. Fails under CI when the binary is missing, skips with a reason elsewhere.
 */
import { renderBlocksAsText } from '../../src/slack/blocks/text.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { alertmanagerSkipReason, startAlertmanager, startCapturingReceiver, type CapturingReceiver, type RunningAlertmanager } from '../support/alertmanager.js';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';
import { DEMO_SCENARIO, eventually, threadText } from './helpers.js';

const skipReason = alertmanagerSkipReason();
if (skipReason) console.warn(`[alertmanager-webhook] skipped: ${skipReason}`);

const TOKEN = 'alertmanager-webhook-token-e2e-0123';
const labels = { alertname: 'KubeDeploymentReplicasMismatch', deployment: 'checkout', namespace: 'shop', severity: 'critical' };
const annotations = { summary: 'Deployment shop/checkout has not matched the expected number of replicas.' };

describe.skipIf(skipReason !== undefined)('Alertmanager webhook → Vigil', () => {
  let world: World;
  const url = () => `http://127.0.0.1:${world.vigil!.port}/webhooks/alertmanager`;
  const db = () => world.vigil!.db.prisma;
  const postWebhook = (body: unknown) =>
    fetch(url(), { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  /** Deliver a captured Slack notification as Alertmanager would: the fake Slack's incoming webhook, then a message event to Vigil. */
  const postSlack = async (body: unknown) => {
    const before = new Set(world.slack.messages(ALERT_CHANNEL).map((m) => m.ts));
    const res = await fetch(world.slack.webhookUrl(ALERT_CHANNEL), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status).toBe(200);
    return world.slack.waitForMessage(ALERT_CHANNEL, (m) => m.origin === 'webhook' && !before.has(m.ts));
  };

  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, env: { VIGIL_ALERTMANAGER_WEBHOOK_TOKEN: TOKEN } });
  });
  afterAll(async () => world?.close());
  beforeEach(async () => {
    await world.settle();
    await db().incident.deleteMany();
    await db().processedDelivery.deleteMany();
  });

  it('a real Alertmanager with a webhook and a Slack receiver opens one incident for the group, and resolves it', async () => {
    const am: RunningAlertmanager = await startAlertmanager({
      slackApiUrl: world.slack.webhookUrl(ALERT_CHANNEL),
      webhookUrl: url(),
      webhookBearerToken: TOKEN,
      groupBy: ['alertname'],
    });
    try {
      await am.postAlerts([{ labels, annotations }]);
      await world.slack.waitForMessage(ALERT_CHANNEL, (m) => m.origin === 'webhook', { timeoutMs: 20_000 });
      const both = await eventually(async () => {
        const rows = await db().alert.findMany();
        return rows.length >= 2 ? rows : undefined;
      }, 'the webhook and the Slack post to reach Vigil');
      await world.settle();
      expect(both.map((a) => a.dedupeKey.split(':')[0]).sort()).toEqual(['alertmanager-webhook', 'slack']);
      expect(await db().incident.count()).toBe(1);
      const incident = await db().incident.findFirstOrThrow();
      expect(incident).toMatchObject({ status: 'open', channelId: ALERT_CHANNEL, source: 'alertmanager', alertCount: 2 });
      expect(incident.threadTs).toBeTruthy();
      expect(await db().hypothesis.findFirstOrThrow({ where: { label: 'H1' } })).toMatchObject({ status: 'supported', componentName: 'checkout' });

      await am.resolve([{ labels }]);
      await eventually(() => db().incident.findFirst({ where: { status: 'resolved' } }), 'the incident to resolve');
      await world.settle();
      expect(await db().incident.count()).toBe(1);
      expect(world.slack.rejections).toEqual([]);
    } finally {
      await am.stop();
    }
  });

  describe('the same group by webhook and by Slack post, in either order', () => {
    /** What a real Alertmanager sent for one group: the webhook bodies and the Slack bodies, firing and resolved. */
    const sent: { webhook: Record<string, unknown>[]; slack: unknown[] } = { webhook: [], slack: [] };
    beforeAll(async () => {
      const capture: CapturingReceiver = await startCapturingReceiver();
      const am = await startAlertmanager({ slackApiUrl: `${capture.url}/slack`, webhookUrl: `${capture.url}/webhook`, groupBy: ['alertname'] });
      try {
        const isStatus = (s: string) => (b: unknown) => (b as { status?: string }).status === s;
        const slackSays = (s: RegExp) => (b: unknown) => s.test(JSON.stringify(b));
        await am.postAlerts([{ labels, annotations }]);
        sent.webhook.push((await capture.waitFor('/webhook', isStatus('firing'))).body as Record<string, unknown>);
        sent.slack.push((await capture.waitFor('/slack', slackSays(/\[FIRING:1\]/))).body);
        await am.resolve([{ labels }]);
        sent.webhook.push((await capture.waitFor('/webhook', isStatus('resolved'))).body as Record<string, unknown>);
        sent.slack.push((await capture.waitFor('/slack', slackSays(/\[RESOLVED\]/))).body);
      } finally {
        await am.stop();
        await capture.close();
      }
    });

    it('webhook first: Vigil posts the thread root in the webhook channel; the Slack post joins it; a retry adds nothing', async () => {
      const res = await postWebhook(sent.webhook[0]);
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({ ok: true, status: 'firing', alerts: 1 });
      await world.settle();
      const incident = await db().incident.findFirstOrThrow();
      expect(incident).toMatchObject({ status: 'open', channelId: ALERT_CHANNEL, openedBy: null });
      // The root is Vigil's own post in the channel (no alert post to hang the thread from).
      const root = world.slack.messages(ALERT_CHANNEL).find((m) => m.ts === incident.threadTs)!;
      expect(root).toBeDefined();
      expect(root.origin).not.toBe('webhook');
      // It names the alert and where it came from, not a requester nobody was.
      expect(renderBlocksAsText(root)).toMatch(/Received from alertmanager by webhook/);
      expect(renderBlocksAsText(root)).not.toMatch(/requested by/i);
      expect(threadText(world.slack, incident.threadTs!).join('\n')).toMatch(/kubectl scale/);

      // Alertmanager retries a notification it did not see answered: the same body again is a duplicate.
      expect((await postWebhook(sent.webhook[0])).status).toBe(202);
      await world.settle();
      expect(await db().alert.count()).toBe(1);

      const post = await postSlack(sent.slack[0]);
      await world.settle();
      expect(await db().incident.count()).toBe(1);
      expect(await db().incident.findFirstOrThrow()).toMatchObject({ id: incident.id, alertCount: 2, threadTs: incident.threadTs });
      // The Slack post points at the incident thread Vigil already started.
      expect(world.slack.threadOf(ALERT_CHANNEL, post.ts).length).toBeGreaterThan(1);

      expect((await postWebhook(sent.webhook[1])).status).toBe(202);
      await world.settle();
      await postSlack(sent.slack[1]);
      await world.settle();
      expect(await db().incident.findMany()).toMatchObject([{ id: incident.id, status: 'resolved' }]);
    });

    it('Slack post first: the webhook joins the incident threaded under the post, and resolves it', async () => {
      const post = await postSlack(sent.slack[0]);
      await world.settle();
      const incident = await db().incident.findFirstOrThrow();
      expect(incident.threadTs).toBe(post.ts);

      expect((await postWebhook(sent.webhook[0])).status).toBe(202);
      expect((await postWebhook(sent.webhook[0])).status).toBe(202); // a retry
      await world.settle();
      expect(await db().incident.count()).toBe(1);
      expect(await db().incident.findFirstOrThrow()).toMatchObject({ id: incident.id, alertCount: 2, threadTs: post.ts });
      expect(await db().alert.count()).toBe(2);

      expect((await postWebhook(sent.webhook[1])).status).toBe(202);
      await world.settle();
      expect(await db().incident.findMany()).toMatchObject([{ id: incident.id, status: 'resolved' }]);
      expect(threadText(world.slack, post.ts).join('\n---\n')).toMatch(/resolved/i);
    });

    it('answers a malformed body 400 and a wrong token 401, without touching incidents', async () => {
      const v3 = await postWebhook({ ...sent.webhook[0], version: '3' });
      expect(v3.status).toBe(400);
      expect(await v3.json()).toMatchObject({ ok: false, error: expect.stringMatching(/version "3"/) });
      const wrong = await fetch(url(), { method: 'POST', headers: { authorization: 'Bearer nope-nope-nope-nope', 'content-type': 'application/json' }, body: JSON.stringify(sent.webhook[0]) });
      expect(wrong.status).toBe(401);
      const bad = await fetch(url(), { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: '{not json' });
      expect(bad.status).toBe(400);
      await world.settle();
      expect(await db().incident.count()).toBe(0);
    });
  });
});

describe('without VIGIL_ALERTMANAGER_WEBHOOK_TOKEN', () => {
  it('the route is not mounted', async () => {
    const world = await startWorld({ scenarioDir: DEMO_SCENARIO });
    try {
      const res = await fetch(`http://127.0.0.1:${world.vigil!.port}/webhooks/alertmanager`, { method: 'POST', body: '{}' });
      expect(res.status).toBe(404);
    } finally {
      await world.close();
    }
  });
});

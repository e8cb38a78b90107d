/**
 * The whole first user flow, live: a real Alertmanager (Debian's 0.25) posts to the fake Slack's incoming
 * webhook, the fake Slack delivers the message event to Vigil's Bolt receiver, and Vigil answers in the
 * alert's thread; Alertmanager's resolve notification then resolves the incident. Fails under CI when the
 * binary is missing (alertmanagerSkipReason throws there), skips with a reason elsewhere.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alertmanagerSkipReason, startAlertmanager, type RunningAlertmanager } from '../support/alertmanager.js';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';
import { DEMO_SCENARIO, eventually, threadText } from './helpers.js';

const skipReason = alertmanagerSkipReason();
if (skipReason) console.warn(`[alertmanager-to-thread] skipped: ${skipReason}`);

const labels = { alertname: 'KubeDeploymentReplicasMismatch', deployment: 'checkout', namespace: 'shop', severity: 'critical' };

describe.skipIf(skipReason !== undefined)('real Alertmanager → fake Slack → Vigil thread', () => {
  let world: World;
  let am: RunningAlertmanager;

  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO });
    am = await startAlertmanager({ slackApiUrl: world.slack.webhookUrl(ALERT_CHANNEL), groupBy: ['alertname'] });
  });
  afterAll(async () => {
    await am?.stop();
    await world?.close();
  });

  it('opens one incident for the real post, answers in its thread with the right diagnosis, and resolves it', async () => {
    await am.postAlerts([{ labels, annotations: { summary: 'Deployment shop/checkout has not matched the expected number of replicas.' } }]);
    const post = await world.slack.waitForMessage(ALERT_CHANNEL, (m) => m.origin === 'webhook', { timeoutMs: 20_000 });
    // Alertmanager's real format: one attachment, no blocks, no top-level text.
    expect(post.attachments).toHaveLength(1);
    expect((post.attachments![0] as { title: string }).title).toMatch(/^\[FIRING:1\] KubeDeploymentReplicasMismatch/);
    await world.slack.waitFor(() => world.slack.threadOf(ALERT_CHANNEL, post.ts).length >= 3 || undefined, { timeoutMs: 20_000 });
    await world.settle();

    const db = world.vigil!.db.prisma;
    expect(await db.incident.count()).toBe(1);
    const h1 = await db.hypothesis.findFirstOrThrow({ where: { label: 'H1' } });
    expect(h1).toMatchObject({ status: 'supported', componentKind: 'Deployment', componentNs: 'shop', componentName: 'checkout' });
    expect(threadText(world.slack, post.ts)[1]).toMatch(/kubectl scale/);

    await am.resolve([{ labels }]);
    await eventually(() => db.incident.findFirst({ where: { status: 'resolved' } }), 'the incident to resolve');
    await world.settle();
    expect(await db.incident.count()).toBe(1);
    expect(threadText(world.slack, post.ts).join("\n---\n")).toMatch(/resolved/i);
    expect(world.slack.rejections).toEqual([]);
  });
});

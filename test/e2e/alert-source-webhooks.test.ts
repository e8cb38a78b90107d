/**
 * Grafana, PagerDuty and Opsgenie webhooks reaching a running Vigil (the demo world: fake Slack, fake Kubernetes
 * under deploy/'s RBAC): a delivery opens the incident and Vigil posts its thread root itself in the configured
 * channel; the Grafana Slack post of the same group (sent through the fake Slack's incoming webhook as Grafana's
 * Slack contact point would) joins that incident; retries add nothing; the resolve delivery resolves it.
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { renderBlocksAsText } from '../../src/slack/blocks/text.js';
import { loadFixture } from '../alerts/load-fixture.js';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';
import { DEMO_SCENARIO, threadText } from './helpers.js';

const GRAFANA_TOKEN = 'grafana-webhook-token-e2e-0123';
const PD_SECRET = 'pagerduty-webhook-secret-e2e-0123';
const OG_TOKEN = 'opsgenie-webhook-token-e2e-0123';

/** The demo's alert (checkout scaled to zero) as a Grafana group, webhook and Slack post. */
function grafanaGroup(status: 'firing' | 'resolved') {
  const body = structuredClone(loadFixture(status === 'firing' ? 'grafana-webhook-firing' : 'grafana-webhook-resolved').payload) as Record<string, unknown> & { alerts: Record<string, unknown>[] };
  const labels = { alertname: 'KubeDeploymentReplicasMismatch', deployment: 'checkout', grafana_folder: 'Shop', namespace: 'shop', severity: 'critical' };
  body['groupLabels'] = { alertname: labels.alertname, grafana_folder: 'Shop' };
  body['commonLabels'] = labels;
  body.alerts[0]!['labels'] = labels;
  body.alerts[0]!['fingerprint'] = '7a1c0e5b9d3f2a64';
  const title = `${status === 'firing' ? '[FIRING:1]' : '[RESOLVED]'} KubeDeploymentReplicasMismatch Shop (checkout shop critical)`;
  body['title'] = title;
  const slack = {
    username: 'Grafana',
    attachments: [
      {
        color: status === 'firing' ? '#D63232' : '#36a64f',
        title,
        title_link: 'https://grafana.example.com/alerting/grafana/fe2k1xq9/view?orgId=1',
        text: `**${status === 'firing' ? 'Firing' : 'Resolved'}**\n\nLabels:\n${Object.entries(labels).map(([k, v]) => ` - ${k} = ${v}`).join('\n')}\n`,
        footer: 'Grafana v11.3.0',
        ts: 1764430100,
      },
    ],
  };
  return { body, slack };
}

describe('alert source webhooks → Vigil', () => {
  let world: World;
  const base = () => `http://127.0.0.1:${world.vigil!.port}`;
  const db = () => world.vigil!.db.prisma;
  const post = (path: string, body: unknown, headers: Record<string, string>) =>
    fetch(`${base()}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });

  beforeAll(async () => {
    world = await startWorld({
      scenarioDir: DEMO_SCENARIO,
      env: { VIGIL_GRAFANA_WEBHOOK_TOKEN: GRAFANA_TOKEN, VIGIL_PAGERDUTY_WEBHOOK_SECRET: PD_SECRET, VIGIL_OPSGENIE_WEBHOOK_TOKEN: OG_TOKEN },
    });
  });
  afterAll(async () => world?.close());
  beforeEach(async () => {
    await world.settle();
    await db().incident.deleteMany();
    await db().processedDelivery.deleteMany();
  });

  it('Grafana webhook first: Vigil posts the thread; the Grafana Slack post of the group joins it; the resolve resolves it', async () => {
    const firing = grafanaGroup('firing');
    const auth = { authorization: `Bearer ${GRAFANA_TOKEN}` };
    expect((await post('/webhooks/grafana', firing.body, auth)).status).toBe(202);
    expect((await post('/webhooks/grafana', firing.body, auth)).status).toBe(202); // a retry
    await world.settle();
    const incident = await db().incident.findFirstOrThrow();
    expect(incident).toMatchObject({ status: 'open', channelId: ALERT_CHANNEL, source: 'grafana', alertCount: 1 });
    const root = world.slack.messages(ALERT_CHANNEL).find((m) => m.ts === incident.threadTs)!;
    expect(renderBlocksAsText(root)).toMatch(/Received from grafana by webhook/);
    expect(threadText(world.slack, incident.threadTs!).join('\n')).toMatch(/kubectl scale/);

    const res = await fetch(world.slack.webhookUrl(ALERT_CHANNEL), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(firing.slack) });
    expect(res.status).toBe(200);
    await world.slack.waitForMessage(ALERT_CHANNEL, (m) => m.origin === 'webhook');
    await world.settle();
    await new Promise((r) => setTimeout(r, 200));
    await world.settle();
    expect(await db().incident.count()).toBe(1);
    expect(await db().incident.findFirstOrThrow()).toMatchObject({ id: incident.id, alertCount: 2, threadTs: incident.threadTs });

    expect((await post('/webhooks/grafana', grafanaGroup('resolved').body, auth)).status).toBe(202);
    await world.settle();
    expect(await db().incident.findMany()).toMatchObject([{ id: incident.id, status: 'resolved' }]);
  });

  it('PagerDuty: a signed incident.triggered opens an incident, a redelivery adds nothing, incident.resolved resolves it; a bad signature is 401', async () => {
    const sign = (raw: string) => ({ 'x-pagerduty-signature': `v1=${createHmac('sha256', PD_SECRET).update(raw).digest('hex')}` });
    const triggered = JSON.stringify(loadFixture('pagerduty-webhook-triggered').payload);
    const resolved = JSON.stringify(loadFixture('pagerduty-webhook-resolved').payload);
    expect((await post('/webhooks/pagerduty', triggered, { 'x-pagerduty-signature': 'v1=' + '0'.repeat(64) })).status).toBe(401);
    expect((await post('/webhooks/pagerduty', triggered, sign(triggered))).status).toBe(202);
    expect((await post('/webhooks/pagerduty', triggered, sign(triggered))).status).toBe(202);
    await world.settle();
    expect(await db().incident.findMany()).toMatchObject([{ source: 'pagerduty', status: 'open', channelId: ALERT_CHANNEL }]);
    expect(await db().alert.count()).toBe(1);
    expect((await post('/webhooks/pagerduty', resolved, sign(resolved))).status).toBe(202);
    await world.settle();
    expect(await db().incident.findMany()).toMatchObject([{ status: 'resolved' }]);
  });

  it('Opsgenie: Create opens an incident, Close (without details) resolves it; malformed JSON is 400 and touches nothing', async () => {
    const auth = { 'x-vigil-token': OG_TOKEN };
    expect((await post('/webhooks/opsgenie', '{"action": "Create", ', auth)).status).toBe(400);
    expect((await post('/webhooks/opsgenie', loadFixture('opsgenie-webhook-create').payload, auth)).status).toBe(202);
    await world.settle();
    expect(await db().incident.findMany()).toMatchObject([{ source: 'opsgenie', status: 'open', namespace: 'shop' }]);
    expect((await post('/webhooks/opsgenie', loadFixture('opsgenie-webhook-close').payload, auth)).status).toBe(202);
    await world.settle();
    expect(await db().incident.findMany()).toMatchObject([{ status: 'resolved' }]);
  });
});

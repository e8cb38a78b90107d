/**
 * Escalation that reaches a person: an alert Vigil cannot explain (it matches no workload, so nothing is supported)
 * gets the handover card, and with PagerDuty and Opsgenie configured (local fakes that enforce the real APIs) one
 * page each goes out with the incident's summary and the thread link, deduplicated per incident however often the
 * thread is synced; the card says who was paged; the resolve resolves both pages. Every step is in the audit log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderBlocksAsText } from '../../src/slack/blocks/text.js';
import { loadFixture } from '../alerts/load-fixture.js';
import { startFakeOpsgenie, type FakeOpsgenie } from '../fakes/opsgenie/server.js';
import { startFakePagerDuty, type FakePagerDuty } from '../fakes/pagerduty/server.js';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';
import { DEMO_SCENARIO, threadText } from './helpers.js';

const TOKEN = 'alertmanager-webhook-token-e2e-0123';
const ROUTING_KEY = 'R0123456789abcdef0123456789abcde';
const GENIE_KEY = 'eb243592-faa2-4ba2-a551-1afdf565c889';

/** An Alertmanager group about a deployment the cluster does not have: triage finds nothing to support. */
function group(status: 'firing' | 'resolved') {
  const body = structuredClone(loadFixture(status === 'firing' ? 'alertmanager-webhook-firing' : 'alertmanager-webhook-resolved').payload) as Record<string, unknown> & { alerts: Record<string, unknown>[] };
  const labels = { alertname: 'HighRequestLatency', deployment: 'ledger', namespace: 'billing', severity: 'critical' };
  body['groupKey'] = '{}:{alertname="HighRequestLatency"}';
  body['groupLabels'] = { alertname: labels.alertname };
  body['commonLabels'] = labels;
  body['commonAnnotations'] = { summary: 'p99 latency of billing/ledger above 2s' };
  body.alerts = [{ ...body.alerts[0]!, labels, annotations: { summary: 'p99 latency of billing/ledger above 2s' }, fingerprint: '0badc0ffee000001' }];
  return body;
}

describe('handover → page', () => {
  let world: World;
  let pd: FakePagerDuty;
  let og: FakeOpsgenie;
  const db = () => world.vigil!.db.prisma;
  const postWebhook = (body: unknown) =>
    fetch(`http://127.0.0.1:${world.vigil!.port}/webhooks/alertmanager`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  beforeAll(async () => {
    pd = await startFakePagerDuty({ routingKeys: [ROUTING_KEY] });
    og = await startFakeOpsgenie({ apiKeys: [GENIE_KEY] });
    world = await startWorld({
      scenarioDir: DEMO_SCENARIO,
      env: { VIGIL_ALERTMANAGER_WEBHOOK_TOKEN: TOKEN, PAGERDUTY_ROUTING_KEY: ROUTING_KEY, PAGERDUTY_EVENTS_URL: pd.url, OPSGENIE_API_KEY: GENIE_KEY, OPSGENIE_API_URL: og.url },
    });
  });
  afterAll(async () => {
    await world?.close();
    await pd?.close();
    await og?.close();
  });

  it('pages once per incident through PagerDuty and Opsgenie, shows it on the handover card, and resolves the pages', async () => {
    // PagerDuty throttles the first attempt: the client waits and tries again.
    pd.throttleNext(1, 0);
    expect((await postWebhook(group('firing'))).status).toBe(202);
    await world.settle();
    const incident = await db().incident.findFirstOrThrow();
    const thread = threadText(world.slack, incident.threadTs!).join('\n---\n');
    expect(thread).toMatch(/Vigil needs a human/);
    expect(thread).toMatch(new RegExp(`Paged via PagerDuty \\(dedup key \`${incident.id}\`\\)`));
    expect(thread).toMatch(/Paged via Opsgenie/);

    expect(pd.alerts).toEqual([
      expect.objectContaining({ dedupKey: incident.id, status: 'triggered', severity: 'critical', pages: 1, summary: expect.stringMatching(/^Vigil needs a human: .*HighRequestLatency.* — no hypothesis is supported/) }),
    ]);
    const link = (pd.alerts[0]!.links as { href: string }[])[0]!.href;
    expect(link).toMatch(/^https?:\/\/.+/);
    expect(og.alerts).toEqual([expect.objectContaining({ alias: incident.id, status: 'open', priority: 'P1', count: 1 })]);
    expect(og.alerts[0]!.details['thread']).toBe(link);

    // The same alert again, and more syncs: still one page each.
    const repeat = group('firing');
    repeat.alerts[0]!['startsAt'] = new Date().toISOString();
    expect((await postWebhook(repeat)).status).toBe(202);
    await world.settle();
    expect(pd.requests.filter((r) => r.status === 202)).toHaveLength(1);
    expect(og.alerts[0]!.count).toBe(1);

    expect((await postWebhook(group('resolved'))).status).toBe(202);
    await world.settle();
    expect(await db().incident.findFirstOrThrow()).toMatchObject({ id: incident.id, status: 'resolved' });
    expect(pd.alerts[0]!.status).toBe('resolved');
    expect(og.alerts[0]!.status).toBe('closed');

    const audit = await db().auditEvent.findMany({ where: { incidentId: incident.id, kind: { startsWith: 'page.' } }, orderBy: { id: 'asc' } });
    expect(audit.map((a) => [a.kind, (JSON.parse(a.data) as { provider: string }).provider])).toEqual([
      ['page.sent', 'pagerduty'],
      ['page.sent', 'opsgenie'],
      ['page.resolved', 'pagerduty'],
      ['page.resolved', 'opsgenie'],
    ]);
    expect(world.slack.messages(ALERT_CHANNEL).some((m) => /Paged via PagerDuty/.test(renderBlocksAsText(m)))).toBe(true);
  });

  it('a responder ruling out the only supported hypothesis hands the incident over and pages', async () => {
    await db().incident.deleteMany();
    const { ts } = await world.postAlert();
    await world.settle();
    const incident = await db().incident.findFirstOrThrow({ where: { threadTs: ts } });
    expect(await db().hypothesis.findFirstOrThrow({ where: { label: 'H1' } })).toMatchObject({ status: 'supported' });
    expect(pd.alerts.filter((a) => a.dedupKey === incident.id)).toHaveLength(0);

    await world.slack.postAsUser(ALERT_CHANNEL, { user: 'U0BOB', text: 'rule out H1', thread_ts: ts });
    await world.settle();
    const thread = threadText(world.slack, ts).join('\n---\n');
    expect(thread).toMatch(/Vigil needs a human.*a responder ruled out the only supported hypothesis \(H1\)/s);
    expect(pd.alerts.filter((a) => a.dedupKey === incident.id)).toEqual([expect.objectContaining({ status: 'triggered', pages: 1 })]);
    expect(og.alerts.filter((a) => a.alias === incident.id)).toHaveLength(1);
  });

  it('a pager that keeps failing is logged, audited and shown on the card; the next sync pages; the thread goes on', async () => {
    await db().incident.deleteMany();
    pd.throttleNext(100, 0);
    const body = group('firing');
    body['groupKey'] = '{}:{alertname="HighRequestLatency2"}';
    expect((await postWebhook(body)).status).toBe(202);
    await world.settle();
    const incident = await db().incident.findFirstOrThrow();
    expect(threadText(world.slack, incident.threadTs!).join('\n')).toMatch(/Could not page via PagerDuty: PagerDuty refused the trigger event: HTTP 429/);
    expect(og.alerts.filter((a) => a.alias === incident.id)).toHaveLength(1);
    expect(await db().auditEvent.count({ where: { incidentId: incident.id, kind: 'page.failed' } })).toBe(1);

    pd.throttleNext(0);
    const again = structuredClone(body);
    again.alerts[0]!['startsAt'] = new Date().toISOString();
    expect((await postWebhook(again)).status).toBe(202);
    await world.settle();
    expect(pd.alerts.filter((a) => a.dedupKey === incident.id)).toHaveLength(1);
    expect(threadText(world.slack, incident.threadTs!).join('\n')).toMatch(/Paged via PagerDuty/);
  });
});

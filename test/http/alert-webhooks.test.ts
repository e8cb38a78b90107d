/**
 * `POST /webhooks/grafana`, `/webhooks/pagerduty` and `/webhooks/opsgenie` on a bare node:http server (as main.ts
 * serves routes in Socket Mode), on payloads as each product documents them (test/fixtures/alerts/*-webhook-*.json):
 * the auth each product can send (bearer/basic, PagerDuty's HMAC signature, a shared token), 202 + one Alert for a
 * firing or resolved delivery, the same delivery key for a retry, ignored event types, clear 400/401/413 JSON with a
 * log line for bad requests, and the fingerprint a webhook shares with the same tool's Slack post.
 */
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import { fingerprintAlert } from '../../src/alerts/fingerprint.js';
import { parseAlertMessage } from '../../src/alerts/parse/index.js';
import type { AlertMessage } from '../../src/alerts/types.js';
import { loadConfig } from '../../src/config/index.js';
import type { WebhookAlert } from '../../src/http/alertmanager-webhook.js';
import {
  grafanaWebhookRoute,
  judgeGrafanaWebhook,
  judgePagerDutyWebhook,
  opsgenieWebhookRoute,
  pagerdutySignatureMatches,
  pagerdutyWebhookRoute,
} from '../../src/http/alert-webhooks.js';
import { routeRequest } from '../../src/http/routes.js';
import { createRedactor } from '../../src/redact/index.js';
import { loadFixture } from '../alerts/load-fixture.js';

const GRAFANA_TOKEN = 'grafana-webhook-secret-0123456789';
const PD_SECRET = 'ChdvS5z0Hq8Wk3pXyT4nJrB1mVfLcA9uE2gD7sKoN6iPwQxR+Zj/Y3MtUaIeOb5l';
const OG_TOKEN = 'opsgenie-webhook-secret-0123456789';
const fixture = (name: string) => JSON.stringify(loadFixture(name).payload);
const sign = (body: string, secret = PD_SECRET) => `v1=${createHmac('sha256', secret).update(body).digest('hex')}`;

describe('alert source webhooks over HTTP', () => {
  let server: Server;
  let base: string;
  const received: WebhookAlert[] = [];
  const lines: { msg: string; status?: number; error?: string; body?: unknown; auth?: string }[] = [];

  beforeAll(async () => {
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as never) });
    const common = { redactor: createRedactor(), log, onAlert: (a: WebhookAlert) => void received.push(a) };
    const routes = [grafanaWebhookRoute({ ...common, token: GRAFANA_TOKEN }), pagerdutyWebhookRoute({ ...common, secret: PD_SECRET }), opsgenieWebhookRoute({ ...common, token: OG_TOKEN })];
    server = createServer((req, res) => routeRequest(routes, req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    received.length = 0;
    lines.length = 0;
  });

  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const refused = (name: string) => lines.find((l) => l.msg === `${name} webhook refused`);

  describe('POST /webhooks/grafana', () => {
    const bearer = { authorization: `Bearer ${GRAFANA_TOKEN}` };

    it('accepts a firing group with the bearer token: 202, one Alert with the labels and Grafana links', async () => {
      const res = await post('/webhooks/grafana', fixture('grafana-webhook-firing'), bearer);
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({ ok: true, status: 'firing', alerts: 1 });
      expect(received).toHaveLength(1);
      expect(received[0]!.alert).toMatchObject({
        source: 'grafana',
        status: 'firing',
        title: '[FIRING:1] HighErrorRate Shop (shop checkout critical)',
        alertName: 'HighErrorRate',
        labels: { namespace: 'shop', service: 'checkout', severity: 'critical' },
        severity: 'critical',
        link: 'https://grafana.example.com/alerting/grafana/fe2k1xq9/view?orgId=1',
      });
      expect(received[0]!.alert.text).toMatch(/5xx ratio above 5% for checkout/);
      expect(received[0]!.deliveryKey).toMatch(/^grafana-webhook:[0-9a-f]{32}$/);
    });

    it('accepts HTTP basic auth with the token as password (any user name)', async () => {
      const basic = `Basic ${Buffer.from(`grafana:${GRAFANA_TOKEN}`).toString('base64')}`;
      expect((await post('/webhooks/grafana', fixture('grafana-webhook-firing'), { authorization: basic })).status).toBe(202);
    });

    it('resolves with the resolved notification; a retry of a delivery has the same key', async () => {
      await post('/webhooks/grafana', fixture('grafana-webhook-firing'), bearer);
      await post('/webhooks/grafana', fixture('grafana-webhook-firing'), bearer);
      const res = await post('/webhooks/grafana', fixture('grafana-webhook-resolved'), bearer);
      expect(await res.json()).toEqual({ ok: true, status: 'resolved', alerts: 1 });
      const [a, b, c] = received.map((r) => r.deliveryKey);
      expect(a).toBe(b);
      expect(c).not.toBe(a);
      expect(received[2]!.alert.status).toBe('resolved');
      expect(fingerprintAlert(received[2]!.alert)).toBe(fingerprintAlert(received[0]!.alert));
    });

    it.each([
      ['no credentials', {}],
      ['a wrong bearer', { authorization: 'Bearer not-the-secret-at-all' }],
      ['a wrong basic password', { authorization: `Basic ${Buffer.from('grafana:nope-nope-nope').toString('base64')}` }],
      ['basic without a password', { authorization: `Basic ${Buffer.from(GRAFANA_TOKEN).toString('base64')}` }],
    ])('answers 401 to %s, and logs it', async (_what, headers) => {
      const res = await post('/webhooks/grafana', fixture('grafana-webhook-firing'), headers);
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ ok: false, error: expect.stringMatching(/credentials/) });
      expect(received).toHaveLength(0);
      expect(refused('grafana')).toMatchObject({ status: 401 });
    });

    it.each([
      ['a body that is not JSON', '{"receiver": ', /not JSON/],
      ['a JSON array', '[]', /not a JSON object/],
      ['no alerts', JSON.stringify({ ...JSON.parse(fixture('grafana-webhook-firing')), alerts: undefined }), /alerts: expected an array/],
      ['an empty group', JSON.stringify({ ...JSON.parse(fixture('grafana-webhook-firing')), alerts: [] }), /no alerts/],
      ['an unknown status', JSON.stringify({ ...JSON.parse(fixture('grafana-webhook-firing')), status: 'alerting' }), /status/],
      ['an alert without labels', JSON.stringify({ ...JSON.parse(fixture('grafana-webhook-firing')), alerts: [{ status: 'firing', startsAt: '2026-01-01T00:00:00Z' }] }), /alerts\.0\.labels/],
    ])('answers 400 naming the problem to %s, logging the shape and not the body', async (_what, body, error) => {
      const res = await post('/webhooks/grafana', body, bearer);
      expect(res.status).toBe(400);
      const json = (await res.json()) as { ok: boolean; error: string };
      expect(json).toMatchObject({ ok: false, error: expect.stringMatching(error) });
      expect(received).toHaveLength(0);
      const line = refused('grafana')!;
      expect(line).toMatchObject({ status: 400, error: json.error });
      expect(JSON.stringify(line)).not.toMatch(/5xx ratio above/);
    });

    it('answers 413 to a body over the limit, and still serves the next request', async () => {
      const big = { ...JSON.parse(fixture('grafana-webhook-firing')), message: 'x'.repeat(300 * 1024) };
      const res = await post('/webhooks/grafana', JSON.stringify(big), bearer);
      expect(res.status).toBe(413);
      expect(await res.json()).toMatchObject({ ok: false, error: expect.stringMatching(/too large/) });
      expect((await post('/webhooks/grafana', fixture('grafana-webhook-firing'), bearer)).status).toBe(202);
    });
  });

  describe('POST /webhooks/pagerduty', () => {
    it('accepts a signed incident.triggered: 202, one firing Alert for the incident', async () => {
      const body = fixture('pagerduty-webhook-triggered');
      const res = await post('/webhooks/pagerduty', body, { 'x-pagerduty-signature': sign(body) });
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({ ok: true, status: 'firing', alerts: 1 });
      expect(received[0]!.alert).toMatchObject({
        source: 'pagerduty',
        status: 'firing',
        title: '[#4821] HighErrorRate: payments-api 5xx ratio above 5%',
        alertName: 'HighErrorRate: payments-api 5xx ratio above 5%',
        labels: { service: 'payments-api' },
        severity: 'p1',
        link: 'https://acme.pagerduty.com/incidents/Q2W3E4R5T6Y7U8',
      });
      expect(received[0]!.deliveryKey).toBe('pagerduty-webhook:01DEN4HPBQZ3KYK9GH7RF3CHWO');
    });

    it('accepts one matching signature among several (a secret rotation), and resolves on incident.resolved', async () => {
      const body = fixture('pagerduty-webhook-resolved');
      const header = `${sign(body, 'the-old-secret-0123456789abcdef')},${sign(body)}`;
      const res = await post('/webhooks/pagerduty', body, { 'x-pagerduty-signature': header });
      expect(res.status).toBe(202);
      expect(received[0]!.alert.status).toBe('resolved');
      const triggered = JSON.parse(fixture('pagerduty-webhook-triggered')) as unknown;
      const verdict = judgePagerDutyWebhook(JSON.stringify(triggered), createRedactor());
      if (!('alert' in verdict)) throw new Error('expected an alert');
      expect(fingerprintAlert(received[0]!.alert)).toBe(fingerprintAlert(verdict.alert.alert));
    });

    it('answers other event types 202 and ignores them (acknowledged, pagey.ping)', async () => {
      for (const type of ['incident.acknowledged', 'pagey.ping']) {
        const raw = JSON.parse(fixture('pagerduty-webhook-triggered')) as { event: Record<string, unknown> };
        raw.event['event_type'] = type;
        if (type === 'pagey.ping') raw.event['data'] = { type: 'ping', message: 'Hello from your friend Pagey!' };
        const body = JSON.stringify(raw);
        const res = await post('/webhooks/pagerduty', body, { 'x-pagerduty-signature': sign(body) });
        expect(res.status).toBe(202);
        expect(await res.json()).toEqual({ ok: true, ignored: type });
      }
      expect(received).toHaveLength(0);
    });

    it.each([
      ['no signature', null],
      ['a signature with another secret', 'other'],
      ['a signature of another body', 'tampered'],
      ['a malformed header', 'malformed'],
    ])('answers 401 to %s, and logs it', async (_what, kind) => {
      const body = fixture('pagerduty-webhook-triggered');
      const header = kind === 'other' ? sign(body, 'not-the-secret-0123456789') : kind === 'tampered' ? sign(body.replace('4821', '4822')) : kind === 'malformed' ? 'sha256=abc' : undefined;
      const res = await post('/webhooks/pagerduty', body, header ? { 'x-pagerduty-signature': header } : {});
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ ok: false, error: 'missing or wrong X-PagerDuty-Signature' });
      expect(received).toHaveLength(0);
      expect(refused('pagerduty')).toMatchObject({ status: 401 });
    });

    it.each([
      ['a body that is not JSON', '{"event": '],
      ['no event', '{"messages": []}'],
      ['an incident event without data', JSON.stringify({ event: { id: 'E1', event_type: 'incident.triggered', resource_type: 'incident', occurred_at: '2026-11-29T15:30:00Z' } })],
      ['an incident without a title', JSON.stringify({ event: { id: 'E1', event_type: 'incident.triggered', resource_type: 'incident', occurred_at: '2026-11-29T15:30:00Z', data: { id: 'Q1', type: 'incident' } } })],
    ])('answers 400 with a JSON error to a signed body with %s', async (_what, body) => {
      const res = await post('/webhooks/pagerduty', body, { 'x-pagerduty-signature': sign(body) });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ ok: false, error: expect.any(String) });
      expect(received).toHaveLength(0);
      expect(refused('pagerduty')).toMatchObject({ status: 400, body: { bytes: Buffer.byteLength(body) } });
    });

    it('checks signatures as PagerDuty documents them', () => {
      const body = '{"event":{"id":"x"}}';
      expect(pagerdutySignatureMatches(PD_SECRET, body, sign(body))).toBe(true);
      expect(pagerdutySignatureMatches(PD_SECRET, body, ` v1=${'0'.repeat(64)} , ${sign(body)}`)).toBe(true);
      expect(pagerdutySignatureMatches(PD_SECRET, body, sign(body).toUpperCase().replace('V1=', 'v1='))).toBe(true);
      expect(pagerdutySignatureMatches(PD_SECRET, body, `v2=${sign(body).slice(3)}`)).toBe(false);
      expect(pagerdutySignatureMatches(PD_SECRET, body, undefined)).toBe(false);
    });
  });

  describe('POST /webhooks/opsgenie', () => {
    it.each([
      ['an X-Vigil-Token header', '', { 'x-vigil-token': OG_TOKEN }],
      ['a bearer token', '', { authorization: `Bearer ${OG_TOKEN}` }],
      ['?token= in the URL', `?token=${OG_TOKEN}`, {}],
    ])('accepts a Create with %s: one firing Alert with labels from tags and details', async (_what, query, headers) => {
      const res = await post(`/webhooks/opsgenie${query}`, fixture('opsgenie-webhook-create'), headers);
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({ ok: true, status: 'firing', alerts: 1 });
      expect(received[0]!.alert).toMatchObject({
        source: 'opsgenie',
        status: 'firing',
        title: 'Checkout error rate above 5%',
        labels: { namespace: 'shop', deployment: 'checkout', env: 'prod', service: 'checkout' },
        annotations: { alias: 'checkout-error-rate-shop', description: expect.stringMatching(/12\.4%/) },
        severity: 'p1',
      });
      expect(received[0]!.alert.startsAt?.toISOString()).toBe('2025-11-29T15:30:01.104Z');
    });

    it('a Close resolves the same alert; a retry of the Create has the same delivery key; Acknowledge is ignored', async () => {
      const headers = { 'x-vigil-token': OG_TOKEN };
      await post('/webhooks/opsgenie', fixture('opsgenie-webhook-create'), headers);
      await post('/webhooks/opsgenie', fixture('opsgenie-webhook-create'), headers);
      await post('/webhooks/opsgenie', fixture('opsgenie-webhook-close'), headers);
      const ack = { ...JSON.parse(fixture('opsgenie-webhook-close')), action: 'Acknowledge' };
      const res = await post('/webhooks/opsgenie', JSON.stringify(ack), headers);
      expect(await res.json()).toEqual({ ok: true, ignored: 'Acknowledge' });
      const [a, b, c] = received.map((r) => r.deliveryKey);
      expect(received).toHaveLength(3);
      expect(a).toBe(b);
      expect(c).not.toBe(a);
      expect(received[2]!.alert.status).toBe('resolved');
      expect(fingerprintAlert(received[2]!.alert)).toBe(fingerprintAlert(received[0]!.alert));
    });

    it.each([
      ['no token', '', {}],
      ['a wrong header token', '', { 'x-vigil-token': 'wrong-token-wrong-token' }],
      ['a wrong query token', '?token=wrong-token-wrong-token', {}],
    ])('answers 401 to %s', async (_what, query, headers) => {
      const res = await post(`/webhooks/opsgenie${query}`, fixture('opsgenie-webhook-create'), headers);
      expect(res.status).toBe(401);
      expect(received).toHaveLength(0);
      expect(refused('opsgenie')).toMatchObject({ status: 401 });
    });

    it.each([
      ['a body that is not JSON', 'action=Create'],
      ['no alert', '{"action":"Create"}'],
      ['an alert without an id', JSON.stringify({ action: 'Create', alert: { message: 'x' } })],
      ['tags that are not a list', JSON.stringify({ action: 'Create', alert: { alertId: 'a1', message: 'x', tags: 'a,b' } })],
    ])('answers 400 with a JSON error to %s', async (_what, body) => {
      const res = await post('/webhooks/opsgenie', body, { 'x-vigil-token': OG_TOKEN });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ ok: false, error: expect.any(String) });
      expect(refused('opsgenie')).toMatchObject({ status: 400 });
    });
  });

  it('redacts a secret in a webhook body before anything sees it', async () => {
    const body = JSON.parse(fixture('opsgenie-webhook-create')) as { alert: Record<string, unknown> };
    body.alert['description'] = 'token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB leaked';
    expect((await post('/webhooks/opsgenie', JSON.stringify(body), { 'x-vigil-token': OG_TOKEN })).status).toBe(202);
    expect(JSON.stringify(received[0]!.alert)).not.toMatch(/ghp_0123456789abcdef/);
  });
});

describe('a webhook delivery and the same tool\'s Slack post', () => {
  const slack = (name: string) => {
    const post = parseAlertMessage(loadFixture(name).payload as AlertMessage, { receivedAt: new Date() });
    if (post.kind !== 'alert') throw new Error(post.reason);
    return post.alert;
  };
  it('Grafana: the same title and fingerprint, firing and resolved', () => {
    const redactor = createRedactor();
    for (const [hook, post] of [
      ['grafana-webhook-firing', 'grafana-firing'],
      ['grafana-webhook-resolved', 'grafana-resolved'],
    ] as const) {
      const verdict = judgeGrafanaWebhook(fixture(hook), redactor);
      if (!('alert' in verdict)) throw new Error(JSON.stringify(verdict));
      expect(fingerprintAlert(verdict.alert.alert)).toBe(fingerprintAlert(slack(post)));
    }
  });
  it('PagerDuty: the incident and the Slack app post of it have the same fingerprint', () => {
    const verdict = judgePagerDutyWebhook(fixture('pagerduty-webhook-triggered'), createRedactor());
    if (!('alert' in verdict)) throw new Error(JSON.stringify(verdict));
    expect(fingerprintAlert(verdict.alert.alert)).toBe(fingerprintAlert(slack('pagerduty-triggered')));
  });
});

describe('settings', () => {
  const base = { SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: '0123456789abcdef0123', VIGIL_ALERT_CHANNELS: 'C0ALERTS,C0WARN' };
  it('each route is configured by its secret; the channel defaults to the first alert channel', () => {
    const none = loadConfig(base);
    expect([none.grafanaWebhook, none.pagerdutyWebhook, none.opsgenieWebhook, none.paging]).toEqual([undefined, undefined, undefined, undefined]);
    const all = loadConfig({ ...base, VIGIL_GRAFANA_WEBHOOK_TOKEN: GRAFANA_TOKEN, VIGIL_PAGERDUTY_WEBHOOK_SECRET: PD_SECRET, VIGIL_OPSGENIE_WEBHOOK_TOKEN: OG_TOKEN, VIGIL_OPSGENIE_WEBHOOK_CHANNEL: 'C0WARN' });
    expect(all.grafanaWebhook).toEqual({ token: GRAFANA_TOKEN, channelId: 'C0ALERTS' });
    expect(all.pagerdutyWebhook).toEqual({ secret: PD_SECRET, channelId: 'C0ALERTS' });
    expect(all.opsgenieWebhook).toEqual({ token: OG_TOKEN, channelId: 'C0WARN' });
    expect(() => loadConfig({ ...base, VIGIL_GRAFANA_WEBHOOK_TOKEN: 'short' })).toThrow(/VIGIL_GRAFANA_WEBHOOK_TOKEN: expects a shared secret/);
    expect(() => loadConfig({ ...base, VIGIL_PAGERDUTY_WEBHOOK_SECRET: 'short' })).toThrow(/VIGIL_PAGERDUTY_WEBHOOK_SECRET: expects the V3 webhook subscription signing secret/);
    expect(() => loadConfig({ ...base, VIGIL_OPSGENIE_WEBHOOK_TOKEN: OG_TOKEN, VIGIL_OPSGENIE_WEBHOOK_CHANNEL: '#alerts' })).toThrow(/VIGIL_OPSGENIE_WEBHOOK_CHANNEL: expects a Slack channel id/);
  });
  it('paging is configured by a PagerDuty routing key and/or an Opsgenie API key', () => {
    const key = 'R0123456789abcdef0123456789abcde';
    expect(loadConfig({ ...base, PAGERDUTY_ROUTING_KEY: key }).paging).toEqual({ pagerduty: { routingKey: key } });
    expect(loadConfig({ ...base, OPSGENIE_API_KEY: 'eb243592-faa2-4ba2-a551q-1afdf565c889', OPSGENIE_API_URL: 'https://api.eu.opsgenie.com' }).paging).toEqual({
      opsgenie: { apiKey: 'eb243592-faa2-4ba2-a551q-1afdf565c889', baseUrl: 'https://api.eu.opsgenie.com' },
    });
    expect(() => loadConfig({ ...base, PAGERDUTY_ROUTING_KEY: 'too-short' })).toThrow(/PAGERDUTY_ROUTING_KEY: expects the 32-character integration \(routing\) key/);
    expect(() => loadConfig({ ...base, PAGERDUTY_ROUTING_KEY: key, PAGERDUTY_EVENTS_URL: 'events.pagerduty.com' })).toThrow(/PAGERDUTY_EVENTS_URL: expects the PagerDuty Events API base URL/);
  });
});

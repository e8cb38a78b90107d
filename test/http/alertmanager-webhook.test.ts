/**
 * `POST /webhooks/alertmanager` on a bare node:http server (as main.ts serves routes in Socket Mode): the
 * bearer token, the body limit, clear 4xx JSON for bad bodies, 202 for a valid group, the delivery key that
 * makes Alertmanager's retries idempotent, and the fingerprint a webhook group shares with its Slack post.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import { fingerprintAlert, fingerprintParts } from '../../src/alerts/fingerprint.js';
import { parseAlertMessage } from '../../src/alerts/parse/index.js';
import type { AlertMessage } from '../../src/alerts/types.js';
import { loadConfig } from '../../src/config/index.js';
import { alertmanagerWebhookRoute, type WebhookAlert } from '../../src/http/alertmanager-webhook.js';
import { routeRequest } from '../../src/http/routes.js';
import { createRedactor } from '../../src/redact/index.js';
import { loadFixture } from '../alerts/load-fixture.js';

const TOKEN = 'am-webhook-secret-0123456789';
const firing = () => structuredClone(loadFixture('alertmanager-webhook-firing').payload) as Record<string, unknown>;
const resolved = () => structuredClone(loadFixture('alertmanager-webhook-resolved').payload) as Record<string, unknown>;

describe('POST /webhooks/alertmanager', () => {
  let server: Server;
  let url: string;
  const received: WebhookAlert[] = [];
  const lines: { msg: string; status?: number; error?: string }[] = [];

  beforeAll(async () => {
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as never) });
    const route = alertmanagerWebhookRoute({ token: TOKEN, redactor: createRedactor(), log, onAlert: (a) => void received.push(a) });
    server = createServer((req, res) => routeRequest([route], req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address() as { port: number };
    url = `http://127.0.0.1:${address.port}/webhooks/alertmanager`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    received.length = 0;
    lines.length = 0;
  });

  const post = (body: string, authorization: string | null = `Bearer ${TOKEN}`) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) }, body });

  it('accepts a v4 group with the right bearer token: 202, then one Alert for the group', async () => {
    const res = await post(JSON.stringify(firing()));
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ ok: true, status: 'firing', alerts: 1 });
    expect(received).toHaveLength(1);
    expect(received[0]!.alert).toMatchObject({ source: 'alertmanager', status: 'firing', alertName: 'KubePodCrashLooping', count: 1, labels: { namespace: 'shop' } });
    expect(received[0]!.deliveryKey).toMatch(/^alertmanager-webhook:[0-9a-f]{32}$/);
    expect(lines.some((l) => l.msg === 'alertmanager webhook accepted')).toBe(true);
  });

  it.each([
    ['no token', null],
    ['a wrong token', 'Bearer not-the-secret-at-all'],
    ['the token without Bearer', TOKEN],
    ['an empty bearer', 'Bearer '],
  ])('answers 401 with a JSON error to %s, and logs it', async (_what, authorization) => {
    const res = await post(JSON.stringify(firing()), authorization);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ ok: false, error: 'missing or wrong bearer token' });
    expect(received).toHaveLength(0);
    expect(lines.find((l) => l.msg === 'alertmanager webhook refused')).toMatchObject({ status: 401 });
  });

  it.each([
    ['a body that is not JSON', '{"version": "4", ', /not JSON/],
    ['a JSON array', '[]', /not a JSON object/],
    ['payload version 3', JSON.stringify({ ...firing(), version: '3' }), /unsupported webhook payload version "3".*"4"/],
    ['no version', JSON.stringify({ ...firing(), version: undefined }), /version \(none\)/],
    ['no alerts', JSON.stringify({ ...firing(), alerts: undefined }), /alerts: expected an array/],
    ['an empty group', JSON.stringify({ ...firing(), alerts: [] }), /no alerts/],
    ['an alert without labels', JSON.stringify({ ...firing(), alerts: [{ status: 'firing', startsAt: '2026-01-01T00:00:00Z' }] }), /alerts\.0\.labels/],
  ])('answers 400 with a JSON error naming the problem to %s, and logs it', async (_what, body, error) => {
    const res = await post(body);
    expect(res.status).toBe(400);
    const json = (await res.json()) as { ok: boolean; error: string };
    expect(json.ok).toBe(false);
    expect(json.error).toMatch(error);
    expect(received).toHaveLength(0);
    expect(lines.find((l) => l.msg === 'alertmanager webhook refused')).toMatchObject({ status: 400, error: json.error });
  });

  it('answers 413 to a body over the limit, and still serves the next request', async () => {
    const big = { ...firing(), commonAnnotations: { description: 'x'.repeat(300 * 1024) } };
    const res = await post(JSON.stringify(big));
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ ok: false, error: expect.stringMatching(/too large/) });
    expect(received).toHaveLength(0);
    expect((await post(JSON.stringify(firing()))).status).toBe(202);
  });

  it('gives a retry of the same notification the same delivery key, and a changed group another', async () => {
    await post(JSON.stringify(firing()));
    await post(JSON.stringify(firing()));
    const grown = firing();
    const alerts = grown['alerts'] as Record<string, unknown>[];
    alerts.push({ ...alerts[0]!, labels: { ...(alerts[0]!['labels'] as object), pod: 'checkout-7d9f8b6c5-abcde' }, fingerprint: 'ffff000011112222' });
    await post(JSON.stringify(grown));
    await post(JSON.stringify(resolved()));
    const [a, b, c, d] = received.map((r) => r.deliveryKey);
    expect(a).toBe(b);
    expect(new Set([a, c, d]).size).toBe(3);
    expect(received[2]!.alert).toMatchObject({ count: 2, members: [{ labels: { pod: 'checkout-7d9f8b6c5-x2x9z' } }, { labels: { pod: 'checkout-7d9f8b6c5-abcde' } }] });
    expect(received[3]!.alert.status).toBe('resolved');
  });

  it('redacts a secret in the body before anything sees it', async () => {
    const body = firing();
    body['commonAnnotations'] = { summary: 'leaked password=hunter2hunter2 AKIAIOSFODNN7EXAMPLE' };
    (body['alerts'] as { annotations: Record<string, string> }[])[0]!.annotations = { summary: 'token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB' };
    expect((await post(JSON.stringify(body))).status).toBe(202);
    expect(JSON.stringify(received[0]!.alert)).not.toMatch(/ghp_0123456789abcdef|AKIAIOSFODNN7EXAMPLE/);
  });
});

describe('a webhook group and the Slack post of the same group', () => {
  it('have the same fingerprint (the group values of the subject), firing and resolved', async () => {
    const { judgeAlertmanagerWebhook } = await import('../../src/http/alertmanager-webhook.js');
    const redactor = createRedactor();
    for (const [hook, slack] of [
      ['alertmanager-webhook-firing', 'alertmanager-firing-1'],
      ['alertmanager-webhook-resolved', 'alertmanager-resolved-1'],
    ] as const) {
      const verdict = judgeAlertmanagerWebhook(JSON.stringify(loadFixture(hook).payload), redactor);
      if (verdict.status !== 202) throw new Error(verdict.error);
      const post = parseAlertMessage(loadFixture(slack).payload as AlertMessage, { receivedAt: new Date() });
      if (post.kind !== 'alert') throw new Error(post.reason);
      expect(verdict.alert.alert.title).toBe(post.alert.title);
      expect(fingerprintParts(verdict.alert.alert)[0]).toBe('group');
      expect(fingerprintAlert(verdict.alert.alert)).toBe(fingerprintAlert(post.alert));
    }
  });
});

describe('settings', () => {
  const base = { SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: '0123456789abcdef0123', VIGIL_ALERT_CHANNELS: 'C0ALERTS,C0WARN' };
  it('without a token the route is not configured; the channel defaults to the first alert channel', () => {
    expect(loadConfig(base).alertmanagerWebhook).toBeUndefined();
    expect(loadConfig({ ...base, VIGIL_ALERTMANAGER_WEBHOOK_TOKEN: TOKEN }).alertmanagerWebhook).toEqual({ token: TOKEN, channelId: 'C0ALERTS' });
    expect(loadConfig({ ...base, VIGIL_ALERTMANAGER_WEBHOOK_TOKEN: TOKEN, VIGIL_ALERTMANAGER_WEBHOOK_CHANNEL: 'C0WARN' }).alertmanagerWebhook).toEqual({ token: TOKEN, channelId: 'C0WARN' });
    expect(() => loadConfig({ ...base, VIGIL_ALERTMANAGER_WEBHOOK_TOKEN: 'short' })).toThrow(/VIGIL_ALERTMANAGER_WEBHOOK_TOKEN: expects a shared secret/);
    expect(() => loadConfig({ ...base, VIGIL_ALERTMANAGER_WEBHOOK_TOKEN: TOKEN, VIGIL_ALERTMANAGER_WEBHOOK_CHANNEL: '#alerts' })).toThrow(/VIGIL_ALERTMANAGER_WEBHOOK_CHANNEL: expects a Slack channel id/);
  });
});

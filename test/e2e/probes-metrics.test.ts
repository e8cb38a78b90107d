/**
 * The probes and /metrics of a running Vigil (HTTP mode, against the fakes), on the port Slack posts to:
 * a broken database keeps /livez at 200 (a restart would not fix it) while /readyz answers 503 naming
 * the database, and 200 again once it is back; an alert posted through the fake Slack is counted on
 * /metrics, which wants the bearer token when VIGIL_METRICS_TOKEN is set.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { botMessage, messageEventFor } from '../fakes/slack/inbound.js';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';
import { parsePrometheusText, valueOf } from '../http/prometheus-text.js';
import { DEMO_SCENARIO } from './helpers.js';

const TOKEN = 'vigil-metrics-token-for-tests';

describe('probes and /metrics (HTTP mode)', () => {
  let world: World;
  let base: string;
  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, env: { VIGIL_METRICS_TOKEN: TOKEN } });
    base = `http://127.0.0.1:${world.vigil!.port}`;
  });
  afterAll(async () => world?.close());

  const scrape = async () => {
    const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    return parsePrometheusText(await res.text());
  };

  it('is live and ready once started; /healthz (compatibility) says ready too', async () => {
    expect((await fetch(`${base}/livez`)).status).toBe(200);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ ok: true, notReady: [], checks: { database: { ok: true }, migrations: { ok: true }, slack: { ok: true } } });
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it('keeps /livez at 200 while the database fails, /readyz is 503 naming it, and 200 once it is back', async () => {
    // The store's driver fails every raw query (what a lost connection looks like to the probe).
    const broken = vi.spyOn(world.vigil!.db.prisma, '$queryRawUnsafe').mockRejectedValue(new Error('SQLITE_IOERR: disk I/O error (injected by the test)'));
    try {
      expect((await fetch(`${base}/livez`)).status).toBe(200);
      const res = await fetch(`${base}/readyz`);
      expect(res.status).toBe(503);
      const body = (await res.json()) as { notReady: string[]; checks: Record<string, { error?: string }> };
      expect(body.notReady).toEqual(['database']);
      expect(body.checks['database']!.error).toMatch(/database unreachable: SQLITE_IOERR/);
      expect((await fetch(`${base}/healthz`)).status).toBe(503);
      expect(broken).toHaveBeenCalled();
    } finally {
      broken.mockRestore();
    }
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
  });

  it('refuses /metrics without the bearer token', async () => {
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect((await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer not-the-token-at-all' } })).status).toBe(401);
  });

  it('counts an alert posted through Slack, its investigation, and its first card', async () => {
    const before = await scrape();
    expect(valueOf(before.samples, 'vigil_alerts_received_total')).toBe(0);
    expect(valueOf(before.samples, 'vigil_store_up')).toBe(1);

    await world.postAlert();
    await world.settle();
    const { samples, types } = await scrape();
    expect(types.get('vigil_alerts_received_total')).toBe('counter');
    expect(valueOf(samples, 'vigil_alerts_received_total', { outcome: 'opened' })).toBe(1);
    const opened = samples.find((s) => s.name === 'vigil_alerts_received_total' && s.labels['outcome'] === 'opened')!;
    expect(opened.labels['source']).toMatch(/^\w+$/);
    expect(valueOf(samples, 'vigil_first_card_latency_seconds_count')).toBe(1);
    expect(valueOf(samples, 'vigil_investigation_duration_seconds_count', { outcome: 'reported' })).toBeGreaterThanOrEqual(1);
    // Investigations by state come from the store: the one investigation, in whichever state it rests.
    expect(valueOf(samples, 'vigil_investigations')).toBe(1);
    expect(valueOf(samples, 'vigil_investigations', { state: 'waiting' }) + valueOf(samples, 'vigil_investigations', { state: 'done' })).toBe(1);
    expect(valueOf(samples, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('counts a malformed alert post once, even when Slack delivers it again', async () => {
    const before = valueOf((await scrape()).samples, 'vigil_alerts_received_total', { outcome: 'malformed' });
    const message = world.slack.store.add(botMessage(ALERT_CHANNEL, { username: 'Alertmanager', text: '', attachments: [{ color: 'danger' }] }));
    const envelope = messageEventFor(world.slack.store, message);
    await world.slack.sendEvent(envelope);
    await world.slack.sendEvent(envelope, { retryNum: 1, retryReason: 'http_timeout' });
    await world.settle();
    await world.vigil!.desk.idle();
    const { samples } = await scrape();
    expect(valueOf(samples, 'vigil_alerts_received_total', { outcome: 'malformed' })).toBe(before + 1);
  });
});

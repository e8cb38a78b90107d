/**
 * The probes and /metrics on their own (src/http/probes.ts, metrics.ts), in-process and over a real HTTP
 * server: /livez never asks the database, /readyz names every check that is not ready, /metrics is
 * Prometheus text, optionally behind a bearer token.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VigilMetrics } from '../../src/http/metrics.js';
import { Probes, listenProbes } from '../../src/http/probes.js';
import type { Db } from '../../src/store/db.js';
import { parsePrometheusText, valueOf } from './prometheus-text.js';

const TOKEN = 'metrics-token-0123456789';

/** A database handle whose SELECT 1 works, fails or hangs, on demand; counts the queries it was asked. */
function fakeDb() {
  const state = { mode: 'up' as 'up' | 'down' | 'hang', queries: 0 };
  const db = {
    $queryRawUnsafe: async () => {
      state.queries++;
      if (state.mode === 'down') throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      if (state.mode === 'hang') return new Promise(() => undefined);
      return [{ 1: 1 }];
    },
  };
  return { db, state };
}

describe('Probes', () => {
  it('is not ready before start-up filled it in, and names each missing piece', async () => {
    const r = await new Probes().readiness();
    expect(r.ok).toBe(false);
    expect(r.notReady).toEqual(['database', 'migrations', 'slack']);
    expect(r.checks['database']!.error).toMatch(/not opened/);
  });

  it('is ready with the database, the migrations and Slack; not when any one is missing', async () => {
    const { db, state } = fakeDb();
    const probes = new Probes({ dbTimeoutMs: 200 });
    probes.useDatabase(db);
    probes.migrationsApplied();
    let slack = true;
    probes.useSlack(() => (slack ? { ok: true } : { ok: false, error: 'Socket Mode connection to Slack not up' }));
    expect(await probes.readiness()).toMatchObject({ ok: true, notReady: [] });

    state.mode = 'down';
    const down = await probes.readiness();
    expect(down.notReady).toEqual(['database']);
    expect(down.checks['database']!.error).toMatch(/database unreachable: connect ECONNREFUSED/);

    state.mode = 'hang';
    const hung = await probes.readiness();
    expect(hung.notReady).toEqual(['database']);
    expect(hung.checks['database']!.error).toMatch(/timed out after 200 ms/);

    state.mode = 'up';
    slack = false;
    expect((await probes.readiness()).notReady).toEqual(['slack']);
    slack = true;
    probes.markStopping();
    expect((await probes.readiness()).notReady).toEqual(['shutdown']);
  });

  it('answers liveness without touching the database', () => {
    const { db, state } = fakeDb();
    const probes = new Probes();
    probes.useDatabase(db);
    state.mode = 'down';
    expect(probes.liveness().ok).toBe(true);
    expect(state.queries).toBe(0);
  });
});

describe('probe server over HTTP', () => {
  let server: Server;
  let base: string;
  const { db, state } = fakeDb();
  const probes = new Probes({ dbTimeoutMs: 300 });
  const metrics = new VigilMetrics();

  beforeAll(async () => {
    server = await listenProbes(0, () => [...probes.routes(), metrics.route(TOKEN)], '127.0.0.1');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('answers /livez 200 and /readyz 503 while starting, then 200 once everything is up', async () => {
    expect((await fetch(`${base}/livez`)).status).toBe(200);
    const starting = await fetch(`${base}/readyz`);
    expect(starting.status).toBe(503);
    expect(((await starting.json()) as { notReady: string[] }).notReady).toEqual(['database', 'migrations', 'slack']);

    probes.useDatabase(db);
    probes.migrationsApplied();
    probes.useSlack(() => ({ ok: true }));
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ ok: true, checks: { database: { ok: true }, migrations: { ok: true }, slack: { ok: true } } });
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it('keeps /livez at 200 while the database is down, and /readyz (and /healthz) say 503 naming the database', async () => {
    state.mode = 'down';
    const before = state.queries;
    expect((await fetch(`${base}/livez`)).status).toBe(200);
    expect(state.queries).toBe(before);
    for (const path of ['/readyz', '/healthz']) {
      const res = await fetch(`${base}${path}`);
      expect(res.status, path).toBe(503);
      const body = (await res.json()) as { ok: boolean; notReady: string[]; checks: Record<string, { error?: string }> };
      expect(body.ok).toBe(false);
      expect(body.notReady).toEqual(['database']);
      expect(body.checks['database']!.error).toMatch(/database unreachable/);
    }
    state.mode = 'up';
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
  });

  it('serves /metrics only with the bearer token, as Prometheus text', async () => {
    expect((await fetch(`${base}/metrics`)).status).toBe(401);
    expect((await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status).toBe(401);
    metrics.alert('alertmanager', 'opened');
    metrics.firstCard(1.5);
    metrics.investigationRun('reported', 12);
    metrics.agentEvent({ type: 'model_call', provider: 'anthropic', model: 'claude', outcome: 'ok', usage: { inputTokens: 100, outputTokens: 20 }, costUsd: 0.01 });
    const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const { samples, types } = parsePrometheusText(await res.text());
    expect(types.get('vigil_alerts_received_total')).toBe('counter');
    expect(types.get('vigil_investigation_duration_seconds')).toBe('histogram');
    expect(types.get('vigil_first_card_latency_seconds')).toBe('histogram');
    expect(types.get('process_cpu_seconds_total')).toBe('counter');
    expect(valueOf(samples, 'vigil_alerts_received_total', { source: 'alertmanager', outcome: 'opened' })).toBe(1);
    expect(valueOf(samples, 'vigil_first_card_latency_seconds_count')).toBe(1);
    expect(valueOf(samples, 'vigil_investigation_duration_seconds_sum', { outcome: 'reported' })).toBe(12);
    expect(valueOf(samples, 'vigil_model_tokens_total', { direction: 'input' })).toBe(100);
    // No store yet: the scrape still succeeds, and says it could not read the store.
    expect(valueOf(samples, 'vigil_store_up')).toBe(0);
    for (const name of types.keys()) expect(name).toMatch(/^(vigil_|process_|nodejs_)/);
    for (const [name, type] of types) if (type === 'counter') expect(name).toMatch(/_total$/);
  });

  it('reads investigations and approvals from the store on each scrape', async () => {
    const m = new VigilMetrics();
    const groupBy = (key: string, rows: [string, number][]) => async () => rows.map(([v, n]) => ({ [key]: v, _count: { _all: n } }));
    m.useStore({
      investigation: { groupBy: groupBy('state', [['running', 2], ['waiting', 3]]) },
      approvalRequest: { groupBy: groupBy('status', [['executed', 1], ['failed', 1]]) },
      approvalDecision: { groupBy: groupBy('decision', [['approve', 2]]) },
    } as unknown as Db);
    const { samples } = parsePrometheusText(await m.registry.metrics());
    expect(valueOf(samples, 'vigil_store_up')).toBe(1);
    expect(valueOf(samples, 'vigil_investigations', { state: 'running' })).toBe(2);
    expect(valueOf(samples, 'vigil_investigations', { state: 'queued' })).toBe(0);
    expect(valueOf(samples, 'vigil_approval_requests', { status: 'executed' })).toBe(1);
    expect(valueOf(samples, 'vigil_approval_decisions', { decision: 'approve' })).toBe(2);
  });

  it('refuses a malformed exposition (the checker is strict)', () => {
    expect(() => parsePrometheusText('# TYPE a counter\na_total 1\n')).toThrow(/without a TYPE/);
    expect(() => parsePrometheusText('# TYPE a counter\na{x=1} 1\n')).toThrow(/not a sample/);
    expect(() => parsePrometheusText('# TYPE a counter\na 1')).toThrow(/newline/);
  });
});

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LokiClient, LokiError } from '../../../src/evidence/loki/client.js';
import { startFakeLoki, type FakeLoki } from '../../fakes/loki/server.js';

const T0 = new Date('2024-01-29T10:00:00Z');
const at = (ms: number): Date => new Date(T0.getTime() + ms);

/** `n` lines spread evenly over `spanMs`, each naming its index. */
function entries(n: number, spanMs: number, every = 1): { ts: Date; line: string }[] {
  return Array.from({ length: n }, (_, i) => ({ ts: at(Math.floor((Math.floor(i / every) * every * spanMs) / n)), line: `line ${i}` }));
}

describe('LokiClient over HTTP', () => {
  let loki: FakeLoki;
  beforeAll(async () => {
    loki = await startFakeLoki({
      streams: [
        { labels: { app: 'small' }, entries: entries(50, 60_000) },
        { labels: { app: 'medium' }, entries: entries(12_000, 600_000) },
        { labels: { app: 'noisy' }, entries: entries(60_000, 35 * 60_000) },
        // Pairs of lines share a millisecond, so page boundaries fall inside a timestamp.
        { labels: { app: 'pairs' }, entries: entries(40, 20_000, 2) },
      ],
    });
  });
  afterAll(() => loki.close());

  it('sends the tenant, bearer and basic auth headers and ns epoch times', async () => {
    await new LokiClient({ baseUrl: `${loki.url}/`, tenant: 'team-a', auth: { type: 'bearer', token: 't0k' } }).queryRange({ query: '{app="small"}', start: at(0), end: at(1000), limit: 10 });
    const r = loki.requests.at(-1)!;
    expect(r.headers['x-scope-orgid']).toBe('team-a');
    expect(r.headers.authorization).toBe('Bearer t0k');
    expect(r.params).toEqual({ query: '{app="small"}', start: `${T0.getTime()}000000`, end: `${T0.getTime() + 1000}000000`, limit: '10', direction: 'backward' });
    await new LokiClient({ baseUrl: loki.url, auth: { type: 'basic', username: 'u', password: 'p' } }).labels();
    expect(loki.requests.at(-1)!.headers.authorization).toBe(`Basic ${Buffer.from('u:p').toString('base64')}`);
  });

  it('retries a 5xx and then succeeds', async () => {
    const client = new LokiClient({ baseUrl: loki.url, retries: 2, retryDelayMs: 5 });
    const before = loki.requests.length;
    loki.failNext(2, 503);
    const res = await client.queryRange({ query: '{app="small"}', start: at(0), end: at(60_000) });
    expect(res.resultType === 'streams' && res.streams[0]?.entries).toHaveLength(50);
    expect(loki.requests.slice(before).map((r) => r.status)).toEqual([503, 503, 200]);
  });

  it('gives up after the retries with the last 5xx, and never retries a 4xx', async () => {
    const client = new LokiClient({ baseUrl: loki.url, retries: 1, retryDelayMs: 5 });
    loki.failNext(2, 502, 'bad gateway\n');
    await expect(client.queryRange({ query: '{app="small"}', start: at(0), end: at(1) })).rejects.toMatchObject({ status: 502, lokiMessage: 'bad gateway' });
    const before = loki.requests.length;
    await expect(client.queryRange({ query: '{app=}', start: at(0), end: at(1) })).rejects.toMatchObject({ status: 400 });
    expect(loki.requests.length - before).toBe(1);
  });

  it('reads a quiet window completely in one request', async () => {
    const read = await new LokiClient({ baseUrl: loki.url }).readLogs({ query: '{app="small"}', start: at(0), end: at(60_000) });
    expect(read).toMatchObject({ sampled: false, requests: 1 });
    expect(read.entries.map((e) => e.line)).toEqual(Array.from({ length: 50 }, (_, i) => `line ${i}`));
  });

  it('pages backward through a window that fits the budget, without losing or repeating lines', async () => {
    const read = await new LokiClient({ baseUrl: loki.url }).readLogs({ query: '{app="medium"}', start: at(0), end: at(600_000), maxLines: 20_000 });
    expect(read.sampled).toBe(false);
    expect(read.requests).toBeGreaterThanOrEqual(3);
    expect(read.entries).toHaveLength(12_000);
    expect(new Set(read.entries.map((e) => e.line)).size).toBe(12_000);

    const pairs = await new LokiClient({ baseUrl: loki.url }).readLogs({ query: '{app="pairs"}', start: at(0), end: at(20_000), pageSize: 5, maxLines: 100 });
    expect(pairs.entries.map((e) => e.line).sort()).toEqual(Array.from({ length: 40 }, (_, i) => `line ${i}`).sort());
  });

  it('samples a noisy window across its whole span, within maxLines', async () => {
    const span = 35 * 60_000;
    const read = await new LokiClient({ baseUrl: loki.url }).readLogs({ query: '{app="noisy"}', start: at(0), end: at(span) });
    expect(read.sampled).toBe(true);
    expect(read.entries.length).toBeLessThanOrEqual(10_000);
    expect(read.entries.length).toBeGreaterThan(9_000);
    // Every tenth of the window is represented, not only the newest lines.
    const tenths = new Set(read.entries.map((e) => Math.floor(((e.ts.getTime() - T0.getTime()) / span) * 10)));
    expect([...tenths].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const ns = read.entries.map((e) => e.ns);
    expect(ns).toEqual([...ns].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  });

  it('refuses to read a metric result as log lines', async () => {
    const server = await jsonServer({ status: 'success', data: { resultType: 'matrix', result: [{ metric: { app: 'x' }, values: [[1706522400, '3']] }] } });
    const client = new LokiClient({ baseUrl: server.url });
    const res = await client.queryRange({ query: 'x', start: at(0), end: at(1) });
    expect(res).toMatchObject({ resultType: 'matrix', series: [{ metric: { app: 'x' }, values: [{ ts: new Date(1706522400_000), value: '3' }] }] });
    await expect(client.readLogs({ query: 'x', start: at(0), end: at(1) })).rejects.toThrow(/not log lines/);
    await server.close();
  });
});

describe('LokiClient against broken servers', () => {
  it('rejects a body that is not the query_range envelope', async () => {
    const server = await jsonServer({ status: 'success', data: { resultType: 'streams', result: [{ stream: {}, values: [[123, 'x']] }] } });
    const err = await new LokiClient({ baseUrl: server.url }).queryRange({ query: '{a="b"}', start: at(0), end: at(1) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LokiError);
    expect((err as LokiError).message).toMatch(/unexpected response: data\.result\.0\.values\.0\.0/);
    await server.close();
  });

  it('reads a JSON error body and times out a silent server', async () => {
    const errors = await jsonServer({ status: 'error', error: 'too many outstanding requests' }, 429);
    await expect(new LokiClient({ baseUrl: errors.url }).queryRange({ query: '{a="b"}', start: at(0), end: at(1) })).rejects.toMatchObject({
      status: 429,
      lokiMessage: 'too many outstanding requests',
    });
    await errors.close();

    const silent = await jsonServer(undefined);
    const err = await new LokiClient({ baseUrl: silent.url, timeoutMs: 100, retries: 1, retryDelayMs: 5 }).labels().catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'LokiError', status: undefined });
    expect((err as Error).message).toMatch(/timed out after 100 ms/);
    const aborted = await new LokiClient({ baseUrl: silent.url }).labels(undefined, AbortSignal.timeout(50)).catch((e: unknown) => e);
    expect(aborted).toMatchObject({ name: 'LokiError', lokiMessage: 'aborted' });
    await silent.close();
  });
});

/** A one-answer server: `body` as JSON with `status`, or no answer at all when `body` is undefined. */
async function jsonServer(body: unknown, status = 200): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    if (body === undefined) return;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LokiClient, LokiError } from '../../../src/evidence/loki/client.js';
import { startFakeLoki, type FakeLoki } from './server.js';

const T0 = new Date('2024-01-29T10:00:00Z');
const at = (s: number): Date => new Date(T0.getTime() + s * 1000);
const lines = (res: Awaited<ReturnType<LokiClient['queryRange']>>): string[] =>
  res.resultType === 'streams' ? res.streams.flatMap((s) => s.entries).sort((a, b) => Number(a.ns - b.ns)).map((e) => e.line) : [];

describe('fake Loki', () => {
  let loki: FakeLoki;
  let client: LokiClient;
  const range = { start: at(0), end: at(100) };

  beforeAll(async () => {
    loki = await startFakeLoki({
      streams: [
        {
          labels: { namespace: 'shop', app: 'checkout', pod: 'checkout-7d9f8b6c5d-x2x7k' },
          entries: [
            { ts: at(1), line: 'level=info msg="request handled" path=/cart status=200' },
            { ts: at(2), line: 'level=error msg="upstream timeout" upstream=payments' },
            { ts: at(3), line: '{"level":"error","msg":"payment declined","user":"u1"}' },
            { ts: at(4), line: '{"level":"info","msg":"order placed"}' },
            { ts: at(5), line: 'level=warn msg="slow query" table=orders' },
          ],
        },
        { labels: { namespace: 'shop', app: 'checkout-worker' }, entries: [{ ts: at(6), line: 'worker tick' }] },
        { labels: { namespace: 'kube-system', app: 'coredns' }, entries: [{ ts: at(7), line: '[ERROR] plugin/errors: 2 timeout' }] },
      ],
    });
    client = new LokiClient({ baseUrl: loki.url, retries: 0 });
  });
  afterAll(() => loki.close());

  it('answers /ready', async () => {
    const res = await fetch(`${loki.url}/ready`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('ready\n');
  });

  it('matches selectors with =, !=, and fully anchored =~ / !~', async () => {
    expect(lines(await client.queryRange({ query: '{app="checkout"}', ...range }))).toHaveLength(5);
    expect(lines(await client.queryRange({ query: '{app=~"check"}', ...range }))).toEqual([]);
    expect(lines(await client.queryRange({ query: '{app=~"checkout.*"}', ...range }))).toHaveLength(6);
    expect(lines(await client.queryRange({ query: '{namespace="shop", app!="checkout"}', ...range }))).toEqual(['worker tick']);
    expect(lines(await client.queryRange({ query: '{namespace=~".+", app!~"checkout.*"}', ...range }))).toEqual(['[ERROR] plugin/errors: 2 timeout']);
  });

  it('chains line filters', async () => {
    expect(lines(await client.queryRange({ query: '{app="checkout"} |= "level=" != "error"', ...range }))).toEqual([
      'level=info msg="request handled" path=/cart status=200',
      'level=warn msg="slow query" table=orders',
    ]);
    expect(lines(await client.queryRange({ query: '{app="checkout"} |~ "(?i)TIMEOUT|declined" !~ "json"', ...range }))).toHaveLength(2);
  });

  it('parses json and logfmt and filters on the extracted labels', async () => {
    const json = await client.queryRange({ query: '{app="checkout"} | json | level="error"', ...range });
    expect(lines(json)).toEqual(['{"level":"error","msg":"payment declined","user":"u1"}']);
    expect(json.resultType === 'streams' && json.streams[0]?.labels).toMatchObject({ app: 'checkout', level: 'error', user: 'u1' });
    expect(lines(await client.queryRange({ query: '{app="checkout"} | logfmt | level=~"warn|error"', ...range }))).toEqual([
      'level=error msg="upstream timeout" upstream=payments',
      'level=warn msg="slow query" table=orders',
    ]);
  });

  it('honours start (inclusive), end (exclusive), limit and direction', async () => {
    const window = await client.queryRange({ query: '{app="checkout"}', start: at(2), end: at(4) });
    expect(lines(window)).toEqual(['level=error msg="upstream timeout" upstream=payments', '{"level":"error","msg":"payment declined","user":"u1"}']);
    expect(lines(await client.queryRange({ query: '{app="checkout"}', ...range, limit: 2 }))).toEqual([
      '{"level":"info","msg":"order placed"}',
      'level=warn msg="slow query" table=orders',
    ]);
    expect(lines(await client.queryRange({ query: '{app="checkout"}', ...range, limit: 2, direction: 'forward' }))).toEqual([
      'level=info msg="request handled" path=/cart status=200',
      'level=error msg="upstream timeout" upstream=payments',
    ]);
  });

  it('accepts RFC 3339 times and reports stats', async () => {
    const res = await fetch(`${loki.url}/loki/api/v1/query_range?${new URLSearchParams({ query: '{app="checkout"}', start: at(0).toISOString(), end: at(3).toISOString() })}`);
    const body = (await res.json()) as { data: { result: { values: [string, string][] }[]; stats: { summary: { totalEntriesReturned: number } } } };
    expect(body.data.result[0]?.values.map((v) => v[0])).toEqual([String(BigInt(at(2).getTime()) * 1_000_000n), String(BigInt(at(1).getTime()) * 1_000_000n)]);
    expect(body.data.stats.summary.totalEntriesReturned).toBe(2);
  });

  it('answers bad LogQL with a 400 plain-text parse error, like Loki', async () => {
    const res = await fetch(`${loki.url}/loki/api/v1/query_range?query=${encodeURIComponent('{app="checkout"')}`);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/text\/plain/);
    expect(await res.text()).toBe('parse error at line 1, col 16: syntax error: unexpected $end, expecting , or }\n');

    const err = await client.queryRange({ query: '{app checkout}', ...range }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LokiError);
    expect((err as LokiError).status).toBe(400);
    expect((err as LokiError).lokiMessage).toBe('parse error at line 1, col 6: syntax error: unexpected IDENTIFIER, expecting = or != or =~ or !~');
    await expect(client.queryRange({ query: 'rate({app="x"}[5m])', ...range })).rejects.toThrow(/parse error at line 1, col 1/);
    await expect(client.queryRange({ query: '{app=~".*"}', ...range })).rejects.toThrow(/at least one regexp or equality matcher/);
    await expect(client.queryRange({ query: '{app="x"} |~ "("', ...range })).rejects.toThrow(/invalid regex/);
  });

  it('caps limit at max_entries_limit_per_query', async () => {
    await expect(client.queryRange({ query: '{app="checkout"}', ...range, limit: 5001 })).rejects.toThrow(/max entries limit per query exceeded/);
  });

  it('lists labels and label values, optionally within a selector', async () => {
    expect(await client.labels(range)).toEqual(['app', 'namespace', 'pod']);
    expect(await client.labelValues('app', { ...range })).toEqual(['checkout', 'checkout-worker', 'coredns']);
    expect(await client.labelValues('app', { ...range, query: '{namespace="shop"}' })).toEqual(['checkout', 'checkout-worker']);
    expect(await client.labelValues('app', { start: at(6.5), end: at(100) })).toEqual(['coredns']);
  });

  it('records requests', () => {
    const last = loki.requests.at(-1)!;
    expect(last).toMatchObject({ method: 'GET', path: '/loki/api/v1/label/app/values', status: 200 });
    expect(loki.requests.some((r) => r.status === 400 && r.params.query === '{app checkout}')).toBe(true);
  });
});

describe('fake Loki with a tenant', () => {
  let loki: FakeLoki;
  beforeAll(async () => {
    loki = await startFakeLoki({ tenant: 'team-a', streams: [{ labels: { app: 'a' }, entries: [{ ts: at(1), line: 'hello' }] }] });
  });
  afterAll(() => loki.close());

  it('refuses a request without X-Scope-OrgID with 401 "no org id"', async () => {
    const err = await new LokiClient({ baseUrl: loki.url }).queryRange({ query: '{app="a"}', start: at(0), end: at(10) }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'LokiError', status: 401, lokiMessage: 'no org id' });
  });

  it('serves the tenant its data and another tenant nothing', async () => {
    const mine = await new LokiClient({ baseUrl: loki.url, tenant: 'team-a' }).queryRange({ query: '{app="a"}', start: at(0), end: at(10) });
    expect(lines(mine)).toEqual(['hello']);
    const theirs = await new LokiClient({ baseUrl: loki.url, tenant: 'team-b' }).queryRange({ query: '{app="a"}', start: at(0), end: at(10) });
    expect(lines(theirs)).toEqual([]);
    expect(loki.requests.at(-1)?.headers['x-scope-orgid']).toBe('team-b');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { LokiClient } from '../../../src/evidence/loki/client.js';
import { createLokiQueryRangeTool, parseTimeArg } from '../../../src/evidence/loki/tools.js';
import { MAX_TOOL_RESULT_BYTES, type ToolContext } from '../../../src/evidence/tool.js';
import { createRedactor } from '../../../src/redact/index.js';
import { startFakeLoki, type FakeLoki } from '../../fakes/loki/server.js';
import { FROM, lokiWorld, ONSET, SECRETS, TO } from './world.js';

describe('loki_query_range', () => {
  let loki: FakeLoki;
  let tool: ReturnType<typeof createLokiQueryRangeTool>;
  const ctx = (extra: Partial<ToolContext> = {}): ToolContext => ({ redactor: createRedactor(), now: TO, ...extra });

  beforeAll(async () => {
    loki = await startFakeLoki({ streams: lokiWorld() });
    tool = createLokiQueryRangeTool(new LokiClient({ baseUrl: loki.url, retries: 0 }));
  });
  afterAll(() => loki.close());

  it('describes its parameters for the model', () => {
    expect(tool.name).toBe('loki_query_range');
    expect(tool.effect).toBe('read');
    const schema = z.toJSONSchema(tool.parameters) as { properties: Record<string, { description?: string }>; required: string[] };
    expect(Object.keys(schema.properties)).toEqual(['query', 'start', 'end', 'limit', 'onset']);
    for (const p of Object.values(schema.properties)) expect(p.description).toBeTruthy();
    expect(schema.required).toEqual(['query']);
  });

  it('returns a bounded, redacted template summary with citation and evidence', async () => {
    const query = '{namespace="shop", app_kubernetes_io_name="checkout"}';
    const res = await tool.execute({ query, start: FROM.toISOString(), end: 'now', limit: 10_000, onset: ONSET.toISOString() }, ctx());
    if (res.status !== 'success') throw new Error(`expected success, got ${JSON.stringify(res)}`);
    expect(res.citation).toEqual({ source: 'loki', ref: query, range: { from: FROM, to: TO } });
    const text = JSON.stringify(res);
    expect(Buffer.byteLength(JSON.stringify(res.data))).toBeLessThanOrEqual(MAX_TOOL_RESULT_BYTES);
    for (const secret of Object.values(SECRETS)) expect(text).not.toContain(secret);
    const data = res.data as { totalLines: number; sampled: boolean; patterns: { template: string; example: string; count: number }[]; newSinceOnset?: { template: string }[] };
    expect(data.sampled).toBe(true);
    expect(data.patterns.length).toBeGreaterThan(0);
    expect(data.patterns.length).toBeLessThanOrEqual(40);
    expect(data.newSinceOnset?.[0]?.template).toContain('pool exhausted');
    // Raw lines appear only as one example per pattern.
    expect(text.match(/level=info msg=\\"request handled\\" method=GET path=\/api\/orders\/1/g)?.length ?? 0).toBeLessThanOrEqual(2);
    expect(res.evidence.length).toBeGreaterThanOrEqual(2);
    expect(res.evidence.every((e) => e.kind === 'log' && e.citation.source === 'loki')).toBe(true);
  });

  it('truncates to the context byte budget', async () => {
    const res = await tool.execute({ query: '{app="search"}', start: FROM.toISOString() }, ctx({ maxBytes: 2048 }));
    expect(res.status).toBe('success');
    if (res.status !== 'success') return;
    expect(res.truncated).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(res.data))).toBeLessThanOrEqual(2048);
  });

  it('reports bad LogQL as an error carrying Loki’s message', async () => {
    const res = await tool.execute({ query: '{app="checkout" |= "x"', start: '30m' }, ctx());
    expect(res).toMatchObject({ status: 'error', citation: { source: 'loki', ref: '{app="checkout" |= "x"' } });
    expect(res.status === 'error' && res.error).toMatch(/HTTP 400 parse error at line 1, col 17: syntax error: unexpected \|=/);
  });

  it('reports an empty result as no_data', async () => {
    const res = await tool.execute({ query: '{app="search"} |= "no such text"', start: '40m' }, ctx());
    expect(res).toMatchObject({ status: 'no_data', message: expect.stringContaining('no log lines matched') });
  });

  it('reports unreadable times without calling Loki', async () => {
    const before = loki.requests.length;
    expect(await tool.execute({ query: '{app="search"}', start: 'yesterday-ish' }, ctx())).toMatchObject({ status: 'error', error: expect.stringContaining('start "yesterday-ish"') });
    expect(await tool.execute({ query: '{app="search"}', start: 'now', end: '1h' }, ctx())).toMatchObject({ status: 'error', error: 'start must be before end' });
    expect(loki.requests.length).toBe(before);
  });
});

describe('parseTimeArg', () => {
  const now = new Date('2024-01-29T12:00:00Z');
  it.each([
    ['now', '2024-01-29T12:00:00.000Z'],
    ['30m', '2024-01-29T11:30:00.000Z'],
    ['-2h', '2024-01-29T10:00:00.000Z'],
    ['now-90s', '2024-01-29T11:58:30.000Z'],
    ['1d', '2024-01-28T12:00:00.000Z'],
    ['2024-01-29T09:15:00Z', '2024-01-29T09:15:00.000Z'],
  ])('%s', (input, iso) => {
    expect(parseTimeArg(input, now)?.toISOString()).toBe(iso);
  });
  it('rejects nonsense', () => {
    expect(parseTimeArg('soon', now)).toBeUndefined();
  });
});

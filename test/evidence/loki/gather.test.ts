import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LokiClient } from '../../../src/evidence/loki/client.js';
import { logSummaryEvidence } from '../../../src/evidence/loki/evidence.js';
import { ERROR_LINE_FILTER, gatherLogs } from '../../../src/evidence/loki/gather.js';
import { workloadSelectors } from '../../../src/evidence/loki/selectors.js';
import type { LogsEvidence } from '../../../src/evidence/loki/types.js';
import { OTHER_TEMPLATE } from '../../../src/evidence/logs/types.js';
import { createRedactor } from '../../../src/redact/index.js';
import { startFakeLoki, type FakeLoki } from '../../fakes/loki/server.js';
import { FROM, lokiWorld, ONSET, SECRETS, TO } from './world.js';

const NOW = new Date('2024-01-29T11:00:00Z');

describe('gatherLogs against a fake Loki', () => {
  let loki: FakeLoki;
  let client: LokiClient;
  let checkout: LogsEvidence;

  beforeAll(async () => {
    loki = await startFakeLoki({ streams: lokiWorld(), tenant: 'shop-team' });
    client = new LokiClient({ baseUrl: loki.url, tenant: 'shop-team' });
    checkout = await gatherLogs(client, { namespace: 'shop', workload: 'checkout' }, ONSET, { now: NOW });
  });
  afterAll(() => loki.close());

  it('finds the stream under the app.kubernetes.io/name convention and cites the exact LogQL', () => {
    const main = checkout.summaries[0]!;
    expect(main.status).toBe('success');
    expect(main.selector).toBe('{namespace="shop", app_kubernetes_io_name="checkout"}');
    expect(main.citation).toEqual({ source: 'loki', ref: main.query, range: { from: FROM, to: TO } });
    expect(main.range).toEqual({ from: FROM, to: TO });
    expect(loki.requests.some((r) => r.params.query === '{namespace="shop", app="checkout"}')).toBe(true);
  });

  it('samples the noisy window into at most 40 patterns and adds an error-lines read', () => {
    const [main, errors] = checkout.summaries;
    expect(main!.sampled).toBe(true);
    expect(main!.totalLines).toBeLessThanOrEqual(10_000);
    expect(main!.patterns.length).toBeLessThanOrEqual(40);
    expect(main!.patterns.length).toBeGreaterThanOrEqual(10);
    expect(errors!.query).toBe(`{namespace="shop", app_kubernetes_io_name="checkout"} ${ERROR_LINE_FILTER}`);
    expect(errors!.status).toBe('success');
    expect(errors!.patterns.every((p) => /error|fail|exception|fatal|panic/i.test(p.example))).toBe(true);
  });

  it('names what changed at the onset', () => {
    const main = checkout.summaries[0]!;
    const fresh = main.newSinceOnset.find((p) => p.template.includes('pool exhausted'));
    expect(fresh).toMatchObject({ level: 'error', template: 'ts=<TS> level=error msg="pool exhausted" db=orders waiting=<NUM>', change: { kind: 'new', countBefore: 0 } });
    expect(main.newSinceOnset.every((p) => !p.template.includes('request handled'))).toBe(true);
    expect(main.errorPatterns[0]?.level).toBe('error');
  });

  it('redacts every line before mining: no secret in any template, example or evidence', () => {
    const text = JSON.stringify([checkout, checkout.summaries.flatMap(logSummaryEvidence)]);
    for (const secret of Object.values(SECRETS)) expect(text).not.toContain(secret);
    expect(text).not.toContain('acme-shop.io');
    const main = checkout.summaries[0]!;
    const templates = main.patterns.map((p) => p.template);
    expect(templates).toContain('ts=<TS> level=error msg="s3 upload failed" bucket=receipts access_key=[REDACTED:aws_access_key]');
    expect(templates.some((t) => t.includes('msg="receipt mailed" to=[REDACTED:email]'))).toBe(true);
    expect(main.patterns.find((p) => p.template.includes('retrying call'))?.example).toMatch(/Bearer \[REDACTED:/);
  });

  it('folds a high-variety stream of 10k lines into at most 40 patterns', async () => {
    const ev = await gatherLogs(client, { namespace: 'shop', workload: 'search' }, ONSET, { now: NOW, redactor: createRedactor() });
    const main = ev.summaries[0]!;
    expect(main.selector).toBe('{namespace="shop", app="search"}');
    expect(main.patterns).toHaveLength(40);
    expect(main.patterns.at(-1)?.template).toBe(OTHER_TEMPLATE);
    expect(main.patterns.reduce((s, p) => s + p.count, 0)).toBe(main.totalLines);
  });

  it('reports no_data with every selector it tried', async () => {
    const before = loki.requests.length;
    const ev = await gatherLogs(client, { namespace: 'shop', workload: 'ghost', service: 'ghost-svc' }, ONSET, { now: NOW });
    const candidates = workloadSelectors({ namespace: 'shop', workload: 'ghost', service: 'ghost-svc' });
    expect(ev.summaries).toHaveLength(1);
    expect(ev.summaries[0]).toMatchObject({ status: 'no_data', totalLines: 0, patterns: [], tried: candidates });
    expect(loki.requests.slice(before).map((r) => r.params.query)).toEqual(candidates);
    expect(candidates).toContain('{job="shop/ghost"}');
    expect(candidates).toContain('{namespace="shop", pod=~"ghost-[a-z0-9]+(-[a-z0-9]+)?"}');
  });

  it('reports a Loki failure as an error summary, once', async () => {
    const before = loki.requests.length;
    const ev = await gatherLogs(new LokiClient({ baseUrl: loki.url }), { namespace: 'shop', workload: 'checkout' }, ONSET, { now: NOW });
    expect(ev.summaries).toEqual([expect.objectContaining({ status: 'error', error: expect.stringContaining('no org id') })]);
    expect(loki.requests.length - before).toBe(1);
  });

  it('never reads past now', async () => {
    const early = new Date(ONSET.getTime() + 2 * 60_000);
    const ev = await gatherLogs(client, { namespace: 'shop', workload: 'checkout' }, ONSET, { now: early, maxLines: 500 });
    expect(ev.summaries[0]!.range.to).toEqual(early);
  });
});

describe('workloadSelectors', () => {
  it('escapes values for LogQL strings and regexes', () => {
    const s = workloadSelectors({ namespace: 'we"ird', workload: 'a.b' });
    expect(s[0]).toBe('{namespace="we\\"ird", app="a.b"}');
    expect(s.at(-1)).toBe('{namespace="we\\"ird", pod=~"a\\\\.b-[a-z0-9]+(-[a-z0-9]+)?"}');
  });
});

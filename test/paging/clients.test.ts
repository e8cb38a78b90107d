/**
 * The paging clients against local fakes that speak and enforce the real APIs (test/fakes/pagerduty,
 * test/fakes/opsgenie): PagerDuty Events API v2 trigger/resolve with the dedup key, the 32-character routing key,
 * the 1024-character summary, 429 retried (honouring Retry-After); Opsgenie create/close by alias with the GenieKey,
 * the 130-character message, 429 retried, a wrong key refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpsgenieAlerts, PagerDutyEvents, PagingError, type PageRequest } from '../../src/paging/index.js';
import { pageSeverity } from '../../src/paging/types.js';
import { startFakeOpsgenie, type FakeOpsgenie } from '../fakes/opsgenie/server.js';
import { startFakePagerDuty, type FakePagerDuty } from '../fakes/pagerduty/server.js';

const ROUTING_KEY = 'R0123456789abcdef0123456789abcde';
const GENIE_KEY = 'eb243592-faa2-4ba2-a551-1afdf565c889';

const page = (over: Partial<PageRequest> = {}): PageRequest => ({
  dedupKey: 'cmincident0001',
  summary: 'Vigil needs a human: [FIRING:1] KubeDeploymentReplicasMismatch (checkout shop critical) — no hypothesis is supported by evidence',
  source: 'shop/checkout',
  severity: 'critical',
  threadLink: 'https://acme.slack.com/archives/C0ALERTS/p1764430100000200',
  details: { incident: 'cmincident0001', reason: 'no hypothesis is supported by evidence' },
  ...over,
});

describe('PagerDutyEvents', () => {
  let fake: FakePagerDuty;
  const waits: number[] = [];
  const client = (routingKey = ROUTING_KEY) => new PagerDutyEvents({ routingKey, baseUrl: fake.url, sleep: async (ms) => void waits.push(ms) });
  beforeAll(async () => {
    fake = await startFakePagerDuty({ routingKeys: [ROUTING_KEY] });
  });
  afterAll(async () => fake.close());

  it('triggers one alert per dedup key with summary, source, severity, details and the thread link; resolves it', async () => {
    await client().trigger(page());
    await client().trigger(page()); // the same incident again: joins the open alert, no second page
    expect(fake.alerts).toHaveLength(1);
    expect(fake.alerts[0]).toMatchObject({
      dedupKey: 'cmincident0001',
      status: 'triggered',
      severity: 'critical',
      source: 'shop/checkout',
      pages: 1,
      triggers: 2,
      links: [{ href: 'https://acme.slack.com/archives/C0ALERTS/p1764430100000200', text: expect.any(String) }],
      customDetails: { reason: 'no hypothesis is supported by evidence' },
    });
    await client().resolve('cmincident0001');
    expect(fake.alerts[0]!.status).toBe('resolved');
    expect(fake.requests.every((r) => r.status === 202)).toBe(true);
  });

  it('cuts a summary to the 1024 characters PagerDuty accepts', async () => {
    await client().trigger(page({ dedupKey: 'long-summary', summary: 'x'.repeat(5000) }));
    expect(fake.alerts.find((a) => a.dedupKey === 'long-summary')!.summary).toHaveLength(1024);
  });

  it('reports a refused event with PagerDuty’s reason (a routing key that is not 32 characters)', async () => {
    const err = await client('short-key').trigger(page()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PagingError);
    expect((err as PagingError).status).toBe(400);
    expect((err as PagingError).message).toMatch(/Length of 'routing_key' is incorrect \(should be 32 characters\)/);
  });

  it('retries a 429, waiting as Retry-After says', async () => {
    waits.length = 0;
    fake.throttleNext(2, 3);
    await client().trigger(page({ dedupKey: 'throttled' }));
    expect(waits).toEqual([3000, 3000]);
    expect(fake.alerts.find((a) => a.dedupKey === 'throttled')).toBeDefined();
  });

  it('gives up after its attempts when PagerDuty keeps throttling', async () => {
    waits.length = 0;
    fake.throttleNext(10);
    const err = await client().trigger(page({ dedupKey: 'given-up' })).catch((e: unknown) => e);
    expect((err as PagingError).status).toBe(429);
    expect(waits).toEqual([500, 1000, 2000]);
    fake.throttleNext(0);
  });
});

describe('OpsgenieAlerts', () => {
  let fake: FakeOpsgenie;
  const waits: number[] = [];
  const client = (apiKey = GENIE_KEY) => new OpsgenieAlerts({ apiKey, baseUrl: fake.url, sleep: async (ms) => void waits.push(ms) });
  beforeAll(async () => {
    fake = await startFakeOpsgenie({ apiKeys: [GENIE_KEY] });
  });
  afterAll(async () => fake.close());

  it('creates one alert per alias (message ≤130, P1 for critical, the thread in details), and closes it by alias', async () => {
    await client().trigger(page());
    await client().trigger(page());
    expect(fake.alerts).toHaveLength(1);
    const alert = fake.alerts[0]!;
    expect(alert).toMatchObject({ alias: 'cmincident0001', priority: 'P1', entity: 'shop/checkout', source: 'Vigil', status: 'open', count: 2 });
    expect(alert.message.length).toBeLessThanOrEqual(130);
    expect(alert.details['thread']).toBe('https://acme.slack.com/archives/C0ALERTS/p1764430100000200');
    expect(alert.description).toMatch(/Thread: https:\/\/acme\.slack\.com/);
    expect(fake.requests[0]!.auth).toBe(`GenieKey ${GENIE_KEY}`);
    await client().resolve('cmincident0001', 'The incident resolved');
    expect(alert).toMatchObject({ status: 'closed', closeNote: 'The incident resolved' });
    expect(fake.requests.at(-1)!.path).toBe('/v2/alerts/cmincident0001/close?identifierType=alias');
  });

  it('reports a wrong key (401) with Opsgenie’s message, and retries a 429', async () => {
    const err = await client('not-a-key-0000000000').trigger(page()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PagingError);
    expect((err as PagingError).message).toMatch(/HTTP 401.*Could not authenticate/);
    waits.length = 0;
    fake.throttleNext(1);
    await client().trigger(page({ dedupKey: 'after-throttle' }));
    expect(waits).toEqual([500]);
    expect(fake.alerts.find((a) => a.alias === 'after-throttle')).toBeDefined();
  });
});

describe('pageSeverity', () => {
  it('maps the alert severity words to PagerDuty severities', () => {
    expect(['critical', 'P1', 'high', 'sev1'].map(pageSeverity)).toEqual(['critical', 'critical', 'critical', 'critical']);
    expect(['warning', 'P3', 'low'].map(pageSeverity)).toEqual(['warning', 'warning', 'warning']);
    expect(['info', 'p5'].map(pageSeverity)).toEqual(['info', 'info']);
    expect([undefined, 'p2', 'whatever'].map(pageSeverity)).toEqual(['error', 'error', 'error']);
  });
});

import { LogLevel, WebAPIHTTPError, WebAPIPlatformError, WebAPIRateLimitedError, WebClient } from '@slack/web-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeSlack, type FakeSlack } from './index.js';

let fake: FakeSlack;
let limited: FakeSlack;

const clientFor = (f: FakeSlack, extra: ConstructorParameters<typeof WebClient>[1] = {}) =>
  new WebClient(f.botToken, { slackApiUrl: f.apiUrl, retryConfig: { retries: 0 }, logLevel: LogLevel.ERROR, ...extra });
const caught = (call: Promise<unknown>) => call.then(() => undefined, (e: unknown) => e);

beforeAll(async () => {
  fake = await startFakeSlack();
  limited = await startFakeSlack({ postRatePerChannel: { perSecond: 1, burst: 2 } });
});

afterAll(async () => {
  await Promise.all([fake.close(), limited.close()]);
});

describe('fake Slack error injection', () => {
  it('failNext answers {ok:false, error} for the next calls of one method only', async () => {
    const client = clientFor(fake);
    fake.failNext('chat.postMessage', { error: 'channel_not_found', times: 2 });
    for (let i = 0; i < 2; i += 1) {
      const error = await caught(client.chat.postMessage({ channel: 'C1', text: 'x' }));
      expect(error).toBeInstanceOf(WebAPIPlatformError);
      expect((error as WebAPIPlatformError).data.error).toBe('channel_not_found');
    }
    await client.auth.test();
    expect((await client.chat.postMessage({ channel: 'C1', text: 'x' })).ok).toBe(true);
  });

  it('failNext with an HTTP status surfaces as WebAPIHTTPError', async () => {
    fake.failNext('conversations.replies', { error: 'internal_error', status: 503 });
    const error = await caught(clientFor(fake).conversations.replies({ channel: 'C1', ts: '1.1' }));
    expect(error).toBeInstanceOf(WebAPIHTTPError);
    expect((error as WebAPIHTTPError).statusCode).toBe(503);
  });

  it('rateLimitNext answers 429 with Retry-After and ratelimited', async () => {
    fake.rateLimitNext('chat.update', { retryAfterSec: 7 });
    const response = await fetch(`${fake.apiUrl}chat.update`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${fake.botToken}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'channel=C1&ts=1.1&text=x',
    });
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('7');
    expect(await response.json()).toEqual({ ok: false, error: 'ratelimited' });
  });

  it('WebClient with rejectRateLimitedCalls surfaces WebAPIRateLimitedError with retryAfter', async () => {
    const before = fake.rateLimitedCount;
    fake.rateLimitNext('chat.postMessage', { retryAfterSec: 30 });
    const error = await caught(clientFor(fake, { rejectRateLimitedCalls: true }).chat.postMessage({ channel: 'C1', text: 'x' }));
    expect(error).toBeInstanceOf(WebAPIRateLimitedError);
    expect((error as WebAPIRateLimitedError).retryAfter).toBe(30);
    expect(fake.rateLimitedCount).toBe(before + 1);
  });

  it('WebClient waits Retry-After then retries and succeeds', async () => {
    fake.rateLimitNext('chat.postMessage', { retryAfterSec: 1 });
    const started = Date.now();
    const client = clientFor(fake, { retryConfig: { retries: 1, minTimeout: 0, maxTimeout: 0 } });
    const result = await client.chat.postMessage({ channel: 'C2', text: 'after retry' });
    expect(result.ok).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(fake.callsTo('chat.postMessage').filter((c) => c.body.channel === 'C2').map((c) => c.response?.status)).toEqual([429, 200]);
  });

  it('enforces the optional per-channel post rate (burst, then 429) and counts it', async () => {
    const client = clientFor(limited, { rejectRateLimitedCalls: true });
    await client.chat.postMessage({ channel: 'C1', text: '1' });
    await client.chat.postMessage({ channel: 'C1', text: '2' });
    const error = await caught(client.chat.postMessage({ channel: 'C1', text: '3' }));
    expect(error).toBeInstanceOf(WebAPIRateLimitedError);
    expect((error as WebAPIRateLimitedError).retryAfter).toBeGreaterThanOrEqual(1);
    await client.chat.postMessage({ channel: 'C2', text: 'other channel has its own bucket' });
    expect(limited.rateLimitedCount).toBe(1);
    expect(limited.messages('C1').map((m) => m.text)).toEqual(['1', '2']);
  });
});

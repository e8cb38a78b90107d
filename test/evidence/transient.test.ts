import { describe, expect, it } from 'vitest';
import { isNetworkFailure, isTransientStatus, retryAfterMs, TransientSourceError } from '../../src/evidence/transient.js';
import { retryDelayMs } from '../../src/incidents/runner.js';
import { postOutcome } from '../../src/slack/chat.js';

describe('transient failures', () => {
  it('reads Retry-After as seconds or an HTTP date, whatever the header case', () => {
    expect(retryAfterMs({ 'Retry-After': '3' })).toBe(3000);
    expect(retryAfterMs({ 'retry-after': ['7'] })).toBe(7000);
    const now = Date.parse('2026-12-02T06:00:00Z');
    expect(retryAfterMs({ 'retry-after': 'Wed, 02 Dec 2026 06:00:10 GMT' }, now)).toBe(10_000);
    expect(retryAfterMs({ 'retry-after': 'soon' })).toBeUndefined();
    expect(retryAfterMs({})).toBeUndefined();
  });

  it('tells "try later" from "no"', () => {
    for (const c of [408, 425, 429, 500, 502, 503, 504]) expect(isTransientStatus(c)).toBe(true);
    for (const c of [400, 401, 403, 404, 409, 422, 501, undefined]) expect(isTransientStatus(c)).toBe(false);
    expect(isNetworkFailure(Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isNetworkFailure(new DOMException('The operation was aborted due to timeout', 'TimeoutError'))).toBe(true);
    expect(isNetworkFailure(new Error('Forbidden'))).toBe(false);
  });

  it('backs off exponentially, never shorter than what the service asked, never longer than five minutes', () => {
    expect([1, 2, 3, 4, 7, 20].map((a) => retryDelayMs(a))).toEqual([500, 1000, 2000, 4000, 30_000, 30_000]);
    expect(retryDelayMs(1, 5000)).toBe(5000);
    expect(retryDelayMs(4, 1000)).toBe(4000);
    expect(retryDelayMs(1, 3_600_000)).toBe(300_000);
    expect(new TransientSourceError('kubernetes', 'list pods: HTTP 429', 2000).message).toBe('kubernetes is unavailable for now (list pods: HTTP 429); it asked to retry after 2 s');
  });

  it('classifies a failed post by whether Slack may have stored it', () => {
    expect(postOutcome({ code: 'slack_webapi_platform_error', data: { error: 'channel_not_found' } })).toBe('refused');
    expect(postOutcome({ code: 'slack_webapi_http_error', statusCode: 400 })).toBe('refused');
    expect(postOutcome({ code: 'slack_webapi_http_error', statusCode: 503 })).toBe('unknown');
    expect(postOutcome({ code: 'slack_webapi_request_error', original: new Error('timeout') })).toBe('unknown');
    expect(postOutcome(new Error('A rate limit was exceeded (url: chat.postMessage, retry-after: 1)'))).toBe('ratelimited');
  });
});

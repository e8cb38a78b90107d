/**
 * Error injection and rate limiting. A 429 carries `Retry-After` (seconds) and `{ ok:false, error:'ratelimited' }`,
 * which `@slack/web-api` turns into a pause-and-retry or, with `rejectRateLimitedCalls`, a WebAPIRateLimitedError
 * (PLATFORM-FACTS A4). Slack's chat.postMessage allows about 1 message/second/channel with short bursts.
 */
import { strParam } from './request.js';
import type { ApiReply, Params } from './types.js';

export interface FailSpec {
  /** The Slack error code to answer, e.g. 'channel_not_found', 'internal_error'. */
  error: string;
  /** HTTP status; default 200 like Slack. Anything else makes WebClient throw WebAPIHTTPError. */
  status?: number;
  /** How many consecutive calls fail; default 1. */
  times?: number;
}

/** Answer late: the call is processed as usual, its answer is sent `ms` later (a slow or stuck Slack). */
export interface DelaySpec {
  ms: number;
  /** How many consecutive calls are late; default 1. */
  times?: number;
}

export interface RateLimitSpec {
  retryAfterSec: number;
  /** Default 1. */
  times?: number;
}

/** Token bucket per channel: `burst` posts at once, refilled at `perSecond`. */
export interface PostRate {
  perSecond: number;
  burst: number;
}

interface Pending<T> {
  spec: T;
  remaining: number;
}

export function rateLimitedReply(retryAfterSec: number): ApiReply {
  return {
    status: 429,
    headers: { 'Retry-After': String(retryAfterSec) },
    body: { ok: false, error: 'ratelimited' },
    rateLimited: true,
  };
}

export class Faults {
  private readonly failures = new Map<string, Pending<FailSpec>[]>();
  private readonly rateLimits = new Map<string, Pending<RateLimitSpec>[]>();
  private readonly delays = new Map<string, Pending<DelaySpec>[]>();
  private readonly buckets = new Map<string, { tokens: number; updatedAt: number }>();

  constructor(private readonly postRate?: PostRate) {}

  failNext(method: string, spec: FailSpec): void {
    enqueue(this.failures, method, { spec, remaining: spec.times ?? 1 });
  }

  rateLimitNext(method: string, spec: RateLimitSpec): void {
    enqueue(this.rateLimits, method, { spec, remaining: spec.times ?? 1 });
  }

  delayNext(method: string, spec: DelaySpec): void {
    enqueue(this.delays, method, { spec, remaining: spec.times ?? 1 });
  }

  /** How late this call's answer is sent (ms, 0 = at once); consumes one use of the matching delay. */
  takeDelay(method: string): number {
    return consume(this.delays, method)?.ms ?? 0;
  }

  /** The injected or rate-limited answer for this call, if any; consumes one use of the matching injection. */
  take(method: string, params: Params, now: number): ApiReply | undefined {
    const limited = consume(this.rateLimits, method);
    if (limited) return rateLimitedReply(limited.retryAfterSec);
    const failure = consume(this.failures, method);
    if (failure) return { status: failure.status ?? 200, body: { ok: false, error: failure.error } };
    if (method === 'chat.postMessage' && this.postRate) {
      const channel = strParam(params.channel);
      if (channel) return this.spendPostToken(channel, now, this.postRate);
    }
    return undefined;
  }

  private spendPostToken(channel: string, now: number, rate: PostRate): ApiReply | undefined {
    const bucket = this.buckets.get(channel) ?? { tokens: rate.burst, updatedAt: now };
    bucket.tokens = Math.min(rate.burst, bucket.tokens + ((now - bucket.updatedAt) / 1000) * rate.perSecond);
    bucket.updatedAt = now;
    this.buckets.set(channel, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return undefined;
    }
    return rateLimitedReply(Math.max(1, Math.ceil((1 - bucket.tokens) / rate.perSecond)));
  }
}

function enqueue<T>(map: Map<string, Pending<T>[]>, method: string, pending: Pending<T>): void {
  map.set(method, [...(map.get(method) ?? []), pending]);
}

function consume<T>(map: Map<string, Pending<T>[]>, method: string): T | undefined {
  const queue = map.get(method);
  const head = queue?.[0];
  if (!queue || !head) return undefined;
  head.remaining -= 1;
  if (head.remaining <= 0) queue.shift();
  return head.spec;
}

/**
 * Loki's query API over `fetch` (https://grafana.com/docs/loki/latest/reference/loki-http-api/):
 * `GET /loki/api/v1/query_range` with ns-epoch `start` (inclusive) and `end` (exclusive), `limit`,
 * `direction`; multi-tenant servers need `X-Scope-OrgID`. Errors come back as plain text (a LogQL parse
 * error is a 400 `parse error at line 1, col N: …`), so they are read as text first.
 */
import { z } from 'zod';
import { LokiError } from './errors.js';
import { readLogs, type ReadLogsParams } from './read-logs.js';
import { parseQueryResponse } from './response.js';
import type { LokiLogRead, LokiQueryRangeParams, LokiQueryResult } from './types.js';

export { LokiError } from './errors.js';
export type { ReadLogsParams } from './read-logs.js';

export type LokiAuth = { type: 'bearer'; token: string } | { type: 'basic'; username: string; password: string };

export interface LokiClientOptions {
  /** e.g. `http://loki-gateway.monitoring:3100` (a path prefix is kept). */
  baseUrl: string;
  /** Sent as `X-Scope-OrgID`. */
  tenant?: string;
  auth?: LokiAuth;
  /** Per request, default 20 s. */
  timeoutMs?: number;
  /** Extra attempts after a 5xx or a network failure, default 2. */
  retries?: number;
  /** First backoff, doubled per retry, default 250 ms. */
  retryDelayMs?: number;
  fetch?: typeof fetch;
}

const LabelsEnvelope = z.object({ status: z.literal('success'), data: z.array(z.string()).optional().default([]) });

const NS_PER_MS = 1_000_000n;
/** Loki's ns epoch; a bigint is taken as already in ns. */
export const toNs = (t: Date | bigint): bigint => (typeof t === 'bigint' ? t : BigInt(t.getTime()) * NS_PER_MS);

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      reject(signal.reason);
    }, { once: true });
  });

export class LokiClient {
  readonly baseUrl: string;
  private readonly fetchFn: typeof fetch;

  constructor(private readonly opts: LokiClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.fetchFn = opts.fetch ?? fetch;
  }

  /** One `query_range` call. Throws `LokiError`. */
  async queryRange(p: LokiQueryRangeParams): Promise<LokiQueryResult> {
    const params: Record<string, string> = {
      query: p.query,
      start: toNs(p.start).toString(),
      end: toNs(p.end).toString(),
      direction: p.direction ?? 'backward',
    };
    if (p.limit !== undefined) params.limit = String(p.limit);
    if (p.step !== undefined) params.step = p.step;
    const path = '/loki/api/v1/query_range';
    const body = await this.get(path, params, p.signal);
    return parseQueryResponse(body, (msg) => new LokiError(200, msg, path));
  }

  /** Label names seen in a window (`/loki/api/v1/labels`). */
  async labels(range?: { start: Date; end: Date }, signal?: AbortSignal): Promise<string[]> {
    const path = '/loki/api/v1/labels';
    return this.parseLabels(path, await this.get(path, rangeParams(range), signal));
  }

  /** Values of one label (`/loki/api/v1/label/<name>/values`), optionally within a stream selector. */
  async labelValues(name: string, opts: { start?: Date; end?: Date; query?: string; signal?: AbortSignal } = {}): Promise<string[]> {
    const path = `/loki/api/v1/label/${encodeURIComponent(name)}/values`;
    const params = rangeParams(opts.start && opts.end ? { start: opts.start, end: opts.end } : undefined);
    if (opts.query) params.query = opts.query;
    return this.parseLabels(path, await this.get(path, params, opts.signal));
  }

  /** Read a log query's lines over a window, sampled when noisy: see `readLogs` in `read-logs.ts`. */
  readLogs(p: ReadLogsParams): Promise<LokiLogRead> {
    return readLogs(this, p);
  }

  private parseLabels(path: string, body: unknown): string[] {
    const parsed = LabelsEnvelope.safeParse(body);
    if (!parsed.success) throw new LokiError(200, `unexpected response: ${parsed.error.issues[0]?.message ?? 'invalid'}`, path);
    return parsed.data.data;
  }

  private headers(): Record<string, string> {
    const h: Record<string, string> = { accept: 'application/json' };
    if (this.opts.tenant) h['x-scope-orgid'] = this.opts.tenant;
    const auth = this.opts.auth;
    if (auth?.type === 'bearer') h.authorization = `Bearer ${auth.token}`;
    if (auth?.type === 'basic') h.authorization = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
    return h;
  }

  /** GET with timeout and retries on 5xx / network failure; returns parsed JSON or throws `LokiError`. */
  private async get(path: string, params: Record<string, string>, signal?: AbortSignal): Promise<unknown> {
    const url = `${this.baseUrl}${path}?${new URLSearchParams(params).toString()}`;
    const retries = this.opts.retries ?? 2;
    let lastError: LokiError | undefined;
    for (let attempt = 0; attempt <= retries; attempt++) {
      if (attempt > 0) await sleep((this.opts.retryDelayMs ?? 250) * 2 ** (attempt - 1), signal).catch(() => {
        throw new LokiError(undefined, 'aborted', path);
      });
      const timeout = AbortSignal.timeout(this.opts.timeoutMs ?? 20_000);
      let res: Response;
      try {
        res = await this.fetchFn(url, { headers: this.headers(), signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
      } catch (err) {
        if (signal?.aborted) throw new LokiError(undefined, 'aborted', path);
        lastError = new LokiError(undefined, timeout.aborted ? `timed out after ${this.opts.timeoutMs ?? 20_000} ms` : describeFetchError(err), path);
        continue;
      }
      const text = await res.text();
      if (res.ok) {
        try {
          return JSON.parse(text) as unknown;
        } catch {
          throw new LokiError(res.status, `response is not JSON: ${text.slice(0, 200)}`, path);
        }
      }
      const error = new LokiError(res.status, errorMessage(text), path);
      if (res.status < 500) throw error;
      lastError = error;
    }
    throw lastError ?? new LokiError(undefined, 'request failed', path);
  }
}

function rangeParams(range?: { start: Date; end: Date }): Record<string, string> {
  return range ? { start: toNs(range.start).toString(), end: toNs(range.end).toString() } : {};
}

/** Loki answers errors in plain text; some proxies (and older versions) send `{"message"|"error": …}`. */
function errorMessage(text: string): string {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    try {
      const o = JSON.parse(trimmed) as { error?: unknown; message?: unknown };
      const m = o.error ?? o.message;
      if (typeof m === 'string') return m;
    } catch {
      // not JSON after all: fall through to the text
    }
  }
  return trimmed.slice(0, 500) || 'empty error body';
}

function describeFetchError(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}

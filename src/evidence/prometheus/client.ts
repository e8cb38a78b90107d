/**
 * A small Prometheus HTTP API client (`/api/v1/query`, `/api/v1/query_range`) over Node's global `fetch`.
 *
 * Outside facts it relies on (prometheus.io/docs/prometheus/latest/querying/api):
 * - The envelope is `{status:'success'|'error', data?:{resultType, result}, errorType?, error?, warnings?, infos?}`.
 * - Sample values are strings (`"NaN"`, `"+Inf"`, `"-Inf"` occur); timestamps are unix seconds (floats).
 * - Errors: 400 `bad_data`, 422 `execution`, 503 `timeout`/`canceled`, 500 `internal`. Only 5xx is retried.
 * - Both endpoints accept POST with a form-encoded body, which avoids URL length limits for long PromQL.
 */
import { z } from 'zod';

export type PrometheusErrorType =
  | 'bad_data'
  | 'execution'
  | 'timeout'
  | 'canceled'
  | 'internal'
  | 'unavailable'
  | 'not_found'
  /** The request never got an HTTP answer (refused, reset, DNS). */
  | 'network'
  /** Our own deadline (`timeoutMs`) passed. */
  | 'client_timeout'
  /** The caller's signal aborted the request. */
  | 'aborted'
  /** An HTTP answer that is not a Prometheus envelope (a proxy's HTML page, a 401 from an auth gateway). */
  | 'bad_response'
  | (string & {});

export class PrometheusError extends Error {
  override readonly name = 'PrometheusError';
  constructor(
    message: string,
    readonly errorType: PrometheusErrorType,
    /** HTTP status, when an HTTP answer arrived. */
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface PrometheusClientOptions {
  /** Where Vigil reaches Prometheus, e.g. `http://prometheus.monitoring:9090` (a path prefix is kept). */
  baseUrl: string;
  /** The URL humans open (for citation links); when unset, citations carry no link. */
  publicUrl?: string;
  bearerToken?: string;
  basicAuth?: { username: string; password: string };
  /** Extra headers, e.g. `X-Scope-OrgID` for Mimir/Cortex/Thanos tenants. */
  headers?: Record<string, string>;
  /** Per-attempt deadline; default 15 s. Also sent as Prometheus' own `timeout` parameter. */
  timeoutMs?: number;
  /** Retries after a 5xx or network error; default 2. */
  retries?: number;
  /** First backoff; doubles per retry. Default 250 ms. */
  retryDelayMs?: number;
}

/** `[unix seconds, "value"]` as Prometheus sends it. */
export type RawSample = [number, string];

export interface VectorSeries {
  metric: Record<string, string>;
  value: RawSample;
}

export interface MatrixSeries {
  metric: Record<string, string>;
  values: RawSample[];
}

export type InstantData =
  | { resultType: 'vector'; result: VectorSeries[] }
  | { resultType: 'matrix'; result: MatrixSeries[] }
  | { resultType: 'scalar'; result: RawSample }
  | { resultType: 'string'; result: RawSample };

export interface QueryResponse<D> {
  data: D;
  /** Prometheus' warnings and infos (e.g. partial data from a remote read). */
  warnings: string[];
}

const sample = z.tuple([z.number(), z.string()]);
const labels = z.record(z.string(), z.string());
const vectorData = z.object({ resultType: z.literal('vector'), result: z.array(z.object({ metric: labels, value: sample })) });
const matrixData = z.object({ resultType: z.literal('matrix'), result: z.array(z.object({ metric: labels, values: z.array(sample) })) });
const instantData = z.discriminatedUnion('resultType', [
  vectorData,
  matrixData,
  z.object({ resultType: z.literal('scalar'), result: sample }),
  z.object({ resultType: z.literal('string'), result: sample }),
]);
const envelope = z.object({
  status: z.enum(['success', 'error']),
  data: z.unknown().optional(),
  errorType: z.string().optional(),
  error: z.string().optional(),
  warnings: z.array(z.string()).optional(),
  infos: z.array(z.string()).optional(),
});

const seriesData = z.array(z.record(z.string(), z.string()));

/** Unix seconds with millisecond precision, the form Prometheus parses. */
export function promTime(d: Date): string {
  return (d.getTime() / 1000).toFixed(3);
}

export class PrometheusClient {
  readonly baseUrl: string;
  readonly publicUrl: string | undefined;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly retryDelayMs: number;

  constructor(options: PrometheusClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.publicUrl = options.publicUrl?.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? 15_000;
    this.retries = options.retries ?? 2;
    this.retryDelayMs = options.retryDelayMs ?? 250;
    this.headers = { accept: 'application/json', ...options.headers };
    if (options.bearerToken) this.headers.authorization = `Bearer ${options.bearerToken}`;
    else if (options.basicAuth)
      this.headers.authorization = `Basic ${Buffer.from(`${options.basicAuth.username}:${options.basicAuth.password}`).toString('base64')}`;
  }

  /** Instant query at `time` (default: the server's now). */
  async query(promql: string, time?: Date, opts: { signal?: AbortSignal } = {}): Promise<QueryResponse<InstantData>> {
    const params: Record<string, string> = { query: promql };
    if (time) params.time = promTime(time);
    return this.call('/api/v1/query', params, instantData, opts.signal);
  }

  /** Range query; `stepSeconds` must keep `(end - start) / step` at or under 11,000 points (Prometheus' limit). */
  async queryRange(
    promql: string,
    start: Date,
    end: Date,
    stepSeconds: number,
    opts: { signal?: AbortSignal } = {},
  ): Promise<QueryResponse<{ resultType: 'matrix'; result: MatrixSeries[] }>> {
    const params = { query: promql, start: promTime(start), end: promTime(end), step: String(stepSeconds) };
    return this.call('/api/v1/query_range', params, matrixData, opts.signal);
  }

  /**
   * The series matching any of `matchers` in a range (`/api/v1/series`): what exists, before deciding
   * what to query. Each matcher is a series selector, e.g. `{__name__=~"http_.*",namespace="shop"}`.
   */
  async series(matchers: string[], start: Date, end: Date, opts: { signal?: AbortSignal } = {}): Promise<QueryResponse<Record<string, string>[]>> {
    const params: [string, string][] = [...matchers.map((m): [string, string] => ['match[]', m]), ['start', promTime(start)], ['end', promTime(end)]];
    return this.call('/api/v1/series', params, seriesData, opts.signal);
  }

  /** A link to Prometheus' graph page showing `promql` over `range`, or undefined without a public URL. */
  graphUrl(promql: string, range?: { from: Date; to: Date }, stepSeconds?: number): string | undefined {
    if (!this.publicUrl) return undefined;
    const q = new URLSearchParams({ 'g0.expr': promql, 'g0.tab': '0' });
    if (range) {
      q.set('g0.range_input', `${Math.max(1, Math.ceil((range.to.getTime() - range.from.getTime()) / 1000))}s`);
      // The classic UI reads end_input as UTC "YYYY-MM-DD HH:MM:SS".
      q.set('g0.end_input', range.to.toISOString().slice(0, 19).replace('T', ' '));
      if (stepSeconds) q.set('g0.step_input', String(stepSeconds));
    }
    return `${this.publicUrl}/graph?${q.toString()}`;
  }

  private async call<D>(path: string, params: Record<string, string> | [string, string][], schema: z.ZodType<D>, signal?: AbortSignal): Promise<QueryResponse<D>> {
    // Ask Prometheus to give up a little before we do, so the answer is its own `timeout` error
    // (a bare number means seconds; Prometheus' duration syntax has no fractions).
    const body = new URLSearchParams(Array.isArray(params) ? params : Object.entries(params));
    if (path !== '/api/v1/series') body.set('timeout', String(Math.max(1, Math.floor(this.timeoutMs * 0.9) / 1000)));
    let lastError: PrometheusError | undefined;
    for (let attempt = 0; attempt <= this.retries; attempt++) {
      if (attempt > 0) await sleep(this.retryDelayMs * 2 ** (attempt - 1), signal);
      try {
        return await this.attempt(path, body, schema, signal);
      } catch (error) {
        if (!(error instanceof PrometheusError)) throw error;
        lastError = error;
        const retryable = error.errorType === 'network' || (error.status !== undefined && error.status >= 500);
        if (!retryable) throw error;
      }
    }
    throw lastError!;
  }

  private async attempt<D>(path: string, body: URLSearchParams, schema: z.ZodType<D>, signal?: AbortSignal): Promise<QueryResponse<D>> {
    const timeout = AbortSignal.timeout(this.timeoutMs);
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}${path}`, {
        method: 'POST',
        headers: { ...this.headers, 'content-type': 'application/x-www-form-urlencoded' },
        body,
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (error) {
      if (signal?.aborted) throw new PrometheusError('Prometheus request aborted', 'aborted');
      if (timeout.aborted) throw new PrometheusError(`Prometheus did not answer within ${this.timeoutMs} ms`, 'client_timeout');
      const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
      throw new PrometheusError(`Prometheus unreachable at ${this.baseUrl}${cause}`, 'network');
    }
    const text = await response.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new PrometheusError(`Prometheus answered HTTP ${response.status} with a non-JSON body: ${text.slice(0, 200)}`, 'bad_response', response.status);
    }
    const parsed = envelope.safeParse(json);
    if (!parsed.success) {
      throw new PrometheusError(`Prometheus answered HTTP ${response.status} with an unexpected body: ${text.slice(0, 200)}`, 'bad_response', response.status);
    }
    const env = parsed.data;
    if (env.status === 'error' || !response.ok) {
      const errorType = env.errorType ?? (response.status >= 500 ? 'internal' : 'bad_response');
      throw new PrometheusError(env.error ?? `HTTP ${response.status}`, errorType, response.status);
    }
    const data = schema.safeParse(env.data);
    if (!data.success) {
      throw new PrometheusError(`Prometheus returned data of an unexpected shape: ${data.error.message.slice(0, 300)}`, 'bad_response', response.status);
    }
    return { data: data.data, warnings: [...(env.warnings ?? []), ...(env.infos ?? [])] };
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new PrometheusError('Prometheus request aborted', 'aborted'));
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(new PrometheusError('Prometheus request aborted', 'aborted'));
      },
      { once: true },
    );
  });
}

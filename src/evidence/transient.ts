/**
 * A source that is down for a moment (HTTP 429/5xx, a timeout, a refused connection) is not evidence of
 * anything: an investigation that read nothing because the API server was overloaded must be retried,
 * not reported as "no hypotheses". Analyzers never see this error; the runner retries the step with
 * backoff, waiting at least what the service asked for (`Retry-After`, or the Kubernetes Status
 * `details.retryAfterSeconds`).
 */
export class TransientSourceError extends Error {
  constructor(
    readonly source: string,
    detail: string,
    /** What the service asked us to wait, when it said. */
    readonly retryAfterMs?: number,
  ) {
    super(`${source} is unavailable for now (${detail})${retryAfterMs !== undefined ? `; it asked to retry after ${Math.ceil(retryAfterMs / 1000)} s` : ''}`);
    this.name = 'TransientSourceError';
  }
}

/** Statuses that say "try again later" rather than "no" (RFC 9110; 408/425 included, 501 not). */
export function isTransientStatus(code: number | undefined): boolean {
  return code === 408 || code === 425 || code === 429 || code === 500 || code === 502 || code === 503 || code === 504;
}

/** Node's and undici's network failures: nothing answered, or the answer never finished. */
export function isNetworkFailure(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err.name === 'AbortError' || err.name === 'TimeoutError') return true;
  const code = (err as { code?: unknown }).code ?? (err.cause as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EAI_AGAIN|ENOTFOUND|UND_ERR_\w+)$/.test(code)) return true;
  return /fetch failed|socket hang up|timed? ?out|network/i.test(err.message);
}

/**
 * `Retry-After` as delay-seconds or an HTTP date (RFC 9110 §10.2.3), in ms from `now`; undefined when
 * absent or unreadable. Header names are matched case-insensitively.
 */
export function retryAfterMs(headers: Record<string, string | string[] | undefined> | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const key = Object.keys(headers).find((k) => k.toLowerCase() === 'retry-after');
  const raw = key ? headers[key] : undefined;
  const value = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

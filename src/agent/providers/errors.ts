/**
 * How a failed model call is reported to the loop. Both SDKs (Stainless-generated) share one error shape:
 * `APIError` with `.status`, `APIConnectionError`, `APIConnectionTimeoutError` (a connection error),
 * `APIUserAbortError`. Each provider turns its SDK's error into a {@link ModelFailure}; this module decides
 * what the loop sees.
 *
 * - Transient (the SDK already retried 408/409/429/5xx/529, timeouts and connection errors with backoff)
 *   → {@link ModelUnavailableError}: the investigation can degrade gracefully ("model unavailable").
 * - 401/403/404 → {@link ModelConfigurationError}: a wrong key, a key without access, or a model name the
 *   account cannot use. Retrying never helps; the operator must fix configuration, so say it plainly.
 * - Other 4xx (400, 413, 422) → {@link ModelRequestError}: the request itself was refused (too long, or a
 *   shape the model rejects). A bug or an oversized context, not an outage.
 * - An abort through `ModelRequest.signal` is rethrown as the signal's reason (the caller asked for it).
 */
import { ModelUnavailableError } from '../types.js';

/** The API key, its permissions or the model name are wrong: the operator must change configuration. */
export class ModelConfigurationError extends Error {
  constructor(
    readonly provider: string,
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ModelConfigurationError';
  }
}

/** The provider refused this request (400/413/422); retrying the same request will fail again. */
export class ModelRequestError extends Error {
  constructor(
    readonly provider: string,
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ModelRequestError';
  }
}

export type ModelFailure =
  | { kind: 'status'; status: number; message: string }
  | { kind: 'timeout'; timeoutMs: number }
  | { kind: 'connection'; message: string };

export interface FailureContext {
  provider: string;
  model: string;
  maxRetries: number;
}

/** The error the loop sees for a failure the SDK gave up on. */
export function modelError(failure: ModelFailure, ctx: FailureContext): Error {
  const who = `${ctx.provider} model ${ctx.model}`;
  const afterRetries = ctx.maxRetries > 0 ? ` after ${ctx.maxRetries} retries` : ' (retries disabled)';
  switch (failure.kind) {
    case 'timeout':
      return new ModelUnavailableError(
        ctx.provider,
        undefined,
        `${who} timed out: no response within ${failure.timeoutMs} ms${afterRetries}`,
      );
    case 'connection':
      return new ModelUnavailableError(
        ctx.provider,
        undefined,
        `${who} unreachable: connection failed${afterRetries}: ${failure.message}`,
      );
    case 'status':
      return statusError(failure.status, failure.message, ctx, who, afterRetries);
  }
}

function statusError(status: number, message: string, ctx: FailureContext, who: string, afterRetries: string): Error {
  if (status === 401) {
    return new ModelConfigurationError(ctx.provider, status, `${who}: the API key was rejected (401). Check the configured key. ${message}`);
  }
  if (status === 403) {
    return new ModelConfigurationError(ctx.provider, status, `${who}: the API key may not use this model or endpoint (403). ${message}`);
  }
  if (status === 404) {
    return new ModelConfigurationError(ctx.provider, status, `${who}: not found (404); check the model name and base URL. ${message}`);
  }
  const transient = transientReason(status);
  if (transient) {
    return new ModelUnavailableError(ctx.provider, status, `${who} ${transient} (${status})${afterRetries}: ${message}`);
  }
  return new ModelRequestError(ctx.provider, status, `${who} refused the request (${status}): ${message}`);
}

/** The statuses both SDKs retry (x-should-retry aside): 408, 409, 429 and every ≥500 (529 = overloaded). */
function transientReason(status: number): string | undefined {
  if (status === 429) return 'rate limited';
  if (status === 529) return 'overloaded';
  if (status === 503) return 'service unavailable';
  if (status >= 500) return 'server error';
  if (status === 408) return 'request timed out at the server';
  if (status === 409) return 'conflict';
  return undefined;
}

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
 *
 * The message reaches the thread and the audit, so it carries only the JSON `error.message` of the
 * response: for any other body the SDKs put the whole body in their message (a gateway's HTML page, or a
 * 401 that echoes the key), which is reduced to its size here. The configured key is removed from
 * whatever remains.
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
  /** The configured API key: never repeated in a message, whole or in part. */
  apiKey?: string;
}

/** The error the loop sees for a failure the SDK gave up on. */
export function modelError(reported: ModelFailure, ctx: FailureContext): Error {
  const who = `${ctx.provider} model ${ctx.model}`;
  const afterRetries = ctx.maxRetries > 0 ? ` after ${ctx.maxRetries} retries` : ' (retries disabled)';
  const failure = reported.kind === 'timeout' ? reported : { ...reported, message: withoutKey(reported.message, ctx.apiKey) };
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

/**
 * What an error response said, safe to repeat. `json` is the parsed body as the SDK kept it (undefined
 * when the body was not JSON); `sdkMessage` is the SDK's `"<status> <body or message>"`.
 */
export function errorBodyMessage(status: number, json: unknown, sdkMessage: string): string {
  const said = jsonErrorMessage(json);
  if (said !== undefined) return said.slice(0, 500);
  if (json !== undefined && json !== null) return 'JSON error body without a message';
  const prefix = `${status} `;
  const raw = sdkMessage.startsWith(prefix) ? sdkMessage.slice(prefix.length) : sdkMessage;
  if (raw === '' || raw === 'status code (no body)') return 'no error body';
  return `non-JSON error body (${Buffer.byteLength(raw)} bytes)`;
}

/** `{error: {message}}` (Anthropic, and what gateways copy) or `{message}` (OpenAI's inner error object). */
function jsonErrorMessage(json: unknown): string | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const body = json as { error?: { message?: unknown }; message?: unknown };
  if (typeof body.error === 'object' && body.error !== null && typeof body.error.message === 'string') return body.error.message;
  return typeof body.message === 'string' ? body.message : undefined;
}

/** Key characters of the common providers' keys (`sk-ant-api03-…`, `sk-proj-…`, gateway keys). */
const KEY_RUN = /[A-Za-z0-9_-]{8,}/g;

/**
 * `text` without the API key: the whole key, and any run of 8+ key characters that is part of it
 * (gateways echo a prefix: "Invalid API key: corp-gw-7f3a…").
 */
export function withoutKey(text: string, apiKey: string | undefined): string {
  if (!apiKey || apiKey.length < 8) return text;
  return text.split(apiKey).join('[API key]').replace(KEY_RUN, (run) => (apiKey.includes(run) ? '[API key]' : run));
}

/**
 * Signed delivery of Slack requests to the app under test (Bolt's HTTP receiver). Signature per PLATFORM-FACTS A7:
 * `X-Slack-Signature: v0=hex(HMAC_SHA256(secret, 'v0:' + ts + ':' + rawBody))`, `X-Slack-Request-Timestamp: ts`
 * (seconds, must be within 5 minutes). Events are JSON; commands and interactions are form-encoded.
 * Retries carry `X-Slack-Retry-Num` (1..3) and `X-Slack-Retry-Reason` (A1).
 */
import { createHmac } from 'node:crypto';

export * from './envelopes.js';

export interface SignedHeaders {
  'X-Slack-Request-Timestamp': string;
  'X-Slack-Signature': string;
}

export function signSlackRequest(secret: string, rawBody: string, ts: number = Math.floor(Date.now() / 1000)): SignedHeaders {
  const digest = createHmac('sha256', secret).update(`v0:${ts}:${rawBody}`).digest('hex');
  return { 'X-Slack-Request-Timestamp': String(ts), 'X-Slack-Signature': `v0=${digest}` };
}

export interface DeliveryOptions {
  retryNum?: number;
  retryReason?: 'http_timeout' | 'too_many_redirects' | 'connection_failed' | 'ssl_error' | 'http_error' | 'unknown_error';
  /** Sign with a wrong secret: Bolt must answer 401 and run no listener. */
  badSignature?: boolean;
  /** Sign with a timestamp 10 minutes old: outside Slack's 5-minute window. */
  staleTimestamp?: boolean;
  /** Sign (correctly) with a timestamp this many seconds from now: positive is the future. */
  timestampOffsetSeconds?: number;
}

export interface DeliveryResult {
  status: number;
  /** The raw response body (Bolt answers '' for events, JSON for some acks). */
  body: string;
  /** Milliseconds from sending to the full response: the app's acknowledgement time (must stay under 3000). */
  ackMs: number;
}

async function deliver(url: string, secret: string, rawBody: string, contentType: string, opts: DeliveryOptions): Promise<DeliveryResult> {
  const ts = Math.floor(Date.now() / 1000) - (opts.staleTimestamp ? 600 : 0) + (opts.timestampOffsetSeconds ?? 0);
  const headers: Record<string, string> = {
    'Content-Type': contentType,
    ...signSlackRequest(opts.badSignature ? `${secret}-wrong` : secret, rawBody, ts),
  };
  if (opts.retryNum !== undefined) headers['X-Slack-Retry-Num'] = String(opts.retryNum);
  if (opts.retryReason !== undefined) headers['X-Slack-Retry-Reason'] = opts.retryReason;
  const started = performance.now();
  const response = await fetch(url, { method: 'POST', headers, body: rawBody });
  const body = await response.text();
  return { status: response.status, body, ackMs: performance.now() - started };
}

/** POSTs an Events API envelope (JSON), signed. */
export function deliverEvent(url: string, secret: string, envelope: unknown, opts: DeliveryOptions = {}): Promise<DeliveryResult> {
  return deliver(url, secret, JSON.stringify(envelope), 'application/json', opts);
}

export interface SlashCommandInput {
  command?: string;
  text: string;
  user_id: string;
  user_name?: string;
  channel_id: string;
  channel_name?: string;
  team_id?: string;
  team_domain?: string;
  api_app_id?: string;
  response_url: string;
  trigger_id?: string;
}

/** The form fields Slack sends for a slash command (defaults: `/sre`, the fake's team and app). */
export function slashCommandFields(input: SlashCommandInput): Record<string, string> {
  return {
    token: 'fake-verification-token',
    team_id: input.team_id ?? 'T0FAKE',
    team_domain: input.team_domain ?? 'fake',
    channel_id: input.channel_id,
    channel_name: input.channel_name ?? input.channel_id.toLowerCase(),
    user_id: input.user_id,
    user_name: input.user_name ?? input.user_id.toLowerCase(),
    command: input.command ?? '/sre',
    text: input.text,
    api_app_id: input.api_app_id ?? 'A0VIGIL',
    is_enterprise_install: 'false',
    response_url: input.response_url,
    trigger_id: input.trigger_id ?? `${Date.now()}.fake.trigger`,
  };
}

/** POSTs a slash command (form-encoded), signed. */
export function deliverCommand(url: string, secret: string, command: SlashCommandInput, opts: DeliveryOptions = {}): Promise<DeliveryResult> {
  const raw = new URLSearchParams(slashCommandFields(command)).toString();
  return deliver(url, secret, raw, 'application/x-www-form-urlencoded', opts);
}

/** POSTs an interaction (`payload=<json>`, form-encoded), signed: block_actions, view_submission, shortcuts. */
export function deliverInteraction(url: string, secret: string, payload: unknown, opts: DeliveryOptions = {}): Promise<DeliveryResult> {
  const raw = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  return deliver(url, secret, raw, 'application/x-www-form-urlencoded', opts);
}

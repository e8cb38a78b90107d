// What reaches Bolt from Slack is checked here first. Bolt verifies the signature, but lets through
// timestamps from the future, answers a click without `user` with a 500 (its authorisation step reads
// body.user.id), and leaves a click nobody handles unanswered for 3 s before a bare 404. Slack only ever
// sends well-formed payloads, so anything else is a bug or a probe: refused with a 4xx that says why,
// and a log line with the body's shape, never its content.
import { App, HTTPModuleFunctions, HTTPReceiver, defaultProcessEventErrorHandler, type HTTPReceiverOptions, type ReceiverProcessEventErrorHandlerArgs, type SocketModeReceiverProcessEventErrorHandlerArgs } from '@slack/bolt';
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { bodySummary, sendJson } from '../http/routes.js';
import { cleanDeep } from '../store/sanitize.js';

/** Slack's rule for signed requests: refuse when |now − X-Slack-Request-Timestamp| is more than 5 minutes. */
export const SLACK_TIMESTAMP_WINDOW_SECONDS = 5 * 60;

/** A request Vigil will not process; answered 400 with the message (HTTP) or acknowledged and dropped (Socket Mode). */
export class MalformedSlackRequest extends Error {
  constructor(
    message: string,
    readonly body: unknown,
  ) {
    super(message);
    this.name = 'MalformedSlackRequest';
  }
}

type Body = Record<string, unknown>;
const isObject = (v: unknown): v is Body => typeof v === 'object' && v !== null && !Array.isArray(v);
const nonEmptyString = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

/** The interaction payload types Slack posts to the request URL; each one names the user who acted. */
const INTERACTIONS = new Set(['block_actions', 'view_submission', 'view_closed', 'shortcut', 'message_action', 'block_suggestion', 'interactive_message', 'dialog_submission']);

/** Why a parsed body is not a request Slack would send, or undefined when it is well-formed. */
export function problemWith(body: Body): string | undefined {
  if (body['event'] !== undefined || body['type'] === 'event_callback') {
    const event = body['event'];
    return isObject(event) && nonEmptyString(event['type']) ? undefined : 'event_callback without an event object that has a type';
  }
  if (body['command'] !== undefined) return nonEmptyString(body['command']) ? undefined : 'slash command without a command name';
  const type = body['type'];
  if (!nonEmptyString(type) || !INTERACTIONS.has(type)) {
    return `not a Slack event, slash command or interaction (type ${nonEmptyString(type) ? JSON.stringify(type.slice(0, 40)) : 'missing'})`;
  }
  const user = body['user'];
  if (!isObject(user) || !nonEmptyString(user['id'])) return `${type} payload without user.id (Slack always says who acted)`;
  if (type === 'block_actions') {
    const actions = body['actions'];
    if (!Array.isArray(actions) || actions.length === 0 || !actions.every((a) => isObject(a) && nonEmptyString(a['action_id']))) {
      return 'block_actions payload without actions[].action_id';
    }
  }
  if ((type === 'view_submission' || type === 'view_closed') && !(isObject(body['view']) && typeof body['view']['callback_id'] === 'string')) {
    return `${type} payload without view.callback_id`;
  }
  return undefined;
}

/** What the request asked for, for the "nobody handles it" answer. */
function requested(body: Body): string {
  if (nonEmptyString(body['command'])) return `slash command ${body['command'].slice(0, 40)}`;
  const actions = body['actions'];
  if (Array.isArray(actions)) return `action id ${actions.map((a) => JSON.stringify(String((a as Body)['action_id']).slice(0, 60))).join(', ')}`;
  const view = body['view'];
  if (isObject(view)) return `${String(body['type'])} of view ${JSON.stringify(String(view['callback_id']).slice(0, 60))}`;
  const callback = body['callback_id'];
  return `${String(body['type'])}${nonEmptyString(callback) ? ` ${JSON.stringify(callback.slice(0, 60))}` : ''}`;
}

/**
 * Bolt's App with the checks above in front of its dispatch: a malformed body is refused before Bolt
 * reads it, every string in it is cleaned (store/sanitize.ts), and an interaction or command that no
 * listener acknowledged is refused at once instead of timing out. Every Vigil listener acks first, so a
 * missing ack means no listener matched, or one failed before its ack (then it is a 500, not a 400).
 */
export class VigilApp extends App {
  /** Bodies whose listener failed (set by the app's error handler, see `listenerFailed`). */
  private readonly failed = new WeakSet<object>();

  /** Call from the app.error handler (extendedErrorHandler: true) with the body it was given. */
  listenerFailed(body: unknown): void {
    if (isObject(body)) this.failed.add(body);
  }

  override async processEvent(event: Parameters<App['processEvent']>[0]): Promise<void> {
    const problem = isObject(event.body) ? problemWith(event.body) : 'body is not an object';
    if (problem) throw new MalformedSlackRequest(problem, event.body);
    const body = cleanDeep(event.body);
    // Events are acknowledged by Bolt itself before any listener runs.
    if (body['event'] !== undefined) return super.processEvent({ ...event, body });
    let acked = false;
    const ack = event.ack;
    await super.processEvent({ ...event, body, ack: (response) => ((acked = true), ack(response)) });
    if (acked) return;
    if (this.failed.has(body)) throw new Error(`the listener for ${requested(body)} failed before acknowledging`);
    throw new MalformedSlackRequest(`Vigil has no handler for ${requested(body)}`, body);
  }
}

/** HTTP mode: a refusal is a 400 whose JSON body says why; anything else is Bolt's default answer (500). */
export function httpErrorHandler(log: Logger) {
  return async (args: ReceiverProcessEventErrorHandlerArgs): Promise<boolean> => {
    const { error, response } = args;
    if (!(error instanceof MalformedSlackRequest)) return HTTPModuleFunctions.defaultProcessEventErrorHandler(args);
    log.warn({ reason: error.message, body: bodySummary(error.body) }, 'Slack request refused');
    sendJson(response, 400, { ok: false, error: error.message });
    // true: Bolt marks the request acknowledged, which stops its 3-second "not acknowledged" timer.
    return true;
  };
}

/** Socket Mode: a refusal is logged and acknowledged (Slack's redelivery would be just as malformed). */
export function socketErrorHandler(log: Logger) {
  return async (args: SocketModeReceiverProcessEventErrorHandlerArgs): Promise<boolean> => {
    if (!(args.error instanceof MalformedSlackRequest)) return defaultProcessEventErrorHandler(args);
    log.warn({ reason: args.error.message, body: bodySummary(args.error.body) }, 'Slack request refused');
    return true;
  };
}

/** The skew of a request's timestamp from now, in seconds (positive: in the past), or why there is none. */
function timestampProblem(header: string | string[] | undefined, nowMs: number): { error: string; skew?: number } | undefined {
  // No timestamp at all: Bolt's to judge (Slack's unsigned ssl_check passes; anything else gets its 401).
  if (header === undefined) return undefined;
  const ts = typeof header === 'string' && /^\d{1,12}$/.test(header) ? Number(header) : NaN;
  if (Number.isNaN(ts)) return { error: 'X-Slack-Request-Timestamp is not a number of seconds' };
  const skew = Math.floor(nowMs / 1000) - ts;
  if (Math.abs(skew) <= SLACK_TIMESTAMP_WINDOW_SECONDS) return undefined;
  return { skew, error: `X-Slack-Request-Timestamp is ${Math.abs(skew)} s in the ${skew < 0 ? 'future' : 'past'}; Slack requests must be within ${SLACK_TIMESTAMP_WINDOW_SECONDS} s of now` };
}

/**
 * Bolt's HTTP receiver with two checks in front of it, on the Slack endpoint:
 * - a timestamp more than five minutes from now in either direction is refused with 401 before the body
 *   is read (Bolt itself only refuses old ones);
 * - a signed body that does not parse (invalid JSON, or `payload` that is not JSON) or is not a JSON
 *   object is refused with a 400 that says so. Bolt would answer the first with a bare 400, and a
 *   `null` body would make it throw outside its own error handling.
 * The body is buffered here the way Bolt buffers it, so Bolt reads the same bytes and checks the
 * signature itself again; whatever fails that check is left to Bolt's 401.
 */
export class VigilHttpReceiver extends HTTPReceiver {
  constructor(opts: HTTPReceiverOptions, log: Logger, now: () => number = Date.now) {
    super(opts);
    const endpoints = new Set([opts.endpoints ?? '/slack/events'].flat());
    const bolt = this.requestListener;
    const refuse = (res: ServerResponse, status: number, error: string, fields: Record<string, unknown>) => {
      log.warn(fields, `Slack request refused: ${error}`);
      sendJson(res, status, { ok: false, error }, { connection: 'close' });
    };
    this.requestListener = (req, res) => {
      const path = (req.url ?? '').split('?')[0] ?? '';
      if (req.method !== 'POST' || !endpoints.has(path)) return bolt(req, res);
      const late = timestampProblem(req.headers['x-slack-request-timestamp'], now());
      if (late) {
        refuse(res, 401, late.error, { path, skewSeconds: late.skew });
        return void req.resume();
      }
      void (async () => {
        let buffered;
        try {
          buffered = await HTTPModuleFunctions.parseAndVerifyHTTPRequest({ signingSecret: opts.signingSecret as string, bodyLimit: opts.bodyLimit ?? HTTPModuleFunctions.defaultBodyLimit }, req);
        } catch (err) {
          if (HTTPModuleFunctions.isRawBodyError(err) && (err.type === 'entity.too.large' || err.statusCode === 413)) return refuse(res, 413, 'request body too large', { path });
          // Not verified: Bolt answers (401) and logs, from the bytes buffered above.
          return bolt(req, res);
        }
        let body: unknown;
        try {
          body = HTTPModuleFunctions.parseHTTPRequestBody(buffered);
        } catch (err) {
          return refuse(res, 400, `body is not valid JSON (${buffered.headers['content-type'] === 'application/x-www-form-urlencoded' ? 'the payload field' : 'the request body'}): ${err instanceof Error ? err.message.slice(0, 120) : 'parse error'}`, { path, bytes: buffered.rawBody.length });
        }
        if (!isObject(body)) return refuse(res, 400, 'body is not a JSON object', { path, body: bodySummary(body) });
        bolt(req, res);
      })().catch((err: unknown) => {
        log.error({ err: String(err), path }, 'Slack request intake failed');
        sendJson(res, 500, { ok: false, error: 'internal error' });
      });
    };
  }
}

import { LogLevel, SocketModeReceiver, type App, type Logger as BoltLogger } from '@slack/bolt';
import { WebClient, type WebClientOptions } from '@slack/web-api';
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import type { AlertMessage } from '../alerts/types.js';
import type { IncidentDesk } from '../incidents/desk.js';
import { bodySummary, limitBody, type Route } from '../http/routes.js';
import { VigilApp, VigilHttpReceiver, httpErrorHandler, socketErrorHandler } from './intake.js';

export interface SlackAppSettings {
  botToken: string;
  mode: 'socket' | 'http';
  appToken?: string;
  signingSecret?: string;
  /** Override the Web API base URL (an enterprise gateway, or the fake Slack in tests and the demo). */
  apiUrl?: string;
  /** Per-request timeout of every Web API call (ms); each retry gets its own. Default 10 s. */
  apiTimeoutMs?: number;
  /** Extra WebClient options (tests shorten retries). */
  clientOptions?: WebClientOptions;
  /** Skip the startup auth.test when the bot identity is already known. */
  botUserId?: string;
}

/** Longest Bolt / WebClient log line kept; the rest is cut and counted. */
const MAX_SDK_LINE = 500;

/**
 * One SDK log line, without payloads: at debug level the WebClient logs every request body ("http request
 * body: {…}", whole alert texts and cards), and Bolt logs acks and error details with bodies in them.
 * A body is replaced by its shape (keys and size); anything else long is cut.
 */
export function sdkLogLine(parts: unknown[]): string {
  const line = parts.map(String).join(' ');
  const body = /^http request body: ([\s\S]*)$/.exec(line);
  if (body) return `http request body: ${JSON.stringify(bodySummary(body[1]))}`;
  return line.length > MAX_SDK_LINE ? `${line.slice(0, MAX_SDK_LINE)}… (${line.length - MAX_SDK_LINE} more characters not logged)` : line;
}

/** Bolt wants its own Logger shape; route it into pino. */
function boltLogger(log: Logger): BoltLogger {
  const l = log.child({ component: 'bolt' });
  return {
    debug: (...m: unknown[]) => l.debug(sdkLogLine(m)),
    info: (...m: unknown[]) => l.info(sdkLogLine(m)),
    warn: (...m: unknown[]) => l.warn(sdkLogLine(m)),
    error: (...m: unknown[]) => l.error(sdkLogLine(m)),
    setLevel: () => undefined,
    getLevel: () => LogLevel.INFO,
    setName: () => undefined,
  };
}

interface MessageEventLike {
  channel?: string;
  ts?: string;
  thread_ts?: string;
  user?: string;
  bot_id?: string;
  subtype?: string;
  text?: string;
  username?: string;
  bot_profile?: { name?: string };
  attachments?: unknown[];
  blocks?: unknown[];
  /** On an edited message: who edited it and the edit's ts (absent on unfurls). */
  edited?: { user?: string; ts?: string };
  message?: MessageEventLike;
}

/**
 * The client for chat.postMessage alone, with the SDK's retries off. A post is not idempotent: when its
 * answer is lost (a timeout, a 5xx after Slack stored it), the SDK's retry would post it again. SlackChat
 * retries posts itself and first looks for the tagged message in the thread (see SlackChat.post).
 */
export function createPostClient(s: SlackAppSettings, log: Logger): WebClient {
  return new WebClient(s.botToken, {
    timeout: s.apiTimeoutMs ?? 10_000,
    ...(s.apiUrl ? { slackApiUrl: s.apiUrl } : {}),
    ...s.clientOptions,
    logger: boltLogger(log),
    retryConfig: { retries: 0 },
  });
}

/**
 * Bolt wiring only: every listener acknowledges first, translates the Slack payload into a domain
 * call on the desk, and returns. No decisions here.
 */
export function createSlackApp(s: SlackAppSettings, log: Logger, routes: Route[] = [], hooks: { onSocketState?: (connected: boolean) => void } = {}): App {
  // Without a timeout a Web API call that never answers holds its caller (a thread sync, a click) forever.
  const clientOptions: WebClientOptions = { timeout: s.apiTimeoutMs ?? 10_000, ...(s.apiUrl ? { slackApiUrl: s.apiUrl } : {}), ...s.clientOptions };
  const logger = boltLogger(log);
  // extendedErrorHandler: the error handler is given the body, so the app can tell a failed listener from a missing one.
  const common = { token: s.botToken, clientOptions, logger, extendedErrorHandler: true, ...(s.botUserId ? { tokenVerificationEnabled: false, botUserId: s.botUserId, botId: 'B_VIGIL' } : {}) };
  // The Socket Mode client opens its connection through its own WebClient: give it the same API URL.
  const socket = s.mode === 'socket' ? new SocketModeReceiver({ appToken: s.appToken!, logger, installerOptions: { clientOptions }, processEventErrorHandler: socketErrorHandler(log) }) : undefined;
  // Readiness (/readyz) follows the connection: up on `connected` (Slack's hello), down on anything else.
  if (socket && hooks.onSocketState) {
    socket.client.on('connected', () => hooks.onSocketState!(true));
    for (const state of ['disconnecting', 'reconnecting', 'disconnected']) socket.client.on(state, () => hooks.onSocketState!(false));
  }
  const app =
    socket
      ? new VigilApp({ ...common, socketMode: true, receiver: socket })
      : new VigilApp({
          ...common,
          receiver: new VigilHttpReceiver(
            { signingSecret: s.signingSecret!, logger, customRoutes: routes.map(limitBody), processBeforeResponse: false, processEventErrorHandler: httpErrorHandler(log) },
            log,
          ),
        });
  app.error(async ({ error, body }: { error: Error & { code?: string }; body: unknown }) => {
    app.listenerFailed(body);
    log.error({ err: error.message, code: error.code }, 'Slack listener failed');
  });
  return app;
}

/** Attach Vigil's listeners; the app's client is what the desk's chat port posts with, hence two steps. */
export function registerListeners(app: App, desk: IncidentDesk, log: Logger): void {
  app.event('message', async ({ event, context }) => {
    const e = event as MessageEventLike;
    if (e.subtype === 'message_deleted' || e.subtype === 'channel_join' || e.subtype === 'channel_leave') return;
    // Alertmanager's edit_messages option re-posts to the same ts: the edited message is the alert.
    const edited = e.subtype === 'message_changed' && e.message;
    const m = edited ? { ...e.message, channel: e.channel } : e;
    if (!m.channel || !m.ts) return;
    if (context.retryNum) log.debug({ retryNum: context.retryNum, retryReason: context.retryReason }, 'Slack retry delivery');
    await desk.onChannelMessage({
      channel: m.channel,
      ts: m.ts,
      threadTs: m.thread_ts,
      user: m.user,
      botId: m.bot_id,
      subtype: e.subtype === 'message_changed' ? m.subtype : e.subtype,
      ...(edited && m.edited?.ts ? { editedTs: m.edited.ts } : {}),
      message: {
        text: m.text,
        username: m.username,
        bot_id: m.bot_id,
        bot_profile: m.bot_profile,
        attachments: m.attachments as AlertMessage['attachments'],
        blocks: m.blocks,
        ts: m.ts,
      },
    });
  });

  app.event('app_home_opened', async ({ event }) => {
    if ((event as { tab?: string }).tab !== 'home') return;
    await desk.onHomeOpened((event as { user: string }).user);
  });

  app.command('/sre', async ({ command, ack, respond }) => {
    await ack();
    try {
      const reply = await desk.onCommand({ text: command.text ?? '', userId: command.user_id, channelId: command.channel_id, triggerId: command.trigger_id });
      await respond({ response_type: 'ephemeral', text: reply.text, ...(reply.blocks ? { blocks: reply.blocks as never } : {}) });
    } catch (err) {
      log.error({ err: String(err) }, '/sre failed');
      await respond({ response_type: 'ephemeral', text: `:warning: Vigil could not run that /sre command because of an internal error (${err instanceof Error ? err.name : 'unknown'}). Nothing was started; try again, and if it keeps failing check Vigil's logs.` });
    }
  });

}

/**
 * Start the app's receiver (HTTP on `port`, or Socket Mode) and tell the readiness probe how to check
 * it: the HTTP server listening, or the Socket Mode connection up. The bot and the executor both do.
 */
export async function startReceiver(app: App, mode: 'http' | 'socket', port: number, probes: { useSlack(check: () => { ok: boolean; error?: string }): void }, socketUp: () => boolean): Promise<{ server?: Server; port?: number }> {
  const server = mode === 'http' ? ((await app.start(port)) as Server) : (await app.start(), undefined);
  const address = server?.address();
  probes.useSlack(
    server
      ? () => (server.listening ? { ok: true } : { ok: false, error: 'HTTP receiver not listening' })
      : () => (socketUp() ? { ok: true } : { ok: false, error: 'Socket Mode connection to Slack not up' }),
  );
  return { ...(server ? { server } : {}), ...(address && typeof address === 'object' ? { port: address.port } : {}) };
}

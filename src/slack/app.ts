import { App, HTTPReceiver, LogLevel, type Logger as BoltLogger } from '@slack/bolt';
import type { WebClientOptions } from '@slack/web-api';
import type { Logger } from 'pino';
import type { AlertMessage } from '../alerts/types.js';
import type { IncidentDesk } from '../incidents/desk.js';
import { limitBody, type Route } from '../http/routes.js';

export interface SlackAppSettings {
  botToken: string;
  mode: 'socket' | 'http';
  appToken?: string;
  signingSecret?: string;
  /** Override the Web API base URL (an enterprise gateway, or the fake Slack in tests and the demo). */
  apiUrl?: string;
  /** Extra WebClient options (tests shorten retries). */
  clientOptions?: WebClientOptions;
  /** Skip the startup auth.test when the bot identity is already known. */
  botUserId?: string;
}

/** Bolt wants its own Logger shape; route it into pino. */
function boltLogger(log: Logger): BoltLogger {
  const l = log.child({ component: 'bolt' });
  return {
    debug: (...m: unknown[]) => l.debug(m.map(String).join(' ')),
    info: (...m: unknown[]) => l.info(m.map(String).join(' ')),
    warn: (...m: unknown[]) => l.warn(m.map(String).join(' ')),
    error: (...m: unknown[]) => l.error(m.map(String).join(' ')),
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
 * Bolt wiring only: every listener acknowledges first, translates the Slack payload into a domain
 * call on the desk, and returns. No decisions here.
 */
export function createSlackApp(s: SlackAppSettings, log: Logger, routes: Route[] = []): App {
  const clientOptions: WebClientOptions = { ...(s.apiUrl ? { slackApiUrl: s.apiUrl } : {}), ...s.clientOptions };
  const logger = boltLogger(log);
  const common = { token: s.botToken, clientOptions, logger, ...(s.botUserId ? { tokenVerificationEnabled: false, botUserId: s.botUserId, botId: 'B_VIGIL' } : {}) };
  const app =
    s.mode === 'socket'
      ? // The Socket Mode client opens its connection through its own WebClient: give it the same API URL.
        new App({ ...common, socketMode: true, appToken: s.appToken, installerOptions: { clientOptions } })
      : new App({
          ...common,
          receiver: new HTTPReceiver({ signingSecret: s.signingSecret!, logger, customRoutes: routes.map(limitBody), processBeforeResponse: false }),
        });
  app.error(async (err) => {
    log.error({ err: err.message, code: (err as { code?: string }).code }, 'Slack listener failed');
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

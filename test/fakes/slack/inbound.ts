/**
 * Messages that enter the workspace from outside the app under test: incoming webhooks (how Alertmanager's
 * `slack_configs.api_url` posts, PLATFORM-FACTS A2), humans and other integrations. These, unlike the app's own
 * posts, are delivered to the app as `message` events.
 */
import { messageEventEnvelope, richTextOf, type EventCallback } from './envelopes.js';
import type { NewMessage, SlackStore } from './store.js';
import type { FakeUser, StoredMessage } from './types.js';

/** The bot id incoming-webhook posts carry. */
export const WEBHOOK_BOT_ID = 'B_WEBHOOK';
/** The default bot id of `postAsBot` (another integration, e.g. Grafana's or PagerDuty's app). */
export const INTEGRATION_BOT_ID = 'B0ALERTS';

/** Alertmanager's Slack payload: one legacy attachment, no blocks, no top-level text (A2). */
export interface WebhookPayload {
  channel?: string;
  username?: string;
  icon_emoji?: string;
  icon_url?: string;
  text?: string;
  attachments?: unknown[];
  blocks?: unknown[];
}

export interface UserPost {
  user: string;
  /** What the person typed; Slack delivers it escaped (see `slackWireText`). */
  text: string;
  thread_ts?: string;
  /** A backdated post (a scenario's past traffic); default: the fake's clock. */
  ts?: string;
}

export interface BotPost {
  text?: string;
  attachments?: unknown[];
  blocks?: unknown[];
  username?: string;
  bot_id?: string;
  /** Default 'bot_message' (legacy integrations and webhooks); pass undefined-like '' for an app bot's plain post. */
  subtype?: string;
  thread_ts?: string;
  icon_emoji?: string;
  /** A backdated post (a scenario's past traffic); default: the fake's clock. */
  ts?: string;
}

/** Turns a webhook body into a message, or the plain-text error Slack's webhook endpoint answers (HTTP 400). */
export function webhookMessage(channel: string, raw: string): NewMessage | { error: string } {
  let payload: WebhookPayload;
  try {
    payload = JSON.parse(raw) as WebhookPayload;
  } catch {
    return { error: 'invalid_payload' };
  }
  const hasContent = Boolean(payload.text) || (payload.attachments?.length ?? 0) > 0 || (payload.blocks?.length ?? 0) > 0;
  if (!hasContent) return { error: 'no_text' };
  return {
    channel,
    subtype: 'bot_message',
    bot_id: WEBHOOK_BOT_ID,
    username: payload.username ?? 'incoming-webhook',
    icon_emoji: payload.icon_emoji,
    text: payload.text ?? '',
    attachments: payload.attachments,
    blocks: payload.blocks,
    origin: 'webhook',
  };
}

/**
 * A typed message as Slack stores and delivers its `text`: `&`, `<`, `>` become `&amp;`, `&lt;`, `&gt;`; a URL
 * becomes `<url>`; `@name` of a workspace user becomes `<@U…>`; `@here`/`@channel`/`@everyone` become `<!here>` …
 * (Slack's "Formatting text" reference). The rich_text block keeps the typed text.
 */
export function slackWireText(typed: string, users: Iterable<FakeUser> = []): string {
  const byName = new Map<string, string>();
  for (const u of users) for (const name of [u.name, u.display_name]) if (name) byName.set(name.toLowerCase(), u.id);
  return typed
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/https?:\/\/(?:(?!&[lg]t;)[^\s<>])+/g, (url) => `<${url}>`)
    .replace(/(^|\s)@([\w.-]+)/g, (whole, pre: string, name: string) => {
      if (/^(?:here|channel|everyone)$/i.test(name)) return `${pre}<!${name.toLowerCase()}>`;
      const id = byName.get(name.toLowerCase());
      return id ? `${pre}<@${id}>` : whole;
    });
}

export function userMessage(channel: string, post: UserPost, users: Iterable<FakeUser> = []): NewMessage {
  return { channel, user: post.user, text: slackWireText(post.text, users), blocks: richTextOf(post.text), thread_ts: post.thread_ts, origin: 'user', ...(post.ts ? { ts: post.ts } : {}) };
}

export function botMessage(channel: string, post: BotPost): NewMessage {
  const subtype = post.subtype === undefined ? 'bot_message' : post.subtype || undefined;
  return {
    channel,
    subtype,
    bot_id: post.bot_id ?? INTEGRATION_BOT_ID,
    username: post.username,
    icon_emoji: post.icon_emoji,
    text: post.text ?? '',
    attachments: post.attachments,
    blocks: post.blocks,
    thread_ts: post.thread_ts,
    origin: 'bot',
    ...(post.ts ? { ts: post.ts } : {}),
  };
}

/** The `message` event Slack would send the app for a stored message, addressed as the fake's workspace. */
export function messageEventFor(store: SlackStore, message: StoredMessage): EventCallback {
  const inThread = message.thread_ts && message.thread_ts !== message.ts;
  const parent = inThread && message.thread_ts ? store.find(message.channel, message.thread_ts) : undefined;
  return messageEventEnvelope(
    {
      channel: message.channel,
      ts: message.ts,
      text: message.text,
      user: message.user,
      bot_id: message.bot_id,
      subtype: message.subtype,
      username: message.username,
      icons: message.icon_emoji ? { emoji: message.icon_emoji } : undefined,
      attachments: message.attachments,
      blocks: message.blocks,
      thread_ts: inThread ? message.thread_ts : undefined,
      parent_user_id: parent ? (parent.user ?? parent.bot_id) : undefined,
      channel_type: store.channels.get(message.channel)?.is_private ? 'group' : 'channel',
    },
    { team_id: store.team.id, api_app_id: store.bot.appId, bot_user_id: store.bot.userId },
  );
}

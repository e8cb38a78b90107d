/** Shared shapes of the fake Slack: what it stores, records and answers. */

/** A parsed Web API request body. Form fields arrive as strings; `blocks`/`attachments`/`metadata`/`view` are JSON-decoded. */
export type Params = Record<string, unknown>;

/** The JSON body of a Web API answer (`ok` is always present, as in Slack). */
export interface ApiBody {
  ok: boolean;
  error?: string;
  [key: string]: unknown;
}

/** What a method handler answers. `rejection` marks a payload Slack itself would refuse (counted in `rejections`). */
export interface ApiReply {
  status?: number;
  headers?: Record<string, string>;
  body: ApiBody;
  rejection?: boolean;
  /** An HTTP 429 (injected or from per-channel rate enforcement); counted in `rateLimitedCount`. */
  rateLimited?: boolean;
}

/** One recorded Web API call (also failed, injected and rate-limited ones). */
export interface RecordedCall {
  method: string;
  body: Params;
  headers: Record<string, string | string[] | undefined>;
  at: number;
  /** Filled in once answered. */
  response?: { status: number; body: ApiBody };
}

/** A payload the fake refused the way Slack would (invalid_blocks, msg_too_long, no_text, …). */
export interface Rejection {
  method: string;
  error: string;
  messages: string[];
  body: Params;
  at: number;
}

/** One earlier version of a message, kept by chat.update. */
export interface MessageVersion {
  text?: string;
  blocks?: unknown[];
  attachments?: unknown[];
  metadata?: unknown;
  editedAt: number;
}

/** Who put a message into the fake. Only `app` messages (the bot under test) are never delivered as events. */
export type MessageOrigin = 'app' | 'user' | 'bot' | 'webhook' | 'response_url';

/** A stored channel message, in Slack's shape plus bookkeeping (`origin`, `edits`). */
export interface StoredMessage {
  type: 'message';
  channel: string;
  ts: string;
  thread_ts?: string;
  text?: string;
  blocks?: unknown[];
  attachments?: unknown[];
  metadata?: unknown;
  user?: string;
  bot_id?: string;
  app_id?: string;
  username?: string;
  icon_emoji?: string;
  subtype?: string;
  reply_count?: number;
  reply_users?: string[];
  latest_reply?: string;
  reply_broadcast?: boolean;
  reactions?: { name: string; users: string[]; count: number }[];
  edited?: { user: string; ts: string };
  origin: MessageOrigin;
  /** Earlier versions, oldest first; the message itself holds the current content. */
  edits: MessageVersion[];
}

export interface FakeUser {
  id: string;
  name: string;
  real_name?: string;
  display_name?: string;
  is_bot?: boolean;
  tz?: string;
}

export interface FakeChannel {
  id: string;
  name: string;
  is_private?: boolean;
  /** Whether the bot is a member. Channels not configured are created on first use with is_member true. */
  is_member?: boolean;
  /**
   * Human members (user ids), as `conversations.members` lists them. Unset: every workspace user is a member
   * (a channel everyone joined). The bot is listed too while `is_member` is true.
   */
  members?: string[];
}

export interface BotIdentity {
  token: string;
  userId: string;
  botId: string;
  appId: string;
  name: string;
}

export interface TeamIdentity {
  id: string;
  name: string;
  domain: string;
}

/** Where signed Events API / command / interaction requests go (the Bolt app's `/slack/events`). */
export interface EventsTarget {
  url: string;
  signingSecret: string;
}

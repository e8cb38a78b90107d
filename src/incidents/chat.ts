/**
 * The port through which incidents/ talks to the chat tool. The Slack adapter (slack/chat.ts) implements
 * it with the Web API; tests use the same adapter against the fake Slack server.
 */
/** Slack's error code for a refused Web API call (`data.error` of @slack/web-api's platform error), if it is one. */
export function chatErrorCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; data?: { error?: unknown } } | null;
  return e?.code === 'slack_webapi_platform_error' && typeof e.data?.error === 'string' ? e.data.error : undefined;
}

export interface ChatMessage {
  text: string;
  blocks?: unknown[];
}

/** Tags every post so a resumed run can find a post whose ts it never stored (crash between post and write). */
export interface PostTag {
  incidentId: string;
  purpose: string;
}

/** Said instead of anything about an incident (title, cause) to a user outside its alert channel. */
export const NOT_IN_CHANNEL = 'You are not a member of this incident’s alert channel, so Vigil will not show it or act on it for you. Ask someone in the channel to add you.';

/** What adding a reaction came to; any other answer is thrown (callers treat reactions as a courtesy: log, go on). */
export type ReactionResult = 'added' | 'already_reacted';

/** A watched channel as Slack describes it to the bot, or why it could not say. */
export type ChannelState = { ok: true; name?: string; isMember: boolean; isPrivate: boolean } | { ok: false; error: string };

export interface ChatPort {
  /** `broadcast`: a thread reply also shown in the channel (Slack's reply_broadcast). */
  post(channel: string, threadTs: string | undefined, message: ChatMessage, tag: PostTag, opts?: { broadcast?: boolean }): Promise<{ ts: string }>;
  update(channel: string, ts: string, message: ChatMessage): Promise<void>;
  /** The ts of an earlier post with this tag in the thread (or, without threadTs, among recent channel posts). */
  findTagged(channel: string, threadTs: string | undefined, tag: PostTag): Promise<string | undefined>;
  permalink(channel: string, ts: string): Promise<string | undefined>;
  /** Visible only to one user (command errors, help). */
  ephemeral(channel: string, user: string, message: ChatMessage, threadTs?: string): Promise<void>;
  /** Publish a user's App Home view. */
  publishHome(user: string, view: { type: 'home'; blocks: unknown[] }): Promise<void>;
  /** Display name of a user, for the record; undefined when it cannot be read. */
  userName(user: string): Promise<string | undefined>;
  /** A message by channel and ts (for `/sre investigate <message link>`). */
  fetchMessage(channel: string, ts: string): Promise<FetchedMessage | undefined>;
  /**
   * Whether a user is a member of a channel (Slack `conversations.members`). Incident data and commands
   * follow the alert channel's membership: someone outside a private alert channel must not read its
   * incidents or act on them. Optional: a port without it (no workspace to ask) lets everyone through.
   */
  isMember?(channel: string, user: string): Promise<boolean>;
  /** Add the bot's emoji reaction (`eyes`, no colons) to a message. Optional: a port without it acknowledges nothing. */
  react?(channel: string, ts: string, name: string): Promise<ReactionResult>;
  /** A channel's name and whether the bot is in it (App Home's setup panel). */
  channelInfo?(channel: string): Promise<ChannelState>;
}

export interface FetchedMessage {
  ts: string;
  text?: string;
  username?: string;
  bot_id?: string;
  attachments?: unknown[];
  blocks?: unknown[];
}

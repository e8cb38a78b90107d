import type { WebClient } from '@slack/web-api';
import type { Logger } from 'pino';
import { chatErrorCode, type ChannelState, type ChatMessage, type ChatPort, type FetchedMessage, type PostTag, type ReactionResult } from '../incidents/chat.js';
import { ChannelPacer } from './pacer.js';

const EVENT_TYPE = 'vigil_post';
/** Attempts of one post (see SlackChat.post). */
const POST_ATTEMPTS = 3;

/**
 * What a failed chat.postMessage says about the message: `refused` (Slack answered ok:false, nothing
 * was stored), `ratelimited` (429, nothing stored; the SDK waited Retry-After already), or `unknown`
 * (no answer, or a 5xx: Slack may have stored it).
 */
export function postOutcome(err: unknown): 'refused' | 'ratelimited' | 'unknown' {
  const e = err as { code?: string; statusCode?: number; message?: string };
  if (e?.code === 'slack_webapi_platform_error') return 'refused';
  if (e?.code === 'slack_webapi_rate_limited_error' || /rate limit was exceeded/i.test(String(e?.message))) return 'ratelimited';
  if (e?.code === 'slack_webapi_http_error' && typeof e.statusCode === 'number' && e.statusCode < 500) return 'refused';
  return 'unknown';
}
const MEMBERS_TTL_MS = 30_000;

interface MetadataMessage {
  ts?: string;
  metadata?: { event_type?: string; event_payload?: Record<string, unknown> };
}

/** The chat port on Slack's Web API (the real WebClient; tests point it at the fake Slack server). */
export class SlackChat implements ChatPort {
  private readonly names = new Map<string, string | undefined>();
  /** Channel members, cached briefly: a burst of commands or a Home refresh asks Slack once per channel. */
  private readonly members = new Map<string, { at: number; ids: Promise<Set<string>> }>();

  constructor(
    private readonly client: WebClient,
    private readonly log: Logger,
    private readonly pacer = new ChannelPacer(),
    /** A client without SDK retries for posts (see createPostClient); without one, posts use `client` as they are. */
    private readonly postClient?: WebClient,
  ) {}

  /**
   * Post once, even when an answer is lost. With `postClient`, a failed attempt is retried here: after a
   * failure whose outcome is unknown (no answer in time, a dropped connection, a 5xx) the thread is read
   * for the message's metadata tag first, and a message Slack did store is adopted instead of posted again.
   * A refusal (`ok: false`) is final; a rate limit is waited out by the SDK and then retried.
   */
  async post(channel: string, threadTs: string | undefined, m: ChatMessage, tag: PostTag, opts: { broadcast?: boolean } = {}): Promise<{ ts: string }> {
    const client = this.postClient ?? this.client;
    for (let attempt = 1; ; attempt++) {
      await this.pacer.take(channel);
      try {
        const res = await client.chat.postMessage({
          channel,
          ...(threadTs ? { thread_ts: threadTs, ...(opts.broadcast ? { reply_broadcast: true } : {}) } : {}),
          text: m.text,
          ...(m.blocks ? { blocks: m.blocks as never } : {}),
          unfurl_links: false,
          unfurl_media: false,
          // Metadata tags the post so a retry or a resumed run can find it instead of posting it again.
          metadata: { event_type: EVENT_TYPE, event_payload: { incident_id: tag.incidentId, purpose: tag.purpose } },
        } as never);
        if (!res.ts) throw new Error('chat.postMessage returned no ts');
        return { ts: res.ts };
      } catch (err) {
        const outcome = postOutcome(err);
        if (!this.postClient || outcome === 'refused' || attempt >= POST_ATTEMPTS) throw err;
        if (outcome === 'unknown') {
          const found = await this.findTagged(channel, threadTs, tag).catch(() => undefined);
          if (found) {
            this.log.info({ incidentId: tag.incidentId, purpose: tag.purpose, attempt }, 'Slack stored a post whose answer was lost; adopted it instead of posting again');
            return { ts: found };
          }
        }
        this.log.warn({ incidentId: tag.incidentId, purpose: tag.purpose, attempt, err: String(err) }, 'chat.postMessage failed; retrying');
        await new Promise((r) => setTimeout(r, outcome === 'ratelimited' ? 0 : 250 * 2 ** (attempt - 1)));
      }
    }
  }

  async update(channel: string, ts: string, m: ChatMessage): Promise<void> {
    await this.client.chat.update({ channel, ts, text: m.text, ...(m.blocks ? { blocks: m.blocks as never } : {}) });
  }

  async findTagged(channel: string, threadTs: string | undefined, tag: PostTag): Promise<string | undefined> {
    const matches = (msg: MetadataMessage) =>
      msg.metadata?.event_type === EVENT_TYPE && msg.metadata.event_payload?.['incident_id'] === tag.incidentId && msg.metadata.event_payload?.['purpose'] === tag.purpose;
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const res = threadTs
        ? await this.client.conversations.replies({ channel, ts: threadTs, include_all_metadata: true, limit: 200, ...(cursor ? { cursor } : {}) })
        : await this.client.conversations.history({ channel, include_all_metadata: true, limit: 200, ...(cursor ? { cursor } : {}) });
      const hit = (res.messages as MetadataMessage[] | undefined)?.find(matches);
      if (hit?.ts) return hit.ts;
      cursor = res.response_metadata?.next_cursor || undefined;
      if (!cursor || !threadTs) break; // recent channel history is enough for a root post made seconds ago
    }
    return undefined;
  }

  async permalink(channel: string, ts: string): Promise<string | undefined> {
    try {
      const res = await this.client.chat.getPermalink({ channel, message_ts: ts });
      return res.permalink;
    } catch (err) {
      this.log.warn({ err: String(err), channel, ts }, 'chat.getPermalink failed');
      return undefined;
    }
  }

  /**
   * Membership from `conversations.members` (every page), cached for MEMBERS_TTL_MS so someone removed from
   * a channel loses access within half a minute. A failed read is not cached and answers false: access is
   * refused rather than granted when Slack cannot say.
   */
  async isMember(channel: string, user: string): Promise<boolean> {
    const now = Date.now();
    let hit = this.members.get(channel);
    if (!hit || now - hit.at > MEMBERS_TTL_MS) {
      const ids = this.readMembers(channel);
      hit = { at: now, ids };
      this.members.set(channel, hit);
      ids.catch(() => this.members.get(channel) === hit && this.members.delete(channel));
    }
    try {
      return (await hit.ids).has(user);
    } catch (err) {
      this.log.warn({ err: String(err), channel }, 'conversations.members failed; treating the user as not a member');
      return false;
    }
  }

  private async readMembers(channel: string): Promise<Set<string>> {
    const ids = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const res = await this.client.conversations.members({ channel, limit: 200, ...(cursor ? { cursor } : {}) });
      for (const id of res.members ?? []) ids.add(id);
      cursor = res.response_metadata?.next_cursor || undefined;
      if (!cursor) break;
    }
    return ids;
  }

  /** `already_reacted` is Slack saying it is done already (a retry, a second replica): not an error. */
  async react(channel: string, ts: string, name: string): Promise<ReactionResult> {
    try {
      await this.client.reactions.add({ channel, timestamp: ts, name });
      return 'added';
    } catch (err) {
      if (chatErrorCode(err) === 'already_reacted') return 'already_reacted';
      throw err;
    }
  }

  async channelInfo(channel: string): Promise<ChannelState> {
    try {
      const res = await this.client.conversations.info({ channel });
      const c = res.channel as { name?: string; is_member?: boolean; is_private?: boolean } | undefined;
      return { ok: true, ...(c?.name ? { name: c.name } : {}), isMember: c?.is_member === true, isPrivate: c?.is_private === true };
    } catch (err) {
      return { ok: false, error: chatErrorCode(err) ?? (err instanceof Error ? err.message : String(err)) };
    }
  }

  async ephemeral(channel: string, user: string, m: ChatMessage, threadTs?: string): Promise<void> {
    await this.client.chat.postEphemeral({ channel, user, text: m.text, ...(m.blocks ? { blocks: m.blocks as never } : {}), ...(threadTs ? { thread_ts: threadTs } : {}) });
  }

  async publishHome(user: string, view: { type: 'home'; blocks: unknown[] }): Promise<void> {
    await this.client.views.publish({ user_id: user, view: view as never });
  }

  async userName(user: string): Promise<string | undefined> {
    if (this.names.has(user)) return this.names.get(user);
    try {
      const res = await this.client.users.info({ user });
      const u = res.user as { name?: string; real_name?: string; profile?: { display_name?: string } } | undefined;
      const name = u?.profile?.display_name || u?.real_name || u?.name;
      this.names.set(user, name);
      return name;
    } catch (err) {
      this.log.warn({ err: String(err), user }, 'users.info failed');
      return undefined;
    }
  }

  async fetchMessage(channel: string, ts: string): Promise<FetchedMessage | undefined> {
    try {
      const res = await this.client.conversations.history({ channel, latest: ts, inclusive: true, limit: 1 });
      const msg = res.messages?.[0];
      if (msg?.ts === ts) return msg as FetchedMessage;
      const replies = await this.client.conversations.replies({ channel, ts, limit: 1 });
      const reply = replies.messages?.find((r) => r.ts === ts);
      return reply as FetchedMessage | undefined;
    } catch (err) {
      this.log.warn({ err: String(err), channel, ts }, 'could not fetch message');
      return undefined;
    }
  }
}

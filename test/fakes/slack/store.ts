/**
 * The fake workspace's state: channels, messages (with threads and edit history), users, user groups and views.
 * Pure bookkeeping, no HTTP; method handlers and the server's helpers read and write it.
 */
import { compareTs, TsClock } from './timestamps.js';
import type { BotIdentity, FakeChannel, FakeUser, StoredMessage, TeamIdentity } from './types.js';

export type NewMessage = Omit<StoredMessage, 'type' | 'ts' | 'edits'> & { ts?: string };

export interface StoreSetup {
  bot: BotIdentity;
  /** Other Slack apps installed in the workspace, each with its own bot token and identity. */
  apps?: BotIdentity[];
  team: TeamIdentity;
  users: FakeUser[];
  usergroups: Record<string, string[]>;
  channels: FakeChannel[];
  startTs?: number;
}

export interface EphemeralMessage {
  channel: string;
  user: string;
  ts: string;
  thread_ts?: string;
  text?: string;
  blocks?: unknown[];
}

export interface OpenedView {
  id: string;
  trigger_id: string;
  view: Record<string, unknown>;
}

export class SlackStore {
  readonly bot: BotIdentity;
  /** Every installed app: the app under test (`bot`) first. */
  readonly apps: BotIdentity[];
  readonly team: TeamIdentity;
  readonly users: Map<string, FakeUser>;
  readonly usergroups: Map<string, string[]>;
  readonly channels: Map<string, FakeChannel>;
  readonly ephemerals: EphemeralMessage[] = [];
  /** Latest published Home tab per user. */
  readonly homeViews = new Map<string, Record<string, unknown>>();
  readonly openedViews: OpenedView[] = [];
  /** Set when a Socket Mode endpoint runs: what `apps.connections.open` hands out. */
  socketModeUrl?: string;
  private readonly byChannel = new Map<string, StoredMessage[]>();
  private readonly clock: TsClock;
  private viewSeq = 0;

  constructor(setup: StoreSetup) {
    this.bot = setup.bot;
    this.apps = [setup.bot, ...(setup.apps ?? [])];
    this.team = setup.team;
    this.users = new Map(setup.users.map((u) => [u.id, u]));
    this.usergroups = new Map(Object.entries(setup.usergroups));
    this.channels = new Map(setup.channels.map((c) => [c.id, { is_member: true, ...c }]));
    this.clock = new TsClock(setup.startTs);
  }

  /** The app whose bot token this is. */
  appFor(token: string | undefined): BotIdentity | undefined {
    return this.apps.find((a) => a.token === token);
  }

  nextTs(): string {
    return this.clock.next();
  }

  nextViewId(): string {
    this.viewSeq += 1;
    return `V${String(this.viewSeq).padStart(8, '0')}`;
  }

  /** The channel, created on first use (named after its id) so tests need not declare every channel. */
  channel(id: string): FakeChannel {
    let channel = this.channels.get(id);
    if (!channel) {
      channel = { id, name: id.toLowerCase(), is_member: true };
      this.channels.set(id, channel);
    }
    return channel;
  }

  /** Every message in the channel (top level and replies) in posting order. */
  messages(channel: string): StoredMessage[] {
    return [...(this.byChannel.get(channel) ?? [])];
  }

  find(channel: string, ts: string): StoredMessage | undefined {
    return this.byChannel.get(channel)?.find((m) => m.ts === ts);
  }

  /** The thread a ts belongs to, as Slack resolves it: a reply's ts leads to its parent. */
  threadRoot(channel: string, ts: string): StoredMessage | undefined {
    const message = this.find(channel, ts);
    if (!message) return undefined;
    if (message.thread_ts && message.thread_ts !== message.ts) return this.find(channel, message.thread_ts);
    return message;
  }

  /** Parent first, then replies in ts order; just the message when it has no replies; empty when unknown. */
  thread(channel: string, ts: string): StoredMessage[] {
    const root = this.threadRoot(channel, ts);
    if (!root) return [];
    const replies = (this.byChannel.get(channel) ?? []).filter((m) => m.thread_ts === root.ts && m.ts !== root.ts);
    return [root, ...replies.sort((a, b) => compareTs(a.ts, b.ts))];
  }

  /** Top-level messages (and broadcast replies), newest first, as conversations.history lists them. */
  history(channel: string): StoredMessage[] {
    return (this.byChannel.get(channel) ?? [])
      .filter((m) => !m.thread_ts || m.thread_ts === m.ts || m.reply_broadcast)
      .sort((a, b) => compareTs(b.ts, a.ts));
  }

  /**
   * Stores a message. `thread_ts` must already be resolved to an existing parent (see threadRoot); the parent's
   * reply_count, reply_users and latest_reply are bumped, and its thread_ts set, as Slack shows a threaded parent.
   */
  add(input: NewMessage): StoredMessage {
    this.channel(input.channel);
    const message: StoredMessage = { ...input, type: 'message', ts: input.ts ?? this.nextTs(), edits: [] };
    const list = this.byChannel.get(input.channel) ?? [];
    list.push(message);
    this.byChannel.set(input.channel, list);
    if (message.thread_ts && message.thread_ts !== message.ts) {
      const parent = this.find(input.channel, message.thread_ts);
      if (parent) {
        parent.thread_ts = parent.ts;
        parent.reply_count = (parent.reply_count ?? 0) + 1;
        const author = message.user ?? message.bot_id;
        if (author && !(parent.reply_users ?? []).includes(author)) parent.reply_users = [...(parent.reply_users ?? []), author];
        parent.latest_reply = message.ts;
      }
    }
    return message;
  }

  /**
   * Deletes a message, as a person can in the client. Here its replies go with it, so the thread is gone:
   * later replies answer thread_not_found and edits message_not_found. False when there was none.
   */
  remove(channel: string, ts: string): boolean {
    const list = this.byChannel.get(channel) ?? [];
    const message = list.find((m) => m.ts === ts);
    if (!message) return false;
    const isRoot = !message.thread_ts || message.thread_ts === message.ts;
    this.byChannel.set(channel, list.filter((m) => m.ts !== ts && !(isRoot && m.thread_ts === ts)));
    const parent = isRoot ? undefined : this.find(channel, message.thread_ts!);
    if (parent?.reply_count) parent.reply_count -= 1;
    return true;
  }
}

/** A stored message as the Web API returns it: bookkeeping removed; metadata only when asked for. */
export function toApiMessage(message: StoredMessage, includeMetadata = false): Record<string, unknown> {
  const { origin: _origin, edits: _edits, channel: _channel, metadata, ...rest } = message;
  const out: Record<string, unknown> = { ...rest };
  if (includeMetadata && metadata !== undefined) out.metadata = metadata;
  if (out.text === undefined) out.text = '';
  return out;
}

/**
 * conversations.replies / history / join / info / members. Pagination uses opaque cursors and `limit` (form fields arrive
 * as strings). Metadata is returned only with `include_all_metadata=true`, as in Slack.
 */
import { boolParam, numParam, strParam } from '../request.js';
import { type SlackStore, toApiMessage } from '../store.js';
import { compareTs } from '../timestamps.js';
import type { FakeChannel, Params, StoredMessage } from '../types.js';
import { decodeCursor, fail, ok, paginate, type MethodHandler } from './reply.js';

function channelInfo(channel: FakeChannel): Record<string, unknown> {
  const isPrivate = channel.is_private ?? false;
  return {
    id: channel.id,
    name: channel.name,
    name_normalized: channel.name,
    is_channel: !isPrivate,
    is_group: isPrivate,
    is_im: false,
    is_private: isPrivate,
    is_archived: false,
    is_member: channel.is_member ?? true,
    created: 1_700_000_000,
  };
}

/** `oldest`/`latest` bounds (exclusive unless `inclusive=true`), as both listing methods take them. */
function inWindow(message: StoredMessage, params: Params): boolean {
  const inclusive = boolParam(params.inclusive);
  const oldest = strParam(params.oldest);
  const latest = strParam(params.latest);
  if (oldest) {
    const c = compareTs(message.ts, oldest);
    if (c < 0 || (c === 0 && !inclusive)) return false;
  }
  if (latest) {
    const c = compareTs(message.ts, latest);
    if (c > 0 || (c === 0 && !inclusive)) return false;
  }
  return true;
}

function knownChannel(store: SlackStore, id: string | undefined): FakeChannel | undefined {
  return id ? store.channels.get(id) : undefined;
}

function listing(items: StoredMessage[], params: Params, defaultLimit: number) {
  const offset = decodeCursor(params.cursor);
  if (offset === undefined) return fail('invalid_cursor');
  const limit = Math.max(1, Math.min(1000, numParam(params.limit, defaultLimit)));
  const includeMetadata = boolParam(params.include_all_metadata);
  const { page, has_more, response_metadata } = paginate(items, offset, limit);
  return ok({ messages: page.map((m) => toApiMessage(m, includeMetadata)), has_more, response_metadata });
}

/** Parent first, then replies in order. The fake always keeps the parent; oldest/latest filter the replies. */
const replies: MethodHandler = ({ params, store }) => {
  const channelId = strParam(params.channel);
  if (!knownChannel(store, channelId) || !channelId) return fail('channel_not_found');
  const ts = strParam(params.ts);
  const thread = ts ? store.thread(channelId, ts) : [];
  if (thread.length === 0) return fail('thread_not_found');
  const [parent, ...rest] = thread as [StoredMessage, ...StoredMessage[]];
  return listing([parent, ...rest.filter((m) => inWindow(m, params))], params, 1000);
};

/** Top-level messages newest first (Slack's order), default limit 100. */
const history: MethodHandler = ({ params, store }) => {
  const channelId = strParam(params.channel);
  if (!knownChannel(store, channelId) || !channelId) return fail('channel_not_found');
  return listing(store.history(channelId).filter((m) => inWindow(m, params)), params, 100);
};

const join: MethodHandler = ({ params, store }) => {
  const channelId = strParam(params.channel);
  if (!channelId) return fail('channel_not_found');
  const channel = store.channel(channelId);
  const alreadyIn = channel.is_member === true;
  channel.is_member = true;
  return ok({ channel: channelInfo(channel), ...(alreadyIn ? { warning: 'already_in_channel' } : {}) });
};

const info: MethodHandler = ({ params, store }) => {
  const channel = knownChannel(store, strParam(params.channel));
  if (!channel) return fail('channel_not_found');
  return ok({ channel: channelInfo(channel) });
};

/**
 * Member ids, paged like Slack (default limit 100, max 1000, `next_cursor` '' on the last page). Slack
 * answers `channel_not_found` also for a private channel the bot is not in.
 */
const members: MethodHandler = ({ params, store }) => {
  const channel = knownChannel(store, strParam(params.channel));
  if (!channel || (channel.is_private && channel.is_member === false)) return fail('channel_not_found');
  const offset = decodeCursor(params.cursor);
  if (offset === undefined) return fail('invalid_cursor');
  const limit = Math.max(1, Math.min(1000, numParam(params.limit, 100)));
  const humans = channel.members ?? [...store.users.keys()];
  const ids = [...humans, ...(channel.is_member === false ? [] : [store.bot.userId])].filter((id, i, all) => all.indexOf(id) === i);
  const { page, response_metadata } = paginate(ids, offset, limit);
  return ok({ members: page, response_metadata });
};

export const conversationMethods: Record<string, MethodHandler> = {
  'conversations.replies': replies,
  'conversations.history': history,
  'conversations.join': join,
  'conversations.info': info,
  'conversations.members': members,
};

/** chat.* and reactions.add. Content is validated as Slack does (blockkit.ts) before anything is stored. */
import { validateMessagePayload } from '../blockkit.js';
import { boolParam, strParam } from '../request.js';
import { toApiMessage } from '../store.js';
import type { StoredMessage } from '../types.js';
import { fail, ok, reject, type MethodContext, type MethodHandler } from './reply.js';

/** Permalinks point at a host that never resolves; the shape matches Slack's. */
export const PERMALINK_BASE = 'https://fake.slack.test/archives';

function arrayOrUndefined(value: unknown): unknown[] | undefined {
  return Array.isArray(value) ? value : undefined;
}

const postMessage: MethodHandler = ({ params, store, bot }: MethodContext) => {
  const channelId = strParam(params.channel);
  if (!channelId) return fail('channel_not_found');
  const invalid = validateMessagePayload(params);
  if (invalid) return reject(invalid);
  const channel = store.channel(channelId);
  if (channel.is_member === false) return fail('not_in_channel');
  let threadTs = strParam(params.thread_ts);
  if (threadTs) {
    const root = store.threadRoot(channelId, threadTs);
    if (!root) return fail('thread_not_found');
    threadTs = root.ts;
  }
  const message = store.add({
    channel: channelId,
    thread_ts: threadTs,
    text: typeof params.text === 'string' ? params.text : undefined,
    blocks: arrayOrUndefined(params.blocks),
    attachments: arrayOrUndefined(params.attachments),
    metadata: params.metadata,
    user: bot.userId,
    bot_id: bot.botId,
    app_id: bot.appId,
    username: strParam(params.username),
    icon_emoji: strParam(params.icon_emoji),
    reply_broadcast: threadTs && boolParam(params.reply_broadcast) ? true : undefined,
    origin: 'app',
  });
  return ok({ channel: channelId, ts: message.ts, message: toApiMessage(message, true) });
};

function snapshot(message: StoredMessage, editedAt: number) {
  const { text, blocks, attachments, metadata } = message;
  return { text, blocks, attachments, metadata, editedAt };
}

/** chat.update: only the bot's own messages; omitted fields are kept (Slack: "[] removes blocks/attachments"). */
const update: MethodHandler = ({ params, store, bot }) => {
  const channelId = strParam(params.channel);
  const ts = strParam(params.ts);
  if (!channelId) return fail('channel_not_found');
  if (!ts) return fail('message_not_found');
  const message = store.find(channelId, ts);
  if (!message) return fail('message_not_found');
  if (message.bot_id !== bot.botId || message.origin !== 'app') return fail('cant_update_message');
  const invalid = validateMessagePayload(params, false);
  if (invalid) return reject(invalid);
  message.edits.push(snapshot(message, Date.now()));
  if (typeof params.text === 'string') message.text = params.text;
  if (params.blocks !== undefined) message.blocks = arrayOrUndefined(params.blocks);
  if (params.attachments !== undefined) message.attachments = arrayOrUndefined(params.attachments);
  if (params.metadata !== undefined) message.metadata = params.metadata;
  message.edited = { user: bot.userId, ts: store.nextTs() };
  return ok({ channel: channelId, ts, text: message.text ?? '', message: toApiMessage(message, true) });
};

const postEphemeral: MethodHandler = ({ params, store, bot }) => {
  const channelId = strParam(params.channel);
  const user = strParam(params.user);
  if (!channelId) return fail('channel_not_found');
  if (!user) return fail('user_not_found');
  const invalid = validateMessagePayload(params);
  if (invalid) return reject(invalid);
  const ts = store.nextTs();
  store.ephemerals.push({
    channel: channelId,
    user,
    ts,
    thread_ts: strParam(params.thread_ts),
    text: typeof params.text === 'string' ? params.text : undefined,
    blocks: arrayOrUndefined(params.blocks),
  });
  return ok({ message_ts: ts });
};

const getPermalink: MethodHandler = ({ params, store, bot }) => {
  const channelId = strParam(params.channel);
  const ts = strParam(params.message_ts);
  if (!channelId) return fail('channel_not_found');
  const message = ts ? store.find(channelId, ts) : undefined;
  if (!message) return fail('message_not_found');
  const base = `${PERMALINK_BASE}/${channelId}/p${message.ts.replace('.', '')}`;
  const inThread = message.thread_ts && message.thread_ts !== message.ts;
  const permalink = inThread ? `${base}?thread_ts=${message.thread_ts}&cid=${channelId}` : base;
  return ok({ channel: channelId, permalink });
};

const addReaction: MethodHandler = ({ params, store, bot }) => {
  const channelId = strParam(params.channel);
  const ts = strParam(params.timestamp);
  const name = strParam(params.name);
  if (!channelId) return fail('channel_not_found');
  if (!name) return fail('invalid_name');
  const message = ts ? store.find(channelId, ts) : undefined;
  if (!message) return fail('message_not_found');
  const reactions = (message.reactions ??= []);
  const existing = reactions.find((r) => r.name === name);
  if (existing?.users.includes(bot.userId)) return fail('already_reacted');
  if (existing) {
    existing.users.push(bot.userId);
    existing.count += 1;
  } else {
    reactions.push({ name, users: [bot.userId], count: 1 });
  }
  return ok();
};

export const chatMethods: Record<string, MethodHandler> = {
  'chat.postMessage': postMessage,
  'chat.update': update,
  'chat.postEphemeral': postEphemeral,
  'chat.getPermalink': getPermalink,
  'reactions.add': addReaction,
};

/**
 * Builders for what Slack sends an app: Events API `event_callback` envelopes and interaction payloads, in the
 * shapes Bolt parses (PLATFORM-FACTS A1–A3). Defaults match the fake Web API's identity (startFakeSlack).
 */
import { randomUUID } from 'node:crypto';

/** Who the envelope is addressed to. Defaults equal the fake server's default team/bot/app. */
export interface EnvelopeContext {
  team_id?: string;
  api_app_id?: string;
  bot_user_id?: string;
  token?: string;
}

export const ENVELOPE_DEFAULTS: Required<EnvelopeContext> = {
  team_id: 'T0FAKE',
  api_app_id: 'A0VIGIL',
  bot_user_id: 'U0VIGIL',
  token: 'fake-verification-token',
};

export interface EventCallback<E = Record<string, unknown>> {
  token: string;
  team_id: string;
  api_app_id: string;
  event: E;
  type: 'event_callback';
  event_id: string;
  event_time: number;
  authorizations: { enterprise_id: null; team_id: string; user_id: string; is_bot: true; is_enterprise_install: false }[];
  is_ext_shared_channel: false;
  event_context: string;
}

let eventSeq = 0;

/** A fresh, unique Events API id (`Ev…`). Retries of one delivery must reuse the same id. */
export function nextEventId(): string {
  eventSeq += 1;
  return `Ev${String(eventSeq).padStart(10, '0')}`;
}

export function eventEnvelope<E extends Record<string, unknown>>(event: E, ctx: EnvelopeContext & { event_id?: string } = {}): EventCallback<E> {
  const c = { ...ENVELOPE_DEFAULTS, ...ctx };
  return {
    token: c.token,
    team_id: c.team_id,
    api_app_id: c.api_app_id,
    event,
    type: 'event_callback',
    event_id: ctx.event_id ?? nextEventId(),
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [{ enterprise_id: null, team_id: c.team_id, user_id: c.bot_user_id, is_bot: true, is_enterprise_install: false }],
    is_ext_shared_channel: false,
    event_context: `4-fake-${c.team_id}`,
  };
}

export interface MessageEventInput {
  channel: string;
  ts: string;
  text?: string;
  user?: string;
  bot_id?: string;
  app_id?: string;
  /** e.g. 'bot_message' for integrations and incoming webhooks, 'message_changed' for edits. */
  subtype?: string;
  username?: string;
  icons?: Record<string, string>;
  attachments?: unknown[];
  blocks?: unknown[];
  thread_ts?: string;
  parent_user_id?: string;
  channel_type?: 'channel' | 'group' | 'im' | 'mpim';
  event_id?: string;
}

/** A `message` event as Slack delivers it. Integrations' posts often have `text: ''` with content in attachments. */
export function messageEventEnvelope(input: MessageEventInput, ctx: EnvelopeContext = {}): EventCallback {
  const { event_id, channel_type, ...fields } = input;
  const event: Record<string, unknown> = {
    type: 'message',
    ...dropUndefined(fields),
    text: input.text ?? '',
    event_ts: input.ts,
    channel_type: channel_type ?? 'channel',
    team: ctx.team_id ?? ENVELOPE_DEFAULTS.team_id,
  };
  if (input.user && !input.subtype && !input.bot_id) event.client_msg_id = randomUUID();
  return eventEnvelope(event, { ...ctx, event_id });
}

/** The rich_text block Slack's clients attach to a human's message, mirroring its text. */
export function richTextOf(text: string): unknown[] {
  return [{ type: 'rich_text', block_id: randomUUID().slice(0, 5), elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text }] }] }];
}

export function appMentionEnvelope(input: { channel: string; user: string; text: string; ts: string; thread_ts?: string }, ctx: EnvelopeContext = {}): EventCallback {
  return eventEnvelope({ type: 'app_mention', ...dropUndefined(input), event_ts: input.ts }, ctx);
}

export function appHomeOpenedEnvelope(user: string, ctx: EnvelopeContext = {}): EventCallback {
  return eventEnvelope({ type: 'app_home_opened', user, channel: `D${user.slice(1)}`, tab: 'home', event_ts: `${Date.now() / 1000}` }, ctx);
}

export interface BlockActionInput {
  user: { id: string; name?: string };
  channel: string;
  /** The message carrying the button (as stored by the fake, or any object with ts). */
  message: { ts: string; text?: string; blocks?: unknown[]; thread_ts?: string };
  /** An overflow or select carries `selected_option` instead of a value. */
  action: { action_id: string; block_id?: string; value?: string; type?: string; text?: string; selected_option?: { value: string; text?: string } };
  trigger_id?: string;
  /** Set for a click inside a dialog: the payload then has a view container and no channel or message. */
  view?: { id: string; private_metadata?: string };
  response_url?: string;
}

/** A `block_actions` interaction payload (a button click), as Bolt's `app.action()` receives it. */
export function blockActionsPayload(input: BlockActionInput, ctx: EnvelopeContext = {}): Record<string, unknown> {
  const c = { ...ENVELOPE_DEFAULTS, ...ctx };
  const { action, message } = input;
  const actionTs = `${(Date.now() / 1000).toFixed(6)}`;
  const payload: Record<string, unknown> = {
    type: 'block_actions',
    user: { id: input.user.id, username: input.user.name ?? input.user.id, name: input.user.name ?? input.user.id, team_id: c.team_id },
    api_app_id: c.api_app_id,
    token: c.token,
    container: { type: 'message', message_ts: message.ts, channel_id: input.channel, is_ephemeral: false, ...(message.thread_ts ? { thread_ts: message.thread_ts } : {}) },
    trigger_id: input.trigger_id ?? `${Date.now()}.fake.trigger`,
    team: { id: c.team_id, domain: 'fake' },
    enterprise: null,
    is_enterprise_install: false,
    channel: { id: input.channel, name: input.channel.toLowerCase() },
    message: { type: 'message', user: c.bot_user_id, text: '', ...message },
    state: { values: {} },
    ...(input.response_url ? { response_url: input.response_url } : {}),
    actions: [{
      type: action.type ?? (action.selected_option ? 'overflow' : 'button'),
      action_id: action.action_id,
      block_id: action.block_id ?? 'actions',
      ...(action.value !== undefined ? { value: action.value } : {}),
      ...(action.selected_option
        ? { selected_option: { text: { type: 'plain_text', text: action.selected_option.text ?? action.selected_option.value, emoji: true }, value: action.selected_option.value } }
        : { text: { type: 'plain_text', text: action.text ?? action.action_id, emoji: true } }),
      action_ts: actionTs,
    }],
  };
  if (input.view) {
    const { channel: _c, message: _m, ...rest } = payload;
    return { ...rest, container: { type: 'view', view_id: input.view.id }, view: { id: input.view.id, type: 'modal', private_metadata: input.view.private_metadata ?? '', hash: `${input.view.id}.hash`, state: { values: {} } } };
  }
  return payload;
}

function dropUndefined<T extends Record<string, unknown>>(obj: T): Partial<T> {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as Partial<T>;
}

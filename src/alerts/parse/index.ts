/**
 * Turns a Slack message from an alert channel into an `Alert`. Each tool has one parser file (registry below,
 * most specific first; `generic` last catches the rest). `parseAlertMessage` never throws: a message of the
 * wrong shape is `malformed`, ordinary chat is `not_alert`.
 */
import { z } from 'zod';
import type { AlertMessage } from '../types.js';
import { alertmanagerParser } from './alertmanager.js';
import { datadogParser } from './datadog.js';
import { flattenMessage } from './flatten.js';
import { genericParser } from './generic.js';
import { grafanaParser } from './grafana.js';
import { pagerdutyParser } from './pagerduty.js';
import type { AlertParser, ParseContext, ParseResult } from './types.js';

export type { ParseResult } from './types.js';
export { parseAlertmanagerWebhook, AlertWebhookError } from './alertmanager-webhook.js';

/** Grafana before Alertmanager: both use the `[FIRING:n]` subject, Grafana is told apart by its footer/sender. */
export const ALERT_PARSERS: readonly AlertParser[] = [grafanaParser, pagerdutyParser, datadogParser, alertmanagerParser, genericParser];

/** Slack caps message text at 40,000 characters; anything far beyond is not a real alert post. */
const MAX_CONTENT_CHARS = 100_000;

const optionalString = z.string().nullish();
const messageSchema = z.looseObject({
  text: optionalString,
  username: optionalString,
  bot_id: optionalString,
  ts: optionalString,
  bot_profile: z.looseObject({ name: optionalString }).nullish(),
  attachments: z
    .array(
      z.looseObject({
        title: optionalString,
        title_link: optionalString,
        pretext: optionalString,
        text: optionalString,
        fallback: optionalString,
        color: optionalString,
        footer: optionalString,
        fields: z.array(z.looseObject({ title: optionalString, value: optionalString })).nullish(),
      }),
    )
    .nullish(),
  blocks: z.array(z.looseObject({ type: z.string() })).nullish(),
});

export function parseAlertMessage(msg: AlertMessage, opts: { receivedAt?: Date } = {}): ParseResult {
  try {
    const checked = messageSchema.safeParse(msg);
    if (!checked.success) {
      const issue = checked.error.issues[0];
      return { kind: 'malformed', reason: `unexpected message shape at ${issue?.path.join('.') || '(message)'}: ${issue?.message ?? 'invalid'}` };
    }
    const size = JSON.stringify(msg).length;
    if (size > MAX_CONTENT_CHARS) return { kind: 'malformed', reason: `message is too large to be an alert post (${size} characters)` };

    const flat = flattenMessage(withoutNulls(msg));
    const ctx: ParseContext = { msg, flat, postedAt: postTime(msg.ts) ?? opts.receivedAt ?? new Date() };
    const parser = ALERT_PARSERS.find((candidate) => candidate.detect(ctx)) ?? genericParser;
    return parser.parse(ctx);
  } catch (error) {
    // A parser bug must not take the Slack listener down; surface it as data.
    return { kind: 'malformed', reason: `could not parse message: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** Slack `ts` (`"1764430000.000100"`) → Date. */
function postTime(ts: string | undefined): Date | undefined {
  if (!ts || !/^\d+(\.\d+)?$/.test(ts)) return undefined;
  const date = new Date(Number(ts) * 1000);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** Slack sends `null` for some absent fields; the flattener expects absent. */
function withoutNulls(msg: AlertMessage): AlertMessage {
  return JSON.parse(JSON.stringify(msg), (_key, value: unknown) => (value === null ? undefined : value)) as AlertMessage;
}

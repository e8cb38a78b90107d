import { truncateMrkdwn } from './truncate.js';

/**
 * Escapes text for Slack mrkdwn. Slack's rule: only `&`, `<` and `>` are control characters and must be
 * sent as `&amp;`, `&lt;`, `&gt;`; nothing else is escaped (formatting characters are left as typed).
 */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Escaped user/evidence text, cut to `max` without breaking an entity. */
export function mrkdwnText(text: string, max: number): string {
  return truncateMrkdwn(escapeMrkdwn(text), max);
}

/**
 * An inline code span that stays one span whatever the input: the content is cut before wrapping, is
 * single-line, and a backtick inside (which would end the span early) is shown as `ˋ`.
 */
export function codeSpan(text: string, max = 200): string {
  const inner = text.replace(/`/g, 'ˋ').replace(/\s*\n\s*/g, ' ');
  return `\`${mrkdwnText(inner, Math.max(2, max - 2))}\``;
}

const SAFE_URL = /^(?:https?:\/\/|mailto:)[^\s]+$/i;
/** Links we emit are capped below the button-url limit; a longer URL is shown as plain text instead. */
const MAX_LINK_URL = 1000;

/** Whether a URL can be put in a `<url|label>` link: http(s)/mailto only, no whitespace, bounded. */
export function isLinkableUrl(url: string | undefined, maxUrl = MAX_LINK_URL): url is string {
  return url !== undefined && url.length <= maxUrl && SAFE_URL.test(url);
}

/**
 * `<url|label>`: the URL keeps `&` as typed but has the characters that would end the token (`<`, `>`,
 * `|`) percent-encoded; the label is escaped and cut. Falls back to the bare label for unlinkable URLs.
 */
export function mrkdwnLink(url: string | undefined, label: string, maxLabel = 120, maxUrl = MAX_LINK_URL): string {
  const text = mrkdwnText(label.replace(/\s*\n\s*/g, ' '), maxLabel);
  if (!isLinkableUrl(url, maxUrl)) return text;
  const safe = url.replace(/</g, '%3C').replace(/>/g, '%3E').replace(/\|/g, '%7C');
  return `<${safe}|${text}>`;
}

const USER_ID = /^[UW][A-Z0-9]{2,}$/;
const GROUP_ID = /^S[A-Z0-9]{2,}$/;

/** A Slack user (`U…`/`W…`) or user group (`S…`) id as a mention; anything else as escaped text. */
export function mention(who: string): string {
  if (USER_ID.test(who)) return `<@${who}>`;
  if (GROUP_ID.test(who)) return `<!subteam^${who}>`;
  return mrkdwnText(who, 80);
}

/** Plain (notification) text: no markup, entities escaped because message `text` is parsed as mrkdwn. */
export function fallbackText(text: string, max: number): string {
  return mrkdwnText(text.replace(/\s*\n\s*/g, ' '), max);
}

import type { ContextBlock, DividerBlock, HeaderBlock, KnownBlock, SectionBlock } from '@slack/types';
import { SLACK_LIMITS } from './limits.js';
import { truncateMrkdwn, truncatePlain } from './truncate.js';

/**
 * Block constructors that cannot exceed Slack's limits: every text passed in is cut to its field's limit
 * (mrkdwn-safely), and empty text (which Slack refuses) becomes a single space-free placeholder.
 */

/** What every renderer returns: `text` is the notification / screen-reader fallback. */
export interface RenderedMessage {
  text: string;
  blocks: KnownBlock[];
}

const nonEmpty = (s: string): string => (s.trim().length > 0 ? s : '—');

export function headerBlock(text: string): HeaderBlock {
  return { type: 'header', text: { type: 'plain_text', text: nonEmpty(truncatePlain(text.replace(/\s+/g, ' '), SLACK_LIMITS.headerText)), emoji: true } };
}

/** A section of mrkdwn; `text` must already be escaped. */
export function sectionBlock(mrkdwn: string): SectionBlock {
  return { type: 'section', text: { type: 'mrkdwn', text: nonEmpty(truncateMrkdwn(mrkdwn, SLACK_LIMITS.sectionText)) } };
}

/** A context block of mrkdwn items (already escaped); extra items beyond 10 are merged into the last one. */
export function contextBlock(items: string[]): ContextBlock {
  const max = SLACK_LIMITS.contextElements;
  const kept = items.length > max ? [...items.slice(0, max - 1), items.slice(max - 1).join(' · ')] : items;
  const elements = (kept.length > 0 ? kept : ['—']).map((t) => ({
    type: 'mrkdwn' as const,
    text: nonEmpty(truncateMrkdwn(t, SLACK_LIMITS.textObject)),
  }));
  return { type: 'context', elements };
}

export function dividerBlock(): DividerBlock {
  return { type: 'divider' };
}

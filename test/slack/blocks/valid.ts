import { expect } from 'vitest';
import { validateMessagePayload, validateView } from '../../fakes/slack/blockkit.js';
import { BLOCKS_TEXT_BUDGET, blocksTextLength, SLACK_LIMITS } from '../../../src/slack/blocks/limits.js';
import type { RenderedMessage } from '../../../src/slack/blocks/elements.js';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Every `text` string in a payload. */
export function allTexts(v: unknown): string[] {
  if (Array.isArray(v)) return v.flatMap(allTexts);
  if (v !== null && typeof v === 'object') {
    return Object.entries(v).flatMap(([k, x]) => (k === 'text' && typeof x === 'string' ? [x] : allTexts(x)));
  }
  return [];
}

/** What Slack would accept (the fake's validator), plus our own cumulative text budget and hygiene checks. */
export function expectValidMessage(m: RenderedMessage): void {
  expect(validateMessagePayload({ text: m.text, blocks: m.blocks })).toBeUndefined();
  expect(m.blocks.length).toBeLessThanOrEqual(SLACK_LIMITS.blocksPerMessage);
  expect(m.text.length).toBeGreaterThan(0);
  expect(m.text.length).toBeLessThanOrEqual(SLACK_LIMITS.messageTextRecommended);
  expect(blocksTextLength(m.blocks)).toBeLessThanOrEqual(BLOCKS_TEXT_BUDGET);
  for (const t of [m.text, ...allTexts(m.blocks)]) expect(t).not.toMatch(LONE_SURROGATE);
}

export { LONE_SURROGATE };

/** A modal Slack would accept (views.open), within the same text budget and hygiene. */
export function expectValidView(view: { blocks: unknown[] }): void {
  expect(validateView(view)).toEqual([]);
  expect(blocksTextLength(view.blocks as never)).toBeLessThanOrEqual(BLOCKS_TEXT_BUDGET);
  for (const t of allTexts(view.blocks)) expect(t).not.toMatch(LONE_SURROGATE);
}

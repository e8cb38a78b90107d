import type { ContextBlock, KnownBlock } from '@slack/types';

/**
 * Slack Block Kit limits (PLATFORM-FACTS A5, Slack's Block Kit reference). Lengths are counted in UTF-16
 * code units (`string.length`), which is never less than Slack's character count, so staying under them
 * here keeps a payload valid whichever way Slack counts.
 */
export const SLACK_LIMITS = {
  blocksPerMessage: 50,
  blocksPerView: 100,
  sectionText: 3000,
  sectionFields: 10,
  sectionFieldText: 2000,
  /** Any composition text object (context elements included). */
  textObject: 3000,
  headerText: 150,
  contextElements: 10,
  actionsElements: 25,
  buttonText: 75,
  buttonValue: 2000,
  actionId: 255,
  buttonUrl: 3000,
  buttonAccessibilityLabel: 75,
  selectOptions: 100,
  optionText: 75,
  optionValue: 150,
  blockId: 255,
  confirmTitle: 100,
  confirmText: 300,
  confirmButton: 30,
  denyButton: 30,
  modalTitle: 24,
  modalSubmit: 24,
  modalClose: 24,
  privateMetadata: 3000,
  callbackId: 255,
  /** Legacy attachments per message (Slack recommends ≤20). */
  attachmentsPerMessage: 100,
  /** Slack recommends keeping a message's top-level `text` under this. */
  messageTextRecommended: 4000,
  /** Slack truncates (and refuses with `msg_too_long`) a message `text` above this. */
  messageTextHard: 40_000,
} as const;

/**
 * Our own cap on the summed text of one message's blocks. Slack refuses payloads whose blocks carry
 * roughly 12,000+ text characters with `msg_blocks_too_long`, a limit it does not document (slackapi/bolt-js
 * issues #2509 and #2867 report rejections between ~11,300 and ~13,300), so we stay well below it.
 */
export const BLOCKS_TEXT_BUDGET = 9000;

/** Sum of every `text` string inside the blocks (the measure Slack's cumulative limit is reported to use). */
export function blocksTextLength(blocks: readonly unknown[]): number {
  let total = 0;
  const walk = (v: unknown, key?: string): void => {
    if (typeof v === 'string') {
      if (key === 'text') total += v.length;
    } else if (Array.isArray(v)) {
      for (const x of v) walk(x);
    } else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) walk(x, k);
    }
  };
  walk(blocks);
  return total;
}

export interface FitOptions {
  /** Summed text cap (see BLOCKS_TEXT_BUDGET); pass Infinity to check the block count only. */
  textBudget?: number;
  /** Blocks at the end that must survive (e.g. an "updated at" footer). */
  keepTail?: number;
  /** Word for what is omitted: `… 3 more hypotheses not shown`. */
  noun?: string;
  /** Which dropped blocks count as one omitted `noun` (default: every block), e.g. an item's first block. */
  isItem?: (block: KnownBlock) => boolean;
}

/**
 * Fits blocks into one message: when there are more than `max` blocks (or more text than the budget), keeps
 * the leading blocks — builders put the most important first — plus `keepTail` trailing ones, and replaces
 * the dropped middle with one context block “… N more not shown”.
 */
export function fitBlocks(blocks: readonly KnownBlock[], max: number = SLACK_LIMITS.blocksPerMessage, opts: FitOptions = {}): KnownBlock[] {
  const budget = opts.textBudget ?? BLOCKS_TEXT_BUDGET;
  if (blocks.length <= max && blocksTextLength(blocks) <= budget) return [...blocks];
  const keepTail = Math.min(Math.max(0, opts.keepTail ?? 0), Math.max(0, max - 1), blocks.length);
  const tail = blocks.slice(blocks.length - keepTail);
  const head = blocks.slice(0, blocks.length - keepTail);
  const tailLength = blocksTextLength(tail);
  let kept = Math.min(head.length, max - 1 - keepTail);
  const headLengths = head.map((b) => blocksTextLength([b]));
  let headLength = headLengths.slice(0, kept).reduce((a, b) => a + b, 0);
  const omitted = (from: number): number => (opts.isItem ? head.slice(from).filter(opts.isItem).length : head.length - from);
  const omission = (n: number): ContextBlock => ({
    type: 'context',
    elements: [{ type: 'mrkdwn', text: `… ${n} more ${opts.noun ? `${opts.noun} ` : ''}not shown` }],
  });
  while (kept > 0 && headLength + tailLength + blocksTextLength([omission(omitted(kept))]) > budget) {
    kept--;
    headLength -= headLengths[kept] ?? 0;
  }
  return [...head.slice(0, kept), omission(omitted(kept)), ...tail];
}

export { truncateMrkdwn, truncatePlain, ELLIPSIS } from './truncate.js';
export { escapeMrkdwn } from './mrkdwn.js';

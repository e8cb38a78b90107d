/**
 * Block Kit validation as Slack's servers apply it, independent of any app code. Used by the fake Web API to
 * refuse what Slack would refuse, and usable on its own in unit tests:
 *   expect(validateBlocks(renderCard(x), 'message')).toEqual([]);
 * Limits: PLATFORM-FACTS A5 (Slack Block Kit reference).
 */
import {
  checkArray,
  checkEnum,
  checkString,
  checkTextObject,
  Issues,
  requireObject,
  type BlockKitIssue,
  type Obj,
  UniqueIds,
} from './blockkit-check.js';
import { checkElement } from './blockkit-elements.js';

export type { BlockKitIssue } from './blockkit-check.js';

/** Where blocks are shown: a message allows 50 blocks, a modal or Home tab 100. */
export type BlockSurface = 'message' | 'modal' | 'home';

export const MAX_BLOCKS: Record<BlockSurface, number> = { message: 50, modal: 100, home: 100 };
/** Slack truncates message text above this and refuses it with `msg_too_long`. */
export const MAX_MESSAGE_TEXT = 40_000;
export const MAX_ATTACHMENTS = 100;
/**
 * Slack refuses a message whose blocks carry more text than this in total with `msg_blocks_too_long`
 * (undocumented; slackapi/bolt-js #2509 and #2867 report refusals from about 11,300 to 13,300 characters).
 */
export const MAX_BLOCKS_TEXT = 12_000;

/** Every `text` string inside the blocks, summed (what the cumulative limit is reported to count). */
export function blocksTextTotal(blocks: unknown): number {
  let total = 0;
  const walk = (v: unknown, key?: string): void => {
    if (typeof v === 'string') total += key === 'text' ? v.length : 0;
    else if (Array.isArray(v)) v.forEach((x) => walk(x));
    else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, k);
  };
  walk(blocks);
  return total;
}

export const KNOWN_BLOCK_TYPES = [
  'section', 'header', 'context', 'actions', 'divider', 'image', 'rich_text', 'input', 'markdown', 'file', 'video',
] as const;

const RICH_TEXT_ELEMENTS = ['rich_text_section', 'rich_text_list', 'rich_text_preformatted', 'rich_text_quote'];

function checkSection(block: Obj, p: string, issues: Issues, actionIds: UniqueIds): void {
  if (block.text === undefined && block.fields === undefined) issues.add(p, 'must provide either text or fields');
  checkTextObject(block.text, `${p}/text`, issues, { max: 3000 });
  const fields = checkArray(block.fields, `${p}/fields`, issues, { max: 10, min: 1 });
  fields.forEach((field, i) => checkTextObject(field, `${p}/fields/${i}`, issues, { max: 2000, required: true }));
  if (block.accessory !== undefined) checkElement(block.accessory, `${p}/accessory`, issues, 'accessory', actionIds);
}

function checkImageBlock(block: Obj, p: string, issues: Issues): void {
  if (block.slack_file === undefined) checkString(block.image_url, `${p}/image_url`, issues, { max: 3000, required: true });
  checkString(block.alt_text, `${p}/alt_text`, issues, { max: 2000, required: true });
  checkTextObject(block.title, `${p}/title`, issues, { max: 2000, plainOnly: true });
}

function checkRichText(block: Obj, p: string, issues: Issues): void {
  const elements = checkArray(block.elements, `${p}/elements`, issues, { max: 100, required: true });
  elements.forEach((el, i) => {
    const obj = requireObject(el, `${p}/elements/${i}`, issues);
    if (obj) checkEnum(obj.type, `${p}/elements/${i}/type`, issues, RICH_TEXT_ELEMENTS);
  });
}

function checkInput(block: Obj, p: string, issues: Issues, actionIds: UniqueIds): void {
  checkTextObject(block.label, `${p}/label`, issues, { max: 2000, required: true, plainOnly: true });
  checkTextObject(block.hint, `${p}/hint`, issues, { max: 2000, plainOnly: true });
  if (block.element === undefined) issues.add(`${p}/element`, 'missing required field');
  else checkElement(block.element, `${p}/element`, issues, 'input', actionIds);
}

function checkBlock(value: unknown, p: string, issues: Issues, blockIds: UniqueIds): void {
  const block = requireObject(value, p, issues);
  if (!block) return;
  const type = block.type;
  if (typeof type !== 'string' || !(KNOWN_BLOCK_TYPES as readonly string[]).includes(type)) {
    issues.add(`${p}/type`, `unsupported block type: ${String(type)}`);
    return;
  }
  checkString(block.block_id, `${p}/block_id`, issues, { max: 255 });
  blockIds.check(block.block_id, `${p}/block_id`, issues);
  const actionIds = new UniqueIds('action_id');
  switch (type) {
    case 'section':
      return checkSection(block, p, issues, actionIds);
    case 'header':
      return checkTextObject(block.text, `${p}/text`, issues, { max: 150, required: true, plainOnly: true });
    case 'context': {
      const elements = checkArray(block.elements, `${p}/elements`, issues, { max: 10, min: 1, required: true });
      return elements.forEach((el, i) => checkElement(el, `${p}/elements/${i}`, issues, 'context', actionIds));
    }
    case 'actions': {
      const elements = checkArray(block.elements, `${p}/elements`, issues, { max: 25, min: 1, required: true });
      return elements.forEach((el, i) => checkElement(el, `${p}/elements/${i}`, issues, 'actions', actionIds));
    }
    case 'image':
      return checkImageBlock(block, p, issues);
    case 'rich_text':
      return checkRichText(block, p, issues);
    case 'input':
      return checkInput(block, p, issues, actionIds);
    case 'markdown':
      // Markdown blocks take a raw string; Slack caps the cumulative markdown text of a payload at 12,000.
      return checkString(block.text, `${p}/text`, issues, { max: 12_000, required: true });
    default:
      return; // divider, file, video: nothing the fake checks
  }
}

function collectBlocks(blocks: unknown, surface: BlockSurface, pointer: string, issues: Issues): void {
  const list = checkArray(blocks, pointer, issues, { max: MAX_BLOCKS[surface] });
  const blockIds = new UniqueIds('block_id');
  list.forEach((block, i) => checkBlock(block, `${pointer}/${i}`, issues, blockIds));
}

/** Validates a `blocks` array for a surface. Returns Slack-style issues; empty means Slack would accept it. */
export function validateBlocks(blocks: unknown, surface: BlockSurface = 'message'): BlockKitIssue[] {
  const issues = new Issues();
  collectBlocks(blocks, surface, '/blocks', issues);
  return issues.list;
}

/** Validates a modal or Home tab view object as passed to views.open / views.publish / views.update. */
export function validateView(view: unknown): BlockKitIssue[] {
  const issues = new Issues();
  const obj = requireObject(view, '/view', issues);
  if (!obj) return issues.list;
  if (obj.type !== 'modal' && obj.type !== 'home') {
    issues.add('/view/type', 'must be a valid enum value');
    return issues.list;
  }
  const surface: BlockSurface = obj.type;
  if (surface === 'modal') {
    checkTextObject(obj.title, '/view/title', issues, { max: 24, required: true, plainOnly: true });
    checkTextObject(obj.submit, '/view/submit', issues, { max: 24, plainOnly: true });
    checkTextObject(obj.close, '/view/close', issues, { max: 24, plainOnly: true });
    const hasInput = Array.isArray(obj.blocks) && obj.blocks.some((b) => (b as Obj | null)?.type === 'input');
    if (hasInput && obj.submit === undefined) issues.add('/view/submit', 'submit is required when an input block is present');
  }
  if (obj.blocks === undefined) issues.add('/view/blocks', 'missing required field');
  else collectBlocks(obj.blocks, surface, '/view/blocks', issues);
  checkString(obj.private_metadata, '/view/private_metadata', issues, { max: 3000, min: 0 });
  checkString(obj.callback_id, '/view/callback_id', issues, { max: 255 });
  checkString(obj.external_id, '/view/external_id', issues, { max: 255 });
  return issues.list;
}

/** The shape of Slack's refusal, e.g. `{ ok:false, error:'invalid_blocks', errors:[…], response_metadata:{ messages:['[ERROR] …'] } }`. */
export interface SlackValidationError {
  ok: false;
  error: string;
  errors: string[];
  response_metadata: { messages: string[] };
}

export function toSlackError(error: string, issues: BlockKitIssue[]): SlackValidationError {
  const errors = issues.map((issue) => `${issue.message} [json-pointer:${issue.pointer}]`);
  return { ok: false, error, errors, response_metadata: { messages: errors.map((e) => `[ERROR] ${e}`) } };
}

export interface MessagePayload {
  text?: unknown;
  blocks?: unknown;
  attachments?: unknown;
}

/**
 * What chat.postMessage / chat.update / chat.postEphemeral would answer for this content, or undefined when Slack
 * accepts it. `requireContent` is false for chat.update, which keeps omitted fields.
 */
export function validateMessagePayload(payload: MessagePayload, requireContent = true): SlackValidationError | undefined {
  const { text, blocks, attachments } = payload;
  const hasText = typeof text === 'string' && text.length > 0;
  const hasBlocks = Array.isArray(blocks) && blocks.length > 0;
  const hasAttachments = Array.isArray(attachments) && attachments.length > 0;
  if (requireContent && !hasText && !hasBlocks && !hasAttachments) return toSlackError('no_text', []);
  if (typeof text === 'string' && text.length > MAX_MESSAGE_TEXT) {
    return toSlackError('msg_too_long', [{ pointer: '/text', message: `must be less than ${MAX_MESSAGE_TEXT + 1} characters` }]);
  }
  if (blocks !== undefined) {
    const issues = validateBlocks(blocks, 'message');
    if (issues.length > 0) return toSlackError('invalid_blocks', issues);
    const total = blocksTextTotal(blocks);
    if (total > MAX_BLOCKS_TEXT) return toSlackError('msg_blocks_too_long', [{ pointer: '/blocks', message: `the blocks carry ${total} text characters; Slack refuses more than about ${MAX_BLOCKS_TEXT}` }]);
  }
  if (attachments !== undefined) {
    if (!Array.isArray(attachments)) return toSlackError('invalid_attachments', [{ pointer: '/attachments', message: 'must provide an array' }]);
    if (attachments.length > MAX_ATTACHMENTS) return toSlackError('too_many_attachments', []);
  }
  return undefined;
}

/**
 * Primitive checks for Block Kit validation. Each check appends Slack-worded issues with a JSON pointer
 * (e.g. `must be less than 3001 characters [json-pointer:/blocks/0/text/text]`), the way Slack reports them.
 */

export interface BlockKitIssue {
  /** JSON pointer into the submitted payload, e.g. `/blocks/3/text`. */
  pointer: string;
  message: string;
}

export class Issues {
  readonly list: BlockKitIssue[] = [];

  add(pointer: string, message: string): void {
    this.list.push({ pointer, message });
  }
}

export type Obj = Record<string, unknown>;

export function isObject(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Requires an object at `pointer`; returns it or undefined (after recording the issue). */
export function requireObject(value: unknown, pointer: string, issues: Issues): Obj | undefined {
  if (isObject(value)) return value;
  issues.add(pointer, 'must provide an object');
  return undefined;
}

export interface StringRule {
  max: number;
  required?: boolean;
  /** Slack rejects empty strings for most fields. */
  min?: number;
}

/** Checks an optional/required string field with Slack's "less than max+1" wording. */
export function checkString(value: unknown, pointer: string, issues: Issues, rule: StringRule): void {
  if (value === undefined) {
    if (rule.required) issues.add(pointer, 'missing required field');
    return;
  }
  if (typeof value !== 'string') {
    issues.add(pointer, 'must provide a string');
    return;
  }
  const min = rule.min ?? 1;
  if (value.length < min) issues.add(pointer, `must be more than ${min - 1} characters`);
  if (value.length > rule.max) issues.add(pointer, `must be less than ${rule.max + 1} characters`);
}

export interface ArrayRule {
  max: number;
  min?: number;
  required?: boolean;
}

/** Checks an array field; returns the array (possibly empty) so callers can walk the items. */
export function checkArray(value: unknown, pointer: string, issues: Issues, rule: ArrayRule): unknown[] {
  if (value === undefined) {
    if (rule.required) issues.add(pointer, 'missing required field');
    return [];
  }
  if (!Array.isArray(value)) {
    issues.add(pointer, 'must provide an array');
    return [];
  }
  const min = rule.min ?? 0;
  if (value.length < min) issues.add(pointer, `must provide at least ${min} items`);
  if (value.length > rule.max) issues.add(pointer, `no more than ${rule.max} items allowed`);
  return value;
}

export function checkEnum(value: unknown, pointer: string, issues: Issues, allowed: readonly string[]): void {
  if (value === undefined) return;
  if (typeof value !== 'string' || !allowed.includes(value)) issues.add(pointer, 'must be a valid enum value');
}

export interface TextRule {
  max: number;
  required?: boolean;
  /** Only `plain_text` allowed (headers, button labels, modal titles, placeholders…). */
  plainOnly?: boolean;
}

/** A composition text object: `{ type: 'plain_text' | 'mrkdwn', text }`, non-empty text, bounded length. */
export function checkTextObject(value: unknown, pointer: string, issues: Issues, rule: TextRule): void {
  if (value === undefined) {
    if (rule.required) issues.add(pointer, 'missing required field');
    return;
  }
  const obj = requireObject(value, pointer, issues);
  if (!obj) return;
  const allowed = rule.plainOnly ? ['plain_text'] : ['plain_text', 'mrkdwn'];
  if (typeof obj.type !== 'string' || !allowed.includes(obj.type)) {
    issues.add(`${pointer}/type`, rule.plainOnly ? 'must be plain_text' : 'must be a valid enum value');
  }
  checkString(obj.text, `${pointer}/text`, issues, { max: rule.max, required: true });
  if (obj.emoji !== undefined && obj.type !== 'plain_text') issues.add(`${pointer}/emoji`, 'emoji is only allowed on plain_text');
  if (obj.verbatim !== undefined && obj.type !== 'mrkdwn') issues.add(`${pointer}/verbatim`, 'verbatim is only allowed on mrkdwn');
}

/** Records duplicates of `id` within one scope (block_id per message, action_id per block). */
export class UniqueIds {
  private readonly seen = new Set<string>();

  constructor(private readonly label: string) {}

  check(id: unknown, pointer: string, issues: Issues): void {
    if (typeof id !== 'string') return;
    if (this.seen.has(id)) issues.add(pointer, `duplicate ${this.label}: ${id}`);
    this.seen.add(id);
  }
}

/**
 * Block elements and composition objects (options, confirm dialogs). Limits from Slack's Block Kit reference
 * (PLATFORM-FACTS A5): button text 75 / value 2000 / action_id 255 / url 3000; option text 75 / value 150;
 * select options 100; confirm title 100 / text 300 / confirm 30 / deny 30; placeholder 150.
 */
import {
  checkArray,
  checkEnum,
  checkString,
  checkTextObject,
  Issues,
  requireObject,
  type Obj,
  UniqueIds,
} from './blockkit-check.js';

/** Where an element sits decides which element types are allowed there. */
export type ElementSlot = 'actions' | 'accessory' | 'input' | 'context';

const SELECTS = [
  'static_select', 'external_select', 'users_select', 'conversations_select', 'channels_select',
  'multi_static_select', 'multi_external_select', 'multi_users_select', 'multi_conversations_select', 'multi_channels_select',
] as const;
const PICKERS = ['datepicker', 'timepicker', 'datetimepicker'] as const;
const CHOICES = ['checkboxes', 'radio_buttons'] as const;
const TEXT_INPUTS = ['plain_text_input', 'number_input', 'email_text_input', 'url_text_input', 'rich_text_input', 'file_input'] as const;

const ALLOWED: Record<ElementSlot, readonly string[]> = {
  actions: ['button', 'overflow', ...SELECTS, ...PICKERS, ...CHOICES, 'workflow_button', 'rich_text_input'],
  accessory: ['button', 'image', 'overflow', ...SELECTS, ...PICKERS, ...CHOICES],
  input: [...SELECTS, ...PICKERS, ...CHOICES, ...TEXT_INPUTS],
  context: ['image', 'plain_text', 'mrkdwn'],
};

const DATE = /^\d{4}-\d{2}-\d{2}$/;

export function checkConfirm(value: unknown, pointer: string, issues: Issues): void {
  if (value === undefined) return;
  const confirm = requireObject(value, pointer, issues);
  if (!confirm) return;
  checkTextObject(confirm.title, `${pointer}/title`, issues, { max: 100, required: true, plainOnly: true });
  checkTextObject(confirm.text, `${pointer}/text`, issues, { max: 300, required: true });
  checkTextObject(confirm.confirm, `${pointer}/confirm`, issues, { max: 30, required: true, plainOnly: true });
  checkTextObject(confirm.deny, `${pointer}/deny`, issues, { max: 30, required: true, plainOnly: true });
  checkEnum(confirm.style, `${pointer}/style`, issues, ['primary', 'danger']);
}

interface OptionRule {
  /** Checkbox/radio option text may be mrkdwn; select/overflow options are plain_text. */
  mrkdwnText?: boolean;
  /** Overflow options may carry a url. */
  allowUrl?: boolean;
}

export function checkOption(value: unknown, pointer: string, issues: Issues, rule: OptionRule = {}): void {
  const option = requireObject(value, pointer, issues);
  if (!option) return;
  checkTextObject(option.text, `${pointer}/text`, issues, { max: 75, required: true, plainOnly: !rule.mrkdwnText });
  checkString(option.value, `${pointer}/value`, issues, { max: 150, required: true });
  checkTextObject(option.description, `${pointer}/description`, issues, { max: 75, plainOnly: !rule.mrkdwnText });
  if (option.url !== undefined) {
    if (rule.allowUrl) checkString(option.url, `${pointer}/url`, issues, { max: 3000 });
    else issues.add(`${pointer}/url`, 'url is only allowed in overflow options');
  }
}

function checkOptions(element: Obj, pointer: string, issues: Issues, max: number, min: number, rule: OptionRule = {}): void {
  const options = checkArray(element.options, `${pointer}/options`, issues, { max, min, required: true });
  options.forEach((option, i) => checkOption(option, `${pointer}/options/${i}`, issues, rule));
}

function checkSelect(element: Obj, pointer: string, issues: Issues, type: string): void {
  checkTextObject(element.placeholder, `${pointer}/placeholder`, issues, { max: 150, plainOnly: true });
  if (type === 'static_select' || type === 'multi_static_select') {
    if (element.option_groups !== undefined) {
      const groups = checkArray(element.option_groups, `${pointer}/option_groups`, issues, { max: 100, min: 1 });
      groups.forEach((group, g) => {
        const groupObj = requireObject(group, `${pointer}/option_groups/${g}`, issues);
        if (!groupObj) return;
        checkTextObject(groupObj.label, `${pointer}/option_groups/${g}/label`, issues, { max: 75, required: true, plainOnly: true });
        checkOptions(groupObj, `${pointer}/option_groups/${g}`, issues, 100, 1);
      });
    } else {
      checkOptions(element, pointer, issues, 100, 1);
    }
  }
  if (element.initial_option !== undefined) checkOption(element.initial_option, `${pointer}/initial_option`, issues);
}

function checkImageElement(element: Obj, pointer: string, issues: Issues): void {
  if (element.slack_file === undefined) checkString(element.image_url, `${pointer}/image_url`, issues, { max: 3000, required: true });
  checkString(element.alt_text, `${pointer}/alt_text`, issues, { max: 2000, required: true });
}

function checkButton(element: Obj, pointer: string, issues: Issues): void {
  checkTextObject(element.text, `${pointer}/text`, issues, { max: 75, required: true, plainOnly: true });
  checkString(element.value, `${pointer}/value`, issues, { max: 2000 });
  checkString(element.url, `${pointer}/url`, issues, { max: 3000 });
  checkString(element.accessibility_label, `${pointer}/accessibility_label`, issues, { max: 75 });
  checkEnum(element.style, `${pointer}/style`, issues, ['primary', 'danger']);
}

function checkTextInput(element: Obj, pointer: string, issues: Issues): void {
  checkTextObject(element.placeholder, `${pointer}/placeholder`, issues, { max: 150, plainOnly: true });
  for (const key of ['min_length', 'max_length'] as const) {
    const n = element[key];
    if (n !== undefined && (typeof n !== 'number' || n < 0 || n > 3000)) issues.add(`${pointer}/${key}`, 'must be a number from 0 to 3000');
  }
  if (typeof element.initial_value === 'string' && element.initial_value.length > 3000) {
    issues.add(`${pointer}/initial_value`, 'must be less than 3001 characters');
  }
}

/**
 * Validates one element in a slot. `actionIds` scopes action_id uniqueness (one per block).
 * Context text objects are accepted here too because a context block mixes them with images.
 */
export function checkElement(value: unknown, pointer: string, issues: Issues, slot: ElementSlot, actionIds: UniqueIds): void {
  const element = requireObject(value, pointer, issues);
  if (!element) return;
  const type = element.type;
  if (typeof type !== 'string' || !ALLOWED[slot].includes(type)) {
    issues.add(`${pointer}/type`, `must be one of the element types allowed in ${slot}: got ${String(type)}`);
    return;
  }
  if (type === 'plain_text' || type === 'mrkdwn') {
    checkTextObject(element, pointer, issues, { max: 3000 });
    return;
  }
  if (type !== 'image') {
    checkString(element.action_id, `${pointer}/action_id`, issues, { max: 255 });
    actionIds.check(element.action_id, `${pointer}/action_id`, issues);
    checkConfirm(element.confirm, `${pointer}/confirm`, issues);
  }
  if (type === 'button') checkButton(element, pointer, issues);
  else if (type === 'image') checkImageElement(element, pointer, issues);
  else if (type === 'overflow') checkOptions(element, pointer, issues, 5, 1, { allowUrl: true });
  else if (type === 'checkboxes' || type === 'radio_buttons') checkOptions(element, pointer, issues, 10, 1, { mrkdwnText: true });
  else if ((SELECTS as readonly string[]).includes(type)) checkSelect(element, pointer, issues, type);
  else if (type === 'datepicker') {
    checkTextObject(element.placeholder, `${pointer}/placeholder`, issues, { max: 150, plainOnly: true });
    if (element.initial_date !== undefined && (typeof element.initial_date !== 'string' || !DATE.test(element.initial_date))) {
      issues.add(`${pointer}/initial_date`, 'must be a date in YYYY-MM-DD format');
    }
  } else if ((TEXT_INPUTS as readonly string[]).includes(type)) checkTextInput(element, pointer, issues);
}

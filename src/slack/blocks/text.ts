import { mrkdwnToPlain } from './plain.js';

/**
 * Renders any Block Kit message — our own cards, blocks built elsewhere, legacy attachments — as readable
 * terminal text (used by `npm run demo` to print a thread). Input is untrusted shape: anything unknown is
 * shown as `[type]` rather than throwing.
 */

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

const RULE = '─'.repeat(40);
const CONTEXT_PREFIX = '  ┊ ';

/** A composition text object (`plain_text` or `mrkdwn`) as plain text. */
function textObject(v: unknown): string {
  if (typeof v === 'string') return mrkdwnToPlain(v);
  if (!isObj(v)) return '';
  const text = str(v.text) ?? '';
  return v.type === 'mrkdwn' ? mrkdwnToPlain(text) : text;
}

/** Interactive elements as `[Label]`. */
function element(v: unknown): string {
  if (!isObj(v)) return '';
  switch (v.type) {
    case 'button':
    case 'workflow_button':
      return `[${textObject(v.text)}]`;
    case 'overflow':
      return '[⋯]';
    case 'image':
      return `[image: ${str(v.alt_text) ?? ''}]`;
    case 'plain_text':
    case 'mrkdwn':
      return textObject(v);
    default: {
      const label = textObject(v.placeholder) || textObject(v.text) || String(v.type);
      return `[${label} ▾]`;
    }
  }
}

function pad(s: string, width: number): string {
  return s + ' '.repeat(Math.max(0, width - [...s].length));
}

/** Fields shaped `*Key*\nValue` become `Key: Value`; anything else is laid out two per row. */
function fields(v: unknown[]): string[] {
  const texts = v.map(textObject);
  if (texts.every((t) => /^[^\n]+\n[^\n]+$/.test(t))) return texts.map((t) => t.replace('\n', ': '));
  const lefts = texts.filter((_, i) => i % 2 === 0).flatMap((t) => t.split('\n'));
  const width = Math.min(38, Math.max(0, ...lefts.map((l) => [...l].length))) + 3;
  const rows: string[] = [];
  for (let i = 0; i < texts.length; i += 2) {
    const left = (texts[i] ?? '').split('\n');
    const right = (texts[i + 1] ?? '').split('\n');
    for (let j = 0; j < Math.max(left.length, right.length); j++) rows.push(pad(left[j] ?? '', width) + (right[j] ?? ''));
  }
  return rows.map((r) => r.trimEnd());
}

function richInline(v: unknown): string {
  if (!isObj(v)) return '';
  const style = isObj(v.style) ? v.style : {};
  switch (v.type) {
    case 'text': {
      const t = str(v.text) ?? '';
      return style.code ? `\`${t}\`` : t;
    }
    case 'link': {
      const url = str(v.url) ?? '';
      const t = str(v.text);
      return t && t !== url ? `${t} (${url})` : url;
    }
    case 'user':
      return `@${str(v.user_id) ?? ''}`;
    case 'usergroup':
      return `@${str(v.usergroup_id) ?? ''}`;
    case 'channel':
      return `#${str(v.channel_id) ?? ''}`;
    case 'broadcast':
      return `@${str(v.range) ?? 'here'}`;
    case 'emoji':
      return str(v.unicode) ? String.fromCodePoint(...(str(v.unicode) ?? '').split('-').map((h) => parseInt(h, 16))) : `:${str(v.name) ?? ''}:`;
    case 'date':
      return str(v.fallback) ?? new Date(Number(v.timestamp) * 1000).toISOString();
    default:
      return '';
  }
}

function richText(v: unknown, depth = 0): string[] {
  if (!isObj(v)) return [];
  const inline = (): string => list(v.elements).map(richInline).join('');
  switch (v.type) {
    case 'rich_text':
      return list(v.elements).flatMap((e) => richText(e, depth));
    case 'rich_text_section':
      return inline().split('\n');
    case 'rich_text_preformatted':
      return ['```', ...inline().split('\n'), '```'];
    case 'rich_text_quote':
      return inline().split('\n').map((l) => `> ${l}`);
    case 'rich_text_list': {
      const indent = '  '.repeat(typeof v.indent === 'number' ? v.indent : depth);
      return list(v.elements).flatMap((item, i) => {
        const [first = '', ...rest] = richText(item, depth + 1);
        const bullet = v.style === 'ordered' ? `${i + 1}.` : '•';
        return [`${indent}${bullet} ${first}`, ...rest.map((l) => `${indent}  ${l}`)];
      });
    }
    default:
      return [];
  }
}

function block(b: unknown): string[] {
  if (!isObj(b)) return [];
  switch (b.type) {
    case 'header':
      return [`# ${textObject(b.text)}`];
    case 'section': {
      const out = b.text !== undefined ? textObject(b.text).split('\n') : [];
      out.push(...fields(list(b.fields)));
      if (b.accessory !== undefined) {
        const acc = element(b.accessory);
        if (out.length > 0) out[out.length - 1] += `  ${acc}`;
        else out.push(acc);
      }
      return out;
    }
    case 'context': {
      const items = list(b.elements).map(element).filter((t) => t.length > 0);
      return items.length > 0 ? items.join('  ·  ').split('\n').map((l) => CONTEXT_PREFIX + l) : [];
    }
    case 'divider':
      return [RULE];
    case 'actions':
      return [list(b.elements).map(element).join(' ')];
    case 'image':
      return [`[image: ${str(b.alt_text) ?? str(b.image_url) ?? ''}]`];
    case 'rich_text':
      return richText(b);
    case 'markdown':
      return (str(b.text) ?? '').split('\n');
    case 'input':
      return [`${textObject(b.label)}: ${element(b.element)}`];
    default:
      return [`[${String(b.type)}]`];
  }
}

/** A legacy attachment, drawn behind a `▌` bar like Slack's colour bar. */
function attachment(a: unknown): string[] {
  if (!isObj(a)) return [];
  const lines: string[] = [];
  const pretext = str(a.pretext);
  if (pretext) lines.push(...mrkdwnToPlain(pretext).split('\n'));
  const body: string[] = [];
  const author = str(a.author_name);
  if (author) body.push(author);
  const title = str(a.title);
  if (title) body.push(str(a.title_link) ? `${mrkdwnToPlain(title)} (${str(a.title_link)})` : mrkdwnToPlain(title));
  const text = str(a.text);
  if (text) body.push(...mrkdwnToPlain(text).split('\n'));
  for (const f of list(a.fields)) {
    if (isObj(f)) body.push(`${mrkdwnToPlain(str(f.title) ?? '')}: ${mrkdwnToPlain(str(f.value) ?? '')}`);
  }
  body.push(...list(a.blocks).flatMap(block));
  const image = str(a.image_url);
  if (image) body.push(`[image: ${image}]`);
  const footer = str(a.footer);
  if (footer) body.push(mrkdwnToPlain(footer));
  if (body.length === 0 && str(a.fallback)) body.push(str(a.fallback) ?? '');
  return [...lines, ...body.map((l) => `▌ ${l}`)];
}

export function renderBlocksAsText(payload: { text?: string; blocks?: unknown[]; attachments?: unknown[] }): string {
  const lines: string[] = [];
  const blocks = list(payload.blocks);
  // With blocks present Slack shows them and uses `text` only for notifications.
  if (blocks.length > 0) lines.push(...blocks.flatMap(block));
  else if (payload.text) lines.push(...mrkdwnToPlain(payload.text).split('\n'));
  lines.push(...list(payload.attachments).flatMap(attachment));
  return lines.map((l) => l.trimEnd()).join('\n');
}

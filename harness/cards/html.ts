/**
 * Block Kit → static HTML styled close to Slack's desktop client, for looking at the cards Vigil posts
 * (scripts/render-cards.ts screenshots it with headless Chromium). Not a full Slack renderer: it covers
 * what Vigil and the demo's alert posts use — header, section (text, fields, accessory), context,
 * actions (buttons, overflow, selects), divider, image, rich_text, markdown, input, legacy attachments —
 * and mrkdwn: links, mentions, `<!date>`, code, code blocks, bold, italic, strike, quotes.
 */

type Obj = Record<string, unknown>;

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Text that is already mrkdwn-escaped (`&amp;`, `&lt;`, `&gt;`): keeps those entities, escapes any other `&`, `"` and stray `<` `>`. */
const reescape = (s: string): string => s.replace(/&(?!amp;|lt;|gt;|quot;|#\d+;)/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const p2 = (n: number): string => String(n).padStart(2, '0');

/** What Slack shows for `<!date^secs^format|fallback>`, in the zone given (UTC here, so screenshots are stable). */
export function formatSlackDate(secs: number, format: string): string {
  const d = new Date(secs * 1000);
  if (Number.isNaN(d.getTime())) return format;
  const date = `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}`;
  const tokens: Record<string, string> = {
    date_num: `${d.getUTCFullYear()}-${p2(d.getUTCMonth() + 1)}-${p2(d.getUTCDate())}`,
    date: `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}, ${d.getUTCFullYear()}`,
    date_short: date,
    date_long: `${date}, ${d.getUTCFullYear()}`,
    date_pretty: date,
    date_short_pretty: date,
    date_long_pretty: `${date}, ${d.getUTCFullYear()}`,
    time: `${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}`,
    time_secs: `${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())}`,
  };
  return format.replace(/\{(\w+)\}/g, (m, k: string) => tokens[k] ?? m);
}

/** One `<…>` token of mrkdwn as HTML. */
function token(body: string, names: (id: string) => string | undefined): string {
  const [target = '', label] = body.split('|', 2) as [string, string | undefined];
  if (target.startsWith('@')) return `<span class="mention">@${esc(names(target.slice(1)) ?? label ?? target.slice(1))}</span>`;
  if (target.startsWith('#')) return `<span class="mention">#${reescape(label ?? target.slice(1))}</span>`;
  if (target.startsWith('!subteam^')) return `<span class="mention">@${reescape(label?.replace(/^@/, '') ?? names(target.slice(9)) ?? target.slice(9))}</span>`;
  if (target.startsWith('!date^')) {
    const [, secs = '', format = ''] = target.split('^');
    return `<span class="date" title="${reescape(label ?? '')}">${esc(formatSlackDate(Number(secs), format))}</span>`;
  }
  if (target.startsWith('!')) return `<span class="mention">@${esc(target.slice(1))}</span>`;
  if (/^(https?:|mailto:)/i.test(target)) return `<a href="${reescape(target)}">${reescape(label ?? target)}</a>`;
  return reescape(`<${body}>`);
}

/** Bold, italic and strike on a run of text with no code in it (Slack's rule: markers at word boundaries). */
function emphasis(s: string): string {
  return s
    .replace(/(^|[\s(“"'>])\*(?=\S)([^*\n]*?\S)\*(?=$|[\s.,;:!?)”"'<])/g, '$1<b>$2</b>')
    .replace(/(^|[\s(“"'>])_(?=\S)([^_\n]*?\S)_(?=$|[\s.,;:!?)”"'<])/g, '$1<i>$2</i>')
    .replace(/(^|[\s(“"'>])~(?=\S)([^~\n]*?\S)~(?=$|[\s.,;:!?)”"'<])/g, '$1<s>$2</s>');
}

/** Slack mrkdwn → HTML. `names` resolves user and group ids to display names. */
export function mrkdwnToHtml(text: string, names: (id: string) => string | undefined = () => undefined): string {
  const out: string[] = [];
  // Code blocks first (their content is literal), then per line: quotes, inline code, tokens, emphasis.
  const parts = text.split(/```/);
  parts.forEach((part, i) => {
    if (i % 2 === 1) {
      out.push(`<pre class="code">${reescape(part.replace(/^\n/, '').replace(/\n$/, ''))}</pre>`);
      return;
    }
    const lines = part.split('\n');
    let quote: string[] = [];
    const flush = () => {
      if (quote.length) out.push(`<blockquote>${quote.join('<br>')}</blockquote>`);
      quote = [];
    };
    const rendered: string[] = [];
    for (const line of lines) {
      const isQuote = /^(&gt;|>) ?/.test(line);
      const html = inline(isQuote ? line.replace(/^(&gt;|>) ?/, '') : line, names);
      if (isQuote) {
        if (rendered.length) out.push(rendered.splice(0).join('<br>'));
        quote.push(html);
      } else {
        flush();
        rendered.push(html);
      }
    }
    flush();
    if (rendered.length) out.push(rendered.join('<br>'));
  });
  return out.join('');
}

function inline(line: string, names: (id: string) => string | undefined): string {
  // Inline code spans and `<…>` tokens are set aside as placeholders, emphasis is applied to the whole line
  // (so `*bold with `code` inside*` works), then the placeholders are put back.
  const marks: string[] = [];
  const hold = (html: string): string => `\u0000${marks.push(html) - 1}\u0000`;
  const held = line
    .replace(/`([^`\n]+)`/g, (_, code: string) => hold(`<code>${reescape(code)}</code>`))
    .replace(/<([^<>]+)>/g, (_, body: string) => hold(token(body, names)));
  return emphasis(reescape(held)).replace(/\u0000(\d+)\u0000/g, (_, n: string) => marks[Number(n)] ?? '');
}

function textObject(t: unknown, names: (id: string) => string | undefined): string {
  if (!t || typeof t !== 'object') return '';
  const o = t as Obj;
  const text = typeof o.text === 'string' ? o.text : '';
  return o.type === 'mrkdwn' ? mrkdwnToHtml(text, names) : esc(text).replace(/\n/g, '<br>');
}

function element(e: Obj, names: (id: string) => string | undefined): string {
  switch (e.type) {
    case 'button': {
      const style = e.style === 'primary' ? ' primary' : e.style === 'danger' ? ' danger' : '';
      return `<span class="button${style}">${textObject(e.text, names)}</span>`;
    }
    case 'overflow':
      return '<span class="button overflow">⋯</span>';
    case 'static_select':
    case 'external_select':
    case 'users_select':
    case 'conversations_select':
    case 'channels_select': {
      const initial = (e.initial_option as Obj | undefined)?.text;
      return `<span class="button select">${textObject(initial ?? e.placeholder ?? { type: 'plain_text', text: 'Select…' }, names)} ▾</span>`;
    }
    case 'datepicker':
      return `<span class="button select">${esc(String(e.initial_date ?? 'Pick a date'))} ▾</span>`;
    case 'image':
      return `<img class="ctx-img" alt="${esc(String(e.alt_text ?? ''))}" src="${esc(String(e.image_url ?? ''))}">`;
    case 'plain_text_input':
      return `<div class="input">${esc(String(e.initial_value ?? ''))}</div>`;
    case 'mrkdwn':
    case 'plain_text':
      return `<span>${textObject(e, names)}</span>`;
    default:
      return `<span class="unknown">[${esc(String(e.type))}]</span>`;
  }
}

function richText(e: Obj, names: (id: string) => string | undefined): string {
  const inlineEl = (x: Obj): string => {
    const s = (x.style ?? {}) as Obj;
    let h =
      x.type === 'text' ? esc(String(x.text ?? '')).replace(/\n/g, '<br>')
      : x.type === 'link' ? `<a href="${esc(String(x.url ?? ''))}">${esc(String(x.text ?? x.url ?? ''))}</a>`
      : x.type === 'user' ? `<span class="mention">@${esc(names(String(x.user_id)) ?? String(x.user_id))}</span>`
      : x.type === 'usergroup' ? `<span class="mention">@${esc(names(String(x.usergroup_id)) ?? String(x.usergroup_id))}</span>`
      : x.type === 'channel' ? `<span class="mention">#${esc(String(x.channel_id))}</span>`
      : x.type === 'emoji' ? `:${esc(String(x.name))}:`
      : x.type === 'date' ? esc(formatSlackDate(Number(x.timestamp), String(x.format ?? '{date_short} {time}')))
      : '';
    if (s.code) h = `<code>${h}</code>`;
    if (s.bold) h = `<b>${h}</b>`;
    if (s.italic) h = `<i>${h}</i>`;
    if (s.strike) h = `<s>${h}</s>`;
    return h;
  };
  const kids = (x: Obj): string => ((x.elements as Obj[] | undefined) ?? []).map((k) => (k.type === 'rich_text_section' ? kids(k) : inlineEl(k))).join('');
  switch (e.type) {
    case 'rich_text_section':
      return `<div>${kids(e)}</div>`;
    case 'rich_text_preformatted':
      return `<pre class="code">${kids(e)}</pre>`;
    case 'rich_text_quote':
      return `<blockquote>${kids(e)}</blockquote>`;
    case 'rich_text_list': {
      const tag = e.style === 'ordered' ? 'ol' : 'ul';
      return `<${tag}>${((e.elements as Obj[] | undefined) ?? []).map((k) => `<li>${kids(k)}</li>`).join('')}</${tag}>`;
    }
    default:
      return '';
  }
}

/** One block as HTML. */
export function blockToHtml(block: unknown, names: (id: string) => string | undefined = () => undefined): string {
  if (!block || typeof block !== 'object') return '';
  const b = block as Obj;
  switch (b.type) {
    case 'header':
      return `<div class="b header">${textObject(b.text, names)}</div>`;
    case 'section': {
      const text = b.text ? `<div class="text">${textObject(b.text, names)}</div>` : '';
      const fields = Array.isArray(b.fields) ? `<div class="fields">${(b.fields as unknown[]).map((f) => `<div>${textObject(f, names)}</div>`).join('')}</div>` : '';
      const accessory = b.accessory && typeof b.accessory === 'object' ? `<div class="accessory">${element(b.accessory as Obj, names)}</div>` : '';
      return `<div class="b section"><div class="main">${text}${fields}</div>${accessory}</div>`;
    }
    case 'context':
      return `<div class="b context">${((b.elements as Obj[] | undefined) ?? []).map((e) => element(e, names)).join('')}</div>`;
    case 'actions':
      return `<div class="b actions">${((b.elements as Obj[] | undefined) ?? []).map((e) => element(e, names)).join('')}</div>`;
    case 'divider':
      return '<hr class="b divider">';
    case 'image':
      return `<div class="b image">${b.title ? `<div class="muted">${textObject(b.title, names)}</div>` : ''}<img alt="${esc(String(b.alt_text ?? ''))}" src="${esc(String(b.image_url ?? ''))}"></div>`;
    case 'rich_text':
      return `<div class="b rich">${((b.elements as Obj[] | undefined) ?? []).map((e) => richText(e, names)).join('')}</div>`;
    case 'markdown':
      return `<div class="b text">${esc(String(b.text ?? '')).replace(/\n/g, '<br>')}</div>`;
    case 'input':
      return `<div class="b input-block"><div class="label">${textObject(b.label, names)}</div>${b.element ? element(b.element as Obj, names) : ''}${b.hint ? `<div class="muted">${textObject(b.hint, names)}</div>` : ''}</div>`;
    default:
      return `<div class="b unknown">[${esc(String(b.type))} block]</div>`;
  }
}

function attachmentToHtml(a: Obj, names: (id: string) => string | undefined): string {
  const color = typeof a.color === 'string' ? (a.color === 'danger' ? '#e01e5a' : a.color === 'good' ? '#2eb67d' : a.color === 'warning' ? '#ecb22e' : a.color) : '#ddd';
  const title = a.title ? `<div class="att-title">${a.title_link ? `<a href="${esc(String(a.title_link))}">${esc(String(a.title))}</a>` : esc(String(a.title))}</div>` : '';
  const text = typeof a.text === 'string' ? `<div class="text">${mrkdwnToHtml(a.text, names)}</div>` : '';
  const fields = Array.isArray(a.fields)
    ? `<div class="fields">${(a.fields as Obj[]).map((f) => `<div><b>${esc(String(f.title ?? ''))}</b><br>${mrkdwnToHtml(String(f.value ?? ''), names)}</div>`).join('')}</div>`
    : '';
  const blocks = Array.isArray(a.blocks) ? (a.blocks as unknown[]).map((b) => blockToHtml(b, names)).join('') : '';
  return `<div class="attachment" style="border-left-color:${esc(color)}">${title}${text}${fields}${blocks}</div>`;
}

export interface CardMessage {
  /** Who posted it (`Vigil`, `Alertmanager`). */
  author: string;
  /** `APP` tag next to the name. */
  app?: boolean;
  /** Shown as the post time, e.g. `14:02`. */
  time?: string;
  text?: string;
  blocks?: unknown[];
  attachments?: unknown[];
  /** A caption above the message: what it is (`board, edited in place`). */
  note?: string;
  /** `edited`, `only visible to you`, `modal: <title>`. */
  tag?: string;
  /** A modal or Home tab: drawn in a dialog frame. */
  view?: { type: string; title?: string; submit?: string; close?: string };
}

/** One message (or view) as HTML: avatar, name, time, the blocks (or the text when there are none), attachments. */
export function messageToHtml(m: CardMessage, names: (id: string) => string | undefined = () => undefined): string {
  const body = m.blocks?.length ? m.blocks.map((b) => blockToHtml(b, names)).join('') : m.text ? `<div class="b text">${mrkdwnToHtml(m.text, names)}</div>` : '';
  const atts = (m.attachments ?? []).map((a) => (a && typeof a === 'object' ? attachmentToHtml(a as Obj, names) : '')).join('');
  const note = m.note ? `<div class="note">${esc(m.note)}</div>` : '';
  if (m.view) {
    const buttons = [m.view.close ? `<span class="button">${esc(m.view.close)}</span>` : '', m.view.submit ? `<span class="button primary">${esc(m.view.submit)}</span>` : ''].join('');
    return `${note}<div class="view ${esc(m.view.type)}"><div class="view-title">${esc(m.view.title ?? (m.view.type === 'home' ? 'Home' : ''))}</div><div class="view-body">${body}</div>${buttons ? `<div class="view-foot">${buttons}</div>` : ''}</div>`;
  }
  const initial = esc((m.author.trim()[0] ?? '?').toUpperCase());
  return `${note}<div class="message"><div class="avatar">${initial}</div><div class="content"><div class="meta"><b>${esc(m.author)}</b>${m.app ? ' <span class="app">APP</span>' : ''}${m.time ? ` <span class="muted">${esc(m.time)}</span>` : ''}${m.tag ? ` <span class="muted">(${esc(m.tag)})</span>` : ''}</div>${body}${atts}</div></div>`;
}

export const CARD_CSS = `
*{box-sizing:border-box}body{margin:0;background:#fff;color:#1d1c1d;font:15px/1.46668 -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,"Helvetica Neue",Arial,"Noto Sans",sans-serif,"Noto Color Emoji","Apple Color Emoji","Segoe UI Emoji";-webkit-font-smoothing:antialiased}
.page{max-width:1100px;padding:12px 0}.page>h1{font-size:18px;margin:8px 20px 4px}.page>p{margin:0 20px 8px;color:#616061;font-size:13px}
.note{margin:14px 20px 0;font-size:12px;color:#616061;text-transform:uppercase;letter-spacing:.04em}
.message{display:flex;gap:8px;padding:8px 20px}.message:hover{background:#f8f8f8}
.avatar{flex:0 0 36px;height:36px;border-radius:6px;background:#4a154b;color:#fff;font-weight:700;display:flex;align-items:center;justify-content:center}
.content{flex:1;min-width:0}.meta{font-size:15px}.meta .app{font-size:10px;font-weight:700;color:#616061;background:#e8e8e8;border-radius:2px;padding:1px 3px;vertical-align:1px}
.muted{color:#616061;font-size:12px}
.b{margin:4px 0;overflow-wrap:anywhere}.header{font-size:18px;font-weight:900;line-height:1.33;margin:8px 0 4px}
.section{display:flex;gap:12px}.section .main{flex:1;min-width:0}.fields{display:grid;grid-template-columns:1fr 1fr;gap:8px 16px;margin-top:4px}
.context{display:flex;flex-wrap:wrap;gap:4px 12px;color:#616061;font-size:13px;line-height:1.38}.context .ctx-img{width:20px;height:20px;border-radius:4px}
.actions{display:flex;flex-wrap:wrap;gap:8px;margin:8px 0}
.button{display:inline-block;border:1px solid #bbbabb;border-radius:4px;padding:3px 12px;font-size:13px;font-weight:700;line-height:26px;background:#fff;color:#1d1c1d;white-space:nowrap}
.button.primary{background:#007a5a;border-color:#007a5a;color:#fff}.button.danger{background:#e01e5a;border-color:#e01e5a;color:#fff}.button.overflow{padding:3px 8px}.button.select{font-weight:400}
.divider{border:0;border-top:1px solid #dddddd;margin:12px 0}
a{color:#1264a3;text-decoration:none}.mention{color:#1264a3;background:#e8f5fa;border-radius:3px;padding:0 2px}.date{border-bottom:1px dotted #888}
code{font:12px/1.5 Monaco,Menlo,Consolas,"Courier New",monospace;color:#e01e5a;background:#f6f6f6;border:1px solid #e1e1e1;border-radius:3px;padding:1px 3px;overflow-wrap:anywhere;word-break:break-all}
pre.code{font:12px/1.5 Monaco,Menlo,Consolas,"Courier New",monospace;background:#f8f8f8;border:1px solid #e1e1e1;border-radius:4px;padding:8px;white-space:pre-wrap;overflow-wrap:anywhere;margin:4px 0}
blockquote{margin:4px 0;padding-left:12px;border-left:4px solid #dddddd}
.attachment{border-left:4px solid #ddd;border-radius:0;padding:4px 12px;margin:4px 0}.att-title{font-weight:700}
.view{margin:12px 20px;border:1px solid #ddd;border-radius:8px;box-shadow:0 4px 12px rgba(0,0,0,.12);max-width:520px}.view.home{max-width:none}
.view-title{font-weight:900;font-size:18px;padding:14px 20px;border-bottom:1px solid #eee}.view-body{padding:8px 20px}.view-foot{display:flex;justify-content:flex-end;gap:8px;padding:12px 20px;border-top:1px solid #eee}
.input-block .label{font-weight:700}.input{border:1px solid #bbb;border-radius:4px;min-height:36px;padding:6px 8px}
ul,ol{margin:4px 0;padding-left:24px}.unknown{color:#b00}
@media (max-width:600px){body{font-size:15px}.message{padding:8px 12px}.note{margin:12px 12px 0}.fields{grid-template-columns:1fr}.view{margin:12px}.page>h1,.page>p{margin-left:12px;margin-right:12px}}
`;

/** A whole page: a title, a line of explanation and the messages, in Slack's light theme. */
export function pageHtml(title: string, intro: string, messages: CardMessage[], names?: (id: string) => string | undefined): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${esc(title)}</title><style>${CARD_CSS}</style></head><body><div class="page"><h1>${esc(title)}</h1><p>${esc(intro)}</p>${messages.map((m) => messageToHtml(m, names)).join('')}</div></body></html>\n`;
}

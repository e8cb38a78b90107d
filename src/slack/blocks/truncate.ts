/**
 * Length-safe cutting of Slack text. Every cut ends in a visible `…`, never splits a user-perceived
 * character (surrogate pair, emoji sequence), and for mrkdwn never splits an entity (`&amp;`) or an
 * angle token (`<url|label>`, `<@U1>`), and closes any bold/italic/strike/code it cut through.
 */

export const ELLIPSIS = '…';

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** Inputs far beyond the cut are scanned only this far, so a megabyte of log text costs no more than a page. */
function scanEnd(text: string, max: number): number {
  const limit = max * 2 + 256;
  if (text.length <= limit) return text.length;
  const code = text.charCodeAt(limit - 1);
  return code >= 0xd800 && code <= 0xdbff ? limit - 1 : limit;
}

/** Cuts plain text to at most `max` UTF-16 units, ending in `…` when anything was cut. */
export function truncatePlain(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max < 1) return '';
  let out = '';
  for (const { segment } of graphemes.segment(text.slice(0, scanEnd(text, max)))) {
    if (out.length + segment.length > max - ELLIPSIS.length) break;
    out += segment;
  }
  return out.trimEnd() + ELLIPSIS;
}

type Mark = '*' | '_' | '~' | '`' | '```';
interface Token {
  text: string;
  /** Formatting marker that opens or closes a span. */
  mark?: Mark;
  /** Index of the token that closes this opener (only set on matched openers). */
  closer?: number;
  space?: boolean;
}

/** Sticky: matched at a position of the whole text, so a token is found whole however long it is. */
const ATOM = /<[^<>\n]*>|&(?:[a-zA-Z]+|#\d+);/y;

/** Tokens starting before `end`; the last may run past it (a long link is one token, kept or dropped whole). */
function tokenize(text: string, end = text.length): Token[] {
  const tokens: Token[] = [];
  let plain = '';
  const flush = (): void => {
    if (!plain) return;
    for (const { segment } of graphemes.segment(plain)) tokens.push({ text: segment, space: /^\s+$/.test(segment) });
    plain = '';
  };
  for (let i = 0; i < end; ) {
    ATOM.lastIndex = i;
    const atom = ATOM.exec(text);
    const c = text[i];
    if (atom) {
      flush();
      tokens.push({ text: atom[0] });
      i += atom[0].length;
    } else if (text.startsWith('```', i)) {
      flush();
      tokens.push({ text: '```', mark: '```' });
      i += 3;
    } else if (c === '`' || c === '*' || c === '_' || c === '~') {
      flush();
      tokens.push({ text: c, mark: c });
      i += 1;
    } else {
      plain += text[i];
      i += 1;
    }
  }
  flush();
  return tokens;
}

const isWordChar = (s: string | undefined): boolean => s !== undefined && /[\p{L}\p{N}]/u.test(s);
const isSpace = (s: string | undefined): boolean => s === undefined || /^\s/.test(s);

/**
 * Marks which formatting markers pair up, approximating Slack's rules: code spans first (nothing formats
 * inside them), then `*`/`_`/`~` open after a non-word character and before a non-space, close after a
 * non-space and before a non-word character, and do not span lines. Unpaired markers are literal text.
 */
function pairMarkers(tokens: Token[]): void {
  let code: { index: number; mark: '`' | '```' } | undefined;
  let open = new Map<Mark, number>();
  tokens.forEach((t, i) => {
    const prev = tokens[i - 1]?.text;
    const next = tokens[i + 1]?.text;
    if (code) {
      if (t.mark === code.mark) {
        const opener = tokens[code.index];
        if (opener && i > code.index + 1) opener.closer = i;
        code = undefined;
      }
      return;
    }
    if (t.mark === '`' || t.mark === '```') {
      code = { index: i, mark: t.mark };
      open = new Map();
      return;
    }
    if (t.text === '\n') open = new Map();
    if (!t.mark) return;
    const at = open.get(t.mark);
    if (at !== undefined && !isSpace(prev) && !isWordChar(next) && i > at + 1) {
      const opener = tokens[at];
      if (opener) opener.closer = i;
      open.delete(t.mark);
    } else if (!isWordChar(prev) && !isSpace(next) && next !== t.mark) {
      open.set(t.mark, i);
    }
  });
}

/**
 * Cuts Slack mrkdwn to at most `max` UTF-16 units. The result ends in `…` followed by the closers of any
 * span the cut went through (`*bold te…*`, `` `kubectl sc…` ``); entities and `<…>` tokens are kept whole
 * or dropped whole.
 */
export function truncateMrkdwn(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max < 1) return '';
  const tokens = tokenize(text, scanEnd(text, max));
  pairMarkers(tokens);
  const stack: Token[] = [];
  const closersLength = (): number => stack.reduce((n, t) => n + t.text.length, 0);
  let out: Token[] = [];
  let length = 0;
  for (const [i, t] of tokens.entries()) {
    const opensSpan = t.closer !== undefined;
    const closesSpan = stack.length > 0 && stack[stack.length - 1]?.closer === i;
    const closersAfter = closersLength() + (opensSpan ? t.text.length : 0) - (closesSpan ? t.text.length : 0);
    if (length + t.text.length + ELLIPSIS.length + closersAfter > max) break;
    out.push(t);
    length += t.text.length;
    if (opensSpan) stack.push(t);
    else if (closesSpan) stack.pop();
  }
  // Drop trailing whitespace so the ellipsis hugs the text and a closing `*` follows a non-space.
  let end = out.length;
  while (end > 0 && out[end - 1]?.space) end--;
  out = out.slice(0, end);
  const closers = [...stack].reverse().map((t) => t.text).join('');
  return out.map((t) => t.text).join('') + ELLIPSIS + closers;
}

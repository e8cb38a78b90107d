/**
 * Slack mrkdwn → readable plain text for terminals: `*b*` → b, `_i_` → i, `~s~` → s, code kept in
 * backticks, `<url|label>` → `label (url)`, `<@U1>` → `@U1`, `<!date^…|fallback>` → fallback, and
 * `&amp;`/`&lt;`/`&gt;` unescaped.
 */

export function unescapeEntities(s: string): string {
  return s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** One `<…>` token, written the way a reader would say it. */
function angleToken(inner: string): string {
  const bar = inner.indexOf('|');
  const target = bar >= 0 ? inner.slice(0, bar) : inner;
  const label = bar >= 0 ? unescapeEntities(inner.slice(bar + 1)) : undefined;
  if (target.startsWith('@')) return label ? `@${label.replace(/^@/, '')}` : target;
  if (target.startsWith('#')) return label ? `#${label.replace(/^#/, '')}` : target;
  if (target.startsWith('!subteam^')) return label ?? `@${target.slice('!subteam^'.length)}`;
  if (target.startsWith('!date^')) {
    if (label) return label;
    const secs = Number(target.split('^')[1]);
    return Number.isFinite(secs) ? new Date(secs * 1000).toISOString() : target;
  }
  if (target.startsWith('!')) return label ?? `@${target.slice(1)}`;
  const url = unescapeEntities(target);
  if (!label || label === url) return url;
  if (`mailto:${label}` === url) return label;
  return `${label} (${url})`;
}

const MARKERS: [string, RegExp][] = (['*', '_', '~'] as const).map((m) => {
  const e = m === '*' ? '\\*' : m;
  return [m, new RegExp(`(^|[^\\p{L}\\p{N}${e}])${e}(?=\\S)([^${e}\\n]*?[^\\s${e}])${e}(?![\\p{L}\\p{N}])`, 'gu')];
});

function stripMarkers(s: string): string {
  let out = s;
  for (const [, re] of MARKERS) out = out.replace(re, '$1$2');
  return out;
}

/**
 * Code spans and `<…>` tokens are masked first (nothing formats inside them, and a bold span may contain
 * code), then markers are stripped and entities unescaped, then the masked pieces are put back.
 */
export function mrkdwnToPlain(s: string): string {
  const pieces: string[] = [];
  const masked = s.replace(/```[\s\S]*?```|`[^`\n]+`|<[^<>\n]*>/g, (m) => {
    pieces.push(m.startsWith('<') ? angleToken(m.slice(1, -1)) : unescapeEntities(m));
    return `\u0000${pieces.length - 1}\u0000`;
  });
  return unescapeEntities(stripMarkers(masked)).replace(/\u0000(\d+)\u0000/g, (_, n: string) => pieces[Number(n)] ?? '');
}

const USER_MENTION = /<@([UW][A-Z0-9]+)(?:\|[^<>]*)?>/g;
const BROADCAST = /^!(?:here|channel|everyone)(?:\||$)/;

/** User ids mentioned (`<@U…>`) in text as Slack delivers it, to look their names up before `decodeSlackText`. */
export function mentionedUsers(s: string): string[] {
  return [...new Set([...s.matchAll(USER_MENTION)].map((m) => m[1]!))];
}

/**
 * What a person typed, from the `text` Slack delivers (`&amp;`/`&lt;`/`&gt;`, `<@U1>`, `<https://x|label>`,
 * `<!here>`): entities are unescaped, a user mention becomes `@name` (from `names`, else the label Slack
 * sent, else `@U1`), a link `label (url)`, and broadcasts (`@here`, `@channel`, `@everyone`) are dropped.
 * Formatting characters are kept as typed. Decode once: the result is plain text, not Slack's wire form.
 */
export function decodeSlackText(s: string, names: ReadonlyMap<string, string> = new Map()): string {
  let out = '';
  let last = 0;
  for (const m of s.matchAll(/<([^<>\n]*)>([ \t]*)/g)) {
    out += unescapeEntities(s.slice(last, m.index));
    last = m.index + m[0].length;
    const inner = m[1]!;
    if (BROADCAST.test(inner)) continue;
    const user = /^@([UW][A-Z0-9]+)(?:\||$)/.exec(inner);
    const name = user ? names.get(user[1]!) : undefined;
    out += (name ? `@${name}` : angleToken(inner)) + m[2]!;
  }
  return (out + unescapeEntities(s.slice(last))).trim();
}

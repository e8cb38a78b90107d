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

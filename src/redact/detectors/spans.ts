import type { Span } from '../types.js';

/** The span of a named group of a match made with the `d` flag, or null when the group did not take part. */
export function groupSpan(m: RegExpExecArray, group: string): Span | null {
  const idx = m.indices?.groups?.[group];
  return idx === undefined ? null : { start: idx[0], end: idx[1] };
}

/** The span of the whole match. */
export function matchSpan(m: RegExpExecArray): Span {
  return { start: m.index, end: m.index + m[0].length };
}

/** Shrink a span so it does not end in whitespace (values captured up to end of line). */
export function trimSpanEnd(text: string, span: Span): Span | null {
  let end = span.end;
  while (end > span.start && /\s/.test(text[end - 1] ?? '')) end--;
  return end > span.start ? { ...span, end } : null;
}

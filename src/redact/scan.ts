import { PLACEHOLDER_PATTERN } from './placeholder.js';
import { groupSpan, matchSpan } from './detectors/spans.js';
import type { DetectContext, Detector, RedactionFinding, Span } from './types.js';

interface Interval {
  start: number;
  end: number;
}

function defaultSelect(m: RegExpExecArray): Span {
  return groupSpan(m, 'secret') ?? matchSpan(m);
}

function mayMatch(detector: Detector, text: string): boolean {
  const hints = detector.hints;
  return hints === undefined || hints.length === 0 || hints.some((h) => text.includes(h));
}

/** One detector's candidate spans, ascending and non-overlapping (they come from successive matches). */
function candidates(detector: Detector, ctx: DetectContext): RedactionFinding[] {
  const out: RedactionFinding[] = [];
  if (!mayMatch(detector, ctx.text)) return out;
  const select = detector.select ?? defaultSelect;
  let lastEnd = 0;
  // exec on the shared regex rather than matchAll, which clones the regex on every call; scanning is
  // synchronous and `select` never re-enters, so resetting lastIndex here is enough.
  const re = detector.pattern;
  re.lastIndex = 0;
  for (let m = re.exec(ctx.text); m !== null; m = re.exec(ctx.text)) {
    if (m[0].length === 0) re.lastIndex++;
    const span = select(m, ctx);
    if (span === null || span.end <= span.start || span.start < lastEnd) continue;
    lastEnd = span.end;
    out.push({ detector: detector.name, kind: span.kind ?? detector.kind, start: span.start, end: span.end });
  }
  return out;
}

/**
 * Keep the candidates that overlap nothing already taken, and merge them into `taken`.
 * Both lists are sorted by start, so this is one linear pass.
 */
function claim(taken: Interval[], found: RedactionFinding[], cands: RedactionFinding[]): Interval[] {
  if (cands.length === 0) return taken;
  const merged: Interval[] = [];
  let i = 0;
  for (const c of cands) {
    while (i < taken.length && (taken[i] as Interval).end <= c.start) merged.push(taken[i++] as Interval);
    const next = taken[i];
    if (next !== undefined && next.start < c.end) continue;
    const prev = merged[merged.length - 1];
    if (prev !== undefined && prev.end > c.start) continue;
    merged.push(c);
    found.push(c);
  }
  while (i < taken.length) merged.push(taken[i++] as Interval);
  return merged;
}

/**
 * Every span the detectors claim, sorted by offset. Detectors claim in order (first wins on
 * overlap); placeholders already in the text are claimed up front so nothing inside or around
 * them is replaced twice, which makes redaction idempotent.
 */
export function scanText(detectors: readonly Detector[], ctx: DetectContext): RedactionFinding[] {
  let taken: Interval[] = [];
  if (ctx.text.includes('[REDACTED:')) {
    for (const m of ctx.text.matchAll(PLACEHOLDER_PATTERN)) taken.push({ start: m.index, end: m.index + m[0].length });
  }
  const found: RedactionFinding[] = [];
  for (const detector of detectors) taken = claim(taken, found, candidates(detector, ctx));
  return found.sort((a, b) => a.start - b.start);
}

/**
 * `first` plus the findings of `second` that overlap none of `first` (both as `scanText` returns them:
 * sorted, non-overlapping). Linear.
 */
export function mergeFindings(first: RedactionFinding[], second: RedactionFinding[]): RedactionFinding[] {
  if (second.length === 0) return first;
  const found = [...first];
  claim(first.map(({ start, end }) => ({ start, end })), found, second);
  return found.sort((a, b) => a.start - b.start);
}

/**
 * Chat markup turns `_` into a delimiter: Slack's italics (`_ghp_…_`), which detectors read as part of the
 * token (`_` is a word character) and so miss. This is the text with every `_` that opens or closes such a
 * span blanked: an `_` not preceded by a word character and followed by a non-blank, or one preceded by a
 * non-blank and not followed by a word character (Slack's own rule, near enough). Same length, so offsets
 * carry over; `snake_case`, `__init__` and `sk_live_…` keep theirs.
 */
const MARKUP_UNDERSCORE = /(?<![A-Za-z0-9_])_(?=[^\s_])|(?<=[^\s_])_(?![A-Za-z0-9_])/g;

export function withoutMarkupUnderscores(s: string): string {
  return s.includes('_') ? s.replace(MARKUP_UNDERSCORE, ' ') : s;
}

import type { Detector, Span } from '../types.js';
import { groupSpan, matchSpan } from './spans.js';

/** Emails, phone numbers and payment cards, tuned so timestamps, ids and versions survive. */

/** `icon@2x.png`, `bundle@1.2.3.js`: asset names, not addresses. */
const FILE_EXTENSIONS = new Set(['png', 'jpg', 'jpeg', 'gif', 'svg', 'webp', 'ico', 'js', 'mjs', 'css', 'map', 'json', 'html', 'txt', 'tgz', 'zip']);

export const emailDetector: Detector = {
  name: 'email',
  kind: 'email',
  // The match starts at the `@` (a literal the engine finds fast) and the local part is captured by
  // a lookbehind; scanning from every word character instead costs ~10x on a log blob.
  pattern: /(?<=(?<![A-Za-z0-9._%+-])(?<local>[A-Za-z0-9._%+-]{1,64}))@(?:[A-Za-z0-9-]{1,63}\.){1,8}(?<tld>[A-Za-z]{2,24})(?![A-Za-z0-9_-])/dg,
  hints: ['@'],
  select: (m, { text, isAllowedEmail }) => {
    const local = groupSpan(m, 'local');
    if (!local) return null;
    const span = { start: local.start, end: m.index + m[0].length };
    const tld = (m.groups?.['tld'] ?? '').toLowerCase();
    // `git@github.com:org/repo`, `https://deploy@host/…`: a login on a host, not a person's address.
    if (m.groups?.['local'] === 'git' || text.slice(Math.max(0, span.start - 2), span.start) === '//') return null;
    if (FILE_EXTENSIONS.has(tld) || isAllowedEmail(text.slice(span.start, span.end))) return null;
    return span;
  },
};

function digitCount(s: string): number {
  let n = 0;
  for (const c of s) if (c >= '0' && c <= '9') n++;
  return n;
}

/**
 * `+14155552671`, `+44 20 7946 0958`, `+1 (415) 555-2671`, `(415) 555-2671`, `415-555-2671`.
 * Bare digit runs are never phones (they are epoch times, ids, resourceVersions); a `+` form needs
 * 8–15 digits (E.164), and the prefix rules keep `+01:00` offsets and `1.0.0+2013…` builds out.
 */
/** Offsets (relative to the match) where a digit group ends and a separator follows, longest first. */
function groupEnds(raw: string): number[] {
  const ends = [raw.length];
  for (let i = raw.length - 1; i > 0; i--) if (/[ .-]/.test(raw[i] ?? '') && /[0-9)]/.test(raw[i - 1] ?? '')) ends.push(i);
  return ends;
}

/**
 * The longest prefix of `raw` (cut only between digit groups) that `valid` accepts: a number that ran
 * into the next token (`+44 20 7946 0958 8080`, `4111 1111 1111 1111 2024`) keeps its own digits only.
 */
function longestValidPrefix(m: RegExpExecArray, valid: (raw: string) => boolean): Span | null {
  for (const end of groupEnds(m[0])) if (valid(m[0].slice(0, end))) return { start: m.index, end: m.index + end };
  return null;
}

function isPhoneNumber(raw: string): boolean {
  if (!raw.startsWith('+')) return true;
  const digits = digitCount(raw);
  // NANP (`+1`) numbers have exactly ten national digits; others follow E.164's 15-digit maximum.
  if (/^\+1(?![0-9])/.test(raw) || /^\+1[2-9][0-9]{9}$/.test(raw)) return digits === 11;
  return digits >= 8 && digits <= 15;
}

/**
 * `+14155552671`, `+44 20 7946 0958`, `+1 (415) 555-2671`, `(415) 555-2671`, `415-555-2671`.
 * Bare digit runs are never phones (they are epoch times, ids, resourceVersions); a `+` form needs
 * 8–15 digits (E.164), and the prefix rules keep `+01:00` offsets and `1.0.0+2013…` builds out.
 * Known gap: a spaced international number directly followed by a space and a short number may
 * absorb it when the total still fits E.164.
 */
export const phoneDetector: Detector = {
  name: 'phone',
  kind: 'phone',
  pattern:
    /(?<![\w+.-])(?:\+[1-9](?:[0-9]{7,14}|[0-9]{0,3}(?:[ .-]\(?[0-9]{1,4}\)?|\([0-9]{1,4}\)){1,6})|\([0-9]{3}\)[ .-]?[0-9]{3}[ .-][0-9]{4}|[0-9]{3}-[0-9]{3}-[0-9]{4})(?![\w+]|[.:-][0-9])/dg,
  select: (m) => longestValidPrefix(m, isPhoneNumber),
};

/** Luhn (ISO/IEC 7812) check digit validation. */
export function isLuhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/** Issuer prefixes and lengths (Visa, Mastercard, Amex, Discover, JCB, Diners, UnionPay). */
function isCardNumber(d: string): boolean {
  const n = d.length;
  const p2 = Number(d.slice(0, 2));
  const p4 = Number(d.slice(0, 4));
  if (d[0] === '4') return n === 13 || n === 16 || n === 19;
  if ((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720)) return n === 16;
  if (p2 === 34 || p2 === 37) return n === 15;
  if (p2 === 36 || p2 === 38 || (p4 >= 3000 && p4 <= 3059)) return n === 14 || n === 16;
  if (p4 === 6011 || p2 === 65 || (p4 >= 6440 && p4 <= 6499) || p2 === 62) return n >= 16 && n <= 19;
  if (p4 >= 3528 && p4 <= 3589) return n >= 16 && n <= 19;
  return false;
}

/** Grouped numbers must be grouped like cards (4-4-4-4[-3], Amex 4-6-5, Diners 4-6-4), not a row of metrics. */
function hasCardGrouping(raw: string): boolean {
  const groups = raw.split(/[ -]/);
  if (groups.length === 1) return true;
  const lens = groups.map((g) => g.length);
  const last = lens[lens.length - 1] ?? 0;
  if (lens.slice(0, -1).every((l) => l === 4) && last >= 1 && last <= 4) return true;
  return lens.length === 3 && lens[0] === 4 && lens[1] === 6 && (last === 4 || last === 5);
}

/** An id-like key right before the number (`trace_id=`, `"resourceVersion": "`) means it is not a card. */
const ID_CONTEXT = /(?:id|version|revision|seq|offset|count|bytes|total)\\?["']?\s{0,2}[:=]\s{0,2}\\?["']?$/i;

function isCard(raw: string): boolean {
  const digits = raw.replace(/[ -]/g, '');
  return digits.length >= 13 && digits.length <= 19 && isCardNumber(digits) && isLuhnValid(digits) && hasCardGrouping(raw);
}

export const cardDetector: Detector = {
  name: 'card_number',
  kind: 'card',
  pattern: /(?<![\w.+-])[2-6][0-9]{3}(?:[ -]?[0-9]){9,15}(?![\w.]|-[0-9])/dg,
  select: (m, { text }) => {
    if (ID_CONTEXT.test(text.slice(Math.max(0, m.index - 40), m.index))) return null;
    return longestValidPrefix(m, isCard);
  },
};

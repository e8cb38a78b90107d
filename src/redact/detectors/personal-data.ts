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
  // Groups of 5–8 digits are written after two- and three-digit country codes (`+49 30 901820`); after
  // `+1` or `+7` they are a count that happens to follow a `+3`-style delta, not a number.
  const groups = raw.slice(1).split(/[ .()-]+/).filter((g) => g !== '');
  if (groups.length > 1 && (groups[0]?.length ?? 0) === 1 && groups.slice(1).some((g) => g.length > 4 && g.length < 9)) return false;
  // NANP (`+1`) numbers have exactly ten national digits; others follow E.164's 15-digit maximum.
  // NANP area codes start with 2–9 (`+1 1705312800` is a delta and an epoch).
  if (/^\+1(?![0-9])/.test(raw) || /^\+1[2-9][0-9]{9}$/.test(raw)) return digits === 11 && /^\+1[ .(-]{0,2}[2-9]/.test(raw);
  return digits >= 8 && digits <= 15;
}

/**
 * `+14155552671`, `+44 20 7946 0958`, `+49 30 901820`, `+1 (415) 555-2671`, `(415) 555-2671`, `415-555-2671`.
 * Bare digit runs are never phones (they are epoch times, ids, resourceVersions); a `+` form needs
 * 8–15 digits (E.164), and the prefix rules keep `+01:00` offsets and `1.0.0+2013…` builds out.
 * International groups run up to 8 digits (German and Swiss subscriber numbers), 10 after `+1`/`+7`.
 * Known gap: a spaced international number directly followed by a space and a short number may absorb
 * it when the total still fits E.164.
 */
export const phoneDetector: Detector = {
  name: 'phone',
  kind: 'phone',
  pattern:
    /(?<![\w+.-])(?:\+[1-9](?:[0-9]{7,14}|[0-9]{0,3}(?:[ .-]\(?[0-9]{1,10}\)?|\([0-9]{1,4}\)){1,6})|\([0-9]{3}\)[ .-]?[0-9]{3}[ .-][0-9]{4}|[0-9]{3}-[0-9]{3}-[0-9]{4})(?![\w+]|[.:-][0-9])/dg,
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

/**
 * An address written URL-encoded (`alice%40example.com` in a query string or a logged redirect URL), which
 * the `@` detector never sees. Same shape and allow-list as `emailDetector`, on the decoded address.
 */
export const urlEncodedEmailDetector: Detector = {
  name: 'email_urlencoded',
  kind: 'email',
  pattern: /(?<=(?<![A-Za-z0-9._%+-])(?<local>[A-Za-z0-9._%+-]{1,64}))%40(?:[A-Za-z0-9-]{1,63}\.){1,8}(?<tld>[A-Za-z]{2,24})(?![A-Za-z0-9_-])/dg,
  hints: ['%40'],
  select: (m, { text, isAllowedEmail }) => {
    const local = groupSpan(m, 'local');
    if (!local) return null;
    const span = { start: local.start, end: m.index + m[0].length };
    if (FILE_EXTENSIONS.has((m.groups?.['tld'] ?? '').toLowerCase())) return null;
    let address: string;
    try {
      address = decodeURIComponent(text.slice(span.start, span.end));
    } catch {
      address = text.slice(span.start, span.end).replace(/%40/g, '@');
    }
    return isAllowedEmail(address) ? null : span;
  },
};

/** IBAN lengths per country (ISO 13616 registry, SWIFT's IBAN registry); a code missing here is not taken. */
const IBAN_LENGTHS: ReadonlyMap<string, number> = new Map(
  Object.entries({
    AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BR: 29, CH: 21, CR: 22, CY: 28, CZ: 24,
    DE: 22, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18, FO: 18, FR: 27, GB: 22, GE: 22, GI: 23, GL: 18, GR: 27,
    GT: 28, HR: 21, HU: 28, IE: 22, IL: 23, IQ: 23, IS: 26, IT: 27, JO: 30, KW: 30, KZ: 20, LB: 28, LI: 21, LT: 20,
    LU: 20, LV: 21, MC: 27, MD: 24, ME: 22, MK: 19, MR: 27, MT: 31, MU: 30, NL: 18, NO: 15, PK: 24, PL: 28, PS: 29,
    PT: 25, QA: 29, RO: 24, RS: 22, SA: 24, SE: 24, SI: 19, SK: 24, SM: 27, TN: 24, TR: 26, UA: 29, VG: 24, XK: 20,
  }),
);

/** ISO 7064 mod 97-10, the IBAN check: the rearranged number, letters as 10–35, leaves remainder 1. */
function isIban(raw: string): boolean {
  const iban = raw.replace(/ /g, '').toUpperCase();
  if (IBAN_LENGTHS.get(iban.slice(0, 2)) !== iban.length) return false;
  let rest = 0;
  for (const c of iban.slice(4) + iban.slice(0, 4)) {
    const v = c >= 'A' ? c.charCodeAt(0) - 55 : c.charCodeAt(0) - 48;
    rest = v >= 10 ? (rest * 100 + v) % 97 : (rest * 10 + v) % 97;
  }
  return rest === 1;
}

/**
 * IBANs, compact (`DE89370400440532013000`) or printed in groups of four (`GB82 WEST 1234 5698 7654 32`).
 * Country length and the mod-97 check both must hold, so ids and hashes that happen to start with two
 * letters and two digits survive.
 */
export const ibanDetector: Detector = {
  name: 'iban',
  kind: 'iban',
  pattern: /(?<![A-Za-z0-9])[A-Z]{2}[0-9]{2}(?:[A-Z0-9]{11,30}|(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,3})?)(?![A-Za-z0-9])/dg,
  select: (m) => (isIban(m[0]) ? matchSpan(m) : null),
};

/** What an id-like word right before `123-45-6789` makes it: an order, ticket or case number, not an SSN. */
const SSN_ID_CONTEXT = /(?:order|ticket|case|invoice|ref|reference|build|job|run|id|no|number|#)\.?\s{0,2}[:=#]?\s{0,2}$/i;
const SSN_LABEL = /(?:ssn|social security(?: number| no\.?)?|soc\.? ?sec\.?|tax ?id|itin)\W{0,4}$/i;

/**
 * US Social Security numbers: `AAA-GG-SSSS` in the ranges the SSA issues (area not 000, 666 or 9xx; group
 * not 00; serial not 0000), and, after an SSN label, the same nine digits unseparated or with spaces. An
 * order, ticket or case number of the same shape (`order 123-45-6789`) is left alone.
 */
export const ssnDetector: Detector = {
  name: 'us_ssn',
  kind: 'ssn',
  pattern: /(?<![\w.+-])(?!000|666|9[0-9]{2})[0-9]{3}(?<sep>[- ]?)(?!00)[0-9]{2}\k<sep>(?!0000)[0-9]{4}(?![\w+-]|[.:][0-9])/dg,
  select: (m, { text }) => {
    const before = text.slice(Math.max(0, m.index - 30), m.index);
    if (SSN_LABEL.test(before)) return matchSpan(m);
    return m.groups?.['sep'] === '-' && !SSN_ID_CONTEXT.test(before) ? matchSpan(m) : null;
  },
};

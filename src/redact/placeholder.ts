import { createHmac, randomBytes } from 'node:crypto';

/**
 * Placeholders look like `[REDACTED:<kind>:<8 hex>]`, the hex being the first 32 bits of
 * HMAC-SHA256(salt, secret). Same secret and salt → same placeholder, so the model can still see that
 * two log lines carry the same token; without the salt the value cannot be confirmed or recovered.
 */

/** One random salt per process, shared by every redactor that is not given its own. */
const PROCESS_SALT = randomBytes(32).toString('hex');

const KIND_SOURCE = '[a-z0-9_]{1,40}';
/** `[REDACTED:` + a 40-character kind + `:` + 8 hex + `]`. */
const PLACEHOLDER_MAX_LENGTH = 10 + 40 + 1 + 8 + 1;
const PLACEHOLDER_SOURCE = String.raw`\[REDACTED:${KIND_SOURCE}:[0-9a-f]{8}\]`;

/** Every placeholder in a text; its spans are never scanned again (that is what makes redaction idempotent). */
export const PLACEHOLDER_PATTERN = new RegExp(PLACEHOLDER_SOURCE, 'g');
const EXACT_PLACEHOLDER = new RegExp(`^${PLACEHOLDER_SOURCE}$`);
const VALID_KIND = new RegExp(`^${KIND_SOURCE}$`);

export function isPlaceholder(s: string): boolean {
  return EXACT_PLACEHOLDER.test(s);
}

/** Coerce a kind to the placeholder grammar, so user-supplied kinds cannot break idempotency. */
export function normaliseKind(kind: string): string {
  if (VALID_KIND.test(kind)) return kind;
  const cleaned = kind.toLowerCase().replace(/[^a-z0-9_]+/g, '_').slice(0, 40);
  return cleaned === '' ? 'secret' : cleaned;
}

export type PlaceholderFn = (kind: string, secret: string) => string;

/** Distinct secrets remembered per redactor; a log blob repeats the same few tokens thousands of times. */
const CACHE_LIMIT = 4096;

export function createPlaceholderFn(salt: string = PROCESS_SALT): PlaceholderFn {
  const digests = new Map<string, string>();
  return (kind, secret) => {
    let digest = digests.get(secret);
    if (digest === undefined) {
      digest = createHmac('sha256', salt).update(secret).digest('hex').slice(0, 8);
      if (digests.size >= CACHE_LIMIT) digests.clear();
      digests.set(secret, digest);
    }
    return `[REDACTED:${kind}:${digest}]`;
  };
}

/**
 * `s` cut to at most `max` characters, for text that was redacted first (the one safe order: a secret cut
 * before redaction is too short for its detector). A placeholder the cut would split goes whole, so a
 * title never ends in `[REDACTED:github_to`.
 */
export function cutRedacted(s: string, max: number): string {
  if (s.length <= max) return s;
  // Only a placeholder that starts within its own length of the cut can straddle it.
  for (let i = s.indexOf('[REDACTED:', Math.max(0, max - PLACEHOLDER_MAX_LENGTH)); i >= 0 && i < max; i = s.indexOf('[REDACTED:', i + 1)) {
    const end = s.indexOf(']', i);
    if (end >= max && isPlaceholder(s.slice(i, end + 1))) return s.slice(0, i);
  }
  return s.slice(0, Math.max(0, max));
}

/** `cutRedacted` that marks the cut with `…`, within `max` characters. */
export function clipRedacted(s: string, max: number): string {
  return s.length <= max ? s : `${cutRedacted(s, max - 1)}…`;
}

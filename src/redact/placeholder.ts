import { createHmac, randomBytes } from 'node:crypto';

/**
 * Placeholders look like `[REDACTED:<kind>:<8 hex>]`, the hex being the first 32 bits of
 * HMAC-SHA256(salt, secret). Same secret and salt → same placeholder, so the model can still see that
 * two log lines carry the same token; without the salt the value cannot be confirmed or recovered.
 */

/** One random salt per process, shared by every redactor that is not given its own. */
const PROCESS_SALT = randomBytes(32).toString('hex');

const KIND_SOURCE = '[a-z0-9_]{1,40}';
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

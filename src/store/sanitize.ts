// Text hygiene for everything Vigil stores. PostgreSQL text and jsonb columns refuse U+0000, and
// Prisma's query engine refuses a lone UTF-16 surrogate (it crosses into Rust as JSON, where `\ud800`
// alone is invalid): either one in a pod log line, a Kubernetes event or a webhook body used to fail the
// whole write. Both are replaced with U+FFFD, the character a UTF-8 decoder puts where bytes were not text.
import type { Db } from './db.js';

/** NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const HAS_UNSTORABLE = new RegExp(UNSTORABLE.source);

/** The string with NUL and unpaired surrogates replaced by U+FFFD; the same string when there are none. */
export function cleanText(s: string): string {
  return HAS_UNSTORABLE.test(s) ? s.replace(UNSTORABLE, '\uFFFD') : s;
}

function isPlainObject(v: object): v is Record<string, unknown> {
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * Every string inside a value (plain objects and arrays, keys included) cleaned with `cleanText`.
 * Other objects (Date, Buffer, Decimal, Prisma's JsonNull…) are kept as they are. Untouched parts are
 * returned as the same references, so a clean value costs one walk and no copy.
 */
export function cleanDeep<T>(value: T): T {
  if (typeof value === 'string') return cleanText(value) as T;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    value.forEach((item: unknown, i) => {
      const c = cleanDeep(item);
      if (c !== item) (out ??= value.slice())[i] = c;
    });
    return (out ?? value) as T;
  }
  if (!isPlainObject(value)) return value;
  let out: Record<string, unknown> | undefined;
  for (const [k, item] of Object.entries(value)) {
    const key = cleanText(k);
    const c = cleanDeep(item);
    if (c === item && key === k) continue;
    out ??= { ...value };
    if (key !== k) delete out[k];
    out[key] = c;
  }
  return (out ?? value) as T;
}

/**
 * The client with every model operation's arguments cleaned first: data written, and the values of
 * `where` filters too, so a lookup by a key finds the row stored under the cleaned key. This is the one
 * place all writes pass through (interactive transactions inherit it); raw SQL is not covered.
 */
export function withCleanText(prisma: Db): Db {
  const extended = prisma.$extends({
    name: 'vigil-clean-text',
    query: {
      $allModels: {
        $allOperations({ args, query }) {
          return query(cleanDeep(args));
        },
      },
    },
  });
  // Same model API as the client it extends; `Db` stays the one type the repositories use.
  return extended as unknown as Db;
}

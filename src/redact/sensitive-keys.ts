/**
 * Which keys name a secret. Keys are compared lowercased with separators and trailing digits removed,
 * so `DB_PASSWORD`, `dbPassword`, `db-password` and `PASSWORD2` all end in `password`; matching the
 * *end* of the key keeps `secretName`, `secretKeyRef`, `tokenTTL` and `max_tokens` (references and
 * settings, which diagnosis needs) untouched.
 */
const SUFFIX_KINDS: ReadonlyArray<readonly [suffix: string, kind: string]> = [
  ['password', 'password'],
  ['passwd', 'password'],
  ['passphrase', 'password'],
  ['secret', 'secret'],
  ['token', 'token'],
  ['apikey', 'api_key'],
  ['accesskey', 'secret'],
  ['secretkey', 'secret'],
  ['privatekey', 'private_key'],
  ['signingkey', 'secret'],
  ['encryptionkey', 'secret'],
  ['authorization', 'authorization'],
  ['cookie', 'cookie'],
  ['credentials', 'secret'],
  ['credential', 'secret'],
  ['dsn', 'dsn'],
];

/**
 * Keys that are sensitive only as a whole word: `pwd` (ODBC/MySQL connection strings; the `PWD`
 * env var is a directory, see `isNonSecretValue`), `auth` (Docker config `"auth": base64(user:pass)`).
 */
const EXACT_KINDS: ReadonlyMap<string, string> = new Map([
  ['pwd', 'password'],
  ['auth', 'authorization'],
]);

function normaliseKey(key: string): string {
  return key.toLowerCase().replace(/[^a-z0-9]+/g, '').replace(/[0-9]+$/, '');
}

/** The placeholder kind for a sensitive key, or undefined when the key is not sensitive. */
export function sensitiveKeyKind(key: string): string | undefined {
  if (key.length > 120) return undefined;
  const k = normaliseKey(key);
  const exact = EXACT_KINDS.get(k);
  if (exact !== undefined) return exact;
  for (const [suffix, kind] of SUFFIX_KINDS) if (k.endsWith(suffix)) return kind;
  return undefined;
}

/** True for keys whose sensitivity does not pass to nested objects (`auth: {enabled: true, database: x}`). */
export function isWholeWordOnlyKey(key: string): boolean {
  return EXACT_KINDS.has(normaliseKey(key));
}

/**
 * Keys that hold references or settings even inside a sensitive object: a pod's `secret:` volume
 * (`secretName`, `items[].key/path`, `defaultMode`) or `serviceAccountToken:` projection (`path`,
 * `audience`). Diagnosis needs them ("secret x not found") and they are not secret.
 */
export const REFERENCE_KEYS: ReadonlySet<string> = new Set([
  'name',
  'secretName',
  'key',
  'path',
  'mode',
  'defaultMode',
  'optional',
  'audience',
  'expirationSeconds',
  'kind',
  'apiVersion',
  'namespace',
]);

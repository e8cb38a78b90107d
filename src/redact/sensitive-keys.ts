/**
 * Which keys name a secret. Keys are compared lowercased with separators and trailing digits removed,
 * so `DB_PASSWORD`, `dbPassword`, `db-password` and `PASSWORD2` all end in `password`; matching the
 * *end* of the key keeps `secretName`, `secretKeyRef`, `tokenTTL` and `max_tokens` (references and
 * settings, which diagnosis needs) untouched. Short words (`pass`, `pw`, `key`) count only as the
 * last whole word of a longer key.
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
  // Redis/Valkey: the server password and the one a replica uses to reach its primary.
  ['requirepass', 'password'],
  ['masterauth', 'password'],
  // Rails' cookie-signing secret (`SECRET_KEY_BASE`): its last word is `base`, which names nothing.
  ['secretkeybase', 'secret'],
];

/**
 * Keys that are sensitive only as a whole word: `pwd` (ODBC/MySQL connection strings; the `PWD`
 * env var is a directory, see `isNonSecretValue`), `auth` (Docker config `"auth": base64(user:pass)`).
 */
const EXACT_KINDS: ReadonlyMap<string, string> = new Map([
  ['pwd', 'password'],
  ['pw', 'password'],
  ['auth', 'authorization'],
]);

/**
 * Short words that name a secret only as the LAST word of a longer key (`DB_PASS`, `redisPw`,
 * `MYSQL_PWD`, `SESSION_KEY`, `--master-key`): inside a word they are something else (`bypass`,
 * `keyspace`, `monkey`), and alone they are too common (`pass: 3`, `key: tls.crt`).
 */
const LAST_WORD_KINDS: ReadonlyMap<string, string> = new Map([
  ['pass', 'password'],
  ['pw', 'password'],
  ['pwd', 'password'],
  ['key', 'secret'],
  // `REDIS_AUTH`, `BASIC_AUTH`, `X-Auth`: the credential itself, but also settings (`jwtAuth: enabled`), so
  // kind `secret` (its value must look like a credential) and settings blocks stay (see isWholeWordOnlyKey).
  ['auth', 'secret'],
]);

/**
 * Well-known keys ending in such a word that name data, not a secret: database keys, grouping and
 * dedup keys, a public key, Kubernetes' `topologyKey`. Their values are column names, label keys or
 * ids, which diagnosis needs; other `…Key` names keep a value only if it does not look like a
 * credential (see `sensitiveKey`). Normalised form (see `normaliseKey`).
 */
const NON_SECRET_KEYS: ReadonlySet<string> = new Set([
  'primarykey',
  'foreignkey',
  'sortkey',
  'partitionkey',
  'shardkey',
  'hashkey',
  'rangekey',
  'rowkey',
  'cachekey',
  'objectkey',
  'groupkey',
  'dedupkey',
  'idempotencykey',
  'publickey',
  'sshpublickey',
  'topologykey',
]);

function normaliseKey(key: string): string {
  return key.toLowerCase().replace(/[^a-z0-9]+/g, '').replace(/[0-9]+$/, '');
}

/** The words of a key, lowercased: `DB_PASS2` → db, pass; `redisPw` → redis, pw; `DBPass` → db, pass. */
function keyWords(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .map((w) => w.replace(/[0-9]+$/, ''))
    .filter((w) => w !== '');
}

/** The placeholder kind for a sensitive key, or undefined when the key is not sensitive. */
export function sensitiveKeyKind(key: string): string | undefined {
  return sensitiveKey(key)?.kind;
}

/**
 * How a key names a secret. `shapeChecked`: the name alone is weak evidence (`…Key` names data as often
 * as secrets: `mismatchedKey: app`), so a value under it is a secret only if it looks like a credential.
 */
export function sensitiveKey(key: string): { kind: string; shapeChecked: boolean } | undefined {
  if (key.length > 120) return undefined;
  const k = normaliseKey(key);
  const exact = EXACT_KINDS.get(k);
  if (exact !== undefined) return { kind: exact, shapeChecked: false };
  for (const [suffix, kind] of SUFFIX_KINDS) if (k.endsWith(suffix)) return { kind, shapeChecked: false };
  const words = keyWords(key);
  const last = words.length >= 2 ? words[words.length - 1]! : undefined;
  const kind = last !== undefined ? LAST_WORD_KINDS.get(last) : undefined;
  return kind !== undefined && !NON_SECRET_KEYS.has(k) ? { kind, shapeChecked: last === 'key' || last === 'auth' } : undefined;
}

/** True for keys whose sensitivity does not pass to nested objects (`auth: {enabled: true, database: x}`). */
export function isWholeWordOnlyKey(key: string): boolean {
  if (EXACT_KINDS.has(normaliseKey(key))) return true;
  // `redisAuth: {enabled: true, …}` is a settings block like `auth:`; only a scalar under it is a credential.
  const words = keyWords(key);
  return words.length >= 2 && words[words.length - 1] === 'auth';
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

import { isNonSecretValue, looksLikeCredential } from '../secret-likeness.js';
import { sensitiveKeyKind } from '../sensitive-keys.js';
import type { Detector, Span } from '../types.js';
import { groupSpan, trimSpanEnd } from './spans.js';

/** Credentials recognised by where they sit (a URL's userinfo, a header, a `key=value`), not by their shape. */

/** `scheme://user:PASSWORD@host` — only the password goes; scheme, user and host stay as evidence. */
export const urlPasswordDetector: Detector = {
  name: 'url_password',
  kind: 'password',
  pattern: /:\/\/[^\s:/?#@"'<>[\]{}]{0,256}:(?<secret>[^\s/?#@"'<>]{1,256})@/dg,
  hints: ['://'],
  select: (m, { text }) => {
    const span = groupSpan(m, 'secret');
    return span && !isNonSecretValue(text.slice(span.start, span.end)) ? span : null;
  },
};

/**
 * `Authorization: Bearer|Basic|Token … <credential>` in headers, JSON and escaped JSON; the scheme
 * stays. Digest and AWS SigV4 parameters run to the end of the line. Without a scheme the value must
 * look like a credential, so prose ("Authorization: denied") survives.
 */
export const authorizationDetector: Detector = {
  name: 'authorization_header',
  kind: 'authorization',
  pattern:
    /(?<![A-Za-z0-9_-])(?:proxy-)?authorization\\?["']?[ \t]{0,3}[:=][ \t]{0,3}\\?["']?(?:(?:Digest|AWS4-HMAC-SHA256|Signature)[ \t]+(?<params>[^\r\n"'\\<>]{1,4000})|(?:(?<scheme>Bearer|Basic|Token|Bot|Negotiate|NTLM|ApiKey|Key|SSWS|JWT|OAuth)[ \t]+)?(?<secret>[^\s"'\\<>,;]{1,4000}))/dgi,
  select: (m, { text }) => {
    const params = groupSpan(m, 'params');
    if (params) return trimSpanEnd(text, params);
    const span = groupSpan(m, 'secret');
    if (!span) return null;
    const value = text.slice(span.start, span.end);
    if (isNonSecretValue(value)) return null;
    return m.groups?.['scheme'] !== undefined || looksLikeCredential(value) ? span : null;
  },
};

/** A bare `Bearer <token>` (curl `-H` lines, proxies that drop the header name). */
export const bearerDetector: Detector = {
  name: 'bearer_token',
  kind: 'authorization',
  pattern: /(?<![A-Za-z0-9_-])Bearer[ \t]+(?<secret>[A-Za-z0-9._~+/-]{16,4000}=*)(?![A-Za-z0-9._~+/=-])/dg,
  hints: ['Bearer'],
};

/** `Cookie:` / `Set-Cookie:` header values (always `name=value…`, which keeps prose out). */
export const cookieDetector: Detector = {
  name: 'cookie_header',
  kind: 'cookie',
  pattern: /(?<![A-Za-z0-9_-])(?:set-)?cookie\\?["']?[ \t]{0,3}:[ \t]{0,3}\\?["']?(?<secret>[^\r\n"'\\]{1,8000})/dgi,
  select: (m, { text }) => {
    const span = groupSpan(m, 'secret');
    if (!span || !text.slice(span.start, span.end).includes('=')) return null;
    return trimSpanEnd(text, span);
  },
};

/**
 * ADO.NET / ODBC connection strings (`Server=db;User Id=sa;Password=p@ss word;`): the value runs to
 * the next `;` and may contain spaces, which the generic `key=value` detector would cut short.
 */
export const connectionStringPasswordDetector: Detector = {
  name: 'connection_string_password',
  kind: 'password',
  // The `;` must be followed by another `Key=`, a quote or the end: that is what makes it a
  // connection string and not a sentence (`PWD=/srv/app was set; retrying`).
  pattern:
    /(?<![A-Za-z0-9_])(?<key>password|pwd)[ \t]*=[ \t]*(?<secret>[^;\r\n"'\\]{1,400});(?=[ \t]*(?:[A-Za-z][A-Za-z0-9 _]{0,40}=|["'\r\n]|$))/dgi,
  select: (m, { text }) => {
    const span = groupSpan(m, 'secret');
    if (!span || isNonSecretValue(text.slice(span.start, span.end), 'password', m.groups?.['key'])) return null;
    return trimSpanEnd(text, span);
  },
};

/**
 * A YAML plain scalar runs to the end of the line (`password: correct horse battery`), minus a
 * trailing ` # comment`; the generic bare value stops at the first space. It also stops at a quote,
 * backslash or `}` so a `password: …` quoted inside JSON or a flow map keeps its closing syntax.
 */
function yamlPlainScalar(text: string, span: Span): Span {
  const rest = YAML_SCALAR_END.exec(text.slice(span.end, span.end + 4000));
  const end = span.end + (rest ? rest.index : Math.min(4000, text.length - span.end));
  return trimSpanEnd(text, { start: span.start, end }) ?? span;
}

const YAML_SCALAR_END = /[\r\n"\\}]| #/;

const KEY_CHAR = /[A-Za-z0-9_.-]/;

/**
 * The whole key whose last word starts at `wordStart`: the pattern matches from the sensitive word
 * (a cheap literal scan), and the key's beginning (`DB_` in `DB_PASSWORD`) is found here by walking
 * back, up to 80 characters, to a character that cannot be part of a key.
 */
function keyEndingAt(text: string, wordStart: number, word: string): string | undefined {
  let start = wordStart;
  while (start > 0 && wordStart - start <= 80 && KEY_CHAR.test(text[start - 1] ?? '')) start--;
  if (wordStart - start > 80) return undefined;
  // `--password=…`, `-e TOKEN=…`: leading dashes are flag syntax, not part of the key.
  while (start < wordStart && text[start] === '-') start++;
  // Inside `a.b.c.password` keep the full dotted key; a key cannot start with a digit or dot.
  if (start < wordStart && !/[A-Za-z_]/.test(text[start] ?? '')) return undefined;
  return text.slice(start, wordStart) + word;
}

/** Kinds with their own detector above; the generic one leaves them alone. */
const OWN_DETECTOR_KINDS = new Set(['authorization', 'cookie']);

/**
 * `key=value`, `key: value`, `"key": "value"`, `\"key\":\"value\"` (JSON inside a JSON string),
 * `KEY='value'` where the key names a secret (see sensitive-keys.ts): env lines, query strings,
 * connection strings (`Password=…;`, `pwd=…`), logfmt, YAML and JSON text.
 */
export const labelledSecretDetector: Detector = {
  name: 'labelled_secret',
  kind: 'secret',
  pattern:
    /(?<word>pass(?:word|wd|phrase)?|secret|token|key|authorization|cookie|credentials?|dsn|pwd?|auth)[0-9]*\\?["']?[ \t]{0,3}(?<sep>[:=])[ \t]{0,3}(?:"(?<dq>(?:[^"\\\r\n]|\\.){0,4000})"|\\"(?<eq>[^"\\\r\n]{0,4000})\\"|'(?<sq>[^'\r\n]{0,4000})'|(?<bare>[^\s"'&;,<>\\]{1,4000}))/dgi,
  select: (m, { text }): Span | null => {
    const key = keyEndingAt(text, m.index, m.groups?.['word'] ?? '');
    if (key === undefined) return null;
    const kind = sensitiveKeyKind(key);
    if (kind === undefined || OWN_DETECTOR_KINDS.has(kind)) return null;
    const span = groupSpan(m, 'dq') ?? groupSpan(m, 'eq') ?? groupSpan(m, 'sq') ?? groupSpan(m, 'bare');
    if (!span || span.end === span.start) return null;
    const value = text.slice(span.start, span.end);
    if (isNonSecretValue(value, kind, key)) return null;
    // Passwords, private keys and DSNs are secret whatever they look like; a "token"/"secret" key
    // is also used for names and prose, so its value must look like a credential.
    const always = kind === 'password' || kind === 'private_key' || kind === 'dsn';
    if (!always && !looksLikeCredential(value)) return null;
    if (kind === 'password' && m.groups?.['sep'] === ':' && m.groups['bare'] !== undefined) return { ...yamlPlainScalar(text, span), kind };
    return { ...span, kind };
  },
};

/**
 * A config-file line that is just `<directive> <value>`, separated by blanks only (redis.conf and
 * valkey.conf `requirepass X` / `masterauth X`, sshd/pgbouncer-style files) where the directive names a
 * secret. The key must start its line and the value end it, so prose (`password authentication failed
 * …`) and log lines stay; the `key=value` forms are the labelled detector's. Like that one, the pattern
 * starts at the sensitive word (a cheap literal scan) and the key's start is found by walking back.
 */
export const configDirectiveDetector: Detector = {
  name: 'config_directive',
  kind: 'secret',
  pattern:
    /(?<word>requirepass|masterauth|pass(?:word|wd|phrase)?|secret|token|key|credentials?|dsn|pwd?|auth)[0-9]*[ \t]+(?:"(?<dq>[^"\r\n]{1,4000})"|(?<secret>[^\s"'#][^\s]{0,4000}))[ \t]*(?=\r?\n|$)/dgi,
  select: (m, { text }) => {
    const word = m.groups?.['word'] ?? '';
    const key = keyEndingAt(text, m.index, word);
    if (key === undefined) return null;
    // Only blanks between the line's start and the key.
    const keyStart = m.index - (key.length - word.length);
    for (let i = keyStart - 1; i >= 0 && text[i] !== '\n'; i--) if (text[i] !== ' ' && text[i] !== '\t') return null;
    const digits = /^[0-9]*/.exec(text.slice(m.index + word.length))?.[0] ?? '';
    const kind = sensitiveKeyKind(key + digits);
    const span = groupSpan(m, 'dq') ?? groupSpan(m, 'secret');
    if (kind === undefined || OWN_DETECTOR_KINDS.has(kind) || !span) return null;
    const value = text.slice(span.start, span.end);
    if (isNonSecretValue(value, kind, key)) return null;
    const always = kind === 'password' || kind === 'private_key' || kind === 'dsn';
    return always || looksLikeCredential(value) ? { ...span, kind } : null;
  },
};

/**
 * `--db-password X`, `-token X`, `"--api-key","X"` (argv with the value as the next word: a process
 * listing, a container's args as text or JSON). A flag whose name names a secret takes the next word;
 * `--password=X` is the labelled detector's. See `argvSecretKind` for the rule.
 */
export const flagValueDetector: Detector = {
  name: 'flag_value',
  kind: 'secret',
  pattern: /(?<![A-Za-z0-9_-])--?(?<flag>[A-Za-z][A-Za-z0-9_.-]{0,80})(?:[ \t]+|\\?"[ \t]*,[ \t]*\\?")(?<secret>[^\s"'\\<>-][^\s"'\\<>,;]{0,4000})/dg,
  hints: ['-'],
  select: (m, { text }) => {
    const span = groupSpan(m, 'secret');
    if (!span) return null;
    const kind = argvSecretKind(m.groups?.['flag'] ?? '', text.slice(span.start, span.end));
    return kind === undefined ? null : { ...span, kind };
  },
};

/** `/etc/tls/tls.key`, `./certs/client.pem`: where a key lives, not the key (two path segments at least). */
const FILE_PATH = /^(?:~|\.{1,2})?(?:\/[\w.@-]+){2,}\/?$/;

/**
 * The kind of the value after a flag in an argv list, or undefined when it is not a secret: the flag
 * must name one (`--password`, `--db-password`, `--token`, `--api-key`, `--session-key`); a password is
 * secret whatever it looks like, anything else must look like a credential and not like a file path.
 * Short flags (`-p`) are never taken: `-p 8080` is a port far more often than a password.
 */
export function argvSecretKind(flag: string, value: string): string | undefined {
  if (flag.length < 2) return undefined;
  const kind = sensitiveKeyKind(flag);
  if (kind === undefined || isNonSecretValue(value, kind, flag)) return undefined;
  if (kind === 'password' || kind === 'private_key' || kind === 'dsn') return kind;
  return looksLikeCredential(value) && !FILE_PATH.test(value) ? kind : undefined;
}

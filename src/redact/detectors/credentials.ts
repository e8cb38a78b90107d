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
    // `key_base` for Rails' SECRET_KEY_BASE, whose last word names nothing on its own.
    /(?<word>pass(?:word|wd|phrase)?|secret|token|key(?:_?base)?|authorization|cookie|credentials?|dsn|pwd?|auth)[0-9]*\\?["']?[ \t]{0,3}(?<sep>[:=])[ \t]{0,3}(?:"(?<dq>(?:[^"\\\r\n]|\\.){0,4000})"|\\"(?<eq>[^"\\\r\n]{0,4000})\\"|'(?<sq>[^'\r\n]{0,4000})'|(?<bare>[^\s"'&;,<>\\]{1,4000}))/dgi,
  select: (m, { text }): Span | null => {
    const key = keyEndingAt(text, m.index, m.groups?.['word'] ?? '');
    if (key === undefined) return null;
    const kind = sensitiveKeyKind(key);
    // A bare `auth` key (`.npmrc` `_auth=`, Docker config `"auth": "…"`) is base64(user:password), not a
    // header: the authorization detector never sees it, so it is taken here.
    if (kind === undefined || (OWN_DETECTOR_KINDS.has(kind) && m.groups?.['word']?.toLowerCase() !== 'auth')) return null;
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

/** The inside of a quoted span (`'pw'` → `pw`), or the span itself. */
function unquoted(text: string, span: Span): Span {
  const first = text[span.start];
  if ((first === "'" || first === '"') && span.end - span.start >= 3 && text[span.end - 1] === first) return { start: span.start + 1, end: span.end - 1 };
  return span;
}

/** How far back from a flag its command may be: a long command line, not a whole log. */
const COMMAND_REACH = 300;

/**
 * Whether `command` (a regex source of command names) is the command the flag at `flagStart` belongs to:
 * it appears on the same line within COMMAND_REACH characters, with no `|`, `;` or `&` (another command)
 * in between. The detectors below match at the flag, which is rare, and look back from there, rather than
 * scanning forward from every command name (that is quadratic on a line full of command names).
 */
function onCommandLine(text: string, flagStart: number, command: RegExp): boolean {
  // Every search stays inside the window, so a line of many flags costs COMMAND_REACH per flag at most.
  const window = text.slice(Math.max(0, flagStart - COMMAND_REACH), flagStart);
  const cut = Math.max(window.lastIndexOf('\n'), window.lastIndexOf('|'), window.lastIndexOf(';'), window.lastIndexOf('&'));
  return command.test(cut >= 0 ? window.slice(cut + 1) : window);
}

/** The quoted or bare value of a password flag, unless it is a reference or a mask. */
function flagSecret(m: RegExpExecArray, text: string, command: RegExp): Span | null {
  const span = groupSpan(m, 'secret');
  if (!span || !onCommandLine(text, m.index, command) || isNonSecretValue(text.slice(span.start, span.end))) return null;
  return unquoted(text, span);
}

const MYSQL_COMMAND = /(?:^|[\s/"'`(])(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mariadb|mariadb-dump)[ \t]/;
const REDIS_COMMAND = /(?:^|[\s/"'`(])(?:redis-cli|valkey-cli|keydb-cli)[ \t]/;
const SSHPASS_COMMAND = /(?:^|[\s/"'`(])sshpass[ \t]/;
const CURL_COMMAND = /(?:^|[\s/"'`(])curl[ \t]/;

/**
 * `mysql -uapp -pS3cret …` (also mysqldump, mysqladmin, mariadb): the password glued to `-p`, which no
 * `key=value` rule sees. `-p` with a space after it prompts, and `-P 3306` is the port, so neither is taken.
 */
export const mysqlPasswordFlagDetector: Detector = {
  name: 'mysql_password_flag',
  kind: 'password',
  pattern: /(?<=[ \t])-p(?<secret>'[^'\r\n]{1,256}'|"[^"\r\n]{1,256}"|[^\s'"]{1,256})/dg,
  hints: ['mysql', 'mariadb'],
  select: (m, { text }) => flagSecret(m, text, MYSQL_COMMAND),
};

/** `redis-cli -a <password>` / `--pass <password>` and `sshpass -p <password>`: the value after the flag. */
export const redisCliPasswordDetector: Detector = {
  name: 'cli_password_flag',
  kind: 'password',
  pattern: /(?<=[ \t])(?<flag>-a|--pass|-p)(?:[ \t]+|=)(?<secret>'[^'\r\n]{1,256}'|"[^"\r\n]{1,256}"|[^\s'"-][^\s'"]{0,255})/dg,
  hints: ['-cli', 'sshpass'],
  select: (m, { text }) => flagSecret(m, text, m.groups?.['flag'] === '-p' ? SSHPASS_COMMAND : REDIS_COMMAND),
};

/**
 * `curl -u user:password …` / `curl --user user:password`: the part after the first `:` goes, the user stays.
 * Only on a curl command line: elsewhere `-u 1000:1000` is a uid:gid.
 */
export const curlUserDetector: Detector = {
  name: 'curl_user_password',
  kind: 'password',
  pattern: /(?<=[ \t])(?:-[A-Za-z]{0,4}u|--user)(?:[ \t]+|=)?["']?[^\s:"']{0,128}:(?<secret>[^\s"']{1,256})/dg,
  hints: ['curl'],
  select: (m, { text }) => {
    const span = groupSpan(m, 'secret');
    return span && onCommandLine(text, m.index, CURL_COMMAND) && !isNonSecretValue(text.slice(span.start, span.end)) ? span : null;
  },
};

/**
 * Words that follow "the password is" in ordinary sentences (`password is incorrect`, `token was
 * rejected`). Past participles and gerunds (`…ed`, `…ing`) are skipped too, by rule, below.
 */
const PROSE_NON_SECRETS = new Set(
  (
    'a an the not no too now still also only this that it its what here there same different ' +
    'incorrect invalid wrong required missing empty blank unset set correct valid ok okay fine weak strong short long good bad ' +
    'null none unknown needed mandatory optional insecure secure known visible hidden present absent old new current stale ' +
    'in on at for to from of by with via being reset sent shown given taken written stolen expire change rotate update'
  ).split(' '),
);

/**
 * Secrets told in words: `the admin password is hunter2`, `db password was set to Xy9…`, `token is now
 * ghx…`. The value is the next word, minus trailing sentence punctuation; an ordinary word after the verb
 * (`password is incorrect`, `password was reset`) is not a secret. Tokens, secrets and keys are also names
 * and prose far more often, so their value must look like a credential.
 */
export const proseSecretDetector: Detector = {
  name: 'prose_secret',
  kind: 'password',
  pattern:
    /(?<![A-Za-z0-9_-])(?<word>password|passwd|passphrase|passcode|pw|pwd|secret|token|api[ _-]?key)(?:[ \t]+(?:for|of|on)[ \t]+[A-Za-z0-9_.@/:-]{1,64})?[ \t]+(?:is|was)(?:[ \t]+(?:now|still|set to|changed to|reset to))?[ \t]+["'`]?(?<secret>[^\s"'`]{1,256})/dgi,
  hints: ['pass', 'pw', 'PW', 'Pass', 'PASS', 'secret', 'Secret', 'SECRET', 'token', 'Token', 'TOKEN', 'key', 'Key', 'KEY', 'pwd', 'PWD'],
  select: (m, { text }) => {
    const span = groupSpan(m, 'secret');
    if (!span) return null;
    let end = span.end;
    while (end > span.start && /[.,;:!?)\]]/.test(text[end - 1] ?? '')) end--;
    const value = text.slice(span.start, end);
    const word = (m.groups?.['word'] ?? '').toLowerCase();
    if (value === '' || isNonSecretValue(value, 'password', word)) return null;
    const lower = value.toLowerCase();
    if (/^[a-z]+$/.test(lower) && (PROSE_NON_SECRETS.has(lower) || /(?:ed|ing)$/.test(lower))) return null;
    const password = word.startsWith('pass') || word === 'pw' || word === 'pwd';
    if (!password && !looksLikeCredential(value)) return null;
    return { start: span.start, end, kind: password ? 'password' : word === 'token' ? 'token' : 'secret' };
  },
};

/**
 * A `{name, value}` env pair written out as text: Kubernetes YAML (`- name: DB_PASSWORD` then `value: …` on
 * the next line) or JSON (`{"name":"DB_PASSWORD","value":"…"}`) in a log, a pasted manifest or an error.
 * The structural walk handles parsed objects; this is the same rule for text. The name decides.
 */
export const envPairTextDetector: Detector = {
  name: 'env_pair_text',
  kind: 'secret',
  pattern:
    /(?<![A-Za-z0-9_-])name\\?["']?[ \t]{0,3}:[ \t]{0,3}\\?["']?(?<key>[A-Za-z_][A-Za-z0-9_.-]{0,80})\\?["']?[ \t]*(?:,[ \t]*|\r?\n[ \t]{0,40})\\?["']?value\\?["']?[ \t]{0,3}:[ \t]{0,3}(?:\\?"(?<dq>[^"\\\r\n]{1,4000})\\?"|'(?<sq>[^'\r\n]{1,4000})'|(?<bare>[^\s"'\\,}]{1,4000}))/dg,
  hints: ['name'],
  select: (m, { text }) => {
    const key = m.groups?.['key'] ?? '';
    const kind = sensitiveKeyKind(key);
    const span = groupSpan(m, 'dq') ?? groupSpan(m, 'sq') ?? groupSpan(m, 'bare');
    if (kind === undefined || OWN_DETECTOR_KINDS.has(kind) || !span) return null;
    const value = text.slice(span.start, span.end);
    if (isNonSecretValue(value, kind, key)) return null;
    const always = kind === 'password' || kind === 'private_key' || kind === 'dsn';
    return always || looksLikeCredential(value) ? { ...span, kind } : null;
  },
};

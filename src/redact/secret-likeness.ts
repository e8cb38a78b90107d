import { isPlaceholder } from './placeholder.js';

const NON_VALUES = /^(?:true|false|yes|no|on|off|null|nil|none|undefined|~|-|\||>|[|>][-+]?|\[\]|\{\}|redacted|\[redacted\]|<redacted>)$/i;
const MASKS = /^(?:\*+|x{3,}|\.{3}|…)$/i;
/** `<token>`, `${DB_PASSWORD}`, `$(TOKEN)`, `$TOKEN`, `{{ .Values.password }}`, `%s`. */
const REFERENCES = /^(?:<[^<>]*>|\$\{[^{}]*\}|\$\([^()]*\)|\$[A-Za-z_][A-Za-z0-9_]*|\{\{.*\}\}|%[sdvqj])$/s;

/**
 * Values that carry no secret even under a sensitive key: empty, booleans, nulls, masks, references
 * to where the secret lives, YAML block indicators, and placeholders we already wrote.
 */
export function isNonSecretValue(value: string, kind?: string, key?: string): boolean {
  const t = value.trim();
  if (t === '' || NON_VALUES.test(t) || MASKS.test(t) || REFERENCES.test(t) || isPlaceholder(t)) return true;
  // `PWD=/srv/app`: the shell's working directory, not a password.
  if (kind === 'password' && key !== undefined && key.toLowerCase() === 'pwd' && /^[/~.]/.test(t)) return true;
  return false;
}

/**
 * A resource or file name rather than a credential: several separator-delimited segments, at least
 * half of them plain words (`shop/db-credentials`, `vault-token-v2`, `github.app.key`). A UUID or a
 * random token rarely has word segments.
 */
function looksLikeName(v: string): boolean {
  const segments = v.split(/[-./_:]/).filter((s) => s !== '');
  if (segments.length < 2) return false;
  const words = segments.filter((s) => /^[a-z]{2,}$/.test(s)).length;
  return words * 2 >= segments.length && /^[a-z0-9][a-z0-9./_:-]*$/.test(v);
}

/**
 * Whether an unlabelled-format value after a token/secret-style key looks like a credential rather
 * than prose or a name. Applied where the key alone is weak evidence (`invalid token: expired`,
 * `secret=shop/db-credentials`); passwords skip this test: `password: hunter2` is a secret.
 */
export function looksLikeCredential(v: string): boolean {
  if (v.length < 8 || looksLikeName(v)) return false;
  const hasDigit = /[0-9]/.test(v);
  const mixedCase = /[a-z]/.test(v) && /[A-Z]/.test(v);
  return hasDigit || mixedCase || /[+/=_]/.test(v);
}

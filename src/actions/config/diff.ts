/**
 * What a content restore changes, as the card shows it: one row per changed key, and for values of
 * several lines one row per changed line (`data.redis.conf line 5: maxmemory 64mb → maxmemory 2gb`).
 * Config files carry passwords (`requirepass …` in a redis.conf, `password=` in a properties file), so
 * every shown line goes through the redactor and, on top of it, any line whose key names a secret (by the
 * redactor's key rules, or a word such as `pass`/`auth` in it: `requirepass`, `masterauth`) shows its
 * value as the redactor's placeholder, and so does the whole value of a key whose name names a secret.
 * Binary values show their size.
 */
import type { Redactor } from '../../redact/index.js';
import { isPlaceholder, sensitiveKeyKind } from '../../redact/index.js';
import type { FieldChange } from '../types.js';
import type { ConfigContent } from './content.js';

/** Rows at most; beyond, one row says how many more lines differ. */
const MAX_ROWS = 40;
const MAX_LINE = 300;
/** Past this many cells the middle of two values is shown as replaced lines rather than aligned. */
const MAX_LCS_CELLS = 250_000;

/** Words that make a config key's value secret even when the redactor's key rules do not know the key (`requirepass`, `masterauth`). */
const SECRET_WORD = /pass|secret|token|credential|auth|private|signing|(?:^|[-_.])key$|apikey/i;
/** `key value`, `key = value`, `key: value`, `"key": "value"`, with an optional leading `-`/`export`. */
const ENTRY = /^(\s*(?:-\s*|export\s+)?["']?)([A-Za-z_][\w.-]*)(["']?\s*(?:[:=]\s*|\s+))(\S.*)$/;
/** Redis/Valkey ACL rules: `user default on >password ~* +@all` (`>` sets a password, `#` its hash). */
const ACL_USER = /^\s*user\s/;
const ACL_SECRET = /(^|\s)([>#<!])\S+/g;

function clip(s: string): string {
  return s.length > MAX_LINE ? `${s.slice(0, MAX_LINE - 1)}…` : s;
}

/**
 * `value` as the redactor shows a value under a secret-naming key: its placeholder (`[REDACTED:password:1a2b3c4d]`,
 * the same for the same value within a process, so a card still shows whether a password changed), or the
 * value itself when it cannot be a secret (empty, `true`, a `${REFERENCE}`).
 */
function placeholder(redactor: Redactor, key: string, value: string): string {
  // Under its own key first (the placeholder then names its kind: token, api_key…); a key the redactor's
  // rules do not know, or a `…Key` value it finds too plain to be a credential, masks as a password.
  const own = sensitiveKeyKind(key) !== undefined ? (redactor.redactValue({ [key]: value }) as Record<string, string>)[key]! : value;
  return own !== value ? own : (redactor.redactValue({ password: value }) as { password: string }).password;
}

/** One config line as it may be shown. */
export function maskLine(redactor: Redactor, line: string): string {
  let out = redactor.redactText(line);
  const m = ENTRY.exec(out);
  if (m && (sensitiveKeyKind(m[2]!) !== undefined || SECRET_WORD.test(m[2]!)) && !isPlaceholder(m[4]!.trim())) out = `${m[1]}${m[2]}${m[3]}${placeholder(redactor, m[2]!, m[4]!)}`;
  if (ACL_USER.test(out)) out = out.replace(ACL_SECRET, (tok: string, space: string, sigil: string) => (isPlaceholder(tok.trim().slice(1)) ? tok : `${space}${sigil}${placeholder(redactor, 'password', tok.trim().slice(1))}`));
  return clip(out);
}

type Op = { kind: 'same' | 'del' | 'ins'; line: string };

/** A line diff: common prefix and suffix, and an LCS alignment of the middle when it is small enough. */
export function diffLines(a: string[], b: string[]): Op[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  const ops: Op[] = a.slice(0, start).map((line) => ({ kind: 'same', line }));
  if (midA.length * midB.length <= MAX_LCS_CELLS) {
    // lcs[i][j]: length of the LCS of midA[i..] and midB[j..].
    const lcs = Array.from({ length: midA.length + 1 }, () => new Uint32Array(midB.length + 1));
    for (let i = midA.length - 1; i >= 0; i--) for (let j = midB.length - 1; j >= 0; j--) lcs[i]![j] = midA[i] === midB[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    let i = 0;
    let j = 0;
    while (i < midA.length || j < midB.length) {
      if (i < midA.length && j < midB.length && midA[i] === midB[j]) {
        ops.push({ kind: 'same', line: midA[i++]! });
        j++;
      } else if (j < midB.length && (i === midA.length || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) ops.push({ kind: 'ins', line: midB[j++]! });
      else ops.push({ kind: 'del', line: midA[i++]! });
    }
  } else {
    ops.push(...midA.map((line): Op => ({ kind: 'del', line })), ...midB.map((line): Op => ({ kind: 'ins', line })));
  }
  ops.push(...a.slice(endA).map((line): Op => ({ kind: 'same', line })));
  return ops;
}

const lines = (v: string): string[] => (v.endsWith('\n') ? v.slice(0, -1) : v).split('\n');
const lineCount = (v: string): string => {
  const n = v === '' ? 0 : lines(v).length;
  return `(${n} line${n === 1 ? '' : 's'})`;
};
const multiLine = (v: string | undefined): boolean => v !== undefined && lines(v).length > 1;

/** Rows for one multi-line value: each run of removed lines paired with the added lines that replace it. */
function lineRows(path: string, before: string, after: string, redactor: Redactor): FieldChange[] {
  const rows: FieldChange[] = [];
  let lineNo = 0;
  const ops = diffLines(lines(before), lines(after));
  for (let k = 0; k < ops.length; ) {
    if (ops[k]!.kind === 'same') {
      lineNo++;
      k++;
      continue;
    }
    const del: string[] = [];
    const ins: string[] = [];
    const first = lineNo + 1;
    while (k < ops.length && ops[k]!.kind !== 'same') {
      const op = ops[k++]!;
      if (op.kind === 'del') {
        del.push(op.line);
        lineNo++;
      } else ins.push(op.line);
    }
    for (let n = 0; n < Math.max(del.length, ins.length); n++) {
      const at = del[n] !== undefined ? `line ${first + n}` : `after line ${first + del.length - 1}`;
      rows.push({ path: `${path} ${at}`, before: del[n] !== undefined ? maskLine(redactor, del[n]!) : undefined, after: ins[n] !== undefined ? maskLine(redactor, ins[n]!) : undefined });
    }
  }
  return rows;
}

/** The card's rows for restoring `to` over `from`, bounded, with nothing secret-looking in them. */
export function contentChanges(from: ConfigContent, to: ConfigContent, redactor: Redactor): FieldChange[] {
  const rows: FieldChange[] = [];
  const keys = [...new Set([...Object.keys(from.data), ...Object.keys(to.data)])].sort();
  for (const key of keys) {
    const b = from.data[key];
    const a = to.data[key];
    if (b === a) continue;
    const path = `data.${key}`;
    // A key that names a secret: never a line of it, its whole value as the redactor's placeholder.
    if (sensitiveKeyKind(key) !== undefined) rows.push({ path, before: b === undefined ? undefined : placeholder(redactor, key, b), after: a === undefined ? undefined : placeholder(redactor, key, a) });
    else if (b !== undefined && a !== undefined && (multiLine(b) || multiLine(a))) rows.push(...lineRows(path, b, a, redactor));
    else if (multiLine(b) || multiLine(a)) rows.push({ path, before: b === undefined ? undefined : lineCount(b), after: a === undefined ? undefined : lineCount(a) });
    else rows.push({ path, before: b === undefined ? undefined : maskLine(redactor, b), after: a === undefined ? undefined : maskLine(redactor, a) });
  }
  const bytes = (v: string) => `(${Buffer.from(v, 'base64').length} bytes, binary)`;
  for (const key of [...new Set([...Object.keys(from.binaryData), ...Object.keys(to.binaryData)])].sort()) {
    const b = from.binaryData[key];
    const a = to.binaryData[key];
    if (b !== a) rows.push({ path: `binaryData.${key}`, before: b === undefined ? undefined : bytes(b), after: a === undefined ? undefined : bytes(a) });
  }
  if (rows.length <= MAX_ROWS) return rows;
  return [...rows.slice(0, MAX_ROWS - 1), { path: '…', before: undefined, after: `${rows.length - MAX_ROWS + 1} more changed lines not shown` }];
}

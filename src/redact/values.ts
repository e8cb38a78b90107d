import { argvSecretKind } from './detectors/credentials.js';
import { EMBEDDED_JSON_ANNOTATIONS, LAST_APPLIED_ANNOTATION, decodeSecretData, isRecord, isSecretObject, type PlainRecord } from './k8s.js';
import { isNonSecretValue, looksLikeCredential } from './secret-likeness.js';
import { REFERENCE_KEYS, isWholeWordOnlyKey, sensitiveKey } from './sensitive-keys.js';

/** What the walker needs from its redactor. */
export interface WalkDeps {
  redactText(s: string): string;
  /** A placeholder for a structurally identified secret; `detector` is counted in stats. */
  replace(detector: 'sensitive_key' | 'k8s_secret', kind: string, raw: string): string;
}

const MAX_DEPTH = 64;
/** `--db-password` or `-token` alone in an argv item (the value is the next item). */
const ARGV_FLAG = /^--?([A-Za-z][A-Za-z0-9_.-]{1,80})$/;
const TRUNCATED = '[REDACTED:depth_limit:00000000]';

/**
 * Deep, copying redaction of JSON-like data. `inherited` is the kind of the nearest sensitive key
 * above: scalars under it are replaced whole; nested objects are walked so reference fields
 * (`secret: {secretName: …}` volumes) survive — see REFERENCE_KEYS.
 */
export class ValueWalker {
  private readonly seen = new WeakMap<object, unknown>();

  constructor(
    private readonly deps: WalkDeps,
    /** Recognise kind-less Secrets too (see isSecretObject). */
    private readonly looseSecrets: boolean,
  ) {}

  walk(v: unknown, inherited?: string, depth = 0): unknown {
    switch (typeof v) {
      case 'string':
        if (inherited !== undefined && !isNonSecretValue(v, inherited)) return this.deps.replace('sensitive_key', inherited, v);
        return this.deps.redactText(v);
      case 'number':
      case 'bigint':
        return inherited !== undefined ? this.deps.replace('sensitive_key', inherited, String(v)) : v;
      case 'object':
        if (v === null) return v;
        if (depth >= MAX_DEPTH) return TRUNCATED;
        return this.walkObject(v, inherited, depth + 1);
      default:
        return v;
    }
  }

  private walkObject(v: object, inherited: string | undefined, depth: number): unknown {
    const done = this.seen.get(v);
    if (done !== undefined) return done;
    if (v instanceof Date || v instanceof RegExp || ArrayBuffer.isView(v) || v instanceof ArrayBuffer) return v;
    if (Array.isArray(v)) {
      const out: unknown[] = [];
      this.seen.set(v, out);
      // An argv list (`args: ["--db-password", "…"]`): a secret-naming flag makes the next item secret.
      let flag: string | undefined;
      for (const item of v) {
        const kind = flag !== undefined && typeof item === 'string' ? argvSecretKind(flag, item) : undefined;
        out.push(kind !== undefined ? this.deps.replace('sensitive_key', kind, item as string) : this.walk(item, inherited, depth));
        flag = typeof item === 'string' ? ARGV_FLAG.exec(item)?.[1] : undefined;
      }
      return out;
    }
    if (v instanceof Map) {
      const out = new Map<unknown, unknown>();
      this.seen.set(v, out);
      for (const [k, item] of v) out.set(k, this.walk(item, typeof k === 'string' ? this.childKind(k, inherited, item) : inherited, depth));
      return out;
    }
    if (v instanceof Set) {
      const out = new Set<unknown>();
      this.seen.set(v, out);
      for (const item of v) out.add(this.walk(item, inherited, depth));
      return out;
    }
    const record: PlainRecord = v instanceof Error ? errorFields(v) : (v as PlainRecord);
    const out: PlainRecord = {};
    this.seen.set(v, out);
    if (isSecretObject(record, this.looseSecrets)) return this.walkSecret(record, out, depth);
    const pairKind = envPairKind(record);
    for (const key of Object.keys(record)) {
      const item = record[key];
      if (key === 'value' && pairKind !== undefined) out[key] = this.walk(item, pairKind, depth);
      else if (EMBEDDED_JSON_ANNOTATIONS.has(key) && typeof item === 'string') out[key] = this.walkEmbeddedJson(item, depth);
      else out[key] = this.walk(item, this.childKind(key, inherited, item), depth);
    }
    return out;
  }

  private childKind(key: string, inherited: string | undefined, item: unknown): string | undefined {
    const own = ownKind(key, item);
    // `auth: {enabled: true, database: shop}` is a settings block; only a scalar `auth` is a credential.
    if (own !== undefined) return typeof item === 'object' && isWholeWordOnlyKey(key) ? undefined : own;
    return inherited !== undefined && !REFERENCE_KEYS.has(key) ? inherited : undefined;
  }

  /** Keys of `data`/`stringData` stay (they say *what* the Secret holds); every value goes. */
  private walkSecret(secret: PlainRecord, out: PlainRecord, depth: number): PlainRecord {
    for (const key of Object.keys(secret)) {
      const item = secret[key];
      if ((key === 'data' || key === 'stringData') && isRecord(item)) {
        const values: PlainRecord = {};
        for (const [name, raw] of Object.entries(item)) {
          values[name] = this.deps.replace('k8s_secret', 'k8s_secret', key === 'data' ? decodeSecretData(raw) : String(raw));
        }
        out[key] = values;
      } else if (key === 'metadata' && isRecord(item)) {
        out[key] = this.walkSecretMetadata(item, depth);
      } else {
        out[key] = this.walk(item, undefined, depth);
      }
    }
    return out;
  }

  /** A Secret's last-applied annotation is the Secret itself: drop its content entirely. */
  private walkSecretMetadata(metadata: PlainRecord, depth: number): unknown {
    const annotations = metadata['annotations'];
    if (!isRecord(annotations) || typeof annotations[LAST_APPLIED_ANNOTATION] !== 'string') return this.walk(metadata, undefined, depth);
    const { [LAST_APPLIED_ANNOTATION]: applied, ...rest } = annotations;
    const walked = this.walk({ ...metadata, annotations: rest }, undefined, depth) as PlainRecord;
    (walked['annotations'] as PlainRecord)[LAST_APPLIED_ANNOTATION] = this.deps.replace('k8s_secret', 'k8s_secret', String(applied));
    return walked;
  }

  /** Redact a JSON document kept in a string (the last-applied annotation, EMBEDDED_JSON_ANNOTATIONS) structurally, then re-serialise it. */
  private walkEmbeddedJson(s: string, depth: number): string {
    let parsed: unknown;
    try {
      parsed = JSON.parse(s);
    } catch {
      return this.deps.redactText(s);
    }
    return JSON.stringify(this.walk(parsed, undefined, depth));
  }
}

/**
 * `{name: 'DB_PASSWORD', value: '…'}` (container env, Helm `--set` lists, header arrays) or
 * `{key: …, value: …}`: the name decides whether `value` is secret.
 */
function envPairKind(record: PlainRecord): string | undefined {
  if (!('value' in record)) return undefined;
  const name = typeof record['name'] === 'string' ? record['name'] : record['key'];
  return typeof name === 'string' ? ownKind(name, record['value']) : undefined;
}

/** The kind `key` gives `item`; a weak name (`…Key`) only to a scalar that looks like a credential. */
function ownKind(key: string, item: unknown): string | undefined {
  const rule = sensitiveKey(key);
  if (rule === undefined) return undefined;
  if (rule.shapeChecked) return typeof item === 'string' && looksLikeCredential(item) ? rule.kind : undefined;
  return rule.kind;
}

/** Errors become plain objects (their message and stack are not enumerable, and may quote secrets). */
function errorFields(e: Error): PlainRecord {
  const fields: PlainRecord = { type: e.name, message: e.message };
  if (e.stack !== undefined) fields['stack'] = e.stack;
  for (const [k, v] of Object.entries(e)) fields[k] = v;
  if (e.cause !== undefined) fields['cause'] = e.cause;
  return fields;
}

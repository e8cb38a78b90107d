/**
 * A ConfigMap's content (`data` and `binaryData`) as `restore_config` handles it: read from an object,
 * compared, and hashed. The digest is what plans store instead of the content, so it is taken over the
 * whole content at once (never per value) and keyed by the object's uid: it proves "same content" to
 * the approval flow without being a lookup table for any single value.
 */
import { createHash } from 'node:crypto';

export interface ConfigContent {
  data: Record<string, string>;
  /** Base64, as the API returns it. */
  binaryData: Record<string, string>;
}

export const EMPTY_CONTENT: ConfigContent = { data: {}, binaryData: {} };

/** The map as strings, or why it is not one (a value that is not a string). */
function stringMap(v: unknown, field: string): Record<string, string> | string {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) return `${field} is not a map`;
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (typeof x !== 'string') return `${field}.${k} is not a string`;
    out[k] = x;
  }
  return out;
}

/** The content of an object (live, or one read from an annotation or a manifest); a string says why it is not valid content. */
export function contentOf(obj: object): ConfigContent | string {
  const o = obj as { data?: unknown; binaryData?: unknown };
  const data = stringMap(o.data, 'data');
  if (typeof data === 'string') return data;
  const binaryData = stringMap(o.binaryData, 'binaryData');
  if (typeof binaryData === 'string') return binaryData;
  return { data, binaryData };
}

const sorted = (m: Record<string, string>): [string, string][] => Object.entries(m).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** `vigil-config-content/v1` + uid + the content with keys in order, SHA-256, hex. */
export function contentDigest(uid: string, c: ConfigContent): string {
  return createHash('sha256')
    .update(`vigil-config-content/v1\n${uid}\n`)
    .update(JSON.stringify({ data: sorted(c.data), binaryData: sorted(c.binaryData) }))
    .digest('hex');
}

/** For people: the first 12 hex digits. */
export const shortDigest = (digest: string): string => `sha256:${digest.slice(0, 12)}`;

export function sameContent(a: ConfigContent, b: ConfigContent): boolean {
  return JSON.stringify([sorted(a.data), sorted(a.binaryData)]) === JSON.stringify([sorted(b.data), sorted(b.binaryData)]);
}

/** What restoring `to` over `from` does to each key (binaryData keys as `binaryData.<key>`). */
export function keyChanges(from: ConfigContent, to: ConfigContent): { added: string[]; removed: string[]; changed: string[] } {
  const added: string[] = [];
  const removed: string[] = [];
  const changed: string[] = [];
  for (const [field, prefix] of [['data', ''], ['binaryData', 'binaryData.']] as const) {
    const a = from[field];
    const b = to[field];
    for (const k of Object.keys(b).sort()) {
      if (!Object.hasOwn(a, k)) added.push(prefix + k);
      else if (a[k] !== b[k]) changed.push(prefix + k);
    }
    for (const k of Object.keys(a).sort()) if (!Object.hasOwn(b, k)) removed.push(prefix + k);
  }
  return { added, removed, changed };
}

/** Bytes the content takes as JSON (for the annotation that keeps it for the undo). */
export function contentBytes(c: ConfigContent): number {
  return Buffer.byteLength(JSON.stringify(c));
}

/** Helm values compared key by key (dotted paths), so a history can say "image.tag 1.14.1 → 1.14.2". */

export interface ValuesDiff {
  added: { key: string; value: unknown }[];
  removed: { key: string; value: unknown }[];
  changed: { key: string; from: unknown; to: unknown }[];
}

/** Leaves by dotted path; arrays are leaves (Helm replaces lists whole). */
export function flattenValues(v: unknown, prefix = '', out = new Map<string, unknown>()): Map<string, unknown> {
  if (v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length > 0) {
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) flattenValues(x, prefix ? `${prefix}.${k}` : k, out);
  } else if (prefix) out.set(prefix, v);
  return out;
}

/** Pass values that are already redacted: equal secrets redact to equal placeholders, so changes still show. */
export function diffValues(prev: unknown, next: unknown): ValuesDiff {
  const a = flattenValues(prev);
  const b = flattenValues(next);
  const diff: ValuesDiff = { added: [], removed: [], changed: [] };
  for (const [key, value] of b) {
    if (!a.has(key)) diff.added.push({ key, value });
    else if (JSON.stringify(a.get(key)) !== JSON.stringify(value)) diff.changed.push({ key, from: a.get(key), to: value });
  }
  for (const [key, value] of a) if (!b.has(key)) diff.removed.push({ key, value });
  return diff;
}

/** Every string inside a value (keys included), for "is this secret anywhere in the output" checks. */
export function allStrings(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (v instanceof Map) for (const [k, item] of v) allStrings([k, item], out);
  else if (Array.isArray(v) || v instanceof Set) for (const item of v) allStrings(item, out);
  else if (typeof v === 'object' && v !== null) {
    for (const [k, item] of Object.entries(v)) {
      out.push(k);
      allStrings(item, out);
    }
  }
  return out;
}

/** True when `needle` occurs in any string of `v`. */
export function containsAnywhere(v: unknown, needle: string): boolean {
  return allStrings(v).some((s) => s.includes(needle));
}

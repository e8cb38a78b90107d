import type { Redactor } from '../../redact/index.js';
import type { LokiEntry } from './types.js';

/**
 * The entries' lines redacted, in the entries' order. Each stream is redacted as one log, oldest first
 * (entries arrive merged across streams): a private key printed over several lines is one stream's
 * consecutive lines, and only seen whole there.
 */
export function redactEntries(redactor: Redactor, entries: readonly LokiEntry[]): string[] {
  const streams = new Map<string, number[]>();
  entries.forEach((e, i) => {
    const key = JSON.stringify(e.labels);
    const at = streams.get(key);
    if (at) at.push(i);
    else streams.set(key, [i]);
  });
  const out = new Array<string>(entries.length);
  for (const indices of streams.values()) {
    const ordered = [...indices].sort((a, b) => (entries[a]!.ns < entries[b]!.ns ? -1 : entries[a]!.ns > entries[b]!.ns ? 1 : a - b));
    const redacted = redactor.redactLines(ordered.map((i) => entries[i]!.line));
    ordered.forEach((i, k) => (out[i] = redacted[k]!));
  }
  return out;
}

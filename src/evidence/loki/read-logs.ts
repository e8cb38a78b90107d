/**
 * Reading a log query's lines over a window within a line budget, so that a noisy stream is sampled
 * across the whole window rather than only its newest lines:
 *
 * 1. One backward page over the whole window. Not full → that is everything (`sampled: false`).
 * 2. Full: estimate the window's total from the page's density (lines per ns between its oldest entry
 *    and `end`). If the estimate fits in `maxLines`, keep paging backward (next `end` = oldest + 1 ns,
 *    boundary duplicates dropped, as logcli does) until the window or the budget is exhausted.
 * 3. Otherwise split the window into `slices` equal sub-windows and page each backward with an equal
 *    share of the budget: every part of the window is represented, each by its newest lines. Counts are
 *    then of a sample (`sampled: true`); rates within one slice stay comparable.
 *
 * A flood of more than `pageSize` entries sharing one nanosecond cannot be paged past (Loki has no
 * cursor); the read stops there rather than loop.
 */
import { LokiError } from './errors.js';
import type { LokiEntry, LokiLogRead, LokiQueryRangeParams, LokiQueryResult } from './types.js';

export interface ReadLogsParams {
  query: string;
  start: Date;
  end: Date;
  /** Lines read at most over the whole window (default 10,000). */
  maxLines?: number;
  /** Entries per request (default 5,000, Loki's default `max_entries_limit_per_query`). */
  pageSize?: number;
  /** Sub-windows a noisy window is sampled in (default 10). */
  slices?: number;
  signal?: AbortSignal;
}

/** The one client call this needs; `LokiClient` provides it. */
export interface RangeQuerier {
  queryRange(p: LokiQueryRangeParams): Promise<LokiQueryResult>;
}

const NS_PER_MS = 1_000_000n;
const byNsDesc = (a: LokiEntry, b: LokiEntry): number => (a.ns === b.ns ? 0 : a.ns > b.ns ? -1 : 1);
const byNsAsc = (a: LokiEntry, b: LokiEntry): number => -byNsDesc(a, b);
const entryKey = (e: LokiEntry): string => `${e.ns}\u0000${e.line}\u0000${JSON.stringify(e.labels)}`;

function dedupe(entries: LokiEntry[]): LokiEntry[] {
  const seen = new Set<string>();
  return entries.filter((e) => {
    const k = entryKey(e);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** One backward page as entries, newest first (merged across streams). Throws on a metric result. */
async function page(client: RangeQuerier, query: string, start: bigint, end: bigint, limit: number, signal?: AbortSignal): Promise<LokiEntry[]> {
  const result = await client.queryRange({ query, start, end, limit, direction: 'backward', signal });
  if (result.resultType !== 'streams') {
    throw new LokiError(400, `query returned ${result.resultType}, not log lines: use a log query (a stream selector with filters), not a metric query`, '/loki/api/v1/query_range');
  }
  return result.streams.flatMap((s) => s.entries).sort(byNsDesc).slice(0, limit);
}

/** Page backward within [start, end) until `budget` new lines are read or the range is exhausted. */
async function pageBackward(
  client: RangeQuerier,
  query: string,
  range: { start: bigint; end: bigint },
  budget: number,
  pageSize: number,
  seen: readonly LokiEntry[],
  signal?: AbortSignal,
): Promise<{ entries: LokiEntry[]; requests: number; more: boolean }> {
  const keys = new Set(seen.map(entryKey));
  const out: LokiEntry[] = [];
  let requests = 0;
  let to = range.end;
  while (out.length < budget) {
    // One extra line: the boundary entry of the previous page comes back and is dropped.
    const limit = Math.min(pageSize, budget - out.length + 1);
    const got = await page(client, query, range.start, to, limit, signal);
    requests++;
    let added = 0;
    for (const e of got) {
      const k = entryKey(e);
      if (keys.has(k) || out.length >= budget) continue;
      keys.add(k);
      out.push(e);
      added++;
    }
    const oldest = got.at(-1)?.ns;
    if (got.length < limit || oldest === undefined || added === 0 || oldest + 1n >= to) {
      return { entries: out, requests, more: got.length >= limit && out.length >= budget };
    }
    to = oldest + 1n;
  }
  return { entries: out, requests, more: true };
}

export async function readLogs(client: RangeQuerier, p: ReadLogsParams): Promise<LokiLogRead> {
  const maxLines = Math.max(1, p.maxLines ?? 10_000);
  const pageSize = Math.max(1, Math.min(p.pageSize ?? 5_000, maxLines));
  const start = BigInt(p.start.getTime()) * NS_PER_MS;
  const end = BigInt(p.end.getTime()) * NS_PER_MS;
  const first = await page(client, p.query, start, end, pageSize, p.signal);
  let requests = 1;
  if (first.length < pageSize) return { entries: first.sort(byNsAsc), sampled: false, requests };

  const oldest = first.at(-1)?.ns ?? start;
  const estimate = (Number(end - start) * first.length) / Math.max(1, Number(end - oldest));
  if (estimate <= maxLines) {
    const rest = await pageBackward(client, p.query, { start, end: oldest + 1n }, maxLines - first.length, pageSize, first, p.signal);
    requests += rest.requests;
    return { entries: dedupe([...first, ...rest.entries]).sort(byNsAsc), sampled: rest.more, requests };
  }

  const slices = Math.max(1, p.slices ?? 10);
  const share = Math.max(1, Math.floor(maxLines / slices));
  const width = (end - start) / BigInt(slices);
  const entries: LokiEntry[] = [];
  for (let i = slices - 1; i >= 0; i--) {
    const sStart = start + width * BigInt(i);
    const sEnd = i === slices - 1 ? end : sStart + width;
    if (sEnd <= sStart) continue;
    const got = await pageBackward(client, p.query, { start: sStart, end: sEnd }, share, pageSize, [], p.signal);
    requests += got.requests;
    entries.push(...got.entries);
  }
  return { entries: dedupe(entries).sort(byNsAsc), sampled: true, requests };
}

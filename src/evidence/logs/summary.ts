/**
 * "What changed in the logs at the onset": mine the whole window, then compare each template's rate
 * before and after `onset - lead` (default 1 minute, because logs often lead the alert that fires on them).
 */
import { comparePatterns, DrainMiner, foldPatterns, rankClusters, type MinedCluster } from './drain.js';
import type { LogLine, LogPattern, MineOptions } from './types.js';

export interface PatternChange {
  /** `new`: not seen before the cut; `rate_jump`: seen before, but at least `jumpFactor` times as often per minute after. */
  kind: 'new' | 'rate_jump';
  countBefore: number;
  countAfter: number;
  perMinuteBefore: number;
  perMinuteAfter: number;
}

export type ChangedPattern = LogPattern & { change: PatternChange };

export interface LogsSummary {
  totalLines: number;
  patterns: LogPattern[];
  /** Templates that first appear after `onset - lead`, or whose rate jumps then. Not folded. */
  newSinceOnset: ChangedPattern[];
  errorPatterns: LogPattern[];
}

export interface SummarizeOptions extends MineOptions {
  /** Without an onset, `newSinceOnset` is empty. */
  onset?: Date;
  /** The window the lines were read from; defaults to the first and last line timestamps. */
  range?: { from: Date; to: Date };
  /** How long before the onset changes count (default 60 s). */
  leadMs?: number;
  /** Rate ratio (after/before per minute) that counts as a jump (default 3). */
  jumpFactor?: number;
  /** Lines after the cut a jump or new template needs (default 3), so one stray line is not "what changed". */
  minCountAfter?: number;
}

const MINUTE = 60_000;

function windowOf(lines: readonly LogLine[], range: SummarizeOptions['range']): { from: number; to: number } | undefined {
  if (range) return { from: range.from.getTime(), to: range.to.getTime() };
  let from = Infinity;
  let to = -Infinity;
  for (const l of lines) {
    const t = l.ts?.getTime();
    if (t === undefined || Number.isNaN(t)) continue;
    if (t < from) from = t;
    if (t > to) to = t;
  }
  return from <= to ? { from, to } : undefined;
}

function changeOf(c: MinedCluster, cut: number, beforeMin: number, afterMin: number, opts: SummarizeOptions): PatternChange | undefined {
  let countBefore = 0;
  for (const t of c.times) if (t < cut) countBefore++;
  const countAfter = c.times.length - countBefore;
  if (countAfter < (opts.minCountAfter ?? 3)) return undefined;
  const perMinuteBefore = countBefore / beforeMin;
  const perMinuteAfter = countAfter / afterMin;
  if (countBefore === 0) return { kind: 'new', countBefore, countAfter, perMinuteBefore, perMinuteAfter };
  if (perMinuteAfter >= (opts.jumpFactor ?? 3) * perMinuteBefore) {
    return { kind: 'rate_jump', countBefore, countAfter, perMinuteBefore, perMinuteAfter };
  }
  return undefined;
}

export function summarizeLogs(lines: readonly LogLine[], opts: SummarizeOptions): LogsSummary {
  const miner = new DrainMiner(opts);
  let totalLines = 0;
  for (const l of lines) {
    totalLines++;
    miner.add(l);
  }
  const clusters = miner.clusters();
  const ranked = rankClusters(miner, clusters);
  const patterns = foldPatterns(ranked, opts.maxPatterns ?? 40);
  const errorPatterns = ranked.filter((p) => p.level === 'error').slice(0, opts.maxPatterns ?? 40);

  const newSinceOnset: ChangedPattern[] = [];
  const win = windowOf(lines, opts.range);
  const cut = (opts.onset?.getTime() ?? NaN) - (opts.leadMs ?? MINUTE);
  // Without time on both sides of the cut there is nothing to compare: everything would look new.
  if (win && win.from < cut && win.to > cut) {
    const beforeMin = (cut - win.from) / MINUTE;
    const afterMin = (win.to - cut) / MINUTE;
    const changed: (ChangedPattern & { seq: number })[] = [];
    for (const c of clusters) {
      const change = changeOf(c, cut, beforeMin, afterMin, opts);
      if (change) changed.push({ ...miner.toPattern(c), change, seq: c.seq });
    }
    for (const { seq: _seq, ...p } of changed.sort(comparePatterns)) newSinceOnset.push(p);
  }
  return { totalLines, patterns, newSinceOnset, errorPatterns };
}

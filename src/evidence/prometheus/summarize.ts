/**
 * Range-query results → small, model-safe summaries (pure). Raw samples never leave this module.
 *
 * Two robust detectors, both on finite samples only (NaN/±Inf are counted, then ignored):
 * - **Change points** (level shifts): at each sample, compare the median of the `w` samples before it with the
 *   median of the `w` samples from it on. A shift counts when it is (a) larger than `k`× the noise (scaled MAD of
 *   first differences / √2, which a level shift does not inflate), (b) larger than a relative floor of the level,
 *   and (c) sharp: at least 4× the spread inside either window, which rejects slow ramps. Consecutive qualifying
 *   samples form one shift, placed where the difference of window means peaks (exact for a clean step).
 * - **Deviation start**: the baseline is the window well before the onset (samples older than `onset - gap`), or the
 *   first third without an onset. The band is `max(k·MAD, relativeFloor·|median|, absoluteFloor)`. The deviation
 *   starts at the first out-of-band episode (≥ 2 out-of-band samples, or one beyond twice the band) that lasts past the
 *   baseline window, so a blip that recovered long before the onset is not reported as the start.
 */
import type { MatrixSeries, RawSample } from './client.js';
import type { ChangePoint, SeriesSummary } from './types.js';

export interface SummarizeOptions {
  onset?: Date;
  /** The baseline ends this long before the onset; default 10 minutes. */
  baselineGapMs?: number;
  /** Band and noise multiplier; default 5. */
  k?: number;
  /** Shifts and deviations smaller than this fraction of the level are ignored; default 0.1. */
  relativeFloor?: number;
  /** ...and smaller than this absolute amount (flat series at 0); default 1e-6. */
  absoluteFloor?: number;
  /** Default 3. */
  maxChangePoints?: number;
  /** Samples per side of the change-point windows; default n/12 clamped to [3, 10]. */
  window?: number;
}

interface Point {
  t: number;
  v: number;
}

const MAD_TO_SIGMA = 1.4826;
const SHARPNESS = 4;

/** Prometheus sample value string → number (`"+Inf"` is not something `Number()` understands). */
export function parseSampleValue(s: string): number {
  if (s === '+Inf' || s === 'Inf') return Infinity;
  if (s === '-Inf') return -Infinity;
  return Number(s);
}

export function summarizeMatrix(series: MatrixSeries[], opts: SummarizeOptions = {}): SeriesSummary[] {
  return series.map((s) => summarizeSeries(s.metric, s.values, opts));
}

export function summarizeSeries(metric: Record<string, string>, values: RawSample[], opts: SummarizeOptions = {}): SeriesSummary {
  const all = values.map(([t, v]) => ({ t: Math.round(t * 1000), v: parseSampleValue(v) })).sort((a, b) => a.t - b.t);
  const points = all.filter((p) => Number.isFinite(p.v));
  const vs = points.map((p) => p.v);
  const summary: SeriesSummary = {
    metric,
    points: all.length,
    nonFinite: all.length - points.length,
    from: all.length ? new Date(all[0]!.t) : null,
    to: all.length ? new Date(all[all.length - 1]!.t) : null,
    first: vs.length ? round(vs[0]!) : null,
    last: vs.length ? round(vs[vs.length - 1]!) : null,
    min: vs.length ? round(vs.reduce((a, b) => Math.min(a, b))) : null,
    max: vs.length ? round(vs.reduce((a, b) => Math.max(a, b))) : null,
    mean: vs.length ? round(vs.reduce((a, b) => a + b, 0) / vs.length) : null,
    baseline: null,
    changePoints: findChangePoints(points, opts),
  };
  const deviation = findDeviation(points, opts);
  if (deviation) {
    summary.baseline = deviation.baseline;
    if (deviation.start) {
      summary.deviationStart = deviation.start;
      summary.deviationDirection = deviation.direction;
    }
  }
  return summary;
}

export function findChangePoints(points: Point[], opts: SummarizeOptions = {}): ChangePoint[] {
  const n = points.length;
  const minWindow = 3;
  if (n < 2 * minWindow) return [];
  const k = opts.k ?? 5;
  const relativeFloor = opts.relativeFloor ?? 0.1;
  const absoluteFloor = opts.absoluteFloor ?? 1e-6;
  const w = opts.window ?? Math.min(10, Math.max(minWindow, Math.floor(n / 12)));
  const v = points.map((p) => p.v);
  const diffs = v.slice(1).map((x, i) => x - v[i]!);
  const noise = (MAD_TO_SIGMA * mad(diffs)) / Math.SQRT2;

  interface Candidate {
    i: number;
    before: number;
    after: number;
    score: number;
    meanShift: number;
  }
  const candidates: Candidate[] = [];
  for (let i = minWindow; i <= n - minWindow; i++) {
    const before = v.slice(Math.max(0, i - w), i);
    const after = v.slice(i, Math.min(n, i + w));
    const mb = median(before);
    const ma = median(after);
    const shift = Math.abs(ma - mb);
    const minShift = Math.max(absoluteFloor, relativeFloor * Math.max(Math.abs(mb), Math.abs(ma)));
    const spread = MAD_TO_SIGMA * Math.max(mad(before), mad(after));
    if (shift <= minShift || shift <= k * noise || shift <= SHARPNESS * spread) continue;
    candidates.push({ i, before: mb, after: ma, score: shift / Math.max(noise, spread, absoluteFloor), meanShift: Math.abs(mean(after) - mean(before)) });
  }

  const picked: Candidate[] = [];
  for (let start = 0; start < candidates.length; ) {
    let end = start;
    while (end + 1 < candidates.length && candidates[end + 1]!.i === candidates[end]!.i + 1) end++;
    let best = candidates[start]!;
    for (let j = start + 1; j <= end; j++) if (candidates[j]!.meanShift > best.meanShift) best = candidates[j]!;
    picked.push(best);
    start = end + 1;
  }
  return picked
    .sort((a, b) => b.score - a.score)
    .slice(0, opts.maxChangePoints ?? 3)
    .sort((a, b) => a.i - b.i)
    .map((c) => ({ at: new Date(points[c.i]!.t), before: round(c.before), after: round(c.after) }));
}

interface Deviation {
  baseline: { median: number; mad: number };
  start?: Date;
  direction?: 'up' | 'down';
}

export function findDeviation(points: Point[], opts: SummarizeOptions = {}): Deviation | undefined {
  const n = points.length;
  if (n === 0) return undefined;
  const k = opts.k ?? 5;
  const gap = opts.baselineGapMs ?? 10 * 60_000;
  let baselineEnd = opts.onset ? points.findIndex((p) => p.t >= opts.onset!.getTime() - gap) : -1;
  if (baselineEnd === -1) baselineEnd = opts.onset ? n : 0;
  if (baselineEnd < 5) baselineEnd = Math.max(1, Math.floor(n / 3));
  const base = points.slice(0, baselineEnd).map((p) => p.v);
  const med = median(base);
  const spread = MAD_TO_SIGMA * mad(base);
  const band = Math.max(k * spread, (opts.relativeFloor ?? 0.1) * Math.abs(med), opts.absoluteFloor ?? 1e-6);
  const baseline = { median: round(med), mad: round(spread) };

  const out = points.map((p) => Math.abs(p.v - med) > band);
  const strong = points.map((p) => Math.abs(p.v - med) > 2 * band);
  for (let i = 0; i < n; i++) {
    if (!out[i] || !(out[i + 1] || strong[i])) continue;
    // The episode runs until two samples in a row are back in the band.
    let end = i;
    while (end + 1 < n && (out[end + 1] || (end + 2 < n && out[end + 2]))) end++;
    if (end >= baselineEnd || end === n - 1) {
      return { baseline, start: new Date(points[i]!.t), direction: points[i]!.v > med ? 'up' : 'down' };
    }
    i = end;
  }
  return { baseline };
}

function median(xs: number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Median absolute deviation (unscaled). */
function mad(xs: number[]): number {
  if (xs.length === 0) return 0;
  const m = median(xs);
  return median(xs.map((x) => Math.abs(x - m)));
}

function mean(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** Six significant digits: enough for a card, and float noise from rate() does not look like signal. */
function round(x: number): number {
  return Number.isFinite(x) ? Number(x.toPrecision(6)) : x;
}

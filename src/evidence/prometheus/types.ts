import type { Citation } from '../types.js';

/** What the standard queries are about: a workload, and the Service its HTTP metrics are labelled with. */
export interface MetricTarget {
  namespace: string;
  workload: string;
  /** The `service` label of the HTTP metrics; defaults to the workload name. */
  service?: string;
  /**
   * RE2 regex (anchored by Prometheus) matching the workload's pod names. Default: `<workload>-<suffix>`
   * (Deployment `name-<hash>-<id>`, StatefulSet `name-<n>`, DaemonSet `name-<id>`).
   */
  podRegex?: string;
}

/** A level shift: the median of the window after `at` differs from the median of the window before it. */
export interface ChangePoint {
  /** Time of the first sample at the new level. */
  at: Date;
  before: number;
  after: number;
}

/**
 * One series of a range query, summarised: what a model or a card may see instead of raw samples.
 * Statistics are over finite samples only; `null` when there were none.
 */
export interface SeriesSummary {
  metric: Record<string, string>;
  /** Samples returned (finite or not). */
  points: number;
  /** Samples that were NaN or ±Inf (e.g. a ratio over zero traffic), left out of every statistic. */
  nonFinite: number;
  from: Date | null;
  to: Date | null;
  first: number | null;
  last: number | null;
  min: number | null;
  max: number | null;
  mean: number | null;
  /** Median and scaled MAD of the baseline window (well before the onset, or the first third without one). */
  baseline: { median: number; mad: number } | null;
  /** At most a few level shifts, in time order. */
  changePoints: ChangePoint[];
  /** First time the series left its baseline band (and was still out of it after the baseline window). */
  deviationStart?: Date;
  deviationDirection?: 'up' | 'down';
}

export type MetricStatus = 'success' | 'no_data' | 'error';

/** One standard query's outcome around an onset. */
export interface MetricSummary {
  id: string;
  title: string;
  unit: string;
  badWhen: 'high' | 'low';
  threshold?: number;
  /** The exact PromQL that ran. */
  query: string;
  range: { from: Date; to: Date };
  stepSeconds: number;
  status: MetricStatus;
  error?: string;
  warnings?: string[];
  series: SeriesSummary[];
  /** Series left out to stay bounded (those without deviation go first). */
  omittedSeries?: number;
  citation: Citation;
}

export interface MetricsEvidence {
  summaries: MetricSummary[];
}

import type { LogPattern } from '../logs/types.js';
import type { ChangedPattern } from '../logs/summary.js';
import type { Citation } from '../types.js';

export type LokiDirection = 'backward' | 'forward';

export interface LokiQueryRangeParams {
  /** LogQL. */
  query: string;
  /** Inclusive. A bigint is a ns epoch (pagination needs ns precision; a Date has ms). */
  start: Date | bigint;
  /** Exclusive, as in Loki. */
  end: Date | bigint;
  /** Entries per response (Loki's default is 100; servers usually cap it at 5000). */
  limit?: number;
  direction?: LokiDirection;
  /** Metric queries only, e.g. `60s`. */
  step?: string;
  signal?: AbortSignal;
}

/** One log entry; `ns` keeps Loki's nanosecond timestamp exact (a Date only holds milliseconds). */
export interface LokiEntry {
  ns: bigint;
  ts: Date;
  line: string;
  labels: Record<string, string>;
}

export interface LokiStream {
  labels: Record<string, string>;
  entries: LokiEntry[];
}

export interface LokiMatrixSeries {
  metric: Record<string, string>;
  values: { ts: Date; value: string }[];
}

export type LokiQueryResult =
  | { resultType: 'streams'; streams: LokiStream[]; stats?: Record<string, unknown> }
  | { resultType: 'matrix'; series: LokiMatrixSeries[]; stats?: Record<string, unknown> };

/** The lines read for one query, possibly sampled (see `LokiClient.readLogs`). */
export interface LokiLogRead {
  entries: LokiEntry[];
  /** True when the window held more lines than were read, so counts are of a sample. */
  sampled: boolean;
  /** HTTP requests made. */
  requests: number;
}

export interface LogSummary {
  /** The stream selector, e.g. `{namespace="shop", app="checkout"}`. */
  selector: string;
  /** The exact LogQL run. */
  query: string;
  range: { from: Date; to: Date };
  status: 'success' | 'no_data' | 'error';
  error?: string;
  /** Lines read (after sampling, see `sampled`). */
  totalLines: number;
  sampled: boolean;
  patterns: LogPattern[];
  newSinceOnset: ChangedPattern[];
  errorPatterns: LogPattern[];
  /** For `no_data`: every selector that was tried. */
  tried?: string[];
  citation: Citation;
}

export interface LogsEvidence {
  summaries: LogSummary[];
}

export interface LogTarget {
  namespace: string;
  workload: string;
  service?: string;
}

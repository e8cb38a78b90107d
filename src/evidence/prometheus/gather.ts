/**
 * Run the standard queries around an onset and summarise them. Never throws for a query: each one becomes
 * `success | no_data | error` with its exact PromQL and range, so the first card lands with what could be read.
 */
import { DEPENDENCY_CATALOG, TARGET_CATALOG, renderPromQL, type CatalogEntry } from './catalog.js';
import { PrometheusError, type PrometheusClient } from './client.js';
import { summarizeMatrix } from './summarize.js';
import type { MetricSummary, MetricTarget, MetricsEvidence, SeriesSummary } from './types.js';

/** Prometheus rejects range queries with more than 11,000 points per series. */
export const MAX_POINTS_PER_SERIES = 11_000;

export interface GatherOptions {
  /** How far before the onset to look; default 60 minutes (the baseline lives there). */
  beforeMs?: number;
  /** How far after the onset; default 5 minutes, cut at `now`. */
  afterMs?: number;
  /** Default 15 s, raised when needed to stay within 11,000 points. */
  stepSeconds?: number;
  /** Queries in flight at once; default 4. */
  concurrency?: number;
  /** Default `TARGET_CATALOG`. */
  catalog?: readonly CatalogEntry[];
  /** Downstream services; each gets `DEPENDENCY_CATALOG` with the dependency as target. */
  dependencies?: MetricTarget[];
  /** Series kept per query (deviating ones first); default 10. */
  maxSeries?: number;
  /** Clock for cutting the range (the range never reaches into the future, where lookback would invent samples). */
  now?: Date;
  signal?: AbortSignal;
}

export function chooseStep(from: Date, to: Date, preferredSeconds = 15): number {
  const span = Math.max(0, (to.getTime() - from.getTime()) / 1000);
  return Math.max(preferredSeconds, Math.ceil(span / (MAX_POINTS_PER_SERIES - 1)));
}

export async function gatherMetrics(client: PrometheusClient, target: MetricTarget, onset: Date, opts: GatherOptions = {}): Promise<MetricsEvidence> {
  const now = opts.now ?? new Date();
  const from = new Date(onset.getTime() - (opts.beforeMs ?? 60 * 60_000));
  const to = new Date(Math.min(onset.getTime() + (opts.afterMs ?? 5 * 60_000), now.getTime()));
  const step = chooseStep(from, to, opts.stepSeconds);

  const jobs: { entry: CatalogEntry; target: MetricTarget }[] = [
    ...(opts.catalog ?? TARGET_CATALOG).map((entry) => ({ entry, target })),
    ...(opts.dependencies ?? []).flatMap((dep) => DEPENDENCY_CATALOG.map((entry) => ({ entry, target: dep }))),
  ];
  const summaries = await mapLimited(jobs, opts.concurrency ?? 4, ({ entry, target: t }) =>
    runEntry(client, entry, t, { from, to }, step, onset, opts),
  );
  return { summaries };
}

async function runEntry(
  client: PrometheusClient,
  entry: CatalogEntry,
  target: MetricTarget,
  range: { from: Date; to: Date },
  step: number,
  onset: Date,
  opts: GatherOptions,
): Promise<MetricSummary> {
  const query = renderPromQL(entry.template, target);
  const url = client.graphUrl(query, range, step);
  const base = {
    id: entry.id,
    title: entry.id.startsWith('dependency_') ? `${entry.title} (${target.namespace}/${target.service ?? target.workload})` : entry.title,
    unit: entry.unit,
    badWhen: entry.badWhen,
    ...(entry.threshold !== undefined ? { threshold: entry.threshold } : {}),
    query,
    range,
    stepSeconds: step,
    citation: { source: 'prometheus', ref: query, range, ...(url ? { url } : {}) },
  };
  try {
    const { data, warnings } = await client.queryRange(query, range.from, range.to, step, opts.signal ? { signal: opts.signal } : {});
    const all = summarizeMatrix(data.result, { onset });
    const series = rankSeries(all).slice(0, opts.maxSeries ?? 10);
    return {
      ...base,
      status: series.length ? 'success' : 'no_data',
      series,
      ...(warnings.length ? { warnings } : {}),
      ...(all.length > series.length ? { omittedSeries: all.length - series.length } : {}),
    };
  } catch (error) {
    const message = error instanceof PrometheusError ? `${error.errorType}: ${error.message}` : String(error);
    return { ...base, status: 'error', error: message, series: [] };
  }
}

/** Deviating series first (earliest deviation first), then those with level shifts, then the rest. */
export function rankSeries(series: SeriesSummary[]): SeriesSummary[] {
  const rank = (s: SeriesSummary): number => (s.deviationStart ? 0 : s.changePoints.length ? 1 : 2);
  return [...series].sort((a, b) => rank(a) - rank(b) || (a.deviationStart?.getTime() ?? 0) - (b.deviationStart?.getTime() ?? 0));
}

async function mapLimited<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}

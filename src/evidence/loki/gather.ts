/**
 * Deterministic log evidence for an alert's workload: find the stream under a common label convention,
 * read `[onset - 30m, onset + 5m]` (sampled across the window when noisy), redact every line, then mine
 * templates and what changed at the onset. Failures are data (`status: 'error'`), never exceptions.
 */
import { createRedactor, type Redactor } from '../../redact/index.js';
import { summarizeLogs } from '../logs/summary.js';
import type { LogLine } from '../logs/types.js';
import { LokiError, type LokiClient } from './client.js';
import { redactEntries } from './redact.js';
import { workloadSelectors } from './selectors.js';
import type { LogSummary, LogsEvidence, LogTarget } from './types.js';

export interface GatherLogsOptions {
  redactor?: Redactor;
  /** Window before the onset (default 30 min) and after it (default 5 min). */
  beforeMs?: number;
  afterMs?: number;
  /** The window never ends after `now` (default: real time). */
  now?: Date;
  /** Lines read per query at most (default 10,000). */
  maxLines?: number;
  maxPatterns?: number;
  signal?: AbortSignal;
}

/** Lines that say something failed; read separately when the main read was sampled, so errors are not diluted. */
export const ERROR_LINE_FILTER = '|~ "(?i)(error|exception|fatal|panic|fail)"';

const errorText = (err: unknown): string => (err instanceof LokiError ? err.message : err instanceof Error ? err.message : String(err));

export async function gatherLogs(client: LokiClient, target: LogTarget, onset: Date, opts: GatherLogsOptions = {}): Promise<LogsEvidence> {
  const redactor = opts.redactor ?? createRedactor();
  const from = new Date(onset.getTime() - (opts.beforeMs ?? 30 * 60_000));
  const latest = (opts.now ?? new Date()).getTime();
  const to = new Date(Math.max(from.getTime() + 1, Math.min(onset.getTime() + (opts.afterMs ?? 5 * 60_000), latest)));
  const range = { from, to };
  const candidates = workloadSelectors(target);

  const base = (selector: string, query: string): Omit<LogSummary, 'status'> => ({
    selector, query, range, totalLines: 0, sampled: false, patterns: [], newSinceOnset: [], errorPatterns: [],
    citation: { source: 'loki', ref: query, range },
  });

  let chosen: string | undefined;
  for (const selector of candidates) {
    try {
      const probe = await client.queryRange({ query: selector, start: from, end: to, limit: 1, signal: opts.signal });
      if (probe.resultType === 'streams' && probe.streams.some((s) => s.entries.length > 0)) {
        chosen = selector;
        break;
      }
    } catch (err) {
      // One failure (auth, unreachable, bad tenant) would repeat for every convention: report it once.
      return { summaries: [{ ...base(selector, selector), status: 'error', error: redactor.redactText(errorText(err)).slice(0, 500) }] };
    }
  }
  const first = candidates[0] ?? '';
  if (!chosen) return { summaries: [{ ...base(first, first), status: 'no_data', tried: candidates }] };

  const read = async (query: string): Promise<LogSummary> => {
    try {
      const got = await client.readLogs({ query, start: from, end: to, maxLines: opts.maxLines, signal: opts.signal });
      if (got.entries.length === 0) return { ...base(chosen, query), status: 'no_data' };
      // Redact before mining, so no template or example can carry a secret.
      const redacted = redactEntries(redactor, got.entries);
      const lines: LogLine[] = got.entries.map((e, i) => ({ ts: e.ts, line: redacted[i]! }));
      const s = summarizeLogs(lines, { onset, range, maxPatterns: opts.maxPatterns });
      return { ...base(chosen, query), status: 'success', totalLines: s.totalLines, sampled: got.sampled, patterns: s.patterns, newSinceOnset: s.newSinceOnset, errorPatterns: s.errorPatterns };
    } catch (err) {
      return { ...base(chosen, query), status: 'error', error: redactor.redactText(errorText(err)).slice(0, 500) };
    }
  };

  const main = await read(chosen);
  const summaries = [main];
  if (main.status === 'success' && main.sampled) summaries.push(await read(`${chosen} ${ERROR_LINE_FILTER}`));
  return { summaries };
}

import { z } from 'zod';
import { summarizeLogs } from '../logs/summary.js';
import { boundedData, errorResult, type EvidenceTool, type ToolResult } from '../tool.js';
import type { Citation } from '../types.js';
import type { LokiClient } from './client.js';
import { logSummaryEvidence } from './evidence.js';
import { redactEntries } from './redact.js';
import type { LogSummary } from './types.js';

const LokiQueryRangeParams = z.object({
  query: z
    .string()
    .min(1)
    .describe('LogQL log query: a stream selector with optional line filters, e.g. {namespace="shop", app="checkout"} |= "timeout". Not a metric query.'),
  start: z.string().optional().describe('Window start: RFC 3339 time, or relative to now like "30m", "-2h", "now-90m". Default "1h" (one hour ago).'),
  end: z.string().optional().describe('Window end (exclusive): RFC 3339 time, "now", or relative like "5m" (ago). Default "now".'),
  limit: z.number().int().min(1).max(10_000).optional().describe('Most lines to read (default 5000); a noisier window is sampled evenly across its span.'),
  onset: z.string().optional().describe('Incident onset (RFC 3339). When given, templates that are new or whose rate jumped since then are listed.'),
});

export type LokiQueryRangeInput = z.infer<typeof LokiQueryRangeParams>;

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `now`, `now-1h`, `-30m`, `30m` (all: that long ago), or an absolute RFC 3339 time. */
export function parseTimeArg(value: string, now: Date): Date | undefined {
  const v = value.trim();
  if (v === 'now') return now;
  const rel = /^(?:now\s*-\s*|-)?(\d+(?:\.\d+)?)\s*([smhd])$/.exec(v);
  if (rel) return new Date(now.getTime() - Number(rel[1]) * (UNIT_MS[rel[2] ?? 'm'] ?? 60_000));
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}

/** What the model sees: templates with counts and one redacted example each, never the raw lines. */
function toolData(s: LogSummary): Record<string, unknown> {
  return {
    query: s.query,
    range: { from: s.range.from.toISOString(), to: s.range.to.toISOString() },
    totalLines: s.totalLines,
    sampled: s.sampled,
    patterns: s.patterns,
    ...(s.newSinceOnset.length ? { newSinceOnset: s.newSinceOnset } : {}),
    errorPatternCount: s.errorPatterns.length,
  };
}

export function createLokiQueryRangeTool(client: LokiClient): EvidenceTool<typeof LokiQueryRangeParams> {
  return {
    name: 'loki_query_range',
    description:
      'Run a LogQL log query against Loki over a time window and get the log lines back as templates ' +
      '(variable parts masked as <NUM>, <IP>, <*> …) with counts, level, first/last time and one redacted example each, ' +
      'errors first; with `onset`, also the templates that appeared or spiked since then. Up to 40 patterns, a few KB. ' +
      'Use it to see what a service logged around an incident; narrow with line filters (|= "error") rather than raising limit.',
    parameters: LokiQueryRangeParams,
    effect: 'read',
    async execute(params, ctx): Promise<ToolResult> {
      const from = parseTimeArg(params.start ?? '1h', ctx.now);
      const to = parseTimeArg(params.end ?? 'now', ctx.now);
      const citation: Citation = { source: 'loki', ref: params.query, ...(from && to ? { range: { from, to } } : {}) };
      if (!from || !to) return { status: 'error', citation, error: `cannot read time ${!from ? `start "${params.start}"` : `end "${params.end}"`}: use RFC 3339 or a relative time like "30m"` };
      if (from >= to) return { status: 'error', citation, error: 'start must be before end' };
      const onset = params.onset ? parseTimeArg(params.onset, ctx.now) : undefined;
      const range = { from, to };
      try {
        const got = await client.readLogs({ query: params.query, start: from, end: to, maxLines: params.limit ?? 5000, signal: ctx.signal });
        if (got.entries.length === 0) {
          return { status: 'no_data', citation, message: `no log lines matched ${params.query} between ${from.toISOString()} and ${to.toISOString()}` };
        }
        const redacted = redactEntries(ctx.redactor, got.entries);
        const lines = got.entries.map((e, i) => ({ ts: e.ts, line: redacted[i]! }));
        const s = summarizeLogs(lines, { onset, range });
        const summary: LogSummary = {
          selector: params.query, query: params.query, range, status: 'success', totalLines: s.totalLines, sampled: got.sampled,
          patterns: s.patterns, newSinceOnset: s.newSinceOnset, errorPatterns: s.errorPatterns, citation,
        };
        const bounded = boundedData(toolData(summary), ctx);
        return { status: 'success', citation, data: bounded.data, evidence: ctx.redactor.redactValue(logSummaryEvidence(summary)), truncated: bounded.truncated };
      } catch (err) {
        return errorResult(citation, err, ctx.redactor);
      }
    },
  };
}

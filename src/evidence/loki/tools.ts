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
    .describe('A stream selector and line filters, e.g. {namespace="shop", app="checkout"} |= "timeout" (not a metric query).'),
  start: z.string().optional().describe('RFC 3339 or ago like 30m, now-2h. Default 1h.'),
  end: z.string().optional().describe('Exclusive; RFC 3339, now, or ago like 5m. Default now.'),
  limit: z.number().int().min(1).max(10_000).optional().describe('Lines read at most (default 5000; more are sampled evenly).'),
  onset: z.string().optional().describe('RFC 3339: lists templates new or jumping since then.'),
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
      'A LogQL log query over a window, as templates with counts, level, first/last time and one example, errors first; with onset, the templates new or spiking since then. Narrow with line filters (|= "error").',
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

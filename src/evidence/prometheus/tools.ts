/**
 * The model's Prometheus tools. Both read only, return bounded and redacted data, and report Prometheus' own
 * error text (e.g. a PromQL parse error) as `status: 'error'` so the model can correct its query.
 */
import { z } from 'zod';
import { boundedData, errorResult, type EvidenceTool, type ToolResult } from '../tool.js';
import type { Citation, Evidence } from '../types.js';
import type { PrometheusClient } from './client.js';
import { metricEvidence, seriesLabel } from './evidence.js';
import { chooseStep, rankSeries } from './gather.js';
import { parseSampleValue, summarizeMatrix } from './summarize.js';
import type { SeriesSummary } from './types.js';

const isoTime = z.iso.datetime({ offset: true });

const queryParams = z.object({
  query: z.string().min(1).describe('PromQL.'),
  time: isoTime.optional().describe('Default: now.'),
});

const rangeParams = z.object({
  query: z.string().min(1).describe('PromQL.'),
  start: isoTime.optional().describe('Default: an hour before end.'),
  end: isoTime.optional().describe('Default: now.'),
  step_seconds: z.number().int().min(1).max(3600).optional().describe('Default: 15, coarser for long ranges.'),
  onset: isoTime.optional().describe('The baseline is taken from before it (default: the first third of the range).'),
});

/** Instant values, one per series: small by nature. */
export function prometheusQueryTool(client: PrometheusClient): EvidenceTool<typeof queryParams> {
  return {
    name: 'prometheus_query',
    onDemand: 'a PromQL value at one instant: levels, limits',
    description:
      'A PromQL expression at one instant: each series\' labels and value (aggregate with sum by to keep it small). Errors are Prometheus\' own message.',
    parameters: queryParams,
    effect: 'read',
    async execute(params, ctx): Promise<ToolResult> {
      const time = params.time ? new Date(params.time) : ctx.now;
      const citation = cite(client, ctx.redactor.redactText(params.query), { from: time, to: time });
      try {
        const { data, warnings } = await client.query(params.query, time, ctx.signal ? { signal: ctx.signal } : {});
        let result: unknown;
        let count: number;
        switch (data.resultType) {
          case 'vector':
            count = data.result.length;
            result = data.result.map((s) => ({ metric: s.metric, value: sampleValue(s.value[1]) }));
            break;
          case 'scalar':
          case 'string':
            count = 1;
            result = data.resultType === 'scalar' ? sampleValue(data.result[1]) : data.result[1];
            break;
          case 'matrix':
            // Only a range-vector selector (`x[5m]`) gives a matrix here: summarise, never hand over raw samples.
            count = data.result.length;
            result = summarizeMatrix(data.result);
            break;
        }
        if (count === 0) return { status: 'no_data', citation, message: `No series matched at ${time.toISOString()}.` };
        const bounded = boundedData({ resultType: data.resultType, time, result, ...(warnings.length ? { warnings } : {}) }, ctx);
        const evidence: Evidence[] =
          data.resultType === 'vector' && data.result.length <= 5
            ? data.result.map((s) => ({
                kind: 'metric',
                summary: ctx.redactor.redactText(`${seriesLabel(s.metric)} = ${s.value[1]} at ${time.toISOString()}`),
                citation,
                observedAt: time,
              }))
            : [];
        return { status: 'success', citation, data: bounded.data, evidence, truncated: bounded.truncated };
      } catch (error) {
        return errorResult(citation, error, ctx.redactor);
      }
    },
  };
}

/** A range, summarised per series: first/last/min/max/mean, level shifts and the deviation start. */
export function prometheusQueryRangeTool(client: PrometheusClient): EvidenceTool<typeof rangeParams> {
  return {
    name: 'prometheus_query_range',
    description:
      'A PromQL expression over a range, summarised per series (never raw samples): first, last, min, max, mean, baseline, level shifts and when it left its baseline.',
    parameters: rangeParams,
    effect: 'read',
    async execute(params, ctx): Promise<ToolResult> {
      const end = params.end ? new Date(params.end) : ctx.now;
      const start = params.start ? new Date(params.start) : new Date(end.getTime() - 60 * 60_000);
      const range = { from: start, to: end };
      const step = chooseStep(start, end, params.step_seconds ?? 15);
      const citation = cite(client, ctx.redactor.redactText(params.query), range, step);
      if (start >= end) return { status: 'error', citation, error: 'start must be before end' };
      try {
        const { data, warnings } = await client.queryRange(params.query, start, end, step, ctx.signal ? { signal: ctx.signal } : {});
        if (data.result.length === 0) {
          return { status: 'no_data', citation, message: `No series matched between ${start.toISOString()} and ${end.toISOString()}.` };
        }
        const series = rankSeries(summarizeMatrix(data.result, params.onset ? { onset: new Date(params.onset) } : {}));
        // The range is the result's own (the envelope says it): series omit what they share with it.
        const shown = series.map((x) => compactSeries(x, range));
        const bounded = boundedData({ stepSeconds: step, ...(series.length > 1 ? { seriesCount: series.length } : {}), series: shown, ...(warnings.length ? { warnings } : {}) }, ctx);
        const evidence = metricEvidence(
          { id: 'prometheus_query_range', title: '', unit: '', badWhen: 'high', query: params.query, range, stepSeconds: step, status: 'success', series: series.slice(0, 5), citation },
          citation,
        ).map((e) => ({ ...e, summary: ctx.redactor.redactText(e.summary), detail: ctx.redactor.redactValue(e.detail) }));
        return { status: 'success', citation, data: bounded.data, evidence, truncated: bounded.truncated };
      } catch (error) {
        return errorResult(citation, error, ctx.redactor);
      }
    },
  };
}

export function prometheusTools(client: PrometheusClient): EvidenceTool[] {
  return [prometheusQueryTool(client), prometheusQueryRangeTool(client)];
}

function cite(client: PrometheusClient, query: string, range: { from: Date; to: Date }, step?: number): Citation {
  const url = client.graphUrl(query, range, step);
  return { source: 'prometheus', ref: query, range, ...(url ? { url } : {}) };
}

/** A series summary without its range when that is the query's, no empty labels, no zero non-finite count. */
function compactSeries(s: SeriesSummary, range: { from: Date; to: Date }): Partial<SeriesSummary> {
  // First and last samples within a step of the range's ends: nothing to say beyond the range.
  const near = (t: Date | null, d: Date, stepMs: number) => t !== null && Math.abs(t.getTime() - d.getTime()) <= stepMs;
  const { metric, nonFinite, from, to, changePoints, ...rest } = s;
  const step = Math.max(1000, (range.to.getTime() - range.from.getTime()) / Math.max(1, s.points - 1));
  return {
    ...(Object.keys(metric).length ? { metric } : {}),
    ...rest,
    ...(nonFinite ? { nonFinite } : {}),
    ...(near(from, range.from, step) ? {} : { from }),
    ...(near(to, range.to, step) ? {} : { to }),
    ...(changePoints.length ? { changePoints } : {}),
  };
}

/** A finite value as a number; NaN/±Inf stay Prometheus' strings (JSON has no such numbers). */
function sampleValue(s: string): number | string {
  const v = parseSampleValue(s);
  return Number.isFinite(v) ? v : s;
}

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

const isoTime = z.iso.datetime({ offset: true });

const queryParams = z.object({
  query: z.string().min(1).describe('PromQL expression, e.g. sum by (code) (rate(http_requests_total{namespace="shop",service="checkout"}[5m]))'),
  time: isoTime.optional().describe('Evaluation time, RFC 3339 (e.g. 2025-03-01T12:00:00Z). Default: now.'),
});

const rangeParams = z.object({
  query: z.string().min(1).describe('PromQL expression to evaluate over the range.'),
  start: isoTime.optional().describe('Range start, RFC 3339. Default: one hour before end.'),
  end: isoTime.optional().describe('Range end, RFC 3339. Default: now.'),
  step_seconds: z.number().int().min(1).max(3600).optional().describe('Resolution in seconds. Default: 15, or coarser for long ranges.'),
  onset: isoTime.optional().describe('Incident onset, RFC 3339: the baseline is taken from well before it. Default: none (first third of the range).'),
});

/** Instant values, one per series: small by nature. */
export function prometheusQueryTool(client: PrometheusClient): EvidenceTool<typeof queryParams> {
  return {
    name: 'prometheus_query',
    description:
      'Evaluate a PromQL expression at one instant and return each series with its labels and value (at most a few hundred series; ' +
      'aggregate with sum by (...) to keep it small). Use for current levels, limits, counts. Errors return Prometheus\' own message.',
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
      'Evaluate a PromQL expression over a time range and return a SUMMARY per series (never raw samples): first, last, min, max, mean, ' +
      'baseline, level shifts (change points with before/after values) and when the series first left its baseline. ' +
      'Give `onset` to take the baseline from before it. Up to 11,000 points per series are evaluated.',
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
        const bounded = boundedData({ range, stepSeconds: step, seriesCount: series.length, series, ...(warnings.length ? { warnings } : {}) }, ctx);
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

/** A finite value as a number; NaN/±Inf stay Prometheus' strings (JSON has no such numbers). */
function sampleValue(s: string): number | string {
  const v = parseSampleValue(s);
  return Number.isFinite(v) ? v : s;
}

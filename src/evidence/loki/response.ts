/**
 * The `query_range` envelope, validated: `{status:'success', data:{resultType:'streams'|'matrix', result,
 * stats}}`. Stream values are `["<ns epoch string>", "<line>"]` (a third element carries structured
 * metadata when categorised labels are asked for; ignored). Matrix values are `[<unix seconds>, "<value>"]`.
 */
import { z } from 'zod';
import type { LokiQueryResult } from './types.js';

const Labels = z.record(z.string(), z.string());
const Stats = z.record(z.string(), z.unknown()).optional();

const StreamsData = z.object({
  resultType: z.literal('streams'),
  result: z.array(z.object({ stream: Labels, values: z.array(z.tuple([z.string().regex(/^\d+$/), z.string()]).rest(z.unknown())) })),
  stats: Stats,
});

const MatrixData = z.object({
  resultType: z.literal('matrix'),
  result: z.array(z.object({ metric: Labels, values: z.array(z.tuple([z.number(), z.string()])) })),
  stats: Stats,
});

const Envelope = z.object({
  status: z.literal('success'),
  data: z.discriminatedUnion('resultType', [StreamsData, MatrixData]),
});

export const nsToDate = (ns: bigint): Date => new Date(Number(ns / 1_000_000n));

/** Validate and convert a `query_range` body; `fail` builds the error for a body that is not the envelope. */
export function parseQueryResponse(body: unknown, fail: (message: string) => Error): LokiQueryResult {
  const parsed = Envelope.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw fail(`unexpected response: ${issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid envelope'}`);
  }
  const data = parsed.data.data;
  if (data.resultType === 'matrix') {
    return {
      resultType: 'matrix',
      series: data.result.map((s) => ({ metric: s.metric, values: s.values.map(([t, value]) => ({ ts: new Date(t * 1000), value })) })),
      stats: data.stats,
    };
  }
  return {
    resultType: 'streams',
    streams: data.result.map((s) => ({
      labels: s.stream,
      entries: s.values.map(([ns, line]) => {
        const n = BigInt(ns);
        return { ns: n, ts: nsToDate(n), line, labels: s.stream };
      }),
    })),
    stats: data.stats,
  };
}

/**
 * A fake Loki on loopback speaking the real HTTP API, for the real `LokiClient`:
 * `GET /loki/api/v1/query_range`, `/loki/api/v1/labels`, `/loki/api/v1/label/<name>/values`, `/ready`.
 * Queries are parsed for real (see `logql.ts`); bad LogQL gets Loki's 400 plain-text parse error.
 * `start` is inclusive and `end` exclusive; times are ns epoch, unix seconds, or RFC 3339; `limit`
 * defaults to 100 and is capped like Loki's `max_entries_limit_per_query` (5000); `direction` defaults
 * to `backward`. With a tenant configured, a request without `X-Scope-OrgID` gets 401 `no org id`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { evaluate, LogQLParseError, parseLogQL, parseSelector, type LabelMatcher } from './logql.js';

export interface FakeLokiStream {
  labels: Record<string, string>;
  entries: { ts: Date; line: string }[];
}

export interface FakeLokiOptions {
  streams: FakeLokiStream[];
  /** When set, requests must carry `X-Scope-OrgID`; another tenant sees no data. */
  tenant?: string;
  /** Loki's `max_entries_limit_per_query` (default 5000). */
  maxEntriesLimit?: number;
  /** The fake's clock, for default `end` (default: real time). */
  now?: () => Date;
}

export interface RecordedLokiRequest {
  method: string;
  path: string;
  params: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  status: number;
}

export interface FakeLoki {
  /** `http://127.0.0.1:<port>` */
  url: string;
  requests: RecordedLokiRequest[];
  /** Answer the next `count` requests with `status` (default 503) and a plain-text body. */
  failNext(count: number, status?: number, body?: string): void;
  close(): Promise<void>;
}

interface StoredEntry {
  ns: bigint;
  line: string;
}

interface StoredStream {
  labels: Record<string, string>;
  /** Ascending by ns. */
  entries: StoredEntry[];
}

const NS_PER_MS = 1_000_000n;

/** Loki accepts ns epoch integers, unix seconds (possibly fractional), and RFC 3339. */
function parseTime(v: string | null, fallback: bigint): bigint | undefined {
  if (v === null || v === '') return fallback;
  if (/^\d+$/.test(v)) return v.length >= 16 ? BigInt(v) : BigInt(v) * 1_000_000_000n;
  if (/^\d+\.\d+$/.test(v)) return BigInt(Math.round(Number(v) * 1000)) * NS_PER_MS;
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? undefined : BigInt(ms) * NS_PER_MS;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(body);
  }
}

const labelKey = (l: Record<string, string>): string => JSON.stringify(Object.entries(l).sort(([a], [b]) => a.localeCompare(b)));
const matchesAll = (ms: LabelMatcher[], labels: Record<string, string>): boolean => ms.every((m) => m.test(labels[m.name]));

export async function startFakeLoki(opts: FakeLokiOptions): Promise<FakeLoki> {
  const streams: StoredStream[] = opts.streams.map((s) => ({
    labels: { ...s.labels },
    entries: s.entries.map((e) => ({ ns: BigInt(e.ts.getTime()) * NS_PER_MS, line: e.line })).sort((a, b) => (a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : 0)),
  }));
  const maxLimit = opts.maxEntriesLimit ?? 5000;
  const now = opts.now ?? (() => new Date());
  const requests: RecordedLokiRequest[] = [];
  const failures: { status: number; body: string }[] = [];

  const visibleStreams = (req: IncomingMessage): StoredStream[] => {
    const org = req.headers['x-scope-orgid'];
    if (opts.tenant === undefined) return streams;
    if (org === undefined || org === '') throw new HttpError(401, 'no org id\n');
    return org === opts.tenant ? streams : [];
  };

  const range = (params: URLSearchParams): { start: bigint; end: bigint } => {
    const end = parseTime(params.get('end'), BigInt(now().getTime()) * NS_PER_MS);
    if (end === undefined) throw new HttpError(400, `invalid parameter "end": cannot parse "${params.get('end')}" to a valid timestamp\n`);
    const start = parseTime(params.get('start'), end - 3_600_000n * NS_PER_MS);
    if (start === undefined) throw new HttpError(400, `invalid parameter "start": cannot parse "${params.get('start')}" to a valid timestamp\n`);
    if (end < start) throw new HttpError(400, 'end timestamp must not be before or equal to start time\n');
    return { start, end };
  };

  const queryRange = (req: IncomingMessage, params: URLSearchParams): unknown => {
    const started = performance.now();
    const query = params.get('query');
    if (!query) throw new HttpError(400, 'query parameter is required\n');
    const { start, end } = range(params);
    const limit = params.has('limit') ? Number(params.get('limit')) : 100;
    if (!Number.isInteger(limit) || limit <= 0) throw new HttpError(400, `invalid parameter "limit": must be a positive integer\n`);
    if (limit > maxLimit) throw new HttpError(400, `max entries limit per query exceeded, limit > max_entries_limit_per_query (${limit} > ${maxLimit})\n`);
    const direction = (params.get('direction') ?? 'backward').toLowerCase();
    if (direction !== 'backward' && direction !== 'forward') throw new HttpError(400, `invalid parameter "direction": must be forward or backward\n`);
    let parsed;
    try {
      parsed = parseLogQL(query);
    } catch (err) {
      if (err instanceof LogQLParseError) throw new HttpError(400, `${err.message}\n`);
      throw err;
    }
    const candidates = visibleStreams(req).filter((s) => matchesAll(parsed.selector, s.labels));
    let scanned = 0;
    const hits: { ns: bigint; line: string; labels: Record<string, string> }[] = [];
    for (const s of candidates) {
      for (const e of s.entries) {
        if (e.ns < start || e.ns >= end) continue;
        scanned++;
        const labels = evaluate(parsed, s.labels, e.line);
        if (labels) hits.push({ ns: e.ns, line: e.line, labels });
      }
    }
    const sign = direction === 'backward' ? -1 : 1;
    hits.sort((a, b) => (a.ns === b.ns ? 0 : a.ns < b.ns ? -sign : sign));
    const kept = hits.slice(0, limit);
    const grouped = new Map<string, { stream: Record<string, string>; values: [string, string][] }>();
    for (const h of kept) {
      const k = labelKey(h.labels);
      let g = grouped.get(k);
      if (!g) grouped.set(k, (g = { stream: h.labels, values: [] }));
      g.values.push([h.ns.toString(), h.line]);
    }
    return {
      status: 'success',
      data: {
        resultType: 'streams',
        result: [...grouped.values()],
        stats: {
          summary: {
            totalEntriesReturned: kept.length,
            totalLinesProcessed: scanned,
            execTime: (performance.now() - started) / 1000,
          },
        },
      },
    };
  };

  const streamsInRange = (req: IncomingMessage, params: URLSearchParams): StoredStream[] => {
    const { start, end } = range(params);
    const selector = params.get('query');
    let matchers: LabelMatcher[] = [];
    if (selector) {
      try {
        matchers = parseSelector(selector);
      } catch (err) {
        if (err instanceof LogQLParseError) throw new HttpError(400, `${err.message}\n`);
        throw err;
      }
    }
    return visibleStreams(req).filter((s) => matchesAll(matchers, s.labels) && s.entries.some((e) => e.ns >= start && e.ns < end));
  };

  const route = (req: IncomingMessage, url: URL): { status: number; body: unknown } => {
    const path = url.pathname;
    if (path === '/ready') return { status: 200, body: 'ready\n' };
    if (req.method !== 'GET' && req.method !== 'POST') throw new HttpError(405, 'method not allowed\n');
    if (path === '/loki/api/v1/query_range') return { status: 200, body: queryRange(req, url.searchParams) };
    if (path === '/loki/api/v1/labels') {
      const names = new Set(streamsInRange(req, url.searchParams).flatMap((s) => Object.keys(s.labels)));
      return { status: 200, body: { status: 'success', data: [...names].sort() } };
    }
    const values = /^\/loki\/api\/v1\/label\/([^/]+)\/values$/.exec(path);
    if (values) {
      const name = decodeURIComponent(values[1] ?? '');
      const vs = new Set(streamsInRange(req, url.searchParams).flatMap((s) => (s.labels[name] === undefined ? [] : [s.labels[name]])));
      return { status: 200, body: { status: 'success', data: [...vs].sort() } };
    }
    throw new HttpError(404, '404 page not found\n');
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://fake-loki');
    const record = (status: number): void => {
      requests.push({ method: req.method ?? 'GET', path: url.pathname, params: Object.fromEntries(url.searchParams), headers: { ...req.headers }, status });
    };
    const send = (status: number, body: unknown): void => {
      record(status);
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json' });
      res.end(text);
    };
    const failure = failures.shift();
    if (failure) return send(failure.status, failure.body);
    try {
      const { status, body } = route(req, url);
      send(status, body);
    } catch (err) {
      if (err instanceof HttpError) send(err.status, err.body);
      else send(500, `internal error: ${(err as Error).message}\n`);
    }
  };

  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => handle(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    failNext(count, status = 503, body = 'service unavailable\n') {
      for (let i = 0; i < count; i++) failures.push({ status, body });
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

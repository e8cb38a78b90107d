/**
 * Transport behaviour the real Prometheus will not show on demand (503s, proxies, auth headers), against a
 * loopback HTTP server answering with Prometheus' documented envelope.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PrometheusClient, PrometheusError } from '../../../src/evidence/prometheus/client.js';

interface Seen {
  path: string;
  headers: IncomingMessage['headers'];
  body: URLSearchParams;
}

let server: Server;
let base: string;
const seen: Seen[] = [];
let answers: ((res: ServerResponse) => void)[] = [];

const json = (status: number, body: unknown) => (res: ServerResponse) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
const vector = json(200, { status: 'success', data: { resultType: 'vector', result: [{ metric: { job: 'x' }, value: [1700000000.5, '1'] }] } });

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', headers: req.headers, body: new URLSearchParams(Buffer.concat(chunks).toString()) });
      (answers.shift() ?? vector)(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  base = `http://127.0.0.1:${address.port}/prom/`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
beforeEach(() => {
  seen.length = 0;
  answers = [];
});

describe('PrometheusClient', () => {
  it('posts the query form with auth and a server-side timeout, keeping a path prefix', async () => {
    const client = new PrometheusClient({ baseUrl: base, bearerToken: 't0ken', timeoutMs: 10_000 });
    const time = new Date('2026-01-01T00:00:00.250Z');
    const out = await client.query('up', time);
    expect(out.data).toEqual({ resultType: 'vector', result: [{ metric: { job: 'x' }, value: [1700000000.5, '1'] }] });
    expect(seen[0]!.path).toBe('/prom/api/v1/query');
    expect(seen[0]!.headers.authorization).toBe('Bearer t0ken');
    expect(Object.fromEntries(seen[0]!.body)).toEqual({ query: 'up', time: '1767225600.250', timeout: '9' });
  });

  it('sends basic auth and range parameters', async () => {
    const client = new PrometheusClient({ baseUrl: base, basicAuth: { username: 'vigil', password: 'pw' } });
    answers = [json(200, { status: 'success', data: { resultType: 'matrix', result: [] }, warnings: ['partial'] })];
    const out = await client.queryRange('up', new Date(0), new Date(60_000), 15);
    expect(out).toEqual({ data: { resultType: 'matrix', result: [] }, warnings: ['partial'] });
    expect(seen[0]!.headers.authorization).toBe(`Basic ${Buffer.from('vigil:pw').toString('base64')}`);
    expect(Object.fromEntries(seen[0]!.body)).toMatchObject({ start: '0.000', end: '60.000', step: '15' });
  });

  it('retries a 503 timeout with backoff, then succeeds', async () => {
    const client = new PrometheusClient({ baseUrl: base, retries: 2, retryDelayMs: 10 });
    answers = [json(503, { status: 'error', errorType: 'timeout', error: 'query timed out in query execution' }), vector];
    await expect(client.query('up')).resolves.toMatchObject({ data: { resultType: 'vector' } });
    expect(seen).toHaveLength(2);
  });

  it('gives up after the retries with the last typed error', async () => {
    const client = new PrometheusClient({ baseUrl: base, retries: 1, retryDelayMs: 5 });
    const timeout = json(503, { status: 'error', errorType: 'timeout', error: 'query timed out in query execution' });
    answers = [timeout, timeout, vector];
    const error = await client.query('up').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PrometheusError);
    expect(error).toMatchObject({ errorType: 'timeout', status: 503, message: 'query timed out in query execution' });
    expect(seen).toHaveLength(2);
  });

  it('does not retry 4xx/422 errors', async () => {
    const client = new PrometheusClient({ baseUrl: base, retries: 2, retryDelayMs: 5 });
    answers = [json(422, { status: 'error', errorType: 'execution', error: 'many-to-many matching not allowed' })];
    await expect(client.query('a / b')).rejects.toMatchObject({ errorType: 'execution', status: 422 });
    expect(seen).toHaveLength(1);
  });

  it('reports a proxy page or an unexpected shape as bad_response', async () => {
    const client = new PrometheusClient({ baseUrl: base, retries: 0 });
    answers = [(res) => res.writeHead(401, { 'content-type': 'text/html' }).end('<html>login</html>')];
    await expect(client.query('up')).rejects.toMatchObject({ errorType: 'bad_response', status: 401 });
    answers = [json(200, { status: 'success', data: { resultType: 'vector', result: [{ metric: {}, value: [1, 2] }] } })];
    await expect(client.query('up')).rejects.toMatchObject({ errorType: 'bad_response' });
  });

  it('reports an unreachable server as network, and its own deadline as client_timeout', async () => {
    const closed = new PrometheusClient({ baseUrl: 'http://127.0.0.1:1', retries: 0 });
    await expect(closed.query('up')).rejects.toMatchObject({ errorType: 'network' });
    const slow = new PrometheusClient({ baseUrl: base, retries: 0, timeoutMs: 100 });
    answers = [(res) => setTimeout(() => vector(res), 400)];
    await expect(slow.query('up')).rejects.toMatchObject({ errorType: 'client_timeout' });
  });

  it('links to the graph page only with a public URL', () => {
    const range = { from: new Date('2026-01-01T11:00:00Z'), to: new Date('2026-01-01T12:05:00Z') };
    expect(new PrometheusClient({ baseUrl: base }).graphUrl('up', range)).toBeUndefined();
    const url = new URL(new PrometheusClient({ baseUrl: base, publicUrl: 'https://prom.example.com/' }).graphUrl('rate(x{a="b"}[1m])', range, 15)!);
    expect(url.origin + url.pathname).toBe('https://prom.example.com/graph');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      'g0.expr': 'rate(x{a="b"}[1m])',
      'g0.tab': '0',
      'g0.range_input': '3900s',
      'g0.end_input': '2026-01-01 12:05:00',
      'g0.step_input': '15',
    });
  });
});

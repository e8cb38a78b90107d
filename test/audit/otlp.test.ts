/** Traces leave over OTLP/HTTP when an endpoint is configured: a local collector stand-in receives them. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { context } from '@opentelemetry/api';
import { createTracing, inSpan } from '../../src/audit/tracing.js';

describe('OTLP/HTTP export', () => {
  let server: Server;
  const received: { path: string; contentType?: string; authorization?: string; body: Buffer }[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ path: req.url ?? '', contentType: req.headers['content-type'], authorization: req.headers.authorization, body: Buffer.concat(chunks) });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('posts the spans of a run to the configured endpoint, with the configured headers', async () => {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
    const tracing = createTracing({ otlpEndpoint: url, headers: { authorization: 'Bearer collector-token' } })!;
    await inSpan(tracing.tracer, 'vigil.investigation', context.active(), { 'vigil.incident.id': 'inc-1' }, async (_s, ctx) => {
      await inSpan(tracing.tracer, 'vigil.step announced', ctx, { 'vigil.step': 'announced' }, async () => undefined);
    });
    await tracing.shutdown(); // flushes the batch
    expect(received.length).toBeGreaterThan(0);
    expect(received[0]!.path).toBe('/v1/traces');
    expect(received[0]!.authorization).toBe('Bearer collector-token');
    const body = received.map((r) => r.body.toString('latin1')).join('');
    expect(body).toContain('vigil.investigation');
    expect(body).toContain('vigil.step announced');
  });

  it('exports nothing (no provider at all) when no endpoint is configured', () => {
    expect(createTracing({})).toBeUndefined();
  });
});

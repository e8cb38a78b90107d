/**
 * The flags webhook refuses an oversized body with a 413 and a JSON error the sender can read, instead of
 * resetting the connection; normal bodies keep working on the same server afterwards.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.js';
import { DEMO_SCENARIO } from './helpers.js';

describe('flags webhook body limit', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO });
  });
  afterAll(async () => world?.close());

  const url = () => `http://127.0.0.1:${world.vigil!.port}/webhooks/flags`;
  const auth = () => ({ authorization: `Bearer ${world.env['VIGIL_FLAGS_WEBHOOK_TOKEN']}`, 'content-type': 'application/json' });
  const oversized = () => JSON.stringify([{ flag: 'x', note: 'y'.repeat(400 * 1024) }]);

  it('answers 413 with a JSON error to a body larger than the limit (Content-Length declared)', async () => {
    const res = await fetch(url(), { method: 'POST', headers: auth(), body: oversized() });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ ok: false, error: expect.stringMatching(/too large/) });
  });

  it('answers 413 with a JSON error to a chunked body that grows past the limit while it is read', async () => {
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(url(), { method: 'POST', headers: { ...auth(), 'transfer-encoding': 'chunked' } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      const chunk = 'y'.repeat(64 * 1024);
      // Stop sending once answered: the server has stopped reading the body.
      let i = 0;
      const send = () => {
        if (i++ < 8 && !req.destroyed) req.write(chunk, () => setImmediate(send));
        else req.end();
      };
      send();
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toMatchObject({ ok: false, error: expect.stringMatching(/too large/) });
  });

  it('still reads and judges normal bodies afterwards', async () => {
    const res = await fetch(url(), { method: 'POST', headers: auth(), body: JSON.stringify([]) });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ ok: false, error: 'send 1 to 100 flag changes' });
  });
});

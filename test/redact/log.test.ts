import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createRedactor, redactForLog } from '../../src/redact/index.js';
import { plantAll, seededRandom } from './planted.js';

/** A pino destination that keeps the lines in memory. */
function memoryStream(): { stream: Writable; lines: () => Array<Record<string, unknown>> } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, lines: () => chunks.join('').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>) };
}

const planted = plantAll(seededRandom(5));
const secret = (kind: string): string => planted.find((p) => p.kind === kind)?.secret ?? '';

describe('redactForLog wired into pino', () => {
  it('redacts merging objects, messages, interpolation args, child bindings and errors', () => {
    const { stream, lines } = memoryStream();
    const redactor = createRedactor({ salt: 'log' });
    const log = pino({ level: 'info', ...redactForLog(redactor) }, stream);
    const gh = secret('github_token');
    const email = secret('email');
    const jwt = secret('jwt');
    const url = `postgres://app:pw-Qq12zz@db.shop.svc:5432/orders`;

    log.info({ env: [{ name: 'API_TOKEN', value: 'tok-9Zx81QaB' }], user: email }, `calling github with ${gh}`);
    log.warn('retry %s for %o', url, { headers: { authorization: `Bearer ${jwt}` } });
    log.child({ token: 'tok-9Zx81QaB', pod: 'checkout-7d9f8b6c5-x2x9k' }).info('child line');
    log.error(new Error(`connect failed: ${url}`));
    log.error({ err: new Error(`bad key ${gh}`) }, 'wrapped');

    const out = lines();
    const raw = JSON.stringify(out);
    for (const s of [gh, email, jwt, 'pw-Qq12zz', 'tok-9Zx81QaB']) expect(raw).not.toContain(s);
    expect(out).toHaveLength(5);
    expect(out[0]?.['msg']).toMatch(/^calling github with \[REDACTED:github_token:[0-9a-f]{8}\]$/);
    expect(out[2]?.['pod']).toBe('checkout-7d9f8b6c5-x2x9k');
    expect(out[3]?.['msg']).toMatch(/^connect failed: postgres:\/\/app:\[REDACTED:password:[0-9a-f]{8}\]@db\.shop\.svc:5432\/orders$/);
    expect((out[3]?.['err'] as { message: string }).message).toBe(out[3]?.['msg']);
    expect(out[4]?.['msg']).toBe('wrapped');
    expect((out[4]?.['err'] as { type: string; message: string }).type).toBe('Error');
    expect((out[4]?.['err'] as { type: string; message: string }).message).toMatch(/^bad key \[REDACTED:github_token:/);
    expect(out[2]?.['token']).toMatch(/^\[REDACTED:token:/);
  });
});

/**
 * `redactLines`: a log is more than its lines. A private key printed over several lines (a debug dump,
 * a misconfigured entrypoint that cats its key) shows BEGIN on one line and bare base64 on the next
 * ones, which no detector can recognise alone.
 */
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createRedactor } from '../../src/redact/index.js';

const pem = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString().trimEnd();
const pemLines = pem.split('\n');
const body = pemLines.slice(1, -1);
const stamp = (i: number) => `2024-01-15T10:00:${String(i).padStart(2, '0')}.000Z`;

const before = ['level=info msg="loading TLS material" path=/etc/tls', 'level=info msg="request done" request_id=4bf92f3577b34da6a3ce929d0e0e4736'];
const after = ['level=error msg="handshake failed" peer=10.0.3.17:443', 'level=info msg="retrying in 5s"'];

function expectNoKey(out: string[]): void {
  const text = out.join('\n');
  for (const line of body) expect(text).not.toContain(line.slice(0, 24));
}

describe('redactLines', () => {
  it('masks every line of a key from BEGIN to END and leaves the log around it alone', () => {
    const r = createRedactor({ salt: 'lines' });
    const out = r.redactLines([...before, ...pemLines, ...after]);
    expect(out).toHaveLength(before.length + pemLines.length + after.length);
    expectNoKey(out);
    expect(out.slice(0, 2)).toEqual(before);
    expect(out.slice(-2)).toEqual(after);
    const masked = out.slice(before.length + 1, before.length + pemLines.length);
    expect(new Set(masked).size).toBe(1);
    expect(masked[0]).toMatch(/^\[REDACTED:private_key:[0-9a-f]{8}\]$/);
    expect(r.stats()['pem_private_key']).toBe(2);
  });

  it('with a prefix on every line (timestamp, stream, logger) the prefixes go with the key', () => {
    const r = createRedactor({ salt: 'lines' });
    const prefixed = pemLines.map((l, i) => `${stamp(i)} stderr F ${l}`);
    const out = r.redactLines([...before, ...prefixed, ...after]);
    expectNoKey(out);
    expect(out.slice(-2)).toEqual(after);
  });

  it('a key cut off before END (a limit, a crash) loses the base64 lines that follow BEGIN', () => {
    const r = createRedactor({ salt: 'lines' });
    const cut = pemLines.slice(0, 10);
    const out = r.redactLines([...before, ...cut, ...after]);
    expectNoKey(out);
    expect(out.slice(-2)).toEqual(after);
  });

  it('a log that starts inside a key (tailLines) loses the body lines before END', () => {
    const r = createRedactor({ salt: 'lines' });
    const tail = pemLines.slice(8);
    const out = r.redactLines([...tail, ...after]);
    expectNoKey(out);
    expect(out.slice(-2)).toEqual(after);
  });

  it('is line-by-line redactText for every other log, and idempotent', () => {
    const r = createRedactor({ salt: 'lines' });
    const lines = [...before, 'level=error msg="db auth failed" password=hunter2-xyz', ...after];
    const out = r.redactLines(lines);
    expect(out).toEqual(lines.map((l) => r.redactText(l)));
    const keyed = r.redactLines([...before, ...pemLines, ...after]);
    expect(r.redactLines(keyed)).toEqual(keyed);
  });
});

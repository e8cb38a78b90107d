import { describe, expect, it } from 'vitest';
import { createRedactor } from '../../src/redact/index.js';
import { NOISE } from './noise.js';
import { chars, pick, plantAll, seededRandom, type Planted, type Rng } from './planted.js';

/** Single-token noise (no spaces), so "unaltered" is a plain substring check. */
const TOKENS = NOISE.filter((n) => !/\s/.test(n));

function noiseToken(rng: Rng): string {
  return pick(rng, [
    ...TOKENS,
    `${chars(rng, 'abcdefghijklmnopqrstuvwxyz', 6)}-${chars(rng, 'bcdfghjklmnpqrstvwxz2456789', 10)}-${chars(rng, 'bcdfghjklmnpqrstvwxz2456789', 5)}`,
    `${1 + Math.floor(rng() * 900)}ms`,
    `status=${pick(rng, ['200', '404', '500', '503'])}`,
    `10.${Math.floor(rng() * 255)}.${Math.floor(rng() * 255)}.${Math.floor(rng() * 255)}`,
    String(1_700_000_000_000 + Math.floor(rng() * 1e11)),
  ]);
}

/** JSON-wrapped lines must stay valid JSON after redaction. */
function decodeMessage(out: string): string {
  try {
    return (JSON.parse(out) as { msg: string }).msg;
  } catch {
    throw new Error(`redaction broke JSON: ${out}`);
  }
}

interface Line {
  text: string;
  secrets: string[];
  noise: string[];
  /** The line is a JSON log record `{"level":…,"msg":…}`. */
  wrapped: boolean;
}

function generateLine(rng: Rng, pool: readonly Planted[][]): Line {
  const noise = Array.from({ length: 2 + Math.floor(rng() * 6) }, () => noiseToken(rng));
  const plants: Planted[] = [];
  const all = pick(rng, pool);
  for (let i = Math.floor(rng() * 3); i > 0; i--) plants.push(pick(rng, all));
  const mid = plants.filter((p) => !p.endOfLine);
  const tail = plants.filter((p) => p.endOfLine).slice(0, 1);
  const parts: string[] = [...noise];
  for (const p of mid) parts.splice(Math.floor(rng() * (parts.length + 1)), 0, `${p.line} ;`);
  for (const p of tail) parts.push(p.line);
  const text = parts.join(' ');
  const secrets = plants.flatMap((p) => [p.secret, ...(p.probes ?? [])]);
  return rng() < 0.3
    ? { text: JSON.stringify({ level: 'info', msg: text }), secrets, noise, wrapped: true }
    : { text, secrets, noise, wrapped: false };
}

describe('property: generated log lines', () => {
  it('no planted secret survives and no noise token is altered (3000 lines)', () => {
    const rng = seededRandom(20240115);
    const redactor = createRedactor({ salt: 'prop' });
    // 100 independent sets of every kind (3,200 distinct planted values) to draw from.
    const pool = Array.from({ length: 100 }, () => plantAll(rng));
    const lines = Array.from({ length: 3000 }, () => generateLine(rng, pool));
    let planted = 0;
    for (const line of lines) {
      const out = redactor.redactText(line.text);
      // JSON-wrapped lines escape quotes; compare noise against the decoded message.
      const visible = line.wrapped ? decodeMessage(out) : out;
      for (const s of line.secrets) {
        planted++;
        if (out.includes(s)) throw new Error(`secret survived in: ${out}`);
      }
      for (const n of line.noise) if (!visible.includes(n)) throw new Error(`noise ${n} altered in: ${out}\nfrom: ${line.text}`);
      if (redactor.redactText(out) !== out) throw new Error(`not idempotent: ${out}`);
    }
    expect(planted).toBeGreaterThan(2000);
  });
});

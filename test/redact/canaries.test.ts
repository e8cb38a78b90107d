import { describe, expect, it } from 'vitest';
import { createRedactor } from '../../src/redact/index.js';
import { BENIGN, canaries } from './canaries.js';

/** Fragments of a secret that must not survive either: a half-redacted token is still a leak. */
function fragments(secret: string, probes: string[] = []): string[] {
  if (probes.length > 0) return probes.flatMap((p) => fragments(p));
  if (/\s/.test(secret) || secret.length < 20) return [secret];
  const out: string[] = [];
  for (let i = 0; i + 12 <= secret.length; i += 6) out.push(secret.slice(i, i + 12));
  return out;
}

describe('canary corpus: every shape, in every place it is written', () => {
  const corpus = canaries();
  const redactor = createRedactor({ salt: 'canary' });

  it('has at least 60 shapes, each planted in several contexts', () => {
    expect(new Set(corpus.map((c) => c.shape)).size).toBe(corpus.length);
    expect(corpus.length).toBeGreaterThanOrEqual(60);
    for (const c of corpus) expect(c.lines.length, c.shape).toBeGreaterThanOrEqual(2);
    // The corpus is not vacuous: every line really carries its secret.
    for (const c of corpus) for (const line of c.lines) expect(line.includes(c.secret) || line.includes(JSON.stringify(c.secret).slice(1, -1)), `${c.shape}: ${line}`).toBe(true);
  });

  it.each(corpus.map((c) => [c.shape, c] as const))('%s: 0 leaks', (_shape, c) => {
    const leaks: string[] = [];
    for (const line of c.lines) {
      const out = redactor.redactText(line);
      if (fragments(c.secret, c.probes).some((f) => out.includes(f)) || out.includes(JSON.stringify(c.secret).slice(1, -1))) leaks.push(`${line}\n  → ${out}`);
      expect(redactor.redactText(out), 'idempotent').toBe(out);
    }
    expect(leaks).toEqual([]);
  });

  it('0 leaks through the structural walk too (the same lines as values of an object)', () => {
    const leaks: string[] = [];
    for (const c of corpus) {
      const out = JSON.stringify(redactor.redactValue({ lines: c.lines, byKey: Object.fromEntries(c.lines.map((l, i) => [`line${i}`, l])) }));
      if (fragments(c.secret, c.probes).some((f) => out.includes(f))) leaks.push(c.shape);
    }
    expect(leaks).toEqual([]);
  });

  it('several canaries in one blob: 0 leaks, and the evidence between them survives', () => {
    const blob = corpus.map((c, i) => `2026-12-02T01:02:${String(i % 60).padStart(2, '0')}.000Z pod=checkout-7d9f8b6c5-x2x9k ${c.lines[0]}`).join('\n');
    const out = redactor.redactText(blob);
    for (const c of corpus) for (const f of fragments(c.secret, c.probes)) expect(out, c.shape).not.toContain(f);
    const pods = (t: string) => t.match(/pod=checkout-7d9f8b6c5-x2x9k/g)?.length ?? 0;
    expect(pods(out)).toBe(pods(blob));
    expect(pods(out)).toBeGreaterThanOrEqual(corpus.length);
  });
});

describe('canary corpus: benign look-alikes survive', () => {
  const redactor = createRedactor({ salt: 'canary' });

  it.each(BENIGN.map((b) => [b] as const))('%s', (benign) => {
    expect(redactor.redactText(benign)).toBe(benign);
    const line = `2026-12-02T01:02:03.456Z level=info pod=checkout-7d9f8b6c5-x2x9k msg="${benign.replace(/"/g, "'")}" status=200`;
    expect(redactor.redactText(line)).toBe(line);
  });
});

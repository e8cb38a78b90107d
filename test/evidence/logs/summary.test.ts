import { describe, expect, it } from 'vitest';
import { summarizeLogs } from '../../../src/evidence/logs/summary.js';
import type { LogLine } from '../../../src/evidence/logs/types.js';
import { generateStream, SHAPES, shapeOf } from './generate.js';

const FROM = new Date('2024-01-29T10:00:00Z');
const ONSET = new Date('2024-01-29T10:30:00Z');
const TO = new Date('2024-01-29T10:35:00Z');
const at = (min: number, sec = 0): Date => new Date(FROM.getTime() + min * 60_000 + sec * 1000);

/** A steady 35-minute stream, plus what an incident adds after 10:29: a new error and a tenfold rise of upstream failures. */
function incidentStream(): LogLine[] {
  const lines = generateStream(6000, 11, FROM, TO).lines;
  const upstream = SHAPES.find((s) => s.name === 'upstream failed')!;
  let n = 0;
  for (let s = 0; s < 300; s += 2) {
    const ts = at(29, s);
    lines.push({ ts, line: `ts=${ts.toISOString()} level=error msg="pool exhausted" db=orders waiting=${40 + (n++ % 30)}` });
    lines.push({ ts, line: upstream.make({ int: (m) => n % m, pick: (xs) => xs[0]!, hex: (k) => 'a1'.repeat(k).slice(0, k) }, ts) });
    lines.push({ ts, line: upstream.make({ int: (m) => (n * 7) % m, pick: (xs) => xs[0]!, hex: (k) => 'b2'.repeat(k).slice(0, k) }, ts) });
  }
  return lines.sort((a, b) => a.ts!.getTime() - b.ts!.getTime());
}

describe('summarizeLogs', () => {
  const lines = incidentStream();
  const summary = summarizeLogs(lines, { onset: ONSET, range: { from: FROM, to: TO } });

  it('counts lines and mines patterns', () => {
    expect(summary.totalLines).toBe(lines.length);
    expect(summary.patterns).toHaveLength(SHAPES.length + 1);
    expect(summary.patterns.reduce((s, p) => s + p.count, 0)).toBe(lines.length);
  });

  it('reports the template that first appears after onset - 1m as new', () => {
    const fresh = summary.newSinceOnset.find((p) => p.template.includes('pool exhausted'));
    expect(fresh).toMatchObject({ level: 'error', count: 150, change: { kind: 'new', countBefore: 0, countAfter: 150 } });
    expect(fresh!.first).toEqual(at(29));
  });

  it('reports a template whose rate jumps, and not the steady ones', () => {
    const jumped = summary.newSinceOnset.filter((p) => p.change.kind === 'rate_jump');
    expect(jumped.map((p) => shapeOf(p.example))).toEqual([SHAPES.findIndex((s) => s.name === 'upstream failed')]);
    expect(jumped[0]!.change.perMinuteAfter).toBeGreaterThan(3 * jumped[0]!.change.perMinuteBefore);
    expect(summary.newSinceOnset).toHaveLength(2);
  });

  it('lists error patterns, errors first', () => {
    expect(summary.errorPatterns.map((p) => p.level)).toEqual(['error', 'error', 'error']);
    expect(summary.patterns.slice(0, 3).every((p) => p.level === 'error')).toBe(true);
  });

  it('says nothing changed when the window has no time before the cut', () => {
    const late = lines.filter((l) => l.ts! >= at(29, 30));
    expect(summarizeLogs(late, { onset: ONSET }).newSinceOnset).toEqual([]);
  });

  it('says nothing changed without an onset or without timestamps', () => {
    expect(summarizeLogs(lines, {}).newSinceOnset).toEqual([]);
    expect(summarizeLogs(lines.map((l) => ({ line: l.line })), { onset: ONSET }).newSinceOnset).toEqual([]);
  });

  it('ignores a stray line after the onset', () => {
    const one = [...lines, { ts: at(31), line: 'level=error msg="one-off blip"' }];
    const s = summarizeLogs(one, { onset: ONSET, range: { from: FROM, to: TO } });
    expect(s.newSinceOnset.some((p) => p.template.includes('blip'))).toBe(false);
    expect(s.errorPatterns.some((p) => p.template.includes('blip'))).toBe(true);
  });
});

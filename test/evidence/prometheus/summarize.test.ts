import { describe, expect, it } from 'vitest';
import type { RawSample } from '../../../src/evidence/prometheus/client.js';
import { parseSampleValue, summarizeSeries } from '../../../src/evidence/prometheus/summarize.js';

const STEP_S = 15;
const T0 = Date.UTC(2026, 0, 1, 12, 0, 0) / 1000;

/** Deterministic noise in [-1, 1) (mulberry32), so the tests do not flake. */
function noise(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1;
  };
}

/** `n` samples every 15 s starting at T0; `value(i)` gives sample i. */
function series(n: number, value: (i: number) => number | string): RawSample[] {
  return Array.from({ length: n }, (_, i) => {
    const v = value(i);
    return [T0 + i * STEP_S, typeof v === 'string' ? v : String(v)] as RawSample;
  });
}

const at = (i: number): Date => new Date((T0 + i * STEP_S) * 1000);

describe('summarizeSeries', () => {
  it('finds a step at t0 within one step, and the deviation start', () => {
    const r = noise(1);
    const stepAt = 200;
    const values = series(260, (i) => (i < stepAt ? 10 : 30) + r() * 0.5);
    const s = summarizeSeries({ service: 'checkout' }, values, { onset: at(stepAt) });

    expect(s.changePoints).toHaveLength(1);
    const cp = s.changePoints[0]!;
    expect(Math.abs(cp.at.getTime() - at(stepAt).getTime())).toBeLessThanOrEqual(STEP_S * 1000);
    expect(cp.before).toBeCloseTo(10, 0);
    expect(cp.after).toBeCloseTo(30, 0);
    expect(s.deviationStart?.getTime()).toBe(at(stepAt).getTime());
    expect(s.deviationDirection).toBe('up');
    expect(s.baseline?.median).toBeCloseTo(10, 0);
    expect(s.points).toBe(260);
    expect(s.min).toBeLessThan(11);
    expect(s.max).toBeGreaterThan(29);
  });

  it('finds a clean step (no noise at all) exactly', () => {
    const values = series(100, (i) => (i < 60 ? 0.001 : 1));
    const s = summarizeSeries({}, values, { onset: at(60) });
    expect(s.changePoints.map((c) => c.at.getTime())).toEqual([at(60).getTime()]);
    expect(s.changePoints[0]).toMatchObject({ before: 0.001, after: 1 });
    expect(s.deviationStart?.getTime()).toBe(at(60).getTime());
  });

  it('reports neither change points nor a deviation for a flat noisy series', () => {
    const r = noise(7);
    const values = series(261, () => 100 + r() * 20);
    const s = summarizeSeries({}, values, { onset: at(240) });
    expect(s.changePoints).toEqual([]);
    expect(s.deviationStart).toBeUndefined();
    expect(s.mean).toBeGreaterThan(95);
    expect(s.mean).toBeLessThan(105);
  });

  it('reports a spike as a deviation, not as a level shift', () => {
    const r = noise(3);
    const values = series(200, (i) => (i === 170 ? 500 : 50 + r()));
    const s = summarizeSeries({}, values, { onset: at(170) });
    expect(s.changePoints).toEqual([]);
    expect(s.deviationStart?.getTime()).toBe(at(170).getTime());
    expect(s.max).toBe(500);
  });

  it('reports a sustained spike as a rise and a recovery', () => {
    const values = series(200, (i) => (i >= 150 && i < 170 ? 80 : 20));
    const s = summarizeSeries({}, values, { onset: at(150) });
    expect(s.changePoints.map((c) => [c.at.getTime(), c.before, c.after])).toEqual([
      [at(150).getTime(), 20, 80],
      [at(170).getTime(), 80, 20],
    ]);
  });

  it('reports a slow ramp as a deviation once it leaves the band, without level shifts', () => {
    const r = noise(11);
    // Flat at 100 until sample 150, then +0.5 per sample (15 s): 10% above baseline after 20 samples.
    const values = series(260, (i) => 100 + Math.max(0, i - 150) * 0.5 + r() * 0.3);
    const s = summarizeSeries({}, values, { onset: at(200) });
    expect(s.changePoints).toEqual([]);
    const start = s.deviationStart!.getTime();
    expect(start).toBeGreaterThan(at(150).getTime());
    expect(start).toBeLessThanOrEqual(at(175).getTime());
  });

  it('ignores a blip that recovered long before the onset', () => {
    const values = series(240, (i) => (i >= 20 && i < 24 ? 90 : 10));
    const s = summarizeSeries({}, values, { onset: at(230) });
    expect(s.deviationStart).toBeUndefined();
  });

  it('handles NaN and ±Inf: counted, left out of the statistics', () => {
    const values = series(60, (i) => (i % 10 === 0 ? 'NaN' : i === 5 ? '+Inf' : i === 6 ? '-Inf' : 2));
    const s = summarizeSeries({}, values);
    expect(s.points).toBe(60);
    expect(s.nonFinite).toBe(8);
    expect(s).toMatchObject({ first: 2, last: 2, min: 2, max: 2, mean: 2 });
    expect(s.changePoints).toEqual([]);
    expect(s.deviationStart).toBeUndefined();
  });

  it('returns null statistics for an all-NaN series (a ratio over no traffic)', () => {
    const s = summarizeSeries({}, series(20, () => 'NaN'));
    expect(s).toMatchObject({ points: 20, nonFinite: 20, first: null, min: null, mean: null, baseline: null, changePoints: [] });
  });

  it('parses Prometheus value strings', () => {
    expect(parseSampleValue('+Inf')).toBe(Infinity);
    expect(parseSampleValue('-Inf')).toBe(-Infinity);
    expect(parseSampleValue('NaN')).toBeNaN();
    expect(parseSampleValue('1e-3')).toBe(0.001);
  });
});

import { describe, expect, it } from 'vitest';
import { rankChanges } from '../../src/changes/rank.js';
import type { ChangeEvent } from '../../src/changes/types.js';

const onset = new Date('2026-11-29T14:02:11Z');
const at = (secondsBefore: number) => new Date(onset.getTime() - secondsBefore * 1000);
const change = (over: Partial<ChangeEvent>): ChangeEvent => ({
  at: at(60),
  actor: 'someone',
  kind: 'edit',
  target: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
  source: 'kubernetes',
  summary: 's',
  citation: { source: 'kubernetes', ref: 'x' },
  ...over,
});

describe('rankChanges', () => {
  const target = { namespace: 'shop', kind: 'Deployment', name: 'checkout' };

  it('puts a scale of the alerting workload 13 s before onset above a Helm upgrade 3 days earlier', () => {
    const ranked = rankChanges(
      [
        change({ kind: 'helm_upgrade', at: at(3 * 86400), target: { kind: 'HelmRelease', namespace: 'shop', name: 'checkout' }, summary: 'helm' }),
        change({ kind: 'scale', at: at(13), summary: 'kubectl scale' }),
      ],
      { onset, target },
    );
    expect(ranked.map((r) => r.summary)).toEqual(['kubectl scale', 'helm']);
    expect(ranked[0]!.why).toEqual(['13 s before onset', 'same workload', 'scale']);
    expect(ranked[1]!.score).toBeLessThan(0.01);
  });

  it('weighs a ConfigMap the target uses like the target itself, and another namespace low', () => {
    const ranked = rankChanges(
      [
        change({ kind: 'config', target: { kind: 'ConfigMap', namespace: 'shop', name: 'checkout-config' }, summary: 'cm' }),
        change({ kind: 'image', target: { kind: 'Deployment', namespace: 'payments', name: 'worker' }, summary: 'other ns' }),
      ],
      { onset, target, usedByTarget: new Set(['ConfigMap/shop/checkout-config']) },
    );
    expect(ranked[0]!.summary).toBe('cm');
    expect(ranked[0]!.why).toContain('used by checkout');
    expect(ranked[1]!.why).toContain('no known relation');
  });

  it('changes long after the onset cannot be the cause', () => {
    const [r] = rankChanges([change({ kind: 'scale', at: new Date(onset.getTime() + 10 * 60_000) })], { onset, target });
    expect(r!.score).toBeLessThan(0.1);
    expect(r!.why[0]).toMatch(/after onset/);
  });

  it('a dependency change ranks above an unrelated one', () => {
    const ranked = rankChanges(
      [
        change({ kind: 'deploy', target: { kind: 'Service', name: 'payments-api' }, summary: 'dep' }),
        change({ kind: 'deploy', target: { kind: 'Service', name: 'search' }, summary: 'unrelated' }),
      ],
      { onset, target, dependencies: ['payments-api'] },
    );
    expect(ranked.map((r) => r.summary)).toEqual(['dep', 'unrelated']);
  });
});

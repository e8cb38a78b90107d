import { describe, expect, it } from 'vitest';
import { expectedSchema, gradeDiagnosis, type GradedHypothesis } from '../../src/eval/questions.js';

const expected = expectedSchema.parse({
  analyzer: 'scaled-to-zero',
  component: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
  facts: { replicas: 0, manager: 'kubectl' },
  affected: [{ kind: 'Service', namespace: 'shop', name: 'checkout' }],
  unrelated: [{ kind: 'Pod', namespace: 'payments', name: 'payments-worker-*' }],
  ruled_out: ['helm-release'],
  mitigation: { action: 'scale', params: { replicas: 3 } },
  wrong_mitigations: ['helm_rollback'],
});

const right: GradedHypothesis[] = [
  {
    label: 'H1',
    analyzer: 'scaled-to-zero',
    status: 'supported',
    confidence: 0.95,
    title: 'checkout scaled to 0',
    component: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
    facts: { replicas: 0, manager: 'kubectl' },
    affected: [{ kind: 'Service', namespace: 'shop', name: 'checkout' }],
    mitigation: { action: 'scale', params: { replicas: 3 } },
    supportingCitations: ['apis/apps/v1/namespaces/shop/deployments/checkout#metadata.managedFields[3]'],
  },
  { label: 'H2', analyzer: 'helm-release', status: 'ruled_out', confidence: 0.05, title: 'helm', facts: {}, affected: [], supportingCitations: [] },
  { label: 'H3', analyzer: 'background-noise', status: 'unrelated', confidence: 0.02, title: 'noise', component: { kind: 'Pod', namespace: 'payments', name: 'payments-worker-6c8f9d7b4-x2x9k' }, facts: {}, affected: [], supportingCitations: [] },
];

describe('gradeDiagnosis (nine questions)', () => {
  it('answers all nine yes for the right diagnosis, mitigation right', () => {
    const g = gradeDiagnosis(right, expected);
    expect(g.score).toBe(9);
    expect(g.pass).toBe(true);
    expect(g.mitigation).toBe('right');
  });

  it('blaming the Helm rollback fails a whole dimension and cannot pass', () => {
    const wrong: GradedHypothesis[] = [
      { ...right[1]!, status: 'supported', confidence: 0.9, component: { kind: 'HelmRelease', namespace: 'shop', name: 'checkout' }, mitigation: { action: 'helm_rollback', params: {} }, supportingCitations: ['api/v1/namespaces/shop/secrets/sh.helm.release.v1.checkout.v7'] },
      right[2]!,
    ];
    const g = gradeDiagnosis(wrong, expected);
    expect(g.answers['loc.kind']).toBe(false);
    expect(g.answers['char.mechanism']).toBe(false);
    expect(g.answers['scope.focus']).toBe(false);
    expect(g.pass).toBe(false);
    expect(g.mitigation).toBe('wrong');
  });

  it('a right component with wrong details and missed noise scores 7 — passes, with the misses noted', () => {
    const partial: GradedHypothesis[] = [{ ...right[0]!, facts: { replicas: 0, manager: 'helm' } }, right[1]!];
    const g = gradeDiagnosis(partial, expected);
    expect(g.answers['char.details']).toBe(false);
    expect(g.answers['scope.noise']).toBe(false);
    expect(g.score).toBe(7);
    expect(g.pass).toBe(true);
    expect(g.notes.join('\n')).toMatch(/manager="helm" \(expected "kubectl"\)/);
  });

  it('no supported hypothesis answers every component question no', () => {
    const g = gradeDiagnosis([{ ...right[0]!, status: 'inconclusive' }], expected);
    expect(g.answers['loc.kind'] || g.answers['loc.name'] || g.answers['char.mechanism']).toBe(false);
    expect(g.mitigation).toBe('none');
  });

  it('compares expected name/namespace params with the proposal\'s target', () => {
    const e = expectedSchema.parse({ ...expected, mitigation: { action: 'rollout_restart', params: { name: 'checkout', namespace: 'shop' } } });
    const restart = (name: string) => [{ ...right[0]!, mitigation: { action: 'rollout_restart', params: {}, target: { kind: 'Deployment', namespace: 'shop', name } } }];
    expect(gradeDiagnosis(restart('checkout'), e).mitigation).toBe('right');
    expect(gradeDiagnosis(restart('cart'), e).mitigation).toBe('wrong');
  });
});

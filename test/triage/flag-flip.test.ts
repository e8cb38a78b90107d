import { describe, expect, it } from 'vitest';
import type { RankedChange } from '../../src/changes/types.js';
import type { KubeEvidence } from '../../src/evidence/kubernetes/gather.js';
import { emptySurroundings } from '../../src/evidence/kubernetes/surroundings.js';
import type { MetricSummary } from '../../src/evidence/prometheus/types.js';
import type { TriageInput } from '../../src/triage/analyzer.js';
import { flagFlip, flipBackTo } from '../../src/triage/analyzers/flag-flip.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const at = (min: number) => new Date(ONSET.getTime() + min * 60_000);

const kube: KubeEvidence = {
  ...emptySurroundings(),
  onset: ONSET,
  target: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
  replicaSets: [],
  pods: [],
  services: [{ service: { metadata: { name: 'checkout' } } }],
  events: [],
  related: [],
  dependents: [],
  unhealthyPods: [],
  warningEvents: [],
  gaps: [],
  server: 'https://k8s.test',
};

function errors(startMin: number): MetricSummary {
  return {
    id: 'error_ratio',
    title: 'HTTP 5xx ratio',
    unit: 'ratio',
    badWhen: 'high',
    query: 'q',
    range: { from: at(-60), to: ONSET },
    stepSeconds: 15,
    status: 'success',
    series: [{ metric: {}, points: 240, nonFinite: 0, from: at(-60), to: ONSET, first: 0.003, last: 0.4, min: 0.002, max: 0.41, mean: 0.05, baseline: { median: 0.003, mad: 0.0004 }, changePoints: [{ at: at(startMin), before: 0.003, after: 0.4 }], deviationStart: at(startMin), deviationDirection: 'up' }],
    citation: { source: 'prometheus', ref: 'q' },
  };
}

const flip = (flag: string, min: number, before?: string, after = 'on'): RankedChange => ({
  at: at(min),
  actor: 'dana',
  kind: 'flag',
  target: { kind: 'FeatureFlag', name: flag },
  ...(before !== undefined ? { before } : {}),
  after,
  source: 'flags',
  summary: `flag ${flag} (production): ${before ?? '?'} → ${after} by dana`,
  citation: { source: 'flags', ref: 'webhook evt-1' },
  score: 0.7,
  why: [],
});

function input(over: Partial<TriageInput> = {}): TriageInput {
  return {
    alert: { labels: {}, labelValues: [] } as unknown as TriageInput['alert'],
    onset: ONSET,
    kube,
    changes: [],
    service: { name: 'checkout', namespace: 'shop', dependsOn: [], flags: ['new-checkout-flow'] },
    ...over,
  };
}

describe('flag-flip', () => {
  it('blames a flag of the target flipped right before the errors, and proposes flipping it back', () => {
    const [f] = flagFlip.analyze(input({ changes: [flip('new-checkout-flow', -4, 'off')], metrics: { summaries: [errors(-3.5)] } }));
    expect(f).toMatchObject({
      status: 'supported',
      component: { kind: 'FeatureFlag', name: 'new-checkout-flow' },
      facts: { flag: 'new-checkout-flow', before: 'off', after: 'on', actor: 'dana', metric: 'error_ratio' },
      // The fix targets the workload the flag changes, so policy can scope it to the incident's service.
      mitigation: { action: 'flip_flag', target: { kind: 'Deployment', namespace: 'shop', name: 'checkout' }, params: { flag: 'new-checkout-flow', to: 'off' } },
    });
    expect(f!.confidence).toBeGreaterThanOrEqual(0.8);
    expect(f!.affected).toContainEqual({ kind: 'Deployment', namespace: 'shop', name: 'checkout' });
  });

  it('is ruled out when the errors came first', () => {
    const [f] = flagFlip.analyze(input({ changes: [flip('new-checkout-flow', -4, 'off')], metrics: { summaries: [errors(-20)] } }));
    expect(f).toMatchObject({ status: 'ruled_out' });
  });

  it('without a catalog, ties a flag to the target that names it in its own logs or pod template', () => {
    const logs = (line: string): KubeEvidence => ({
      ...kube,
      containerLogs: [{ pod: 'checkout-1', container: 'app', previous: false, running: true, patterns: [{ template: line, example: line, count: 40 }], tail: [] }],
    });
    const named = flagFlip.analyze(input({ service: undefined, kube: logs('INFO c.l.sdk: flag tax-engine-v2 evaluated: variation=true'), changes: [flip('tax-engine-v2', -4, 'off')], metrics: { summaries: [errors(-3.5)] } }));
    expect(named[0]).toMatchObject({ status: 'supported', component: { kind: 'FeatureFlag', name: 'tax-engine-v2' } });
    // A whole token: `tax-engine` is not `tax-engine-v2`, and another service's flag stays out.
    expect(flagFlip.analyze(input({ service: undefined, kube: logs('flag tax-engine-v2 evaluated'), changes: [flip('tax-engine', -4, 'off')], metrics: { summaries: [errors(-3.5)] } }))).toEqual([]);
    const envNamed: KubeEvidence = { ...kube, workload: { kind: 'Deployment', spec: { template: { spec: { containers: [{ name: 'app', env: [{ name: 'FLAG_KEYS', value: 'new-ui,dark-mode' }] }] } } } } as never };
    expect(flagFlip.analyze(input({ service: undefined, kube: envNamed, changes: [flip('dark-mode', -4, 'off')], metrics: { summaries: [errors(-3.5)] } }))[0]?.status).toBe('supported');
  });

  it('ignores flags the catalog does not tie to the target, and flips older than the window', () => {
    expect(flagFlip.analyze(input({ changes: [flip('search-typo-tolerance', -4, 'on', 'off')], metrics: { summaries: [errors(-3)] } }))).toEqual([]);
    expect(flagFlip.analyze(input({ changes: [flip('new-checkout-flow', -6 * 24 * 60, 'off')], metrics: { summaries: [errors(-3)] } }))).toEqual([]);
    expect(flagFlip.analyze(input({ service: undefined, changes: [flip('new-checkout-flow', -4, 'off')] }))).toEqual([]);
  });

  it('stays open without symptoms, and knows what "back" means without a before state', () => {
    expect(flagFlip.analyze(input({ changes: [flip('new-checkout-flow', -4)] }))[0]).toMatchObject({ status: 'open', mitigation: { params: { to: 'off' } } });
    expect(flipBackTo({ after: 'true' })).toBe('false');
    expect(flipBackTo({ before: 'variant-a', after: 'variant-b' })).toBe('variant-a');
    expect(flipBackTo({ after: 'variant-b' })).toBeUndefined();
  });
});

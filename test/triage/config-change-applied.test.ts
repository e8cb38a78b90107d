/**
 * config-change: the reader's restart after an edit is how the new values were loaded (`kubectl edit cm`
 * then `kubectl rollout restart`): it is evidence for the edit and ties an aged edit to today's errors.
 * And `usedBy` is the read mode (`env`, `envFrom`, `volume`), `via` the variable or volume.
 */
import { describe, expect, it } from 'vitest';
import type { RankedChange } from '../../src/changes/types.js';
import type { KubeEvidence } from '../../src/evidence/kubernetes/gather.js';
import { configRefs, type RelatedObject } from '../../src/evidence/kubernetes/related.js';
import { emptySurroundings } from '../../src/evidence/kubernetes/surroundings.js';
import type { MetricSummary } from '../../src/evidence/prometheus/types.js';
import type { TriageInput } from '../../src/triage/analyzer.js';
import { configChange } from '../../src/triage/analyzers/config-change.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const at = (min: number) => new Date(ONSET.getTime() + min * 60_000);
const iso = (min: number) => at(min).toISOString();

const configMap = (editMin: number, usedBy = 'volume config'): RelatedObject => ({
  kind: 'ConfigMap',
  namespace: 'shop',
  name: 'checkout-config',
  createdAt: at(-120 * 24 * 60),
  usedBy,
  keys: ['CURRENCY', 'PAYMENTS_URL'],
  managedFields: [
    { manager: 'kubectl-client-side-apply', operation: 'Update', time: at(-120 * 24 * 60), fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { '.': {}, 'f:CURRENCY': {}, 'f:PAYMENTS_URL': {} } } },
    { manager: 'kubectl-edit', operation: 'Update', time: at(editMin), fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:PAYMENTS_URL': {} } } },
  ],
});

function kube(over: Partial<KubeEvidence> = {}): KubeEvidence {
  return {
    ...emptySurroundings(),
    onset: ONSET,
    target: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
    workload: { metadata: { name: 'checkout' } },
    replicaSets: [],
    pods: [],
    services: [{ service: { metadata: { name: 'checkout' } } }],
    events: [],
    related: [configMap(-5 * 60)],
    dependents: [],
    unhealthyPods: [],
    warningEvents: [],
    gaps: [],
    server: 'https://k8s.test',
    ...over,
  };
}

function errors(startMin: number): MetricSummary {
  return {
    id: 'error_ratio',
    title: 'HTTP 5xx ratio',
    unit: 'ratio',
    badWhen: 'high',
    query: 'sum(rate(…5..…)) / sum(rate(…))',
    range: { from: at(-60), to: ONSET },
    stepSeconds: 15,
    status: 'success',
    series: [{ metric: {}, points: 240, nonFinite: 0, from: at(-60), to: ONSET, first: 0.003, last: 0.6, min: 0.002, max: 0.61, mean: 0.05, baseline: { median: 0.003, mad: 0.0004 }, changePoints: [{ at: at(startMin), before: 0.003, after: 0.6 }], deviationStart: at(startMin), deviationDirection: 'up' }],
    citation: { source: 'prometheus', ref: 'sum(rate(…))' },
  };
}

const restart = (min: number, over: Partial<RankedChange> = {}): RankedChange => ({
  at: at(min),
  actor: 'kubectl-rollout',
  kind: 'rollout',
  target: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
  source: 'kubernetes',
  summary: 'rollout of checkout to revision 9 (pod template changed)',
  citation: { source: 'kubernetes', ref: 'apis/apps/v1/namespaces/shop/replicasets/checkout-5f6d7c8b9' },
  score: 0.8,
  why: [],
  ...over,
});

function input(over: Partial<TriageInput> = {}): TriageInput {
  return { alert: { labels: {}, labelValues: [] } as unknown as TriageInput['alert'], onset: ONSET, kube: kube(), changes: [], metrics: { summaries: [errors(-2)] }, ...over };
}

describe('config-change: the reader was restarted after the edit', () => {
  it('an edit five hours old stays open when nothing ties it to the errors', () => {
    const [f] = configChange.analyze(input());
    expect(f).toMatchObject({ status: 'open', confidence: 0.55 });
    expect(f!.supporting.some((e) => e.kind === 'change')).toBe(false);
  });

  it('a rollout restart of the reader after the edit corroborates the aged edit and is cited as evidence', () => {
    const [f, ...rest] = configChange.analyze(input({ changes: [restart(-3)] }));
    expect(rest).toEqual([]);
    expect(f).toMatchObject({
      status: 'supported',
      component: { kind: 'ConfigMap', namespace: 'shop', name: 'checkout-config' },
      facts: { object: 'ConfigMap/checkout-config', keys: 'PAYMENTS_URL', editor: 'kubectl-edit', changedAt: iso(-300), usedBy: 'volume', via: 'config', metric: 'error_ratio' },
    });
    // aged (older than the change window): the supported confidence, less the age penalty
    expect(f!.confidence).toBeCloseTo(0.74, 5);
    const change = f!.supporting.find((e) => e.kind === 'change');
    expect(change).toMatchObject({ citation: { ref: 'apis/apps/v1/namespaces/shop/replicasets/checkout-5f6d7c8b9' }, observedAt: at(-3) });
    expect(change!.summary).toBe('rollout of checkout to revision 9 (pod template changed) at 11:57:00, 5 h after the edit: its pods loaded the new ConfigMap');
    expect(f!.mechanism).toContain('. checkout was restarted at 11:57:00 (kubectl-rollout), which loaded it. Fix: restore');
    // The template change was only a restart: undoing it is not the fix.
    expect(f!.mitigation?.action).not.toBe('rollout_undo');
  });

  it('a hand edit of the Deployment (kubectl rollout restart writes the template annotation) counts too', () => {
    const [f] = configChange.analyze(input({ changes: [restart(-3, { kind: 'edit', actor: 'kubectl-rollout', summary: 'kubectl-rollout updated deployment/checkout (template)', citation: { source: 'kubernetes', ref: 'apis/apps/v1/namespaces/shop/deployments/checkout#metadata.managedFields[3]' } })] }));
    expect(f).toMatchObject({ status: 'supported' });
    expect(f!.supporting.find((e) => e.kind === 'change')?.citation.ref).toBe('apis/apps/v1/namespaces/shop/deployments/checkout#metadata.managedFields[3]');
  });

  it('ignores restarts before the edit, of another workload, from other sources, or after the onset window', () => {
    const cases: RankedChange[] = [
      restart(-6 * 60),
      restart(-3, { target: { kind: 'Deployment', namespace: 'shop', name: 'storefront' } }),
      restart(-3, { target: { kind: 'Deployment', namespace: 'other', name: 'checkout' } }),
      restart(-3, { source: 'github', kind: 'deploy' }),
      restart(-3, { source: 'github' }),
      restart(-3, { kind: 'scale' }),
      restart(5),
    ];
    for (const c of cases) {
      const [f] = configChange.analyze(input({ changes: [c] }));
      expect(f, `${c.source} ${c.kind} ${c.target.namespace}/${c.target.name} at ${c.at.toISOString()}`).toMatchObject({ status: 'open', confidence: 0.55 });
      expect(f!.supporting.some((e) => e.kind === 'change')).toBe(false);
      expect(f!.mechanism).not.toMatch(/which loaded it/);
    }
  });
});

describe('config-change: usedBy is the read mode, via the variable or volume', () => {
  // The usedBy strings as related.ts writes them, from a real pod spec.
  const refs = configRefs({
    containers: [
      {
        name: 'checkout',
        env: [{ name: 'PAYMENTS_URL', valueFrom: { configMapKeyRef: { name: 'payments-env', key: 'url' } } }],
        envFrom: [{ configMapRef: { name: 'checkout-env' } }],
      },
    ],
    volumes: [{ name: 'app-config', configMap: { name: 'checkout-files' } }],
  });
  const how = Object.fromEntries(refs.map((r) => [r.name, r.how]));

  it.each([
    [how['payments-env']!, { usedBy: 'env', via: 'PAYMENTS_URL' }],
    [how['checkout-files']!, { usedBy: 'volume', via: 'app-config' }],
    ['env DB_PASSWORD (missing!)', { usedBy: 'env', via: 'DB_PASSWORD' }],
  ])('%s → %o', (usedBy, expected) => {
    const [f] = configChange.analyze(input({ kube: kube({ related: [configMap(-3, usedBy)] }) }));
    expect(f!.facts).toMatchObject(expected);
  });

  it('envFrom has no via', () => {
    expect(how['checkout-env']).toBe('envFrom');
    const [f] = configChange.analyze(input({ kube: kube({ related: [configMap(-3, 'envFrom')] }) }));
    expect(f!.facts).toMatchObject({ usedBy: 'envFrom' });
    expect(f!.facts).not.toHaveProperty('via');
  });
});

import { describe, expect, it } from 'vitest';
import type { KubeEvidence } from '../../src/evidence/kubernetes/gather.js';
import type { RelatedObject } from '../../src/evidence/kubernetes/related.js';
import { emptySurroundings } from '../../src/evidence/kubernetes/surroundings.js';
import type { LogsEvidence } from '../../src/evidence/loki/types.js';
import type { MetricSummary } from '../../src/evidence/prometheus/types.js';
import type { TriageInput } from '../../src/triage/analyzer.js';
import { configChange, writtenKeys } from '../../src/triage/analyzers/config-change.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const at = (min: number) => new Date(ONSET.getTime() + min * 60_000);
const iso = (min: number) => at(min).toISOString();

const configMap = (editMin: number, keys = ['PAYMENTS_URL']): RelatedObject => ({
  kind: 'ConfigMap',
  namespace: 'shop',
  name: 'checkout-config',
  createdAt: at(-120 * 24 * 60),
  usedBy: 'volume config',
  keys: ['CURRENCY', 'PAYMENTS_URL'],
  managedFields: [
    { manager: 'kubectl-client-side-apply', operation: 'Update', time: at(-120 * 24 * 60), fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { '.': {}, 'f:CURRENCY': {}, 'f:PAYMENTS_URL': {} } } },
    { manager: 'kubectl-edit', operation: 'Update', time: at(editMin), fieldsType: 'FieldsV1', fieldsV1: { 'f:data': Object.fromEntries(keys.map((k) => [`f:${k}`, {}])) } },
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
    related: [configMap(-3)],
    dependents: [{ kind: 'Deployment', name: 'storefront', via: 'env CHECKOUT_URL' }],
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

const newErrorLogs: LogsEvidence = {
  summaries: [
    {
      selector: '{namespace="shop", app="checkout"}',
      query: '{namespace="shop", app="checkout"}',
      range: { from: at(-30), to: ONSET },
      status: 'success',
      totalLines: 400,
      sampled: false,
      patterns: [],
      errorPatterns: [],
      newSinceOnset: [
        {
          template: 'level=error msg="payment intent failed" error="dial tcp: lookup payments-api.payment.svc on <IP>: no such host"',
          count: 50,
          first: at(-2.6),
          example: 'level=error msg="payment intent failed" error="dial tcp: lookup payments-api.payment.svc on 10.96.0.10:53: no such host"',
          level: 'error',
          change: { kind: 'new', countBefore: 0, countAfter: 50, perMinuteBefore: 0, perMinuteAfter: 20 },
        },
      ],
      citation: { source: 'loki', ref: '{namespace="shop", app="checkout"}' },
    },
  ],
};

function input(over: Partial<TriageInput> = {}): TriageInput {
  return { alert: { labels: {}, labelValues: [] } as unknown as TriageInput['alert'], onset: ONSET, kube: kube(), changes: [], ...over };
}

describe('config-change', () => {
  it('names the ConfigMap, the key, the editor and the time, corroborated by errors right after; restore_config, not a rollout undo', () => {
    const [f] = configChange.analyze(input({ metrics: { summaries: [errors(-2.5)] }, logs: newErrorLogs }));
    expect(f).toMatchObject({
      status: 'supported',
      component: { kind: 'ConfigMap', namespace: 'shop', name: 'checkout-config' },
      facts: { object: 'ConfigMap/checkout-config', keys: 'PAYMENTS_URL', editor: 'kubectl-edit', changedAt: iso(-3), metric: 'error_ratio' },
    });
    // The same answer in the vocabulary of the ConfigMap's family (dns-failure asks configMap/key/manager).
    expect(f!.facts).toMatchObject({ configMap: 'checkout-config', key: 'PAYMENTS_URL', manager: 'kubectl-edit' });
    expect(f!.confidence).toBeGreaterThanOrEqual(0.85);
    expect(f!.mitigation).toMatchObject({
      action: 'restore_config',
      target: { kind: 'ConfigMap', namespace: 'shop', name: 'checkout-config' },
      params: { kind: 'ConfigMap', name: 'checkout-config' },
      command: expect.stringContaining('kubectl patch configmap/checkout-config -n shop'),
    });
    expect(f!.mechanism).toMatch(/restore the previous value of PAYMENTS_URL/);
    expect(f!.mechanism).toMatch(/rollout undo would not help/);
    expect(f!.supporting[0]!.citation.ref).toBe('api/v1/namespaces/shop/configmaps/checkout-config#metadata.managedFields[1]');
    expect(f!.affected).toContainEqual({ kind: 'Deployment', namespace: 'shop', name: 'storefront' });
  });

  it('is ruled out when the errors started before the edit', () => {
    const [f] = configChange.analyze(input({ metrics: { summaries: [errors(-10)] } }));
    expect(f).toMatchObject({ status: 'ruled_out' });
    expect(f!.reason).toMatch(/BEFORE ConfigMap\/checkout-config was edited/);
  });

  it('stays open without corroboration and ignores old edits and objects the target does not read', () => {
    expect(configChange.analyze(input())[0]).toMatchObject({ status: 'open' });
    // An edit hours before the errors stays a hypothesis (effects can wait for traffic) but is not supported
    // when nothing ties the errors to it; one older than the delayed-effect window is not considered at all.
    expect(configChange.analyze(input({ kube: kube({ related: [configMap(-5 * 60)] }), metrics: { summaries: [errors(-2)] } }))[0]).toMatchObject({ status: 'open' });
    expect(configChange.analyze(input({ kube: kube({ related: [configMap(-13 * 60)] }), metrics: { summaries: [errors(-2)] } }))).toEqual([]);
    const unused = { ...configMap(-3), usedBy: undefined };
    expect(configChange.analyze(input({ kube: kube({ related: [unused] }), metrics: { summaries: [errors(-2)] } }))).toEqual([]);
  });

  it('proposes a rollout undo when the config arrived with a rollout (new ReplicaSet, new ConfigMap name)', () => {
    const rs = (rev: number, cm: string, createdMin: number) => ({
      metadata: { name: `checkout-${rev}`, creationTimestamp: at(createdMin), annotations: { 'deployment.kubernetes.io/revision': String(rev) } },
      spec: { selector: {}, template: { spec: { containers: [{ name: 'checkout', envFrom: [{ configMapRef: { name: cm } }] }] } } },
    });
    const fresh: RelatedObject = { kind: 'ConfigMap', namespace: 'shop', name: 'checkout-config-v2', createdAt: at(-4), usedBy: 'envFrom', keys: ['PAYMENTS_URL'], managedFields: [{ manager: 'argocd-controller', operation: 'Apply', time: at(-4), fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:PAYMENTS_URL': {} } } }] };
    const [f] = configChange.analyze(input({ kube: kube({ related: [fresh], replicaSets: [rs(4, 'checkout-config-v1', -9000), rs(5, 'checkout-config-v2', -4)] }), metrics: { summaries: [errors(-3)] } }));
    expect(f).toMatchObject({ status: 'supported', facts: { object: 'ConfigMap/checkout-config-v2', editor: 'argocd-controller' }, mitigation: { action: 'rollout_undo', params: { toRevision: 4 } } });
  });

  it('proposes nothing for an edited Secret: Vigil never reads Secret values, so it cannot restore one', () => {
    const secret: RelatedObject = { ...configMap(-3), kind: 'Secret', name: 'checkout-secrets', usedBy: 'env DB_PASSWORD' };
    const [f] = configChange.analyze(input({ kube: kube({ related: [secret] }), metrics: { summaries: [errors(-2.5)] }, logs: newErrorLogs }));
    expect(f).toMatchObject({ status: 'supported', component: { kind: 'Secret', name: 'checkout-secrets' } });
    expect(f!.mitigation).toBeUndefined();
  });

  it('reads key names from managedFields, never values', () => {
    expect(writtenKeys({ 'f:data': { '.': {}, 'f:A': {}, 'f:B': {} }, 'f:binaryData': { 'f:C': {} } })).toEqual(['A', 'B', 'C']);
    expect(writtenKeys(undefined)).toEqual([]);
  });

  it('rules out an old edit whose readers loaded it and served well before the symptoms began', () => {
    // Edited 2 h ago, loaded by a pod started right after; the errors began 2 min before the alert.
    const loaded = { metadata: { name: 'checkout-a' }, status: { phase: 'Running', startTime: at(-118) } };
    const [f] = configChange.analyze(input({ kube: kube({ related: [configMap(-120)], pods: [loaded as never] }), metrics: { summaries: [errors(-2)] }, logs: newErrorLogs }));
    expect(f).toMatchObject({ status: 'ruled_out', confidence: 0.05 });
    expect(f!.reason).toMatch(/^checkout ran with the edited ConfigMap\/checkout-config from 10:02:00 for 2 h before the symptoms began/);
    // Not loaded by any pod yet: its effect may still be waiting, so it is left open for the evidence to decide.
    const [waiting] = configChange.analyze(input({ kube: kube({ related: [configMap(-120)] }), metrics: { summaries: [errors(-2)] } }));
    expect(waiting!.status).not.toBe('ruled_out');
  });

  it('keeps an old edit when a limit it sets is what was reached: the store at its maxmemory, or clients told so', () => {
    const loaded = { metadata: { name: 'checkout-a' }, status: { phase: 'Running', startTime: at(-118) } };
    const full: MetricSummary = { ...errors(-2), id: 'store_memory_ratio', title: 'Used memory / maxmemory', threshold: 0.95, series: [{ ...errors(-2).series[0]!, last: 1, max: 1 }] };
    const [f] = configChange.analyze(input({ kube: kube({ related: [configMap(-120)], pods: [loaded as never] }), metrics: { summaries: [errors(-2), full] } }));
    expect(f).toMatchObject({ status: 'supported' });
    expect(f!.mechanism).toMatch(/Its effect waited for load: Used memory \/ maxmemory at 100% now/);
    const refused: LogsEvidence = { ...newErrorLogs, summaries: newErrorLogs.summaries.map((x) => ({ ...x, newSinceOnset: [{ ...x.newSinceOnset[0]!, template: "OOM command not allowed when used memory > 'maxmemory'.", example: "OOM command not allowed when used memory > 'maxmemory'.", first: at(-2) }] })) };
    expect(configChange.analyze(input({ kube: kube({ related: [configMap(-120)], pods: [loaded as never] }), metrics: { summaries: [errors(-2)] }, logs: refused }))[0]?.status).toBe('supported');
  });
});


// dns-search-path: a rollout that dropped the pods' ndots option makes every external lookup walk the
// cluster search domains first; blamed on the rollout (rollout_undo), with the external host and the
// cluster DNS cleared and the DNS named as a consequence.
import type { V1ReplicaSet } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { emptyKubeEvidence } from '../../src/evidence/kubernetes/gather.js';
import type { LogsEvidence } from '../../src/evidence/loki/types.js';
import type { TriageInput } from '../../src/triage/analyzer.js';
import { dnsSearchPath } from '../../src/triage/analyzers/dns-search-path.js';
import { buildTopology } from '../../src/topology/graph.js';
import { emptySnapshot } from '../../src/topology/snapshot.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const ago = (min: number) => new Date(ONSET.getTime() - min * 60_000);
const container = { name: 'gw', env: [{ name: 'STRIPE_API_BASE', value: 'https://api.stripe.com/v1' }] };
const rs = (name: string, rev: number, created: Date, ndots?: string): V1ReplicaSet => ({
  metadata: { name, namespace: 'payments', creationTimestamp: created, annotations: { 'deployment.kubernetes.io/revision': String(rev) } },
  spec: { selector: {}, template: { spec: { containers: [container], ...(ndots ? { dnsConfig: { options: [{ name: 'ndots', value: ndots }] } } : {}) } } },
});
const LOOKUP = "Error: Timeout awaiting 'lookup' for 5000ms (api.stripe.com)";

function input(o: { nowNdots?: string; logs?: boolean } = {}): TriageInput {
  const s = emptySnapshot();
  s.deployments = [
    { metadata: { name: 'payments-gateway', namespace: 'payments', managedFields: [{ manager: 'helm', operation: 'Update', time: ago(23), fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:template': {} } } }] }, spec: { selector: {}, template: { spec: { containers: [container] } } } },
    { metadata: { name: 'coredns', namespace: 'kube-system' }, spec: { selector: {}, template: { spec: { containers: [{ name: 'coredns' }] } } } },
  ] as never;
  const topology = buildTopology(s);
  const kube = emptyKubeEvidence(ONSET, 'https://k8s');
  kube.target = { kind: 'Deployment', namespace: 'payments', name: 'payments-gateway' };
  kube.workload = s.deployments[0] as never;
  kube.replicaSets = [rs('payments-gateway-new', 42, ago(23), o.nowNdots), rs('payments-gateway-old', 41, ago(60 * 24 * 9), '2')];
  const logs: LogsEvidence = {
    summaries: [
      {
        selector: '{namespace="payments"}',
        query: '{namespace="payments"}',
        range: { from: ago(60), to: ONSET },
        status: 'success',
        totalLines: 300,
        sampled: false,
        patterns: [],
        errorPatterns: [],
        newSinceOnset: o.logs === false ? [] : [{ template: LOOKUP, example: LOOKUP, count: 80, first: ago(20), level: 'error', change: { kind: 'new', countBefore: 0, countAfter: 80, perMinuteBefore: 0, perMinuteAfter: 4 } }],
        citation: { source: 'loki', ref: '{namespace="payments"}' },
      },
    ],
  };
  return { alert: { labels: {}, labelValues: [] }, onset: ONSET, kube, logs, changes: [], cluster: { snapshot: s, topology, walk: { subjects: [], starts: [], reached: new Map(), candidates: [] }, subjects: [] } } as unknown as TriageInput;
}

describe('dns-search-path', () => {
  it('blames the rollout that raised ndots, with the failing lookup, and clears the host and the cluster DNS', () => {
    const [origin, host, dns] = dnsSearchPath.analyze(input());
    expect(origin).toMatchObject({
      status: 'supported',
      family: 'dns-failure',
      component: { kind: 'Deployment', namespace: 'payments', name: 'payments-gateway' },
      facts: { failingLookup: 'api.stripe.com', ndots: 5, previousNdots: 2, manager: 'helm', changedAt: ago(23).toISOString(), revision: 42, previousRevision: 41 },
      mitigation: { action: 'rollout_undo', params: { toRevision: 41 } },
      consequences: [{ kind: 'Deployment', namespace: 'kube-system', name: 'coredns' }],
    });
    expect(host).toMatchObject({ status: 'ruled_out', component: { kind: 'ExternalService', name: 'api.stripe.com' } });
    expect(dns).toMatchObject({ status: 'ruled_out', component: { kind: 'Deployment', namespace: 'kube-system', name: 'coredns' } });
  });

  it('says nothing when the new revision kept ndots, or nothing shows the lookups failing', () => {
    expect(dnsSearchPath.analyze(input({ nowNdots: '2' }))).toEqual([]);
    expect(dnsSearchPath.analyze(input({ logs: false }))).toEqual([]);
  });
});

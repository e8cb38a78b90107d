/**
 * load-spike: a dependency's request rate triples after a client's rollout (a timeout cut with
 * retries: a retry storm). Localised to the client, with its rollout to undo; the rise is read at its
 * peak (a rollout raises it in steps), and the client is marked as overloading the dependency.
 */
import type { V1Deployment, V1ReplicaSet } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { emptyKubeEvidence, type KubeEvidence } from '../../src/evidence/kubernetes/gather.js';
import type { MetricSummary } from '../../src/evidence/prometheus/types.js';
import { buildTopology } from '../../src/topology/graph.js';
import { emptySnapshot } from '../../src/topology/snapshot.js';
import type { TriageInput } from '../../src/triage/analyzer.js';
import { loadSpike } from '../../src/triage/analyzers/load-spike.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const at = (min: number) => new Date(ONSET.getTime() + min * 60_000);

function summary(id: string, unit: string, before: number, step: number, peak: number, startMin: number): MetricSummary {
  return {
    id,
    title: id,
    unit,
    badWhen: 'high',
    query: `q-${id}`,
    range: { from: at(-60), to: ONSET },
    stepSeconds: 30,
    status: 'success',
    series: [{ metric: {}, points: 120, nonFinite: 0, from: at(-60), to: ONSET, first: before, last: peak, min: before, max: peak, mean: (before + peak) / 2, baseline: { median: before, mad: before / 20 }, changePoints: [{ at: at(startMin), before, after: step }], deviationStart: at(startMin), deviationDirection: 'up' }],
    citation: { source: 'prometheus', ref: `q-${id}` },
  };
}

const dep = (name: string, env: { name: string; value: string }[] = []): V1Deployment => ({ metadata: { name, namespace: 'shop', uid: `uid-${name}`, annotations: { 'deployment.kubernetes.io/revision': name === 'checkout' ? '31' : '7' } }, spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name, image: `reg/${name}:1`, env }] } } } });
const rs = (owner: string, rev: number, createdMin: number): V1ReplicaSet => ({ metadata: { name: `${owner}-${rev}abcd`, namespace: 'shop', creationTimestamp: at(createdMin), annotations: { 'deployment.kubernetes.io/revision': String(rev) }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: owner, uid: `uid-${owner}`, controller: true }] }, spec: { selector: {}, template: { spec: { containers: [{ name: owner, image: `reg/${owner}:1` }] } } } });

function world(clientRolloutMin: number) {
  const s = emptySnapshot();
  s.deployments = [dep('inventory'), dep('checkout', [{ name: 'INVENTORY_URL', value: 'http://inventory.shop.svc:8080' }])];
  s.services = [{ metadata: { name: 'inventory', namespace: 'shop' }, spec: { selector: { app: 'inventory' } } }];
  s.replicaSets = [rs('checkout', 30, -3000), rs('checkout', 31, clientRolloutMin), rs('inventory', 7, -120)];
  const topology = buildTopology(s);
  const kube = (name: string): KubeEvidence => ({ ...emptyKubeEvidence(ONSET, ''), target: { kind: 'Deployment', namespace: 'shop', name }, workload: s.deployments.find((d) => d.metadata?.name === name)!, replicaSets: s.replicaSets.filter((r) => r.metadata?.name?.startsWith(name)), services: name === 'inventory' ? [{ service: s.services[0]! }] : [], dependents: name === 'inventory' ? [{ kind: 'Deployment', name: 'checkout', via: 'env INVENTORY_URL' }] : [] });
  const cluster = { snapshot: s, topology, walk: { subjects: [], starts: [], reached: new Map(), candidates: [] }, subjects: [] };
  const inventory: TriageInput = { alert: { labels: {}, labelValues: [] } as never, onset: ONSET, kube: kube('inventory'), changes: [], metrics: { summaries: [summary('request_rate', 'req/s', 150, 260, 450, -18), summary('latency_p99', 'seconds', 0.3, 2.1, 4.3, -17)] }, cluster };
  const checkout: TriageInput = { alert: { labels: {}, labelValues: [] } as never, onset: ONSET, kube: kube('checkout'), changes: [], cluster };
  (cluster as { inputs?: TriageInput[] }).inputs = [inventory, checkout];
  return inventory;
}

describe('load-spike', () => {
  it('localises a tripled request rate to the caller rolled out just before, at its peak, with the rollout to undo', () => {
    const [f] = loadSpike.analyze(world(-20));
    expect(f).toMatchObject({ status: 'supported', component: { kind: 'Deployment', namespace: 'shop', name: 'checkout' }, facts: { metric: 'request_rate', before: 150, after: 450, ratio: 3, client: 'checkout', overloads: 'inventory' }, mitigation: { action: 'rollout_undo', target: { name: 'checkout' }, params: { toRevision: 30 } } });
    expect(f!.affected).toEqual(expect.arrayContaining([{ kind: 'Deployment', namespace: 'shop', name: 'inventory' }, { kind: 'Service', namespace: 'shop', name: 'inventory' }]));
  });

  it('finds the client\'s previous revision in the cluster\'s ReplicaSets when the client is no candidate', () => {
    const input = world(-20);
    (input.cluster as { inputs?: TriageInput[] }).inputs = [input];
    const [f] = loadSpike.analyze(input);
    expect(f).toMatchObject({ component: { name: 'checkout' }, mitigation: { action: 'rollout_undo', params: { toRevision: 30 } } });
  });

  it('stays on the saturated workload, with no mitigation, when no caller changed in the hour before', () => {
    const [f] = loadSpike.analyze(world(-300));
    expect(f).toMatchObject({ component: { name: 'inventory' }, facts: { ratio: 3 } });
    expect(f!.mitigation).toBeUndefined();
  });
});

// topic-config: a hand edit of a KafkaTopic's retention below what a lagging consumer needs is the
// origin once the consumer logs its offset reset after the edit; before it does, the edit is only open.
import { describe, expect, it } from 'vitest';
import { emptyKubeEvidence } from '../../../src/evidence/kubernetes/gather.js';
import type { ClusterTriageInput, TriageInput } from '../../../src/triage/analyzer.js';
import { topicConfig } from '../../../src/triage/cluster/topic-config.js';
import { buildTopology, nodeId } from '../../../src/topology/graph.js';
import { emptySnapshot, summariseConfigMap, topicNames } from '../../../src/topology/snapshot.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const ago = (min: number) => new Date(ONSET.getTime() - min * 60_000);
const RESET = '[Consumer clientId=consumer-ledger-writer-1, groupId=ledger-writer] Fetch position FetchPosition{offset=20198733} is out of range for partition payments.events-3, resetting offset';

function world(opts: { after?: string; logs?: boolean } = {}): ClusterTriageInput {
  const s = emptySnapshot();
  s.custom['KafkaTopic'] = [
    {
      apiVersion: 'kafka.strimzi.io/v1beta2',
      kind: 'KafkaTopic',
      metadata: {
        name: 'payments-events',
        namespace: 'kafka',
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ spec: { topicName: 'payments.events', config: { 'retention.ms': '604800000' } } }) },
        managedFields: [
          { manager: 'kubectl-client-side-apply', operation: 'Update', time: ago(60 * 24 * 120), fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:config': { 'f:cleanup.policy': {} } } } },
          { manager: 'kubectl-edit', operation: 'Update', time: ago(47), fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:config': { 'f:retention.ms': {} } } } },
        ],
      },
      spec: { topicName: 'payments.events', config: { 'retention.ms': opts.after ?? '3600000' } },
    },
  ];
  s.deployments = [{ metadata: { name: 'ledger-writer', namespace: 'ledger' }, spec: { template: { metadata: { labels: { app: 'ledger-writer' } }, spec: { containers: [{ name: 'w' }], volumes: [{ name: 'c', configMap: { name: 'ledger-writer-config' } }] } } } }] as never;
  s.configMaps = [summariseConfigMap({ metadata: { name: 'ledger-writer-config', namespace: 'ledger' }, data: { 'application.yaml': 'ledger:\n  topic: payments.events\n' } }, topicNames(s.custom))];
  const topology = buildTopology(s);
  const kube = { ...emptyKubeEvidence(ONSET, 'https://k8s'), target: { kind: 'Deployment' as const, namespace: 'ledger', name: 'ledger-writer' } };
  if (opts.logs !== false) kube.containerLogs = [{ pod: 'ledger-writer-7f6d-4hq9t', container: 'w', previous: false, running: true, patterns: [{ template: RESET, example: RESET, count: 6, first: ago(44) }], tail: [] }];
  const consumer = { alert: { labels: {}, labelValues: [] }, onset: ONSET, kube } as unknown as TriageInput;
  const reached = new Map([[nodeId({ kind: 'KafkaTopic', namespace: 'kafka', name: 'payments-events' }), { hops: 1 }]]) as never;
  return { alert: { labels: {}, labelValues: [] } as never, onset: ONSET, cluster: { snapshot: s, topology, walk: { subjects: [], starts: [], reached, candidates: [] }, subjects: [] }, inputs: [consumer], changes: [], metrics: [], jobs: [] };
}

describe('topic-config', () => {
  it('blames the KafkaTopic edit once its consumer reset its offset after it', () => {
    const [f] = topicConfig.analyze(world());
    expect(f).toMatchObject({
      status: 'supported',
      family: 'config-change',
      component: { kind: 'KafkaTopic', namespace: 'kafka', name: 'payments-events' },
      facts: { object: 'KafkaTopic/payments-events', topic: 'payments.events', keys: 'retention.ms', before: '604800000', after: '3600000', editor: 'kubectl-edit', changedAt: ago(47).toISOString() },
      affected: [{ kind: 'KafkaTopic', namespace: 'kafka', name: 'payments-events' }, { kind: 'Deployment', namespace: 'ledger', name: 'ledger-writer' }],
    });
    expect(f!.mitigation).toBeUndefined();
    expect(f!.supporting.some((e) => e.kind === 'log' && /out of range/.test(e.summary))).toBe(true);
  });

  it('leaves the edit open while no client shows its effect', () => {
    expect(topicConfig.analyze(world({ logs: false }))[0]?.status).toBe('open');
  });

  it('says nothing about a retention raised', () => {
    expect(topicConfig.analyze(world({ after: '1209600000' }))).toEqual([]);
  });
});

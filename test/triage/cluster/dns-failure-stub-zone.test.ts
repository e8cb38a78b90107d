/**
 * One workload, one name: lookups of `fraud-check.corp.internal` time out right after a Corefile edit,
 * and CoreDNS itself logs its upstream failing for that name (a stub zone forwarding to a dead
 * resolver). That is the Corefile's doing, not a single app's typo: dns-failure on the ConfigMap.
 */
import { describe, expect, it } from 'vitest';
import { emptyKubeEvidence, type KubeEvidence } from '../../../src/evidence/kubernetes/gather.js';
import type { ContainerLogs } from '../../../src/evidence/kubernetes/surroundings.js';
import type { ClusterTriageInput, TriageInput } from '../../../src/triage/analyzer.js';
import { dnsFailure } from '../../../src/triage/cluster/dns-failure.js';
import { buildTopology } from '../../../src/topology/graph.js';
import { emptySnapshot, type ClusterSnapshot } from '../../../src/topology/snapshot.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const at = (min: number) => new Date(ONSET.getTime() + min * 60_000);
const APP = 'Post "https://fraud-check.corp.internal/v2/score": dial tcp: lookup fraud-check.corp.internal on 172.20.0.10:53: read udp 10.0.36.114:44871->172.20.0.10:53: i/o timeout';
const SERVER = '[ERROR] plugin/errors: 2 fraud-check.corp.internal. A: read udp 10.0.41.88:52918->10.50.0.2:53: i/o timeout';

const logs = (pod: string, container: string, line: string): ContainerLogs => ({ pod, container, previous: false, running: true, patterns: [{ template: line, example: line, count: 40, first: at(-12), last: at(0), level: 'error' }], tail: [line] });
const candidate = (ns: string, name: string, l: ContainerLogs[]): TriageInput => {
  const kube: KubeEvidence = { ...emptyKubeEvidence(ONSET, ''), target: { kind: 'Deployment', namespace: ns, name }, containerLogs: l };
  return { alert: { labels: {}, labelValues: [] } as never, onset: ONSET, kube, changes: [] };
};

function world(o: { edited?: boolean; serverLogs?: boolean }): ClusterTriageInput {
  const edit = at(-14);
  const snapshot: ClusterSnapshot = {
    ...emptySnapshot(),
    readAt: ONSET,
    configMaps: [{ metadata: { name: 'coredns', namespace: 'kube-system', managedFields: o.edited === false ? [] : [{ manager: 'kubectl-edit', operation: 'Update', time: edit, fieldsV1: { 'f:data': { 'f:Corefile': {} } } }] }, keys: ['Corefile'], hosts: [] }] as never,
  };
  const inputs = [candidate('payments', 'payments-api', [logs('payments-api-6b9f-d7kzp', 'payments-api', APP)]), ...(o.serverLogs === false ? [] : [candidate('kube-system', 'coredns', [logs('coredns-76f7-8nq4v', 'coredns', SERVER)])])];
  return { alert: { labels: {}, labelValues: [] } as never, onset: ONSET, cluster: { snapshot, topology: buildTopology(snapshot), walk: { subjects: [], starts: [], reached: new Map(), candidates: [] }, subjects: [] }, inputs, changes: [], metrics: [], jobs: [] };
}

describe('dns-failure: one name broken by a Corefile edit', () => {
  it('localises to the CoreDNS ConfigMap when CoreDNS logs its upstream failing for that name', () => {
    const [f] = dnsFailure.analyze(world({}));
    expect(f).toMatchObject({ status: 'supported', component: { kind: 'ConfigMap', namespace: 'kube-system', name: 'coredns' }, facts: { key: 'Corefile', manager: 'kubectl-edit', failingLookup: 'fraud-check.corp.internal' } });
    expect(f!.title).toContain('lookups of fraud-check.corp.internal fail');
    expect(f!.supporting.some((e) => e.summary.includes('CoreDNS cannot get an answer for it upstream'))).toBe(true);
  });

  it('says nothing for one app and one name without CoreDNS\'s own errors or without an edit', () => {
    expect(dnsFailure.analyze(world({ serverLogs: false }))).toEqual([]);
    expect(dnsFailure.analyze(world({ edited: false }))).toEqual([]);
  });
});

/**
 * Lookups that fail only from pods on one node (its conntrack full, its CNI broken) while the same
 * workloads resolve elsewhere and CoreDNS is ready: dns-failure raised and ruled out, naming the node.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { emptyKubeEvidence, type KubeEvidence } from '../../../src/evidence/kubernetes/gather.js';
import type { ContainerLogs } from '../../../src/evidence/kubernetes/surroundings.js';
import type { ClusterTriageInput, TriageInput } from '../../../src/triage/analyzer.js';
import { dnsFailure } from '../../../src/triage/cluster/dns-failure.js';
import { buildTopology } from '../../../src/topology/graph.js';
import { emptySnapshot, type ClusterSnapshot } from '../../../src/topology/snapshot.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const at = (min: number) => new Date(ONSET.getTime() + min * 60_000);
const LINE = 'WARN pricing lookup failed: java.net.UnknownHostException: pricing.shop.svc.cluster.local: Temporary failure in name resolution';
const LINE2 = 'WARN catalog call failed: java.net.UnknownHostException: catalog.shop.svc.cluster.local: Temporary failure in name resolution';

const pod = (ns: string, name: string, node: string, ready = true): V1Pod => ({ metadata: { name, namespace: ns }, spec: { nodeName: node, containers: [] }, status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] } });
const logs = (podName: string, lines: string[]): ContainerLogs => ({ pod: podName, container: 'storefront', previous: false, running: true, patterns: lines.map((l) => ({ template: l, example: l, count: 30, first: at(-10), last: at(0), level: 'warn' })), tail: lines });

function candidate(pods: V1Pod[], containerLogs: ContainerLogs[]): TriageInput {
  const kube: KubeEvidence = { ...emptyKubeEvidence(ONSET, ''), target: { kind: 'Deployment', namespace: 'shop', name: 'storefront' }, pods, containerLogs };
  return { alert: { labels: {}, labelValues: [] } as unknown as TriageInput['alert'], onset: ONSET, kube, changes: [] };
}

function cluster(inputs: TriageInput[], pods: V1Pod[]): ClusterTriageInput {
  const snapshot: ClusterSnapshot = { ...emptySnapshot(), readAt: ONSET, pods, services: [{ metadata: { name: 'pricing', namespace: 'shop' } }, { metadata: { name: 'catalog', namespace: 'shop' } }] };
  return { alert: { labels: {}, labelValues: [] } as unknown as ClusterTriageInput['alert'], onset: ONSET, cluster: { snapshot, topology: buildTopology(snapshot), walk: { subjects: [], starts: [], reached: new Map(), candidates: [] }, subjects: [] }, inputs, changes: [], metrics: [], jobs: [] };
}

const store = [pod('shop', 'storefront-a', 'w04'), pod('shop', 'storefront-b', 'w01')];
const dns = [pod('kube-system', 'coredns-76f75df574-8nq4v', 'w01'), pod('kube-system', 'coredns-76f75df574-z6tkc', 'w02')];

describe('dns-failure confined to one node', () => {
  it('rules DNS out when only the pods on one node fail and their siblings elsewhere resolve', () => {
    const [f, ...rest] = dnsFailure.analyze(cluster([candidate(store, [logs('storefront-a', [LINE, LINE2])])], [...store, ...dns]));
    expect(rest).toEqual([]);
    expect(f).toMatchObject({ family: 'dns-failure', status: 'ruled_out', facts: { node: 'w04' } });
    expect(f!.reason).toMatch(/only pods on w04 fail to resolve/);
  });

  it('does not when pods on several nodes fail, or CoreDNS has no ready pod', () => {
    const both = dnsFailure.analyze(cluster([candidate(store, [logs('storefront-a', [LINE, LINE2]), logs('storefront-b', [LINE, LINE2])])], [...store, ...dns]));
    expect(both.some((f) => f.facts?.['node'])).toBe(false);
    const down = [pod('kube-system', 'coredns-76f75df574-8nq4v', 'w01', false)];
    const none = dnsFailure.analyze(cluster([candidate(store, [logs('storefront-a', [LINE, LINE2])])], [...store, ...down]));
    expect(none.some((f) => f.facts?.['node'])).toBe(false);
  });
});

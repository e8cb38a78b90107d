/**
 * A workload whose calls fail TLS verification while it trusts a CA bundle of its own (a mounted
 * ConfigMap of .pem keys): tls-certificate localised to that bundle, every reader in scope.
 */
import { describe, expect, it } from 'vitest';
import type { ClusterTriageInput, TriageInput } from '../../../src/triage/analyzer.js';
import { untrustedCa } from '../../../src/triage/cluster/untrusted-ca.js';
import { buildTopology } from '../../../src/topology/graph.js';
import { emptySnapshot } from '../../../src/topology/snapshot.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const LINE = `{"level":"warning","event":"paygate request failed","invoice_id":"inv_1","attempt":3,"max_attempts":5,"backoff_s":60,"error":"SSLError(MaxRetryError(\\"HTTPSConnectionPool(host='api.paygate.example', port=443): Max retries exceeded with url: /v2/charges (Caused by SSLError(SSLCertVerificationError(1, '[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: unable to get local issuer certificate')))\\")"}`;

function input(mountBundle: boolean, tail: string[]): ClusterTriageInput {
  const s = emptySnapshot();
  const dep = (name: string) => ({ metadata: { name, namespace: 'billing' }, spec: { template: { spec: { containers: [{ name }], volumes: mountBundle ? [{ name: 'trust', configMap: { name: 'billing-ca-bundle' } }] : [] } } } });
  s.deployments = [dep('billing-worker'), dep('payout-worker')] as never;
  s.configMaps = [{ metadata: { name: 'billing-ca-bundle', namespace: 'billing' }, keys: ['ca-bundle.pem'], hosts: [] }];
  const worker = { kube: { target: { kind: 'Deployment', namespace: 'billing', name: 'billing-worker' }, containerLogs: [{ pod: 'billing-worker-1', container: 'worker', previous: false, patterns: [], tail }] } } as unknown as TriageInput;
  return { alert: { labels: {}, labelValues: [] } as never, onset: ONSET, cluster: { snapshot: s, topology: buildTopology(s), walk: { subjects: [], starts: [], reached: new Map(), candidates: [] }, subjects: [] }, inputs: [worker], changes: [], metrics: [], jobs: [] };
}

describe('untrusted-ca', () => {
  it('blames the mounted CA bundle, names the host, and puts every reader in scope', () => {
    const [f] = untrustedCa.analyze(input(true, [LINE]));
    expect(f).toMatchObject({ family: 'tls-certificate', status: 'supported', component: { kind: 'ConfigMap', namespace: 'billing', name: 'billing-ca-bundle' }, facts: { hosts: 'api.paygate.example', bundle: 'ConfigMap/billing-ca-bundle' } });
    expect(f!.affected!.map((a) => a.name).sort()).toEqual(['billing-worker', 'payout-worker']);
  });

  it('says nothing without a bundle of its own, or without verification failures', () => {
    expect(untrustedCa.analyze(input(false, [LINE]))).toEqual([]);
    expect(untrustedCa.analyze(input(true, ['{"level":"info","event":"invoice charged"}']))).toEqual([]);
  });
});

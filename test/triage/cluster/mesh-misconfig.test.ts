/**
 * mesh-misconfig on a DestinationRule that turns TLS off towards a Service whose namespace (or the mesh)
 * requires STRICT mTLS: localised to the DestinationRule, with the PeerAuthentication that makes it break.
 */
import { describe, expect, it } from 'vitest';
import type { ClusterTriageInput } from '../../../src/triage/analyzer.js';
import { meshMisconfig } from '../../../src/triage/cluster/mesh-misconfig.js';
import { buildTopology, nodeId } from '../../../src/topology/graph.js';
import { emptySnapshot, type CustomObject } from '../../../src/topology/snapshot.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const obj = (kind: string, namespace: string, name: string, spec: Record<string, unknown>): CustomObject => ({ apiVersion: 'v1', kind, metadata: { name, namespace }, spec }) as CustomObject;

function input(peer: CustomObject[], tls = 'DISABLE', onPath = true): ClusterTriageInput {
  const s = emptySnapshot();
  s.services = [{ metadata: { name: 'ratings', namespace: 'bookinfo' }, spec: { selector: { app: 'ratings' } } }] as never;
  s.custom['DestinationRule'] = [obj('DestinationRule', 'bookinfo', 'ratings', { host: 'ratings.bookinfo.svc.cluster.local', trafficPolicy: { tls: { mode: tls } } })];
  s.custom['PeerAuthentication'] = peer;
  const topology = buildTopology(s);
  const reached = new Map(onPath ? [[nodeId({ kind: 'Service', namespace: 'bookinfo', name: 'ratings' }), { hops: 2 }]] : []) as never;
  return { alert: { labels: {}, labelValues: [] } as never, onset: ONSET, cluster: { snapshot: s, topology, walk: { subjects: [], starts: [], reached, candidates: [] }, subjects: [] }, inputs: [], changes: [], metrics: [], jobs: [] };
}
const strict = (ns: string) => obj('PeerAuthentication', ns, 'default', { mtls: { mode: 'STRICT' } });

describe('mesh-misconfig: TLS disabled towards a STRICT mTLS destination', () => {
  it('blames the DestinationRule when the namespace requires STRICT mTLS', () => {
    const [f] = meshMisconfig.analyze(input([strict('bookinfo')]));
    expect(f).toMatchObject({ status: 'supported', component: { kind: 'DestinationRule', namespace: 'bookinfo', name: 'ratings' }, facts: { field: 'spec.trafficPolicy.tls.mode', value: 'DISABLE' }, affected: [{ kind: 'Service', namespace: 'bookinfo', name: 'ratings' }] });
    expect(f!.supporting.map((e) => e.summary)).toContain('PeerAuthentication bookinfo/default: mtls.mode = STRICT');
  });

  it('also when only the mesh-wide policy in istio-system is STRICT', () => {
    expect(meshMisconfig.analyze(input([strict('istio-system')]))).toHaveLength(1);
  });

  it('says nothing when the namespace is PERMISSIVE (its own policy wins over the mesh), TLS is on, or the Service is off the path', () => {
    expect(meshMisconfig.analyze(input([strict('istio-system'), obj('PeerAuthentication', 'bookinfo', 'default', { mtls: { mode: 'PERMISSIVE' } })]))).toEqual([]);
    expect(meshMisconfig.analyze(input([strict('bookinfo')], 'ISTIO_MUTUAL'))).toEqual([]);
    expect(meshMisconfig.analyze(input([strict('bookinfo')], 'DISABLE', false))).toEqual([]);
  });
});

describe('mesh-misconfig: a namespace that lost its sidecar injection label', () => {
  function world(labels: Record<string, string>, containers: string[]): ClusterTriageInput {
    const s = emptySnapshot();
    s.namespaces = [
      { metadata: { name: 'shop', labels: { 'istio-injection': 'enabled' } } },
      { metadata: { name: 'catalog', labels, managedFields: [{ manager: 'argocd-controller', operation: 'Apply', time: new Date(ONSET.getTime() - 2 * 3600_000), fieldsV1: { 'f:metadata': { 'f:labels': { 'f:team': {} } } } }] } },
    ] as never;
    s.deployments = [{ metadata: { name: 'catalog-api', namespace: 'catalog' }, spec: { selector: { matchLabels: { app: 'catalog-api' } }, template: { metadata: { labels: { app: 'catalog-api' } }, spec: { containers: [{ name: 'catalog-api' }] } } } }] as never;
    s.replicaSets = [{ metadata: { name: 'catalog-api-6b9d7c5f48', namespace: 'catalog', ownerReferences: [{ kind: 'Deployment', name: 'catalog-api', controller: true }] } }] as never;
    s.pods = [{ metadata: { name: 'catalog-api-6b9d7c5f48-v2k7p', namespace: 'catalog', labels: { app: 'catalog-api' }, ownerReferences: [{ kind: 'ReplicaSet', name: 'catalog-api-6b9d7c5f48', controller: true }] }, spec: { containers: containers.map((name) => ({ name })) }, status: { phase: 'Running' } }] as never;
    s.custom['PeerAuthentication'] = [strict('istio-system')];
    const topology = buildTopology(s);
    const reached = new Map([[nodeId({ kind: 'Deployment', namespace: 'catalog', name: 'catalog-api' }), { hops: 1 }]]) as never;
    return { alert: { labels: {}, labelValues: [] } as never, onset: ONSET, cluster: { snapshot: s, topology, walk: { subjects: [], starts: [], reached, candidates: [] }, subjects: [] }, inputs: [], changes: [], metrics: [], jobs: [] };
  }

  it('localises to the Namespace, with who last wrote its labels, when its pods run without the sidecar', () => {
    const [f] = meshMisconfig.analyze(world({ team: 'catalog' }, ['catalog-api']));
    expect(f).toMatchObject({ component: { kind: 'Namespace', name: 'catalog' }, facts: { object: 'Namespace/catalog', field: 'metadata.labels.istio-injection', manager: 'argocd-controller' }, affected: [{ kind: 'Deployment', namespace: 'catalog', name: 'catalog-api' }] });
  });

  it('says nothing when the namespace is injected, opted out, or the pods have their sidecar', () => {
    expect(meshMisconfig.analyze(world({ 'istio-injection': 'enabled' }, ['catalog-api']))).toEqual([]);
    expect(meshMisconfig.analyze(world({ 'istio-injection': 'disabled' }, ['catalog-api']))).toEqual([]);
    expect(meshMisconfig.analyze(world({ team: 'catalog' }, ['catalog-api', 'istio-proxy']))).toEqual([]);
  });
});

describe('mesh-misconfig: outlier detection that can eject every host', () => {
  const od = (o: Record<string, unknown>, changedMinAgo?: number): ClusterTriageInput => {
    const s = emptySnapshot();
    s.services = [{ metadata: { name: 'product-catalog', namespace: 'shop' }, spec: { selector: { app: 'product-catalog' } } }] as never;
    const dr = obj('DestinationRule', 'shop', 'product-catalog', { host: 'product-catalog', trafficPolicy: { outlierDetection: o } });
    if (changedMinAgo !== undefined) dr.metadata.managedFields = [{ manager: 'kubectl-client-side-apply', operation: 'Update', time: new Date(ONSET.getTime() - changedMinAgo * 60_000), fieldsV1: { 'f:spec': { 'f:trafficPolicy': { 'f:outlierDetection': {} } } } }] as never;
    s.custom['DestinationRule'] = [dr];
    const topology = buildTopology(s);
    const reached = new Map([[nodeId({ kind: 'Service', namespace: 'shop', name: 'product-catalog' }), { hops: 1 }]]) as never;
    return { alert: { labels: {}, labelValues: [] } as never, onset: ONSET, cluster: { snapshot: s, topology, walk: { subjects: [], starts: [], reached, candidates: [] }, subjects: [] }, inputs: [], changes: [], metrics: [], jobs: [] };
  };

  it('blames the DestinationRule edited before the onset to eject on one error, up to 100% of hosts', () => {
    const [f] = meshMisconfig.analyze(od({ consecutive5xxErrors: 1, interval: '1s', baseEjectionTime: '15m', maxEjectionPercent: 100 }, 14));
    expect(f).toMatchObject({ status: 'supported', component: { kind: 'DestinationRule', namespace: 'shop', name: 'product-catalog' }, facts: { field: 'spec.trafficPolicy.outlierDetection', manager: 'kubectl-client-side-apply' } });
    expect(f!.mechanism).toMatch(/no healthy upstream/);
  });

  it('leaves Istio\'s default ceiling (10%), a tolerant threshold and an old quiet policy alone', () => {
    expect(meshMisconfig.analyze(od({ consecutive5xxErrors: 1 }, 14))).toEqual([]);
    expect(meshMisconfig.analyze(od({ consecutive5xxErrors: 5, maxEjectionPercent: 100 }, 14))).toEqual([]);
    expect(meshMisconfig.analyze(od({ consecutive5xxErrors: 1, maxEjectionPercent: 100 }, 60 * 24 * 30))).toEqual([]);
  });
});

describe('mesh-misconfig: an AuthorizationPolicy that refuses a caller', () => {
  function world(principals: string[], writtenMinAgo = 7): ClusterTriageInput {
    const s = emptySnapshot();
    const dep = (ns: string, name: string) => ({ metadata: { name, namespace: ns }, spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { serviceAccountName: name, containers: [{ name }] } } } });
    s.deployments = [dep('checkout', 'checkout'), dep('orders', 'orders')] as never;
    s.services = [{ metadata: { name: 'orders', namespace: 'orders' }, spec: { selector: { app: 'orders' } } }, { metadata: { name: 'checkout', namespace: 'checkout' }, spec: { selector: { app: 'checkout' } } }] as never;
    const written = new Date(ONSET.getTime() - writtenMinAgo * 60_000);
    s.custom['AuthorizationPolicy'] = [{ apiVersion: 'security.istio.io/v1', kind: 'AuthorizationPolicy', metadata: { name: 'orders-allow-callers', namespace: 'orders', creationTimestamp: written, managedFields: [{ manager: 'argocd-controller', operation: 'Update', time: written, fieldsV1: { 'f:spec': { 'f:rules': {} } } }] }, spec: { selector: { matchLabels: { app: 'orders' } }, action: 'ALLOW', rules: [{ from: [{ source: { principals } }] }] } } as never];
    const line = 'POST /v1/orders failed: 403 Forbidden "RBAC: access denied"';
    const kube = { target: { kind: 'Deployment', namespace: 'checkout', name: 'checkout' }, containerLogs: [{ pod: 'checkout-7c9d-abc12', container: 'checkout', previous: false, running: true, patterns: [{ template: line, example: line, count: 120, first: new Date(ONSET.getTime() - 6 * 60_000), level: 'error' }], tail: [] }] };
    const topology = buildTopology(s);
    return { alert: { labels: {}, labelValues: [] } as never, onset: ONSET, cluster: { snapshot: s, topology, walk: { subjects: [], starts: [], reached: new Map(), candidates: [] }, subjects: [] }, inputs: [{ kube } as never], changes: [], metrics: [], jobs: [] };
  }

  it('blames an ALLOW policy written before the onset whose principals omit the refused caller', () => {
    const [f] = meshMisconfig.analyze(world(['cluster.local/ns/fulfilment/sa/fulfilment']));
    expect(f).toMatchObject({ status: 'supported', component: { kind: 'AuthorizationPolicy', namespace: 'orders', name: 'orders-allow-callers' }, facts: { object: 'AuthorizationPolicy/orders-allow-callers', value: 'missing cluster.local/ns/checkout/sa/checkout', manager: 'argocd-controller' } });
    expect(f!.affected).toEqual(expect.arrayContaining([{ kind: 'Deployment', namespace: 'checkout', name: 'checkout' }, { kind: 'Service', namespace: 'orders', name: 'orders' }]));
  });

  it('says nothing when the caller is allowed, or the policy is old', () => {
    expect(meshMisconfig.analyze(world(['cluster.local/ns/checkout/sa/checkout']))).toEqual([]);
    expect(meshMisconfig.analyze(world(['cluster.local/ns/fulfilment/sa/fulfilment'], 3 * 24 * 60))).toEqual([]);
  });
});

describe('mesh-misconfig: a STRICT PeerAuthentication meets a caller without a sidecar', () => {
  function world(o: { sidecar?: boolean; writtenMinAgo?: number; mode?: string } = {}): ClusterTriageInput {
    const s = emptySnapshot();
    const written = new Date(ONSET.getTime() - (o.writtenMinAgo ?? 34) * 60_000);
    s.services = [{ metadata: { name: 'ledger-api', namespace: 'ledger' }, spec: { selector: { app: 'ledger-api' } } }] as never;
    s.deployments = [{ metadata: { name: 'ledger-api', namespace: 'ledger' }, spec: { selector: { matchLabels: { app: 'ledger-api' } }, template: { metadata: { labels: { app: 'ledger-api' } }, spec: { containers: [{ name: 'api' }, { name: 'istio-proxy' }] } } } }] as never;
    const containers = [{ name: 'reconciler', args: ['--ledger-url=http://ledger-api.ledger.svc.cluster.local:8080'] }, ...(o.sidecar ? [{ name: 'istio-proxy' }] : [])];
    s.cronJobs = [{ metadata: { name: 'payout-reconciler', namespace: 'batch' }, spec: { schedule: '*/20 * * * *', jobTemplate: { spec: { template: { spec: { containers } } } } } }] as never;
    s.custom['PeerAuthentication'] = [{ apiVersion: 'security.istio.io/v1', kind: 'PeerAuthentication', metadata: { name: 'default', namespace: 'ledger', creationTimestamp: written, managedFields: [{ manager: 'argocd-controller', operation: 'Apply', time: written, fieldsV1: { 'f:spec': { 'f:mtls': { 'f:mode': {} } } } }] }, spec: { mtls: { mode: o.mode ?? 'STRICT' } } } as never];
    const line = "ERROR payout_reconciler: ledger fetch failed: ('Connection aborted.', ConnectionResetError(104, 'Connection reset by peer'))";
    const pod = { metadata: { name: 'payout-reconciler-29412377-k2x9p', namespace: 'batch' }, spec: { containers } };
    const jobs = [{ owner: { kind: 'CronJob' as const, namespace: 'batch', name: 'payout-reconciler' }, jobs: [], pods: [pod], logs: [{ pod: 'payout-reconciler-29412377-k2x9p', container: 'reconciler', previous: false, patterns: [{ template: line, example: line, count: 6, level: 'error', first: new Date(ONSET.getTime() - 8 * 60_000) }], tail: [] }] }] as never;
    const topology = buildTopology(s);
    return { alert: { labels: {}, labelValues: [] } as never, onset: ONSET, cluster: { snapshot: s, topology, walk: { subjects: [], starts: [], reached: new Map(), candidates: [] }, subjects: [] }, inputs: [], changes: [], metrics: [], jobs };
  }

  it('localises to the PeerAuthentication, with who wrote it, the refused CronJob and the Service it calls in scope', () => {
    const [f, ...rest] = meshMisconfig.analyze(world());
    expect(rest).toEqual([]);
    expect(f).toMatchObject({
      status: 'supported',
      component: { kind: 'PeerAuthentication', namespace: 'ledger', name: 'default' },
      facts: { object: 'PeerAuthentication/default', field: 'spec.mtls.mode', value: 'STRICT', manager: 'argocd-controller' },
    });
    expect(f!.affected).toEqual(expect.arrayContaining([{ kind: 'CronJob', namespace: 'batch', name: 'payout-reconciler' }, { kind: 'Service', namespace: 'ledger', name: 'ledger-api' }, { kind: 'Deployment', namespace: 'ledger', name: 'ledger-api' }]));
    expect(f!.supporting.some((e) => e.kind === 'log' && e.summary.includes('Connection reset by peer'))).toBe(true);
  });

  it('says nothing when the caller has its sidecar, the policy is PERMISSIVE, or it was written days ago', () => {
    expect(meshMisconfig.analyze(world({ sidecar: true }))).toEqual([]);
    expect(meshMisconfig.analyze(world({ mode: 'PERMISSIVE' }))).toEqual([]);
    expect(meshMisconfig.analyze(world({ writtenMinAgo: 3 * 24 * 60 }))).toEqual([]);
  });
});

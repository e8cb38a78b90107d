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

// ingress-misroute on a Gateway API HTTPRoute: a backendRef naming a port its Service does not expose
// (the container port written for the Service port) is localised to the route, with the expected
// backend; an Argo CD write linked to its PR by the sync announcement proposes reverting that PR.
import { describe, expect, it } from 'vitest';
import type { RankedChange } from '../../../src/changes/types.js';
import type { ClusterTriageInput } from '../../../src/triage/analyzer.js';
import { gitSourceOf, withGitRevert } from '../../../src/triage/cluster/git-source.js';
import { ingressMisroute } from '../../../src/triage/cluster/ingress-misroute.js';
import { buildTopology, nodeId } from '../../../src/topology/graph.js';
import { emptySnapshot, type CustomObject } from '../../../src/topology/snapshot.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const ago = (min: number) => new Date(ONSET.getTime() - min * 60_000);

function route(port: number, writer = 'argocd-controller', status?: 'False'): CustomObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: {
      name: 'api',
      namespace: 'shop',
      labels: { 'argocd.argoproj.io/instance': 'shop-routes' },
      managedFields: [{ manager: writer, operation: 'Update', time: ago(8), fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:rules': {} } } }],
    },
    spec: { hostnames: ['api.shop.example.com'], rules: [{ matches: [{ path: { value: '/api/orders' } }], backendRefs: [{ name: 'orders', port }] }] },
    ...(status ? { status: { parents: [{ conditions: [{ type: 'ResolvedRefs', status, reason: 'BackendNotFound', message: `TCP Port ${port} not found on service shop/orders`, lastTransitionTime: ago(8).toISOString() }] }] } } : {}),
  };
}

function input(r: CustomObject, changes: RankedChange[] = []): ClusterTriageInput {
  const s = emptySnapshot();
  s.services = [{ metadata: { name: 'orders', namespace: 'shop' }, spec: { selector: { app: 'orders' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }, { name: 'metrics', port: 9464 }] } }] as never;
  s.custom['HTTPRoute'] = [r];
  const topology = buildTopology(s);
  const reached = new Map([[nodeId({ kind: 'HTTPRoute', namespace: 'shop', name: 'api' }), { hops: 1 }]]) as never;
  return { alert: { labels: {}, labelValues: [] } as never, onset: ONSET, cluster: { snapshot: s, topology, walk: { subjects: [], starts: [], reached, candidates: [] }, subjects: [] }, inputs: [], changes, metrics: [], jobs: [] };
}

const change = (c: Partial<RankedChange>): RankedChange => ({ actor: 'x', kind: 'pr_merged', target: { kind: 'Repository', name: 'acme/gitops' }, source: 'github', summary: '', citation: { source: 'github', ref: '' }, score: 1, why: [], at: ago(10), ...c });
const pr611 = change({ summary: '#611 "orders: align route ports with container ports" merged by priya', citation: { source: 'github', ref: '/repos/acme/gitops/pulls/611' }, after: 'c41d7e9' });
const pr612 = change({ summary: '#612 "catalog: raise cache TTL" merged by mei', citation: { source: 'github', ref: '/repos/acme/gitops/pulls/612' }, at: ago(9) });
const sync = change({ source: 'slack', kind: 'deploy', target: { kind: 'Service', name: 'shop-routes' }, at: ago(8), after: 'c41d7e9', summary: 'Argo CD synced shop-routes to c41d7e9 (PR #611): httproute.gateway.networking.k8s.io/api configured', citation: { source: 'slack', ref: 'C1/1.2' } });

describe('ingress-misroute on an HTTPRoute', () => {
  it('names the missing Service port and the port that was meant, and reverts the PR the sync applied', () => {
    const [f] = ingressMisroute.analyze(input(route(8080, 'argocd-controller', 'False'), [pr611, pr612, sync]));
    expect(f).toMatchObject({
      status: 'supported',
      family: 'ingress-misroute',
      component: { kind: 'HTTPRoute', namespace: 'shop', name: 'api' },
      facts: { host: 'api.shop.example.com', path: '/api/orders', backend: 'orders:8080', expectedBackend: 'orders:80', manager: 'argocd-controller', pr: '611', repo: 'acme/gitops' },
      mitigation: { action: 'revert_pr', params: { repo: 'acme/gitops', number: 611 } },
    });
    expect(f!.supporting.map((e) => e.summary).join('\n')).toMatch(/ResolvedRefs=False \(BackendNotFound\)/);
  });

  it('proposes nothing it cannot back: a hand edit has no PR to revert', () => {
    const [f] = ingressMisroute.analyze(input(route(8080, 'kubectl-edit')));
    expect(f?.component).toEqual({ kind: 'HTTPRoute', namespace: 'shop', name: 'api' });
    expect(f?.mitigation).toBeUndefined();
  });

  it('says nothing when the backend port exists', () => {
    expect(ingressMisroute.analyze(input(route(80)))).toEqual([]);
  });
});

describe('gitSourceOf', () => {
  const meta = route(8080).metadata;
  it('without an announcement takes the one PR merged just before the write whose title names the object', () => {
    const titled = change({ summary: '#700 "api: move route to new gateway" merged by bob', citation: { source: 'github', ref: '/repos/acme/gitops/pulls/700' } });
    expect(gitSourceOf([titled, pr612], { kind: 'HTTPRoute', namespace: 'shop', name: 'api' }, meta, ago(8))).toMatchObject({ repo: 'acme/gitops', number: 700 });
  });
  it('ignores PRs merged after the write or long before it', () => {
    const late = change({ ...pr611, at: ago(2) });
    const old = change({ ...pr611, at: ago(90) });
    expect(gitSourceOf([late, old, { ...sync, at: ago(8) }], { kind: 'HTTPRoute', namespace: 'shop', name: 'api' }, meta, ago(8))).toBeUndefined();
  });
});

describe('withGitRevert', () => {
  it('gives a Flux-applied origin with no fix of its own the revert of the PR its sync names', () => {
    const s = emptySnapshot();
    const dr: CustomObject = {
      apiVersion: 'networking.istio.io/v1',
      kind: 'DestinationRule',
      metadata: { name: 'fares', namespace: 'booking', labels: { 'kustomize.toolkit.fluxcd.io/name': 'mesh-config' }, managedFields: [{ manager: 'kustomize-controller', operation: 'Apply', time: ago(22), fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:trafficPolicy': {} } } }] },
      spec: {},
    };
    s.custom['DestinationRule'] = [dr];
    const pr = change({ summary: '#318 "fares: eject failing pods faster (outlier detection)" merged by aylin', citation: { source: 'github', ref: '/repos/lumen/mesh-config/pulls/318' }, after: '9e4b2d1', at: ago(24) });
    const flux = change({ source: 'slack', kind: 'deploy', target: { kind: 'Service', name: 'mesh-config' }, at: ago(22), after: '9e4b2d1', summary: 'Flux applied mesh-config at 9e4b2d1: DestinationRule/booking/fares configured', citation: { source: 'slack', ref: 'C1/2.3' } });
    const origin = { key: 'mesh', analyzer: 'mesh-misconfig', status: 'supported' as const, confidence: 0.9, title: 't', mechanism: 'm', component: { kind: 'DestinationRule', namespace: 'booking', name: 'fares' }, facts: {}, supporting: [], refuting: [] };
    expect(withGitRevert(origin, s, [pr, flux], ONSET)).toMatchObject({ facts: { pr: '318', repo: 'lumen/mesh-config' }, mitigation: { action: 'revert_pr', params: { repo: 'lumen/mesh-config', number: 318 } } });
    // Without the sync naming it, and a title that does not name the object, nothing is guessed.
    expect(withGitRevert(origin, s, [pr], ONSET).mitigation).toBeUndefined();
  });
});

/**
 * The `topology` tool over the demo world (with the Kubernetes tool tests' extra objects) on the fake Kubernetes API server (RBAC enforced): the graph
 * comes from the investigation when the loop hands one over, else from a snapshot read through the same
 * reader and cached. Neighbours by edge kind in both directions, the path from the alert, bounded and
 * redacted output, and answers that tell a model what to do when it asks for something that is not there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeReader } from '../../../src/evidence/kubernetes/client.js';
import type { InvestigationScope, ToolContext, ToolResult } from '../../../src/evidence/tool.js';
import { ClusterGraphs } from '../../../src/evidence/topology/graph-source.js';
import { topologyTool } from '../../../src/evidence/topology/tools.js';
import { createRedactor } from '../../../src/redact/index.js';
import { buildTopology, Topology } from '../../../src/topology/graph.js';
import { emptySnapshot, readClusterSnapshot } from '../../../src/topology/snapshot.js';
import type { Subject } from '../../../src/topology/subjects.js';
import { walkFrom } from '../../../src/topology/walk.js';
import { startFakeKube, type FakeKube } from '../../fakes/kubernetes/server.js';
import type { Scenario } from '../../scenarios/load.js';
import { demoWorld } from '../kubernetes/world.js';

let kube: FakeKube;
let scenario: Scenario;
let reader: KubeReader;
let investigation: InvestigationScope;
const redactor = createRedactor();

beforeAll(async () => {
  // The demo world plus an Ingress in front of storefront, an HPA and a NetworkPolicy.
  const world = await demoWorld();
  scenario = world.scenario;
  kube = await startFakeKube({ objects: world.objects, logs: scenario.logs, now: () => scenario.onset });
  reader = new KubeReader(kube.kubeConfigFor('vigil-reader-token'));
  // What an investigation hands the tools: its graph, and the walk from what the alert names (here, a
  // probe on the shop's front door).
  const topology = buildTopology(await readClusterSnapshot(reader, { now: scenario.onset }));
  const subjects: Subject[] = [{ ref: { kind: 'Ingress', namespace: 'shop', name: 'shop' }, how: 'probe URL https://shop.example.com/' }];
  investigation = { onset: scenario.onset, cluster: { topology, walk: walkFrom(subjects, topology), subjects } };
});
afterAll(async () => {
  await kube?.close();
});

const ctx = (extra: Partial<ToolContext> = {}): ToolContext => ({ redactor, now: scenario.onset, ...extra });

async function run(graphs: ClusterGraphs, params: Record<string, unknown>, c: ToolContext = ctx({ investigation })): Promise<ToolResult> {
  const tool = topologyTool(graphs);
  const result = await tool.execute(tool.parameters.parse(params), c);
  expect(Buffer.byteLength(JSON.stringify('data' in result ? result.data : ''))).toBeLessThanOrEqual(16 * 1024 + 64);
  return result;
}

function data(r: ToolResult): Record<string, any> {
  if (r.status !== 'success') throw new Error(`expected success, got ${JSON.stringify(r)}`);
  return r.data as Record<string, any>;
}

describe('topology', () => {
  it("answers from the investigation's graph: neighbours by edge kind, dependents, what it would hurt, the path from the alert", async () => {
    const before = kube.requests.length;
    const r = await run(new ClusterGraphs(reader), { kind: 'deploy', namespace: 'shop', name: 'checkout' });
    // The investigation already read the cluster: the tool reads nothing.
    expect(kube.requests.length).toBe(before);
    const d = data(r);
    expect(d['component']).toBe('Deployment/shop/checkout');
    expect(d['graph']).toContain("the investigation's graph");
    expect(d['dependents']['selects']).toEqual([expect.stringMatching(/^Service\/shop\/checkout · selector /)]);
    expect(d['dependsOn']['calls']).toEqual(expect.arrayContaining([expect.stringContaining('Service/payments/payments-api · env PAYMENTS_URL')]));
    expect(d['affects']).toEqual(expect.arrayContaining(['Service/shop/checkout', 'Deployment/shop/storefront', 'Ingress/shop/shop']));
    // Ingress → storefront's Service → storefront → (env CHECKOUT_URL) checkout's Service → checkout.
    expect(d['fromAlert']['path']).toBe(
      'Ingress/shop/shop —routes [rule shop.example.com/]→ Service/shop/storefront —selects [selector app.kubernetes.io/name=storefront,app.kubernetes.io/instance=storefront]→ Deployment/shop/storefront —calls [env CHECKOUT_URL]→ Service/shop/checkout —selects [selector app.kubernetes.io/instance=checkout,app.kubernetes.io/name=checkout]→ Deployment/shop/checkout',
    );
    expect(d['fromAlert']['hops']).toBe(1);
    expect(r.status === 'success' && r.citation.ref).toMatch(/^topology Deployment\/shop\/checkout \(cluster snapshot /);
    expect(r.status === 'success' && r.evidence[0]!.summary).toContain('dependents selects 1');
  });

  it('answers a pod for its workload, filters by edge kind, and lists pods with their state', async () => {
    const d = data(await run(new ClusterGraphs(reader), { kind: 'Pod', namespace: 'shop', name: 'storefront-6b7f9c8d4-2kx8v', edges: ['calls', 'selects'] }));
    expect(d['component']).toBe('Deployment/shop/storefront');
    expect(d['note']).toContain('belongs to Deployment/shop/storefront');
    expect(Object.keys(d['dependsOn'])).toEqual(['calls']);
    expect(d['pods']).toContain('storefront-6b7f9c8d4-2kx8v Running ready restarts 0 on node-1');
    expect(d['reaches']).toEqual(['—calls→ Service/shop/checkout —selects→ Deployment/shop/checkout']);
  });

  it('without an investigation, reads one snapshot through the reader and reuses it', async () => {
    const graphs = new ClusterGraphs(reader);
    const before = kube.requests.length;
    const first = data(await run(graphs, { kind: 'Service', namespace: 'shop', name: 'checkout' }, ctx()));
    const read = kube.requests.length - before;
    expect(read).toBeGreaterThan(10);
    expect(first['graph']).toContain('a fresh cluster snapshot');
    expect(first['dependsOn']['selects']).toEqual([expect.stringMatching(/^Deployment\/shop\/checkout/)]);
    expect(first['dependents']['calls']).toEqual([expect.stringContaining('Deployment/shop/storefront · env CHECKOUT_URL')]);
    expect(first).not.toHaveProperty('fromAlert');
    await run(graphs, { kind: 'Ingress', namespace: 'shop', name: 'shop' }, ctx());
    expect(kube.requests.length - before).toBe(read);
  });

  it('tells the model what it may have meant when the component is not in the graph', async () => {
    const r = await run(new ClusterGraphs(reader), { kind: 'Deployment', namespace: 'shop', name: 'chekout' });
    expect(r.status).toBe('no_data');
    const message = r.status === 'no_data' ? r.message : '';
    expect(message).toContain('No Deployment shop/chekout in the cluster graph');
    expect(message).toContain('Did you mean: Deployment/shop/checkout');
    expect(message).toContain('Call topology again with kind, namespace and name exactly as listed');
    const ns = await run(new ClusterGraphs(reader), { kind: 'Deployment', namespace: 'sh0p', name: 'zzz' });
    expect(ns.status === 'no_data' && ns.message).toContain('There is no namespace "sh0p"; namespaces:');
  });

  it('refuses a kind or an edge kind the graph does not know, naming the ones it does', async () => {
    const kind = await run(new ClusterGraphs(reader), { kind: 'Microservice', name: 'checkout' });
    expect(kind.status).toBe('error');
    expect(kind.status === 'error' && kind.error).toMatch(/Unknown kind "Microservice"\. The cluster graph holds: .*Deployment.*Ingress.*Service/);
    const edge = await run(new ClusterGraphs(reader), { kind: 'Deployment', namespace: 'shop', name: 'checkout', edges: ['depends-on'] });
    expect(edge.status === 'error' && edge.error).toContain('Unknown edge kind(s) "depends-on". Edge kinds are: routes, selects, calls');
  });

  it('says so when there is no Kubernetes to read', async () => {
    const r = await run(new ClusterGraphs(undefined), { kind: 'Deployment', namespace: 'shop', name: 'checkout' }, ctx());
    expect(r.status === 'error' && r.error).toContain('Kubernetes is not configured');
  });

  it('bounds a hub with hundreds of callers and redacts what the edges quote', async () => {
    const t = new Topology(emptySnapshot());
    const svc = { kind: 'Service', namespace: 'core', name: 'auth' };
    for (let i = 0; i < 300; i++) t.link({ kind: 'Deployment', namespace: 'core', name: `caller-${i}` }, svc, 'calls', `env AUTH_URL=https://svc:Pl4nted-T0ken-${i}x9Q@auth.core.svc:8080`);
    const r = await run(new ClusterGraphs(reader), { kind: 'Service', namespace: 'core', name: 'auth' }, ctx({ investigation: { onset: scenario.onset, cluster: { topology: t } } }));
    const d = data(r);
    expect(d['dependents']['calls']).toHaveLength(13);
    expect(d['dependents']['calls'][12]).toBe('… 288 more');
    expect(JSON.stringify(r)).not.toMatch(/Pl4nted-T0ken/);
  });
});

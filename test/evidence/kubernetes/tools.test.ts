import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { KubeReader } from '../../../src/evidence/kubernetes/client.js';
import { kubernetesTools } from '../../../src/evidence/kubernetes/tools/index.js';
import type { EvidenceTool, ToolContext, ToolResult } from '../../../src/evidence/tool.js';
import { createRedactor } from '../../../src/redact/index.js';
import { startFakeKube, type FakeKube } from '../../fakes/kubernetes/server.js';
import { demoWorld, PLANTED_PASSWORD } from './world.js';

let kube: FakeKube;
let tools: Map<string, EvidenceTool>;
let ctx: ToolContext;
let planted: string[];
let hasCert = false;
const outputs: string[] = [];

beforeAll(async () => {
  const world = await demoWorld();
  hasCert = world.cert !== undefined;
  kube = await startFakeKube({ objects: world.objects, logs: world.scenario.logs, now: () => world.scenario.onset });
  tools = new Map(kubernetesTools(new KubeReader(kube.kubeConfigFor('reader'))).map((t) => [t.name, t]));
  ctx = { redactor: createRedactor(), now: world.scenario.onset };
  planted = [...world.scenario.plantedSecrets, PLANTED_PASSWORD, ...(world.cert ? [world.cert.key.split('\n')[1]!] : [])];
});

afterAll(async () => {
  // Every output any test produced: no planted secret, no private key, anywhere.
  const all = outputs.join('\n');
  for (const s of planted) expect(all).not.toContain(s);
  expect(all).not.toContain('PRIVATE KEY');
  await kube.close();
});

async function run(name: string, params: Record<string, unknown>): Promise<ToolResult> {
  const tool = tools.get(name);
  if (!tool) throw new Error(`no tool ${name}`);
  const result = await tool.execute(tool.parameters.parse(params), ctx);
  const text = JSON.stringify(result);
  outputs.push(text);
  expect(Buffer.byteLength(JSON.stringify('data' in result ? result.data : ''))).toBeLessThanOrEqual(16 * 1024 + 64);
  return result;
}

function ok(r: ToolResult): { data: Record<string, unknown>; r: Extract<ToolResult, { status: 'success' }> } {
  if (r.status !== 'success') throw new Error(`expected success, got ${JSON.stringify(r)}`);
  return { data: r.data as Record<string, unknown>, r };
}

describe('kubernetesTools registry', () => {
  it('registers every tool once, read-only, with JSON-schema object parameters', () => {
    const list = [...tools.values()];
    expect(list.map((t) => t.name).sort()).toEqual(
      ['k8s_describe', 'k8s_endpoints', 'k8s_events', 'k8s_get', 'k8s_helm_history', 'k8s_hpa', 'k8s_list', 'k8s_network_policies', 'k8s_nodes', 'k8s_pod_logs', 'k8s_rollout_history', 'k8s_storage', 'k8s_tls_certificates', 'k8s_workload_logs'].sort(),
    );
    for (const t of list) {
      expect(t.name).toMatch(/^[a-z0-9_]+$/);
      expect(t.effect).toBe('read');
      expect(t.description.length).toBeGreaterThan(60);
      const schema = z.toJSONSchema(t.parameters) as { type?: string; properties?: Record<string, { description?: string }> };
      expect(schema.type).toBe('object');
      for (const [key, prop] of Object.entries(schema.properties ?? {})) expect(prop.description, `${t.name}.${key}`).toBeTruthy();
    }
  });
});

describe('k8s_get / k8s_list', () => {
  it('gets a Deployment with managedFields summarised and env secrets redacted', async () => {
    const { data, r } = ok(await run('k8s_get', { kind: 'deploy', namespace: 'shop', name: 'checkout' }));
    expect(r.citation).toEqual({ source: 'kubernetes', ref: 'apis/apps/v1/namespaces/shop/deployments/checkout' });
    const meta = data['metadata'] as { managedFields: { manager: string; subresource?: string; fields: string[] }[] };
    // Newest first: the controller's status write (@-12s), then kubectl's scale (@-13s).
    expect(meta.managedFields.map((m) => m.manager)).toEqual(['kube-controller-manager', 'kubectl', 'helm', 'kube-controller-manager']);
    expect(meta.managedFields[1]).toMatchObject({ manager: 'kubectl', subresource: 'scale', fields: ['spec.replicas'] });
    expect(JSON.stringify(data)).not.toContain('fieldsV1');
  });

  it('answers no_data with the API wording for a missing object', async () => {
    const r = await run('k8s_get', { kind: 'Deployment', namespace: 'shop', name: 'nope' });
    expect(r).toMatchObject({ status: 'no_data', message: 'deployments.apps "nope" not found' });
  });

  it('gets a cluster-scoped kind and a custom apiVersion kind', async () => {
    ok(await run('k8s_get', { kind: 'Node', name: 'node-3' }));
    const sc = ok(await run('k8s_get', { kind: 'StorageClass', apiVersion: 'storage.k8s.io/v1', name: 'fast-ssd' }));
    expect(sc.r.citation.ref).toBe('apis/storage.k8s.io/v1/storageclasses/fast-ssd');
    const bad = await run('k8s_get', { kind: 'Widget', namespace: 'shop', name: 'x' });
    expect(bad.status).toBe('error');
  });

  it('never returns Secret values, only key names', async () => {
    const { data } = ok(await run('k8s_get', { kind: 'Secret', namespace: 'shop', name: 'checkout-db' }));
    expect(data['data']).toBeUndefined();
    expect(data['dataKeys']).toEqual([
      { key: 'username', bytes: 8 },
      { key: 'password', bytes: PLANTED_PASSWORD.length },
    ]);
    const list = ok(await run('k8s_list', { kind: 'secrets', namespace: 'shop' }));
    expect(JSON.stringify(list.data)).toContain('checkout-db');
  });

  it('lists compact rows with selectors', async () => {
    const { data } = ok(await run('k8s_list', { kind: 'pods', namespace: 'shop', labelSelector: 'app.kubernetes.io/name=storefront' }));
    const rows = data['rows'] as Record<string, unknown>[];
    expect(rows).toHaveLength(3);
    // Listed in one namespace, the page says it once and the rows do not repeat it.
    expect(data['namespace']).toBe('shop');
    expect(rows[0]).toMatchObject({ phase: 'Running', ready: '1/1', restarts: 0 });
    expect(rows[0]).not.toHaveProperty('namespace');
    expect(rows[0]).not.toHaveProperty('spec');
    const pending = ok(await run('k8s_list', { kind: 'Pod', allNamespaces: true, fieldSelector: 'status.phase=Pending' }));
    expect((pending.data['rows'] as { name: string }[]).map((x) => x.name)).toEqual(['reports-5d6f7c8b9-abcde']);
    // Across namespaces each row still names its own.
    expect((pending.data['rows'] as { namespace?: string }[])[0]?.namespace).toBeTruthy();
    const paged = ok(await run('k8s_list', { kind: 'Event', limit: 2 }));
    expect(paged.data['continueToken']).toBeTruthy();
  });
});

describe('k8s_describe', () => {
  it('describes the scaled-to-zero Deployment: replicas, template, events, writers', async () => {
    const { data } = ok(await run('k8s_describe', { kind: 'Deployment', namespace: 'shop', name: 'checkout' }));
    expect(data['replicas']).toMatchObject({ desired: 0, ready: 0 });
    const template = data['template'] as { containers: { image: string; env: { name: string; value?: string }[]; probes: Record<string, string> }[] };
    expect(template.containers[0]!.image).toBe('registry.example.com/shop/checkout:1.14.2');
    expect(template.containers[0]!.env.map((e) => e.name)).toEqual(['DATABASE_URL', 'PAYMENTS_URL']);
    expect(template.containers[0]!.probes['readiness']).toContain('httpGet /ready');
    expect((data['events'] as { reason: string }[])[0]!.reason).toBe('ScalingReplicaSet');
    expect((data['managedFields'] as { manager: string; subresource?: string }[])[1]).toMatchObject({ manager: 'kubectl', subresource: 'scale' });
  });

  it('describes a Pending pod with its FailedScheduling events grouped', async () => {
    const { data } = ok(await run('k8s_describe', { kind: 'po', namespace: 'shop', name: 'reports-5d6f7c8b9-abcde' }));
    expect(data['phase']).toBe('Pending');
    const events = data['events'] as { reason: string; count: number; lastSeen: string }[];
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ reason: 'FailedScheduling', count: 13 });
  });

  it('describes a crash-looping pod with its last termination', async () => {
    const { data } = ok(await run('k8s_describe', { kind: 'Pod', namespace: 'payments', name: 'payments-worker-6c8f9d7b4-x2x9k' }));
    const cs = (data['containerStatuses'] as { restarts: number; state: string; lastTermination: { exitCode: number } }[])[0]!;
    expect(cs.restarts).toBe(63);
    expect(cs.state).toContain('CrashLoopBackOff');
    expect(cs.lastTermination.exitCode).toBe(1);
  });

  it('refuses kinds it cannot describe', async () => {
    expect((await run('k8s_describe', { kind: 'ConfigMap', namespace: 'shop', name: 'x' })).status).toBe('error');
  });
});

describe('k8s_events', () => {
  it('groups warnings newest first with summed counts', async () => {
    const { data } = ok(await run('k8s_events', { warningsOnly: true }));
    const events = data['events'] as { reason: string; object: string; count: number; firstSeen: string; lastSeen: string }[];
    expect(events[0]).toMatchObject({ reason: 'FailedScheduling', object: 'Pod shop/reports-5d6f7c8b9-abcde', count: 13 });
    for (let i = 1; i < events.length; i++) expect(events[i - 1]!.lastSeen >= events[i]!.lastSeen).toBe(true);
    expect(events.some((e) => e.reason === 'BackOff' && e.count === 1377)).toBe(true);
  });

  it('filters by object and recency, and says no_data when nothing matches', async () => {
    const { data } = ok(await run('k8s_events', { namespace: 'shop', kind: 'Deployment', name: 'checkout', sinceMinutes: 5 }));
    expect((data['events'] as { reason: string }[]).map((e) => e.reason)).toEqual(['ScalingReplicaSet']);
    expect((await run('k8s_events', { namespace: 'shop', name: 'ghost' })).status).toBe('no_data');
  });
});

describe('k8s_pod_logs', () => {
  it('summarises logs into patterns with redaction and the container state', async () => {
    const { data, r } = ok(await run('k8s_pod_logs', { namespace: 'shop', pod: 'storefront-6b7f9c8d4-2kx8v' }));
    expect(r.citation.ref).toContain('api/v1/namespaces/shop/pods/storefront-6b7f9c8d4-2kx8v/log?container=storefront');
    expect(data['lineCount']).toBe(19);
    const patterns = data['patterns'] as { template: string; count: number }[];
    expect(patterns.length).toBeGreaterThan(0);
    expect(patterns.length).toBeLessThan(19);
    expect(JSON.stringify(data)).toContain('connection refused');
  });

  it('reads the previous instance and reports the last termination', async () => {
    const { data } = ok(await run('k8s_pod_logs', { namespace: 'payments', pod: 'payments-worker-6c8f9d7b4-x2x9k', previous: true }));
    expect(data['lastTermination']).toMatchObject({ reason: 'Error', exitCode: 1 });
    expect(JSON.stringify(data)).toContain('PAYMENTS_QUEUE_URL');
  });

  it('says no_data when there is no previous instance or no pod', async () => {
    expect((await run('k8s_pod_logs', { namespace: 'shop', pod: 'storefront-6b7f9c8d4-2kx8v', previous: true })).status).toBe('no_data');
    expect(await run('k8s_pod_logs', { namespace: 'shop', pod: 'gone' })).toMatchObject({ status: 'no_data', message: 'pods "gone" not found' });
  });
});

describe('k8s_workload_logs', () => {
  it("reads every Running pod of a workload, bounded, and returns error patterns instead of lines", async () => {
    const { data, r } = ok(await run('k8s_workload_logs', { namespace: 'shop', name: 'storefront' }));
    // Default window without an investigation: the last 30 minutes; limitBytes on every read.
    expect(r.citation.ref).toBe('api/v1/namespaces/shop/pods?labelSelector=app.kubernetes.io/name=storefront,app.kubernetes.io/instance=storefront → log?sinceSeconds=1800&tailLines=400&limitBytes=262144');
    const pods = data['pods'] as { pod: string; phase: string; ready: boolean; lines: number }[];
    expect(pods.map((p) => p.pod).sort()).toEqual(['storefront-6b7f9c8d4-2kx8v', 'storefront-6b7f9c8d4-8pq4r', 'storefront-6b7f9c8d4-w9z7n']);
    expect(pods.every((p) => p.phase === 'Running' && p.lines > 0)).toBe(true);
    const current = data['current'] as { lines: number; patterns: { template: string; count: number; level?: string }[] };
    // Error templates come first.
    expect(current.patterns[0]!.level).toBe('error');
    const refused = current.patterns.find((e) => e.template.includes('connection refused'));
    // 3 + 2 + 1 failed upstream calls across the three pods, folded into one template.
    expect(refused?.count).toBe(6);
    // Patterns, not lines: no field holds the raw log, and the redactor ran over every example.
    expect(data).not.toHaveProperty('lastLines');
    expect(JSON.stringify(data)).not.toContain('sf_live_');
    // Each pod's read is cited with its exact log path, so the model may cite one pod.
    expect(r.evidence.map((e) => e.citation.ref)).toContain('api/v1/namespaces/shop/pods/storefront-6b7f9c8d4-2kx8v/log?container=storefront&sinceSeconds=1800&tailLines=400&limitBytes=262144');
  });

  it('reads from a little before the onset and says which templates are new since it', async () => {
    const onset = ctx.now;
    const tool = tools.get('k8s_workload_logs')!;
    const result = await tool.execute(tool.parameters.parse({ namespace: 'shop', name: 'storefront', kind: 'deploy' }), { ...ctx, investigation: { onset } });
    outputs.push(JSON.stringify(result));
    const { data } = ok(result);
    expect((data['window'] as { sinceSeconds: number }).sinceSeconds).toBe(20 * 60);
    const patterns = (data['current'] as { patterns: { template: string; sinceOnset?: string; before?: number; after?: number }[] }).patterns;
    expect(patterns.find((p) => p.template.includes('connection refused'))).toMatchObject({ sinceOnset: 'new', before: 0, after: 6 });
    // Each template once.
    expect(new Set(patterns.map((p) => p.template)).size).toBe(patterns.length);
    // Six days old: outside the window, never read.
    expect(JSON.stringify(data)).not.toContain('storefront 3.8.0 starting');
  });

  it("adds the previous instance of a crash-looping container", async () => {
    const { data } = ok(await run('k8s_workload_logs', { namespace: 'payments', name: 'payments-worker' }));
    const pods = data['pods'] as { pod: string; previous?: boolean; restarts: number }[];
    expect(pods.some((p) => p.previous && p.restarts === 63)).toBe(true);
    const previous = data['previousInstances'] as { patterns: { template: string }[] };
    expect(JSON.stringify(previous)).toContain('PAYMENTS_QUEUE_URL');
  });

  it('tells the model what to call instead for a Service or an unknown name', async () => {
    const wrongKind = await run('k8s_workload_logs', { namespace: 'shop', name: 'checkout', kind: 'Service' });
    expect(wrongKind.status === 'error' && wrongKind.error).toContain('use Deployment, StatefulSet or DaemonSet');
    const missing = await run('k8s_workload_logs', { namespace: 'shop', name: 'store-front' });
    expect(missing).toMatchObject({ status: 'no_data' });
    expect(missing.status === 'no_data' && missing.message).toContain('call topology to find its workload');
    // checkout exists but runs no pod: nothing to read, said so.
    const idle = await run('k8s_workload_logs', { namespace: 'shop', name: 'checkout' });
    expect(idle.status === 'no_data' && idle.message).toContain('no Running pod');
  });
});

describe('k8s_rollout_history', () => {
  it('lists ReplicaSet revisions newest first with the template diff', async () => {
    const { data } = ok(await run('k8s_rollout_history', { kind: 'Deployment', namespace: 'shop', name: 'checkout' }));
    const revs = data['revisions'] as { revision: number; current: boolean; podTemplateHash: string; images: string[]; changes?: { images: { from: string; to: string }[]; envAdded: string[] } }[];
    expect(revs.map((x) => x.revision)).toEqual([7, 6]);
    expect(revs[0]).toMatchObject({ current: true, podTemplateHash: '7d9f8b6c5', images: ['registry.example.com/shop/checkout:1.14.2'] });
    expect(revs[0]!.changes!.images[0]).toMatchObject({ from: 'registry.example.com/shop/checkout:1.14.1', to: 'registry.example.com/shop/checkout:1.14.2' });
    expect(revs[0]!.changes!.envAdded).toEqual(['checkout/DATABASE_URL', 'checkout/PAYMENTS_URL']);
  });
});

describe('k8s_endpoints', () => {
  it('shows a Service with no endpoints and no matching pods', async () => {
    const { data } = ok(await run('k8s_endpoints', { namespace: 'shop', service: 'checkout' }));
    expect(data).toMatchObject({ readyAddresses: [], notReadyAddresses: [], selectorMatchesPods: false, endpointsObject: 'present' });
  });

  it('shows ready addresses with their target pods for a healthy Service', async () => {
    const { data } = ok(await run('k8s_endpoints', { namespace: 'shop', service: 'storefront' }));
    expect((data['readyAddresses'] as unknown[]).length).toBe(3);
    expect(data['selectorMatchesPods']).toBe(true);
    expect((data['matchingPods'] as { ready: boolean }[]).every((p) => p.ready)).toBe(true);
  });
});

describe('k8s_hpa', () => {
  it('reports an HPA pinned at max with ScalingLimited', async () => {
    const { data } = ok(await run('k8s_hpa', { namespace: 'shop' }));
    const hpa = (data['hpas'] as Record<string, unknown>[])[0]!;
    expect(hpa).toMatchObject({ name: 'storefront', minReplicas: 2, maxReplicas: 3, currentReplicas: 3, atMax: true });
    expect(hpa['metrics']).toEqual([{ metric: 'Resource cpu', current: '96%', target: '70%' }]);
    expect(hpa['conditions']).toContainEqual(expect.objectContaining({ type: 'ScalingLimited', status: 'True', reason: 'TooManyReplicas' }));
  });
});

describe('k8s_storage', () => {
  it('shows a Pending PVC with its provisioning failure and storage class', async () => {
    const { data } = ok(await run('k8s_storage', { namespace: 'shop' }));
    const claim = (data['claims'] as Record<string, unknown>[])[0]!;
    expect(claim).toMatchObject({ name: 'reports-data', phase: 'Pending', storageClass: 'fast-ssd', requested: '50Gi' });
    expect(claim['pendingReasons']).toEqual([expect.objectContaining({ reason: 'ProvisioningFailed', count: 14 })]);
    expect(data['storageClasses']).toEqual([expect.objectContaining({ name: 'fast-ssd', provisioner: 'ebs.csi.aws.com', bindingMode: 'Immediate' })]);
  });
});

describe('k8s_nodes', () => {
  it('flags MemoryPressure with its transition time and sums pod requests', async () => {
    const { data } = ok(await run('k8s_nodes', {}));
    const nodes = data['nodes'] as { name: string; problems?: string[]; taints: string[]; conditions: { type: string; since?: string }[]; requested?: { cpu: string } }[];
    const n3 = nodes.find((n) => n.name === 'node-3')!;
    expect(n3.problems).toEqual(['MemoryPressure=True']);
    expect(n3.taints).toEqual(['node.kubernetes.io/memory-pressure:NoSchedule']);
    expect(n3.conditions.find((c) => c.type === 'MemoryPressure')!.since).toBeTruthy();
    expect(nodes.find((n) => n.name === 'node-1')!.problems).toBeUndefined();
  });
});

describe('k8s_network_policies', () => {
  it('summarises rules and the pods a policy selects', async () => {
    const { data } = ok(await run('k8s_network_policies', { namespace: 'shop' }));
    const np = (data['policies'] as Record<string, unknown>[])[0]!;
    expect(np['selectedCount']).toBe(3);
    expect(np['ingress']).toEqual(['from namespaces {kubernetes.io/metadata.name=ingress-nginx} on 8080/TCP']);
    expect(np['egress']).toEqual(['deny all egress']);
    expect((await run('k8s_network_policies', { namespace: 'payments' })).status).toBe('no_data');
  });
});

describe('k8s_helm_history', () => {
  it('lists revisions with values diffs and never the raw values', async () => {
    const { data } = ok(await run('k8s_helm_history', { namespace: 'shop', release: 'checkout' }));
    const revs = data['revisions'] as { revision: number; status: string; description: string; valuesChanged: { key: string; from: unknown; to: unknown }[] | string }[];
    expect(revs.map((r) => r.revision)).toEqual([7, 6, 5, 4, 3, 2, 1]);
    expect(revs[0]).toMatchObject({ status: 'deployed', description: 'Upgrade complete' });
    expect(revs[0]!.valuesChanged).toEqual([{ key: 'image.tag', from: '1.14.1', to: '1.14.2' }]);
    expect(revs[2]!.description).toBe('Rollback to 3');
    expect(revs[6]!.valuesChanged).toBe('first revision');
    expect(data['deployedRevision']).toBe(7);
  });
});

describe('k8s_tls_certificates', () => {
  it('parses the public certificate of TLS secrets and compares ingress hosts', async () => {
    if (!hasCert) return; // openssl missing: nothing to parse
    const { data } = ok(await run('k8s_tls_certificates', { namespace: 'shop', ingress: 'shop' }));
    const cert = (data['certificates'] as Record<string, unknown>[])[0]!;
    expect(cert).toMatchObject({ secretName: 'shop-tls', selfSigned: true, sans: ['DNS:shop.example.com', 'DNS:www.shop.example.com'], hostsNotInSans: ['api.shop.example.com'] });
    expect(cert['daysLeft']).toBeGreaterThanOrEqual(9);
    const all = ok(await run('k8s_tls_certificates', { namespace: 'shop' }));
    expect((all.data['certificates'] as unknown[]).length).toBe(1);
  });
});

describe('reader identity without permissions', () => {
  it('names the verb and resource it lacks', async () => {
    const world = await demoWorld();
    const limited = await startFakeKube({
      objects: world.objects,
      identities: { narrow: { user: 'system:serviceaccount:vigil:reader', rules: [{ verbs: ['get', 'list'], apiGroups: ['', 'apps'], resources: ['pods', 'deployments', 'replicasets', 'events'] }] } },
      now: () => world.scenario.onset,
    });
    try {
      const reader = new KubeReader(limited.kubeConfigFor('narrow'));
      const t = new Map(kubernetesTools(reader).map((x) => [x.name, x]));
      const helm = t.get('k8s_helm_history')!;
      const r = await helm.execute(helm.parameters.parse({ namespace: 'shop', release: 'checkout' }), ctx);
      expect(r.status).toBe('error');
      if (r.status === 'error') {
        expect(r.error).toContain('lacks permission to list secrets in namespace "shop"');
        expect(r.error).toContain('cannot list resource "secrets"');
      }
      const list = t.get('k8s_list')!;
      const r2 = await list.execute(list.parameters.parse({ kind: 'Secret', namespace: 'shop' }), ctx);
      expect(r2.status === 'error' && r2.error).toContain('lacks permission to list secrets');
      const get = t.get('k8s_get')!;
      const r3 = await get.execute(get.parameters.parse({ kind: 'deploy', namespace: 'shop', name: 'checkout' }), ctx);
      expect(r3.status).toBe('success');
      // It may list the pods but not read their logs: the error names the permission.
      const logs = t.get('k8s_workload_logs')!;
      const r4 = await logs.execute(logs.parameters.parse({ namespace: 'shop', name: 'storefront' }), ctx);
      expect(r4.status === 'error' && r4.error).toContain('lacks permission to get pods/log in namespace "shop"');
    } finally {
      await limited.close();
    }
  });
});

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppsV1Api, CoreV1Api, DiscoveryV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadScenario, type Scenario } from '../../scenarios/load.js';
import { releaseFromSecret } from './helm-release.js';
import { startFakeKube, type FakeKube } from './server.js';

const demoDir = join(dirname(fileURLToPath(import.meta.url)), '../../scenarios/demo-checkout-scaled-to-zero');

let scenario: Scenario;
let kube: FakeKube;
let core: CoreV1Api;
let apps: AppsV1Api;

beforeAll(async () => {
  scenario = await loadScenario(demoDir);
  kube = await startFakeKube({ objects: scenario.objects, logs: scenario.logs, now: () => scenario.onset });
  const kc = kube.kubeConfigFor('demo');
  core = kc.makeApiClient(CoreV1Api);
  apps = kc.makeApiClient(AppsV1Api);
});
afterAll(() => kube.close());

const seconds = (d: Date | undefined): number => ((d?.getTime() ?? NaN) - scenario.onset.getTime()) / 1000;

describe('the demo world served through client-node', () => {
  it('shows checkout scaled to 0 by kubectl through the scale subresource, 13 s before the alert', async () => {
    const dep = await apps.readNamespacedDeployment({ name: 'checkout', namespace: 'shop' });
    expect(dep.spec?.replicas).toBe(0);
    expect(dep.status?.readyReplicas).toBeUndefined();
    expect(dep.status?.conditions?.find((c) => c.type === 'Available')).toMatchObject({ status: 'True', reason: 'MinimumReplicasAvailable' });
    const owners = dep.metadata?.managedFields ?? [];
    const replicaOwner = owners.filter((m) => JSON.stringify(m.fieldsV1).includes('"f:replicas"'));
    expect(replicaOwner.map((m) => [m.manager, m.operation, m.subresource])).toEqual([['kubectl', 'Update', 'scale']]);
    expect(seconds(replicaOwner[0]?.time)).toBe(-13);
    expect(seconds(owners.find((m) => m.manager === 'helm')?.time)).toBe(-3 * 86400);
  });

  it('has no endpoints for the checkout Service', async () => {
    const svc = await core.readNamespacedService({ name: 'checkout', namespace: 'shop' });
    expect(svc.spec?.selector).toEqual({ 'app.kubernetes.io/instance': 'checkout', 'app.kubernetes.io/name': 'checkout' });
    const ep = await core.readNamespacedEndpoints({ name: 'checkout', namespace: 'shop' });
    expect(ep.subsets ?? []).toEqual([]);
    const slices = await kube
      .kubeConfigFor('demo')
      .makeApiClient(DiscoveryV1Api)
      .listNamespacedEndpointSlice({ namespace: 'shop', labelSelector: 'kubernetes.io/service-name=checkout' });
    expect(slices.items).toHaveLength(1);
    expect(slices.items[0]?.endpoints ?? []).toEqual([]);
    const pods = await core.listNamespacedPod({ namespace: 'shop', labelSelector: 'app.kubernetes.io/name=checkout' });
    expect(pods.items).toEqual([]);
  });

  it('holds the Helm history: revision 7 deployed 3 days ago with replicaCount 3', async () => {
    const secrets = await core.listNamespacedSecret({ namespace: 'shop', labelSelector: 'owner=helm,name=checkout', fieldSelector: 'type=helm.sh/release.v1' });
    expect(secrets.items).toHaveLength(7);
    const releases = secrets.items.map((s) => releaseFromSecret(s as { data?: Record<string, string> }));
    const deployed = releases.filter((r) => r.info.status === 'deployed');
    expect(deployed.map((r) => r.version)).toEqual([7]);
    expect(deployed[0]?.config).toMatchObject({ replicaCount: 3, image: { tag: '1.14.2' } });
    expect(seconds(new Date(deployed[0]!.info.last_deployed))).toBe(-3 * 86400);
    expect(releases.find((r) => r.version === 5)?.info.description).toBe('Rollback to 3');
  });

  it('lists the scale-down events and keeps the noise visible', async () => {
    const events = await core.listNamespacedEvent({ namespace: 'shop', fieldSelector: 'involvedObject.kind=Deployment,involvedObject.name=checkout' });
    expect(events.items.map((e) => e.message)).toEqual(['Scaled down replica set checkout-7d9f8b6c5 to 0 from 3']);
    const warnings = await core.listEventForAllNamespaces({ fieldSelector: 'type=Warning' });
    expect(warnings.items.map((e) => e.reason).sort()).toEqual(['BackOff', 'FailedMount', 'Unhealthy']);
    const crash = await core.readNamespacedPod({ name: 'payments-worker-6c8f9d7b4-x2x9k', namespace: 'payments' });
    expect(crash.status?.containerStatuses?.[0]?.state?.waiting?.reason).toBe('CrashLoopBackOff');
    const previous = await core.readNamespacedPodLog({ name: 'payments-worker-6c8f9d7b4-x2x9k', namespace: 'payments', previous: true });
    expect(previous).toContain("KeyError: 'PAYMENTS_QUEUE_URL'");
  });

  it('shows storefront failing to reach checkout since the scale-down', async () => {
    const recent = await core.readNamespacedPodLog({ name: 'storefront-6b7f9c8d4-2kx8v', namespace: 'shop', sinceSeconds: 12 });
    expect(recent).toContain('dial tcp 10.96.142.17:8080: connect: connection refused');
    expect(recent).toContain('status=503');
    expect(recent).not.toContain('status=200 duration_ms=176');
  });

  it('accepts the mitigation: a dry run, then the scale back to 3', async () => {
    const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    const dry = await apps.patchNamespacedDeploymentScale(
      { name: 'checkout', namespace: 'shop', body: { spec: { replicas: 3 } }, dryRun: 'All', fieldManager: 'vigil' },
      merge,
    );
    expect(dry.spec?.replicas).toBe(3);
    expect((await apps.readNamespacedDeployment({ name: 'checkout', namespace: 'shop' })).spec?.replicas).toBe(0);
    await apps.patchNamespacedDeploymentScale({ name: 'checkout', namespace: 'shop', body: { spec: { replicas: 3 } }, fieldManager: 'vigil' }, merge);
    const dep = await apps.readNamespacedDeployment({ name: 'checkout', namespace: 'shop' });
    expect(dep.spec?.replicas).toBe(3);
    expect(dep.metadata?.generation).toBe(9);
    const managers = (dep.metadata?.managedFields ?? []).map((m) => `${m.manager}/${m.subresource ?? ''}`);
    expect(managers).toContain('vigil/scale');
    expect(managers).not.toContain('kubectl/scale');
  });
});

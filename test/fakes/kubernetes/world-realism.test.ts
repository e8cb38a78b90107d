/**
 * The fake serves a hand-written world as a real API server would: CRDs under their real plurals
 * (Chaos Mesh's `networkchaos`, not an English `networkchaoses`), and owner references with the owner's
 * uid even when the world left it out (the API server never serves one without).
 */
import { AppsV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeKube, type FakeKube } from './server.js';

let kube: FakeKube;
beforeAll(async () => {
  kube = await startFakeKube({
    objects: [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } },
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'shop' }, spec: { selector: { matchLabels: { app: 'web' } } } },
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web-5d9c7b8f64', namespace: 'shop', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', controller: true }] }, spec: { selector: { matchLabels: { app: 'web' } } } },
      { apiVersion: 'chaos-mesh.org/v1alpha1', kind: 'NetworkChaos', metadata: { name: 'latency', namespace: 'shop' }, spec: { action: 'delay' } },
    ],
  });
});
afterAll(async () => {
  await kube?.close();
});

describe('a hand-written world served like a real cluster', () => {
  it('serves Chaos Mesh kinds under their CRD plural', async () => {
    const custom = kube.kubeConfigFor('any-token').makeApiClient(CustomObjectsApi);
    const list = (await custom.listCustomObjectForAllNamespaces({ group: 'chaos-mesh.org', version: 'v1alpha1', resourcePlural: 'networkchaos' })) as { items: { metadata: { name: string } }[] };
    expect(list.items.map((o) => o.metadata.name)).toEqual(['latency']);
  });

  it('fills an owner reference\'s uid from the owner the world holds', async () => {
    const apps = kube.kubeConfigFor('any-token').makeApiClient(AppsV1Api);
    const dep = await apps.readNamespacedDeployment({ namespace: 'shop', name: 'web' });
    const rs = await apps.readNamespacedReplicaSet({ namespace: 'shop', name: 'web-5d9c7b8f64' });
    expect(rs.metadata?.ownerReferences?.[0]?.uid).toBe(dep.metadata?.uid);
  });
});

import type { V1Pod, V1Service } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { Alert } from '../../src/alerts/types.js';
import type { KubeEvidence } from '../../src/evidence/kubernetes/gather.js';
import { emptySurroundings } from '../../src/evidence/kubernetes/surroundings.js';
import type { TriageInput } from '../../src/triage/analyzer.js';
import { endpointsMismatch } from '../../src/triage/analyzers/endpoints-mismatch.js';

const onset = new Date('2026-03-01T12:00:00Z');
const at = (offsetMin: number) => new Date(onset.getTime() + offsetMin * 60_000);
const alert: Alert = { source: 'alertmanager', status: 'firing', title: 't', alertName: 'ServiceWithoutEndpoints', labels: {}, labelValues: ['checkout', 'shop'], annotations: {}, count: 1, text: '' };

const podSpec = { containers: [{ name: 'checkout', image: 'checkout:1', ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }] }] };
const readyPod = (name: string): V1Pod => ({
  metadata: { name, namespace: 'shop', labels: { app: 'checkout', 'pod-template-hash': 'abc' } },
  spec: podSpec,
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
});
const storefrontPod: V1Pod = {
  metadata: { name: 'storefront-6b7f9c8d4-2kx8v', namespace: 'shop', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'storefront-6b7f9c8d4', uid: 'x', controller: true }] },
  spec: { containers: [{ name: 'storefront', env: [{ name: 'CHECKOUT_URL', value: 'http://checkout.shop.svc:8080' }] }] },
};

function service(selector: Record<string, string>, targetPort: string | number = 'http'): V1Service {
  return {
    metadata: {
      name: 'checkout',
      namespace: 'shop',
      managedFields: [
        { manager: 'kubectl-client-side-apply', operation: 'Update', time: at(-90 * 24 * 60), fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:ports': {}, 'f:type': {} } } },
        { manager: 'kubectl-edit', operation: 'Update', time: at(-2), fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:selector': { 'f:app': {} } } } },
      ],
    },
    spec: { selector, ports: [{ name: 'http', port: 8080, targetPort: targetPort as never }] },
  };
}

function input(kube: Partial<KubeEvidence>, replicas = 3): TriageInput {
  return {
    alert,
    onset,
    changes: [],
    kube: {
      ...emptySurroundings(),
      onset,
      target: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
      workload: { metadata: { name: 'checkout', namespace: 'shop' }, spec: { replicas, selector: { matchLabels: { app: 'checkout' } }, template: { metadata: { labels: { app: 'checkout' } }, spec: podSpec } } },
      replicaSets: [],
      pods: [readyPod('checkout-abc-1'), readyPod('checkout-abc-2'), readyPod('checkout-abc-3')],
      services: [],
      events: [],
      related: [],
      dependents: [],
      unhealthyPods: [],
      warningEvents: [],
      gaps: [],
      server: 'https://k8s.example',
      namespacePods: [storefrontPod],
      ...kube,
    },
  };
}

describe('endpoints-mismatch analyzer', () => {
  it('shows the selector diff and who edited it', () => {
    const svc = service({ app: 'checkout-v2' });
    const [f] = endpointsMismatch.analyze(input({ namespaceServices: [{ service: svc, endpoints: { metadata: { name: 'checkout' } } }] }));
    expect(f).toMatchObject({
      analyzer: 'endpoints-mismatch',
      status: 'supported',
      component: { kind: 'Service', namespace: 'shop', name: 'checkout' },
      facts: { selector: 'app=checkout-v2', mismatchedKey: 'app', serviceValue: 'checkout-v2', podValue: 'checkout', manager: 'kubectl-edit', changedAt: at(-2).toISOString(), readyPods: 3 },
    });
    expect(f!.confidence).toBeGreaterThanOrEqual(0.9);
    expect(f!.mitigation).toBeUndefined();
    expect(f!.mechanism).toContain('back to app=checkout');
    expect(f!.affected).toEqual([
      { kind: 'Service', namespace: 'shop', name: 'checkout' },
      { kind: 'Deployment', namespace: 'shop', name: 'storefront' },
    ]);
    expect(f!.supporting.find((e) => e.kind === 'managed_fields')?.citation.ref).toBe('api/v1/namespaces/shop/services/checkout#metadata.managedFields[1]');
  });

  it('finds a named targetPort no container declares', () => {
    const svc = service({ app: 'checkout' }, 'web');
    const [f] = endpointsMismatch.analyze(input({ services: [{ service: svc, endpoints: { metadata: { name: 'checkout' }, subsets: [] } }] }));
    expect(f).toMatchObject({ status: 'supported', facts: { targetPort: 'web', containerPorts: '8080', containerPortNames: 'http' } });
  });

  it('returns nothing when the workload is scaled to zero (scaled-to-zero explains the empty endpoints)', () => {
    const svc = service({ app: 'checkout-v2' });
    expect(endpointsMismatch.analyze(input({ pods: [], namespaceServices: [{ service: svc }] }, 0))).toEqual([]);
  });

  it('returns nothing when the Service has ready endpoints', () => {
    const svc = service({ app: 'checkout' });
    const endpoints = { metadata: { name: 'checkout' }, subsets: [{ addresses: [{ ip: '10.244.1.31' }] }] };
    expect(endpointsMismatch.analyze(input({ services: [{ service: svc, endpoints }], namespaceServices: [{ service: svc, endpoints }] }))).toEqual([]);
  });

  it('ignores a Service the alert names that selects another workload’s pods (the alert is on a caller)', () => {
    const frontend: V1Service = { metadata: { name: 'checkout-frontend', namespace: 'shop' }, spec: { selector: { app: 'checkout-frontend' }, ports: [{ port: 80, targetPort: 3000 as never }] } };
    const fePod: V1Pod = { metadata: { name: 'checkout-frontend-5d7c-hx7qp', namespace: 'shop', labels: { app: 'checkout-frontend' } }, spec: { containers: [{ name: 'web' }] }, status: { phase: 'Running' } };
    const endpoints = { metadata: { name: 'checkout-frontend' }, subsets: [{ addresses: [{ ip: '10.60.0.63' }] }] };
    const named = { ...input({ namespaceServices: [{ service: frontend, endpoints }], namespacePods: [storefrontPod, fePod] }), alert: { ...alert, labelValues: ['checkout-frontend'] } };
    expect(endpointsMismatch.analyze(named)).toEqual([]);
  });

  it('ignores Services of other workloads and selector-less Services', () => {
    const other: V1Service = { metadata: { name: 'payments', namespace: 'shop' }, spec: { selector: { app: 'payments' } } };
    const external: V1Service = { metadata: { name: 'checkout', namespace: 'shop' }, spec: { ports: [{ port: 5432 }] } };
    expect(endpointsMismatch.analyze(input({ namespaceServices: [{ service: other }, { service: external }] }))).toEqual([]);
  });
});

/**
 * A metrics adapter scaled to zero hours ago: its APIService has no endpoints, the HPAs on custom
 * metrics freeze, and the fault bites at the next peak. The graph reaches the adapter from the frozen
 * workload (HPA → APIService → Service → Deployment) and scaled-to-zero names what it blinds.
 */
import type { V1APIService, V2HorizontalPodAutoscaler } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { emptyKubeEvidence, type KubeEvidence } from '../../src/evidence/kubernetes/gather.js';
import { buildTopology } from '../../src/topology/graph.js';
import { emptySnapshot } from '../../src/topology/snapshot.js';
import { dependsOn } from '../../src/topology/walk.js';
import type { TriageInput } from '../../src/triage/analyzer.js';
import { scaledToZero } from '../../src/triage/analyzers/scaled-to-zero.js';

const ONSET = new Date('2026-03-01T18:00:00Z');
const at = (min: number) => new Date(ONSET.getTime() + min * 60_000);

const apiService: V1APIService = {
  metadata: { name: 'v1beta1.custom.metrics.k8s.io' },
  spec: { group: 'custom.metrics.k8s.io', version: 'v1beta1', groupPriorityMinimum: 100, versionPriority: 100, service: { name: 'prometheus-adapter', namespace: 'monitoring', port: 443 } },
  status: { conditions: [{ type: 'Available', status: 'False', reason: 'MissingEndpoints', message: 'endpoints for service/prometheus-adapter in "monitoring" have no addresses with port name "https"', lastTransitionTime: at(-307) }] },
};
const hpa: V2HorizontalPodAutoscaler = {
  metadata: { name: 'recommendation', namespace: 'shop' },
  spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'recommendation' }, minReplicas: 2, maxReplicas: 10, metrics: [{ type: 'Pods', pods: { metric: { name: 'rpc_server_requests_per_second' }, target: { type: 'AverageValue', averageValue: '20' } } }] },
  status: { currentReplicas: 2, desiredReplicas: 2, conditions: [{ type: 'ScalingActive', status: 'False', reason: 'FailedGetPodsMetric', message: 'the HPA was unable to compute the replica count: unable to get metric rpc_server_requests_per_second: unable to fetch metrics from custom metrics API: the server is currently unable to handle the request (get pods.custom.metrics.k8s.io *)', lastTransitionTime: at(-307) }] },
};

function snapshot() {
  const s = emptySnapshot();
  const dep = (ns: string, name: string, replicas: number) => ({ metadata: { name, namespace: ns }, spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name, image: `reg/${name}:1` }] } } } });
  s.deployments = [dep('shop', 'recommendation', 2), dep('monitoring', 'prometheus-adapter', 0)] as never;
  s.services = [{ metadata: { name: 'prometheus-adapter', namespace: 'monitoring' }, spec: { selector: { app: 'prometheus-adapter' } } }] as never;
  s.hpas = [hpa];
  s.apiServices = [apiService];
  return s;
}

describe('metrics API behind HPAs', () => {
  it('links a custom-metrics HPA to the APIService and the adapter behind it', () => {
    const t = buildTopology(snapshot());
    expect(dependsOn(t, { kind: 'Deployment', namespace: 'shop', name: 'recommendation' }, { kind: 'Deployment', namespace: 'monitoring', name: 'prometheus-adapter' })).toBe(true);
    expect(t.outgoing('HorizontalPodAutoscaler/shop/recommendation').map((e) => `${e.kind} ${e.to}`)).toEqual(['metrics-from APIService//v1beta1.custom.metrics.k8s.io']);
  });

  it('raises an old scale-to-zero of the adapter when its APIService is down and HPAs are frozen', () => {
    const s = snapshot();
    const kube: KubeEvidence = {
      ...emptyKubeEvidence(ONSET, ''),
      target: { kind: 'Deployment', namespace: 'monitoring', name: 'prometheus-adapter' },
      workload: { metadata: { name: 'prometheus-adapter', namespace: 'monitoring', managedFields: [{ manager: 'kubectl', operation: 'Update', subresource: 'scale', time: at(-308), fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:replicas': {} } } }] }, spec: { replicas: 0, selector: {}, template: {} } } as never,
      services: [{ service: s.services[0]!, endpoints: { metadata: { name: 'prometheus-adapter' }, subsets: [] } }],
      helm: { release: 'prometheus-adapter', revisions: [{ name: 'prometheus-adapter', namespace: 'monitoring', revision: 7, status: 'deployed', description: 'Upgrade complete', chart: 'prometheus-adapter-4.10.0', values: { replicas: 2 }, secretName: 'sh.helm.release.v1.prometheus-adapter.v7' }] },
    };
    const input = { alert: { labels: {}, labelValues: [] }, onset: ONSET, kube, changes: [], cluster: { snapshot: s } } as unknown as TriageInput;
    const [f] = scaledToZero.analyze(input);
    expect(f).toMatchObject({ status: 'supported', facts: { replicas: 0, previousReplicas: 2, subresource: 'scale', manager: 'kubectl' }, mitigation: { action: 'scale', params: { replicas: 2 } } });
    expect(f!.confidence).toBe(0.92); // five hours old, but biting now
    expect(f!.affected).toEqual(expect.arrayContaining([{ kind: 'APIService', name: 'v1beta1.custom.metrics.k8s.io' }, { kind: 'HorizontalPodAutoscaler', namespace: 'shop', name: 'recommendation' }, { kind: 'Deployment', namespace: 'shop', name: 'recommendation' }]));
    expect(f!.mechanism).toMatch(/1 HPA\(s\) \(recommendation\) cannot read their metrics/);
    // Without the frozen HPAs it is an old scale-down like any other.
    const quiet = { ...input, cluster: { snapshot: { ...s, hpas: [] } } } as unknown as TriageInput;
    expect(scaledToZero.analyze(quiet)[0]!.confidence).toBe(0.75);
  });
});

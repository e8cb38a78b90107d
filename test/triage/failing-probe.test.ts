import type { CoreV1Event, V1Container, V1Deployment, V1Pod, V1ReplicaSet } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { KubeEvidence } from '../../src/evidence/kubernetes/gather.js';
import { emptySurroundings } from '../../src/evidence/kubernetes/surroundings.js';
import type { TriageInput } from '../../src/triage/analyzer.js';
import { failingProbe, probeTarget } from '../../src/triage/analyzers/failing-probe.js';

const onset = new Date('2025-03-01T12:00:00Z');
const at = (offsetMs: number) => new Date(onset.getTime() + offsetMs);
const MIN = 60_000;

const liveness = { httpGet: { path: '/livez', port: 'http' as unknown as number } };
const container = (readiness: V1Container['readinessProbe']): V1Container => ({
  name: 'pricing',
  image: 'reg/pricing:4.2.0',
  ports: [{ name: 'http', containerPort: 8080 }],
  readinessProbe: readiness,
  livenessProbe: liveness,
});
const NEW_PROBE = { httpGet: { path: '/healthz', port: 8081 } };
const OLD_PROBE = { httpGet: { path: '/ready', port: 'http' as unknown as number } };

function rs(name: string, revision: number, c: V1Container, createdAt: Date): V1ReplicaSet {
  return { metadata: { name, creationTimestamp: createdAt, annotations: { 'deployment.kubernetes.io/revision': String(revision) } }, spec: { selector: {}, template: { spec: { containers: [c] } } } };
}
function pod(name: string, c: V1Container, owner = 'pricing-new'): V1Pod {
  return {
    metadata: { name, namespace: 'shop', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner, uid: owner }] },
    spec: { containers: [c] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }], containerStatuses: [{ name: 'pricing', ready: false, restartCount: 0, image: 'x', imageID: '', state: { running: {} } }] },
  };
}
const unhealthy = (podName: string, message: string, last = at(-5000)): CoreV1Event => ({
  metadata: { name: `${podName}.u`, namespace: 'shop' },
  involvedObject: { kind: 'Pod', name: podName, namespace: 'shop', fieldPath: 'spec.containers{pricing}' },
  reason: 'Unhealthy',
  type: 'Warning',
  message,
  firstTimestamp: at(-6 * MIN),
  lastTimestamp: last,
  count: 80,
});
const REFUSED = 'Readiness probe failed: Get "http://10.244.1.60:8081/healthz": dial tcp 10.244.1.60:8081: connect: connection refused';

function input(kube: Partial<KubeEvidence>): TriageInput {
  const workload: V1Deployment = { metadata: { name: 'pricing', namespace: 'shop', annotations: { 'deployment.kubernetes.io/revision': '12' } }, spec: { selector: {}, template: { spec: { containers: [container(NEW_PROBE)] } } } };
  return {
    alert: { labels: {}, labelValues: [] } as unknown as TriageInput['alert'],
    onset,
    changes: [],
    kube: {
      ...emptySurroundings(),
      onset,
      target: { kind: 'Deployment', namespace: 'shop', name: 'pricing' },
      workload,
      replicaSets: [rs('pricing-new', 12, container(NEW_PROBE), at(-7 * MIN)), rs('pricing-old', 11, container(OLD_PROBE), at(-21 * 24 * 60 * MIN))],
      pods: [pod('pricing-new-a', container(NEW_PROBE)), pod('pricing-new-b', container(NEW_PROBE))],
      services: [{ service: { metadata: { name: 'pricing' } }, endpoints: { subsets: [{ notReadyAddresses: [{ ip: '1' }, { ip: '2' }] }] } }],
      events: [unhealthy('pricing-new-a', REFUSED), unhealthy('pricing-new-b', REFUSED.replaceAll('10.244.1.60', '10.244.1.61'))],
      related: [],
      dependents: [{ kind: 'Deployment', name: 'checkout', via: 'env PRICING_URL' }],
      unhealthyPods: [],
      warningEvents: [],
      gaps: [],
      server: '',
      ...kube,
    },
  };
}

describe('failing-probe', () => {
  it('resolves named probe ports', () => {
    expect(probeTarget(OLD_PROBE, container(OLD_PROBE))).toMatchObject({ kind: 'http', path: '/ready', port: 8080, portSpec: 'http' });
    expect(probeTarget({ tcpSocket: { port: 'grpc' as unknown as number } }, container(OLD_PROBE))).toMatchObject({ kind: 'tcp', port: undefined, portSpec: 'grpc' });
    expect(probeTarget(undefined, undefined)).toEqual({ kind: 'none' });
  });

  it('finds a readiness probe on a port the container does not expose, changed by the rollout, and rules out an unhealthy app', () => {
    const findings = failingProbe.analyze(input({}));
    const [f, alt] = findings;
    expect(findings).toHaveLength(2);
    expect(f!.status).toBe('supported');
    expect(f!.confidence).toBe(0.93);
    expect(f!.facts).toMatchObject({
      probe: 'readiness',
      container: 'pricing',
      path: '/healthz',
      port: 8081,
      containerPort: 8080,
      misconfigured: true,
      misconfiguration: 'port_not_exposed',
      failureKind: 'connection_refused',
      previousPort: 8080,
      previousPath: '/ready',
      revision: 12,
      previousRevision: 11,
      failingPods: 2,
      failures: 160,
    });
    expect(f!.mitigation).toMatchObject({ action: 'rollout_undo', params: { toRevision: 11 } });
    expect(f!.scope).toContain('no ready endpoints');
    expect(f!.affected).toContainEqual({ kind: 'Deployment', namespace: 'shop', name: 'checkout' });
    expect(alt!.status).toBe('ruled_out');
    expect(alt!.refuting[0]!.summary).toContain('livenessProbe');
  });

  it('treats a failing probe with a correct spec as an unhealthy app, without a mitigation', () => {
    const c = container(OLD_PROBE);
    const [f, ...rest] = failingProbe.analyze(
      input({
        replicaSets: [rs('pricing-new', 12, c, at(-20 * 24 * 60 * MIN))],
        pods: [pod('pricing-new-a', c)],
        events: [unhealthy('pricing-new-a', 'Readiness probe failed: HTTP probe failed with statuscode: 503')],
      }),
    );
    expect(rest).toEqual([]);
    expect(f!.facts).toMatchObject({ probe: 'readiness', port: 8080, path: '/ready', misconfigured: false, failureKind: 'http_status', statusCode: 503 });
    expect(f!.confidence).toBeLessThan(0.8);
    expect(f!.mitigation).toBeUndefined();
  });

  it('reports a liveness probe hitting a 404 as a wrong path', () => {
    const c: V1Container = { ...container(OLD_PROBE), livenessProbe: { httpGet: { path: '/health', port: 8080 } } };
    const [f] = failingProbe.analyze(
      input({
        replicaSets: [rs('pricing-new', 12, c, at(-20 * 24 * 60 * MIN))],
        pods: [pod('pricing-new-a', c)],
        events: [unhealthy('pricing-new-a', 'Liveness probe failed: HTTP probe failed with statuscode: 404')],
      }),
    );
    expect(f!.facts).toMatchObject({ probe: 'liveness', path: '/health', port: 8080, misconfiguration: 'path_not_found' });
  });

  it('clears failures in a pod\'s first seconds (a rollout restart warming up) once every pod is Ready', () => {
    const c = container(OLD_PROBE);
    const ready = (name: string): V1Pod => ({ ...pod(name, c), status: { phase: 'Running', startTime: at(-8 * MIN), conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [{ name: 'pricing', ready: true, restartCount: 0, image: 'x', imageID: '', state: { running: {} } }] } });
    const warm = { ...unhealthy('pricing-new-a', 'Readiness probe failed: HTTP probe failed with statuscode: 503', at(-8 * MIN + 8_000)), firstTimestamp: at(-8 * MIN + 3_000), count: 2 };
    const [f] = failingProbe.analyze(input({ replicaSets: [rs('pricing-new', 12, c, at(-20 * 24 * 60 * MIN))], pods: [ready('pricing-new-a')], events: [warm] }));
    expect(f).toMatchObject({ status: 'ruled_out' });
    expect(f!.reason).toMatch(/the failures came in the first seconds after the pods started and all 1 pods are Ready/);
  });

  it('ignores old probe failures', () => {
    expect(failingProbe.analyze(input({ events: [unhealthy('pricing-new-a', REFUSED, at(-2 * 24 * 60 * MIN))] }))).toEqual([]);
  });
});

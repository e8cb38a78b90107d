import type { CoreV1Event, V1Deployment, V1Pod, V1ReplicaSet } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { KubeEvidence } from '../../src/evidence/kubernetes/gather.js';
import { emptySurroundings } from '../../src/evidence/kubernetes/surroundings.js';
import type { TriageInput } from '../../src/triage/analyzer.js';
import { crashLoop } from '../../src/triage/analyzers/crash-loop.js';

const onset = new Date('2025-03-01T12:00:00Z');
const at = (offsetMs: number) => new Date(onset.getTime() + offsetMs);
const MIN = 60_000;

function rs(name: string, revision: number, image: string, createdAt: Date): V1ReplicaSet {
  return {
    metadata: { name, namespace: 'shop', creationTimestamp: createdAt, annotations: { 'deployment.kubernetes.io/revision': String(revision) } },
    spec: { selector: {}, template: { spec: { containers: [{ name: 'cart', image }] } } },
  };
}

function pod(name: string, owner: string, status: Partial<NonNullable<V1Pod['status']>>): V1Pod {
  return { metadata: { name, namespace: 'shop', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner, uid: owner }] }, spec: { containers: [{ name: 'cart' }] }, status };
}

const crashing = (restarts: number, reason = 'Error', exitCode = 2, finished = at(-40_000)) => ({
  phase: 'Running',
  startTime: at(-4 * MIN),
  conditions: [{ type: 'Ready', status: 'False' }],
  containerStatuses: [
    { name: 'cart', ready: false, restartCount: restarts, image: 'x', imageID: '', state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode, reason, finishedAt: finished } } },
  ],
});
const healthy = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [{ name: 'cart', ready: true, restartCount: 0, image: 'x', imageID: '', state: { running: {} } }] };

function backoff(podName: string, first: Date): CoreV1Event {
  return { metadata: { name: `${podName}.1`, namespace: 'shop' }, involvedObject: { kind: 'Pod', name: podName, namespace: 'shop' }, reason: 'BackOff', type: 'Warning', message: `Back-off restarting failed container cart in pod ${podName}`, firstTimestamp: first, lastTimestamp: at(-5000), count: 12 };
}

function input(kube: Partial<KubeEvidence>, changes: TriageInput['changes'] = []): TriageInput {
  const workload: V1Deployment = { metadata: { name: 'cart', namespace: 'shop', annotations: { 'deployment.kubernetes.io/revision': '8' } }, spec: { selector: {}, template: {} } };
  return {
    alert: { labels: {}, labelValues: [] } as unknown as TriageInput['alert'],
    onset,
    changes,
    kube: {
      ...emptySurroundings(),
      onset,
      target: { kind: 'Deployment', namespace: 'shop', name: 'cart' },
      workload,
      replicaSets: [rs('cart-new', 8, 'reg/cart:2.4.0', at(-4 * MIN)), rs('cart-old', 7, 'reg/cart:2.3.1', at(-9 * 24 * 60 * MIN))],
      pods: [],
      services: [{ service: { metadata: { name: 'cart' } }, endpoints: { metadata: { name: 'cart' }, subsets: [{ addresses: [{ ip: '10.0.0.1' }], notReadyAddresses: [{ ip: '10.0.0.2' }] }] } }],
      events: [],
      related: [],
      dependents: [{ kind: 'Deployment', name: 'storefront', via: 'env CART_URL' }],
      unhealthyPods: [],
      warningEvents: [],
      gaps: [],
      server: '',
      ...kube,
    },
  };
}

const panicLogs: KubeEvidence['containerLogs'] = [
  {
    pod: 'cart-new-a',
    container: 'cart',
    previous: true,
    tail: [],
    patterns: [
      { template: 'starting cart', count: 1, example: '{"level":"info","msg":"starting cart"}', level: 'info' },
      { template: 'panic: runtime error: invalid memory address or nil pointer dereference', count: 1, example: 'panic: runtime error: invalid memory address or nil pointer dereference', level: 'error' },
      { template: 'goroutine <NUM> [running]:', count: 1, example: 'goroutine 1 [running]:' },
      { template: '/src/internal/pricing/client.go:<NUM> +0x3c', count: 1, example: '/src/internal/pricing/client.go:88 +0x3c' },
    ],
  },
];

describe('crash-loop', () => {
  it('explains a crash loop with its panic and the rollout right before it, and proposes an undo', () => {
    const [f, ...rest] = crashLoop.analyze(
      input({
        pods: [pod('cart-new-a', 'cart-new', crashing(4)), pod('cart-old-a', 'cart-old', healthy)],
        events: [backoff('cart-new-a', at(-3.8 * MIN))],
        containerLogs: panicLogs,
      }),
    );
    expect(rest).toEqual([]);
    expect(f!.status).toBe('supported');
    expect(f!.confidence).toBeGreaterThanOrEqual(0.9);
    expect(f!.component).toEqual({ kind: 'Deployment', namespace: 'shop', name: 'cart' });
    expect(f!.facts).toMatchObject({
      container: 'cart',
      exitCode: 2,
      lastTermination: 'Error',
      restartCount: 4,
      logPattern: 'panic: runtime error: invalid memory address or nil pointer dereference',
      revision: 8,
      previousRevision: 7,
      image: 'reg/cart:2.4.0',
      previousImage: 'reg/cart:2.3.1',
    });
    expect(f!.mitigation).toMatchObject({ action: 'rollout_undo', params: { toRevision: 7 } });
    expect(f!.affected).toEqual([
      { kind: 'Service', namespace: 'shop', name: 'cart' },
      { kind: 'Deployment', namespace: 'shop', name: 'storefront' },
    ]);
    expect(f!.supporting.map((e) => e.kind)).toEqual(expect.arrayContaining(['object', 'event', 'log', 'change']));
    expect(f!.supporting.find((e) => e.kind === 'log')!.citation.ref).toBe('api/v1/namespaces/shop/pods/cart-new-a/log?container=cart&previous=true');
    expect(f!.mechanism).toContain('rollout to revision 8');
  });

  it('proposes no rollback when older revisions crash too, and names the preceding config change', () => {
    const [f] = crashLoop.analyze(
      input(
        { pods: [pod('cart-new-a', 'cart-new', crashing(3)), pod('cart-old-a', 'cart-old', crashing(3))], events: [backoff('cart-old-a', at(-2 * MIN))] },
        [
          {
            at: at(-3 * MIN),
            actor: 'kubectl-edit',
            kind: 'config',
            target: { kind: 'ConfigMap', namespace: 'shop', name: 'cart-config' },
            source: 'kubernetes',
            summary: 'kubectl edit updated configmap/cart-config data (values not shown)',
            citation: { source: 'kubernetes', ref: 'api/v1/namespaces/shop/configmaps/cart-config#metadata.managedFields[1]' },
            score: 0.8,
            why: [],
          },
        ],
      ),
    );
    expect(f!.mitigation).toBeUndefined();
    expect(f!.facts?.['revision']).toBeUndefined();
    expect(f!.facts?.['precedingChange']).toContain('configmap/cart-config');
    expect(f!.confidence).toBeLessThan(0.85);
  });

  it('defers to oom-killed and failing-probe', () => {
    const oom = crashLoop.analyze(input({ pods: [pod('cart-new-a', 'cart-new', crashing(5, 'OOMKilled', 137))] }));
    expect(oom).toEqual([]);
    const liveness = crashLoop.analyze(
      input({
        pods: [pod('cart-new-a', 'cart-new', crashing(5, 'Error', 137))],
        events: [{ metadata: { name: 'k', namespace: 'shop' }, involvedObject: { kind: 'Pod', name: 'cart-new-a' }, reason: 'Killing', message: 'Container cart failed liveness probe, will be restarted', lastTimestamp: at(-MIN) }],
      }),
    );
    expect(liveness).toEqual([]);
  });

  it('returns nothing for healthy pods or restarts long ago, and marks a long-standing crash loop as open', () => {
    expect(crashLoop.analyze(input({ pods: [pod('cart-old-a', 'cart-old', healthy)] }))).toEqual([]);
    const oldRestart = { ...healthy, containerStatuses: [{ ...healthy.containerStatuses[0]!, restartCount: 1, lastState: { terminated: { exitCode: 1, reason: 'Error', finishedAt: at(-3 * 24 * 60 * MIN) } } }] };
    expect(crashLoop.analyze(input({ pods: [pod('cart-old-a', 'cart-old', oldRestart)] }))).toEqual([]);
    const [f] = crashLoop.analyze(input({ pods: [pod('cart-old-a', 'cart-old', crashing(60))], events: [backoff('cart-old-a', at(-6 * 60 * MIN))] }));
    expect(f!.status).toBe('open');
    expect(f!.confidence).toBeLessThan(0.5);
    expect(f!.mitigation).toBeUndefined();
  });
});

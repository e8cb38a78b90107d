import type { CoreV1Event, V1Node, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { Alert } from '../../../src/alerts/types.js';
import { emptyKubeEvidence, type KubeEvidence } from '../../../src/evidence/kubernetes/gather.js';
import type { ContainerLogs } from '../../../src/evidence/kubernetes/surroundings.js';
import type { MetricSummary, SeriesSummary } from '../../../src/evidence/prometheus/types.js';
import type { ComponentRef } from '../../../src/evidence/types.js';
import { buildTopology } from '../../../src/topology/graph.js';
import { emptySnapshot, type ClusterSnapshot } from '../../../src/topology/snapshot.js';
import { walkFrom } from '../../../src/topology/walk.js';
import type { ClusterTriageInput, TriageInput } from '../../../src/triage/analyzer.js';
import { clockSkew, nodeOfInstance } from '../../../src/triage/cluster/clock-skew.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const at = (min: number) => new Date(ONSET.getTime() + min * 60_000);
const alert: Alert = { source: 'grafana', status: 'firing', title: '[FIRING:1] AuthGatewayUnauthorizedRatioHigh', alertName: 'AuthGatewayUnauthorizedRatioHigh', labels: { namespace: 'edge', service: 'auth-gateway' }, labelValues: [], annotations: {}, count: 1, text: '' };

const PODS = { 'node-1': 'auth-gateway-5c7d9f8b6-hx4vq', 'node-2': 'auth-gateway-5c7d9f8b6-zq7tw', 'node-3': 'auth-gateway-5c7d9f8b6-r2m8k' } as const;
const REJECTED = 'level=warn msg="rejected bearer token" reason="token has invalid claims: token used before issued" client_id=<*> path=<*> status=401';
const EXPIRED = 'level=warn msg="rejected bearer token" reason="token has invalid claims: token is expired" client_id=<*> path=<*> status=401';
const OK = 'level=info msg=request method=<*> path=<*> status=200 upstream=<*> duration_ms=<NUM> client_id=<*>';

function node(name: string, ip: string): V1Node {
  return {
    metadata: { name, creationTimestamp: at(-500 * 24 * 60) },
    status: {
      addresses: [
        { type: 'InternalIP', address: ip },
        { type: 'Hostname', address: name },
      ],
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: at(-1), lastTransitionTime: at(-62 * 24 * 60) }],
    },
  };
}
const NODES = [node('node-1', '10.40.0.11'), node('node-2', '10.40.0.12'), node('node-3', '10.40.0.13')];

function pod(name: string, nodeName: string, times: { scheduled?: Date; started?: Date } = {}): V1Pod {
  return {
    metadata: { name, namespace: 'edge', labels: { app: 'auth-gateway' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'auth-gateway-5c7d9f8b6', uid: 'rs', controller: true }], creationTimestamp: at(-14 * 24 * 60) },
    spec: { nodeName, containers: [{ name: 'auth-gateway', image: 'registry.example/edge/auth-gateway:3.2.0' }] },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'Ready', status: 'True', lastTransitionTime: at(-14 * 24 * 60) },
        { type: 'PodScheduled', status: 'True', lastTransitionTime: times.scheduled ?? at(-14 * 24 * 60) },
      ],
      containerStatuses: [{ name: 'auth-gateway', ready: true, restartCount: 0, image: 'registry.example/edge/auth-gateway:3.2.0', imageID: '', state: { running: { startedAt: times.started ?? at(-14 * 24 * 60 + 0.2) } } }],
    },
  };
}

const logs = (p: string, patterns: { template: string; count: number }[]): ContainerLogs => ({
  pod: p,
  container: 'auth-gateway',
  previous: false,
  running: true,
  patterns: patterns.map((x) => ({ ...x, example: x.template.replace(/<\*>/g, 'storefront-web').replace('<NUM>', '14'), first: at(-20), last: at(-1) })),
  tail: [],
});

function series(metric: Record<string, string>, v: { last: number; max?: number; min?: number; baseline?: number; shiftAt?: Date }): SeriesSummary {
  const max = v.max ?? v.last;
  return {
    metric,
    points: 960,
    nonFinite: 0,
    from: at(-8 * 60),
    to: ONSET,
    first: v.baseline ?? v.last,
    last: v.last,
    min: v.min ?? Math.min(v.baseline ?? v.last, v.last),
    max,
    mean: v.last,
    baseline: { median: v.baseline ?? v.last, mad: 0.001 },
    changePoints: v.shiftAt ? [{ at: v.shiftAt, before: v.baseline ?? 0, after: v.last }] : [],
    ...(v.shiftAt ? { deviationStart: v.shiftAt, deviationDirection: 'up' as const } : {}),
  };
}

const CLOCK_QUERY = 'max by (instance) (abs(node_timex_offset_seconds{instance=~"(node-1|10.40.0.11|node-2|10.40.0.12|node-3|10.40.0.13)(:[0-9]+)?"}))';
function clockSummary(s: SeriesSummary[], query = CLOCK_QUERY, id = 'node_clock_offset'): MetricSummary {
  return { id, title: 'Node clock offset (seconds)', unit: 'seconds', badWhen: 'high', threshold: 1, query, range: { from: at(-60), to: at(5) }, stepSeconds: 30, status: 'success', series: s, citation: { source: 'prometheus', ref: query } };
}

function world(o: { pods?: V1Pod[]; containerLogs?: ContainerLogs[]; metrics?: MetricSummary[]; events?: CoreV1Event[]; nodes?: V1Node[] } = {}): ClusterTriageInput {
  const pods = o.pods ?? [pod(PODS['node-1'], 'node-1'), pod(PODS['node-2'], 'node-2'), pod(PODS['node-3'], 'node-3')];
  const snapshot: ClusterSnapshot = {
    ...emptySnapshot(),
    readAt: at(1),
    namespaces: [{ metadata: { name: 'edge' } }],
    nodes: o.nodes ?? NODES,
    deployments: [{ metadata: { name: 'auth-gateway', namespace: 'edge', uid: 'dep' }, spec: { replicas: 3, selector: { matchLabels: { app: 'auth-gateway' } }, template: { metadata: { labels: { app: 'auth-gateway' } }, spec: { containers: [{ name: 'auth-gateway' }] } } } }],
    replicaSets: [{ metadata: { name: 'auth-gateway-5c7d9f8b6', namespace: 'edge', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'auth-gateway', uid: 'dep', controller: true }] } }],
    pods,
    services: [{ metadata: { name: 'auth-gateway', namespace: 'edge' }, spec: { selector: { app: 'auth-gateway' }, ports: [{ port: 8080 }] } }],
  };
  const topology = buildTopology(snapshot);
  const subjects = [{ ref: { kind: 'Service', namespace: 'edge', name: 'auth-gateway' } as ComponentRef, how: 'label service=auth-gateway' }];
  const walk = walkFrom(subjects, topology);
  const kube: KubeEvidence = {
    ...emptyKubeEvidence(ONSET, 'https://k8s.test'),
    target: { kind: 'Deployment', namespace: 'edge', name: 'auth-gateway' },
    workload: snapshot.deployments[0]!,
    pods,
    services: [{ service: snapshot.services[0]! }],
    events: o.events ?? [],
    nodes: snapshot.nodes,
    containerLogs: o.containerLogs ?? [
      logs(PODS['node-1'], [{ template: OK, count: 1200 }, { template: EXPIRED, count: 20 }]),
      logs(PODS['node-2'], [{ template: REJECTED, count: 1780 }, { template: OK, count: 60 }]),
      logs(PODS['node-3'], [{ template: OK, count: 1180 }]),
    ],
  };
  const input: TriageInput = { alert, onset: ONSET, kube, changes: [], cluster: { snapshot, topology, walk, subjects, candidate: walk.candidates[0]! } };
  return { alert, onset: ONSET, cluster: { snapshot, topology, walk, subjects }, inputs: [input], changes: [], metrics: o.metrics ?? [], jobs: [] };
}

/** What node-exporter shows: node-2's offset 340 s since the reboot, the others a fraction of a millisecond. */
const skewed = () =>
  clockSummary([
    series({ instance: '10.40.0.11:9100' }, { last: 0.0004 }),
    series({ instance: '10.40.0.12:9100' }, { last: 340, baseline: 0.08, shiftAt: at(-25) }),
    series({ instance: '10.40.0.13:9100' }, { last: 0.0003 }),
  ]);

/** A kubelet event on node-2 after its clock was stepped: stamped by node-2 (340 s early), created by the API server. */
const kubeletEvent = (name: string, reason: string, createdMin: number, lagS = 340, host = 'node-2'): CoreV1Event => {
  const created = at(createdMin);
  const stamped = new Date(created.getTime() - lagS * 1000);
  return {
    metadata: { name, namespace: 'edge', creationTimestamp: created },
    involvedObject: { kind: 'Pod', namespace: 'edge', name: PODS['node-2'], fieldPath: 'spec.containers{auth-gateway}' },
    reason,
    message: `${reason} container auth-gateway`,
    source: { component: 'kubelet', host },
    firstTimestamp: stamped,
    lastTimestamp: stamped,
    count: 1,
    type: 'Normal',
  };
};

describe('clock-skew', () => {
  it('blames the node whose clock is 340 s off when only its pod rejects tokens as used before issued', () => {
    const [f, ...rest] = clockSkew.analyze(world({ metrics: [skewed()] }));
    expect(rest).toEqual([]);
    expect(f).toMatchObject({
      key: 'clock-skew:/Node/node-2',
      analyzer: 'clock-skew',
      family: 'clock-skew',
      status: 'supported',
      component: { kind: 'Node', name: 'node-2' },
      facts: { node: 'node-2', skewSeconds: 340, podsOnNode: 1, skewSource: 'metric', direction: 'behind' },
    });
    expect(f!.confidence).toBeGreaterThanOrEqual(0.85);
    expect(f!.confidence).toBeLessThanOrEqual(0.92);
    expect(f!.mitigation).toBeUndefined();
    expect(f!.affected).toEqual([
      { kind: 'Deployment', namespace: 'edge', name: 'auth-gateway' },
      { kind: 'Service', namespace: 'edge', name: 'auth-gateway' },
    ]);
    const refs = f!.supporting.map((e) => e.citation.ref);
    expect(refs).toContain(CLOCK_QUERY);
    expect(refs).toContain(`api/v1/namespaces/edge/pods/${PODS['node-2']}/log?container=auth-gateway`);
    expect(f!.supporting.some((e) => /other nodes' clocks within 1 s: node-1, node-3/.test(e.summary))).toBe(true);
    expect(f!.mechanism).toMatch(/340 s behind since 11:35:00/);
    expect(f!.mechanism).toMatch(/pods on other nodes do not/);
    // "token is expired" on node-1 is ordinary expiry, not a clock symptom.
    expect(f!.refuting).toEqual([]);
  });

  it('maps `instance` by node name (kube-prometheus relabelling) and keeps the sign of an ntp offset', () => {
    const q = 'max by (instance) (node_ntp_offset_seconds)';
    const m = clockSummary([series({ instance: 'node-2' }, { last: 340.4, baseline: 0.08 }), series({ instance: 'node-1' }, { last: 0.0004 })], q, 'node_ntp_offset');
    const [f] = clockSkew.analyze(world({ metrics: [m] }));
    expect(f).toMatchObject({ status: 'supported', facts: { node: 'node-2', skewSeconds: 340, direction: 'behind' } });
    expect(nodeOfInstance(NODES, { instance: '10.40.0.13:9100' })?.metadata?.name).toBe('node-3');
    expect(nodeOfInstance(NODES, { node: 'node-1' })?.metadata?.name).toBe('node-1');
    expect(nodeOfInstance(NODES, { instance: 'node-2.dc1.example.internal:9100' })?.metadata?.name).toBe('node-2');
    expect(nodeOfInstance(NODES, { instance: '10.99.0.1:9100' })).toBeUndefined();
  });

  it('keeps a skew nothing complains about open', () => {
    const quiet = [logs(PODS['node-1'], [{ template: OK, count: 1200 }]), logs(PODS['node-2'], [{ template: OK, count: 1100 }]), logs(PODS['node-3'], [{ template: OK, count: 1180 }])];
    const [f] = clockSkew.analyze(world({ metrics: [skewed()], containerLogs: quiet }));
    expect(f).toMatchObject({ status: 'open', component: { kind: 'Node', name: 'node-2' }, facts: { skewSeconds: 340 } });
    expect(f!.confidence).toBeLessThanOrEqual(0.5);
    expect(f!.mechanism).toMatch(/No log line of the candidates complains about time/);
  });

  it('is inconclusive when pods on healthy clocks fail the same way, more often', () => {
    const mixed = [logs(PODS['node-1'], [{ template: REJECTED, count: 600 }]), logs(PODS['node-2'], [{ template: REJECTED, count: 100 }]), logs(PODS['node-3'], [{ template: OK, count: 1180 }])];
    const [f] = clockSkew.analyze(world({ metrics: [skewed()], containerLogs: mixed }));
    expect(f).toMatchObject({ status: 'inconclusive', component: { kind: 'Node', name: 'node-2' } });
    expect(f!.confidence).toBeLessThanOrEqual(0.5);
    expect(f!.refuting[0]!.summary).toMatch(/on node node-1/);
  });

  it('marks a skewed node that runs no candidate pod unrelated', () => {
    const pods = [pod(PODS['node-1'], 'node-1'), pod(PODS['node-3'], 'node-3')];
    const containerLogs = [logs(PODS['node-1'], [{ template: OK, count: 1200 }]), logs(PODS['node-3'], [{ template: OK, count: 1180 }])];
    const [f] = clockSkew.analyze(world({ metrics: [skewed()], pods, containerLogs }));
    expect(f).toMatchObject({ status: 'unrelated', component: { kind: 'Node', name: 'node-2' }, supporting: [] });
    expect(f!.reason).toMatch(/runs none of the pods/);
  });

  it('measures the skew from the kubelet\'s event stamps when node-exporter cannot see it (timex offset 0)', () => {
    // node_timex_offset_seconds is the PLL residual, 0 without an NTP daemon: it cannot show a stepped clock.
    const flat = clockSummary([series({ instance: '10.40.0.11:9100' }, { last: 0.00001 }), series({ instance: '10.40.0.12:9100' }, { last: 0 }), series({ instance: '10.40.0.13:9100' }, { last: 0.00001 })]);
    const events = [
      // before the reboot node-2's clock was right
      kubeletEvent('gw.killing', 'Killing', -27, 0),
      kubeletEvent('gw.pulled', 'Pulled', -19.93),
      kubeletEvent('gw.created', 'Created', -19.92),
      kubeletEvent('gw.started', 'Started', -19.83),
      // a healthy node's kubelet, stamped on time
      { ...kubeletEvent('other.1', 'Started', -30, 0, 'node-1'), involvedObject: { kind: 'Pod', namespace: 'edge', name: PODS['node-1'] } },
      { ...kubeletEvent('other.2', 'Pulled', -30.1, 0.4, 'node-1'), involvedObject: { kind: 'Pod', namespace: 'edge', name: PODS['node-1'] } },
    ];
    const [f, ...rest] = clockSkew.analyze(world({ metrics: [flat], events }));
    expect(rest).toEqual([]);
    expect(f).toMatchObject({ status: 'supported', component: { kind: 'Node', name: 'node-2' }, facts: { node: 'node-2', skewSeconds: 340, skewSource: 'event_timestamps', direction: 'behind' } });
    expect(f!.confidence).toBeGreaterThanOrEqual(0.8);
    expect(f!.supporting.some((e) => e.kind === 'event' && /stamped 340 s before the API server recorded them/.test(e.summary))).toBe(true);
    expect(f!.mechanism).toMatch(/cannot show a clock that was stepped/);
  });

  it('falls back to a lower bound when a container "started" before its pod was scheduled', () => {
    const pods = [pod(PODS['node-1'], 'node-1'), pod(PODS['node-2'], 'node-2', { scheduled: at(-20), started: at(-25.5) }), pod(PODS['node-3'], 'node-3')];
    const [f] = clockSkew.analyze(world({ pods }));
    expect(f).toMatchObject({ status: 'supported', facts: { node: 'node-2', skewSeconds: 330, skewSource: 'container_start', skewIsLowerBound: true, direction: 'behind' } });
    expect(f!.confidence).toBeLessThan(0.8);
    expect(f!.mechanism).toMatch(/No node clock-offset metric was available/);
  });

  it('leaves time errors that every node logs alone, and needs a measure before it supports anything', () => {
    const everywhere = [logs(PODS['node-1'], [{ template: REJECTED, count: 600 }]), logs(PODS['node-2'], [{ template: REJECTED, count: 610 }]), logs(PODS['node-3'], [{ template: REJECTED, count: 590 }])];
    expect(clockSkew.analyze(world({ containerLogs: everywhere }))).toEqual([]);
    // Errors from one node's pod, but no measure of its clock: open.
    const [f] = clockSkew.analyze(world());
    expect(f).toMatchObject({ status: 'open', component: { kind: 'Node', name: 'node-2' } });
    expect(f!.facts).not.toHaveProperty('skewSeconds');
  });

  it('returns nothing when clocks are fine and no pod complains', () => {
    const fine = clockSummary([series({ instance: '10.40.0.11:9100' }, { last: 0.0004 }), series({ instance: '10.40.0.12:9100' }, { last: 0.08 })]);
    // A startup line that merely prints the allowed skew is not a complaint.
    const quiet = [logs(PODS['node-2'], [{ template: OK, count: 1100 }, { template: 'level=info msg="oidc verifier ready" issuer=<*> allowed clock skew 30s', count: 1 }])];
    expect(clockSkew.analyze(world({ metrics: [fine], containerLogs: quiet }))).toEqual([]);
    expect(clockSkew.analyze(world({ nodes: [] }))).toEqual([]);
  });
});

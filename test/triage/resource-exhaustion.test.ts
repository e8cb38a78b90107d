import type { CoreV1Event, V1Deployment, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { KubeEvidence } from '../../src/evidence/kubernetes/gather.js';
import type { ContainerLogs } from '../../src/evidence/kubernetes/surroundings.js';
import { emptySurroundings } from '../../src/evidence/kubernetes/surroundings.js';
import type { LogSummary } from '../../src/evidence/loki/types.js';
import type { MetricSummary } from '../../src/evidence/prometheus/types.js';
import type { TriageInput } from '../../src/triage/analyzer.js';
import { exhaustedResource, resourceExhaustion } from '../../src/triage/analyzers/resource-exhaustion.js';

const onset = new Date('2025-03-01T12:00:00Z');
const at = (offsetMs: number) => new Date(onset.getTime() + offsetMs);
const MIN = 60_000;
const NS = 'edge';

function pod(name: string, node: string): V1Pod {
  return {
    metadata: { name, namespace: NS, labels: { app: 'gateway' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'gateway-6d8f9', uid: 'rs' }] },
    spec: { nodeName: node, containers: [{ name: 'gateway', image: 'reg/gateway:1.12.0' }, { name: 'istio-proxy', image: 'istio/proxyv2:1.22.0' }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [{ name: 'gateway', ready: true, restartCount: 0, image: 'x', imageID: '', state: { running: { startedAt: at(-3 * 24 * 60 * MIN) } } }] },
  };
}
const PODS = [pod('gateway-6d8f9-abcde', 'node-a'), pod('gateway-6d8f9-fghij', 'node-b')];

function logs(podName: string, lines: { template: string; example?: string; count: number; first?: Date }[], previous = false): ContainerLogs {
  return {
    pod: podName,
    container: 'gateway',
    previous,
    running: !previous,
    patterns: lines.map((l) => ({ template: l.template, example: l.example ?? l.template, count: l.count, ...(l.first ? { first: l.first, last: at(MIN) } : {}), level: 'error' as const })),
    tail: [],
  };
}
const EMFILE = '<TS> http: Accept error: accept tcp [::]:<NUM>: accept4: too many open files; retrying in <DURATION>';
const EMFILE_EX = '2025/03/01 11:54:02 http: Accept error: accept tcp [::]:8080: accept4: too many open files; retrying in 1s';

function input(kube: Partial<KubeEvidence>, extra: Partial<TriageInput> = {}): TriageInput {
  const workload: V1Deployment = {
    metadata: { name: 'gateway', namespace: NS },
    spec: { selector: { matchLabels: { app: 'gateway' } }, template: { spec: { containers: [{ name: 'gateway', image: 'reg/gateway:1.12.0' }, { name: 'istio-proxy', image: 'istio/proxyv2:1.22.0' }] } } },
  };
  return {
    alert: { labels: {}, labelValues: [] } as unknown as TriageInput['alert'],
    onset,
    changes: [],
    kube: {
      ...emptySurroundings(),
      onset,
      target: { kind: 'Deployment', namespace: NS, name: 'gateway' },
      workload,
      replicaSets: [],
      pods: PODS,
      services: [{ service: { metadata: { name: 'gateway' } }, endpoints: { subsets: [{ addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }] }] } }],
      events: [],
      related: [],
      dependents: [],
      unhealthyPods: [],
      warningEvents: [],
      gaps: [],
      server: '',
      ...kube,
    },
    ...extra,
  };
}

function fdsRatio(max: number): MetricSummary {
  const q = 'max by (namespace, pod) (process_open_fds{namespace=~"edge"} / process_max_fds{namespace=~"edge"})';
  return {
    id: 'process_fds',
    title: 'Open file descriptors / limit',
    unit: 'ratio',
    badWhen: 'high',
    threshold: 0.9,
    query: q,
    range: { from: at(-60 * MIN), to: at(5 * MIN) },
    stepSeconds: 30,
    status: 'success',
    series: [{ metric: { namespace: NS, pod: 'gateway-6d8f9-abcde' }, points: 100, nonFinite: 0, from: at(-60 * MIN), to: at(5 * MIN), first: 0.3, last: max, min: 0.3, max, mean: 0.6, baseline: { median: 0.3, mad: 0.02 }, changePoints: [], ...(max > 0.5 ? { deviationStart: at(-20 * MIN), deviationDirection: 'up' as const } : {}) }],
    citation: { source: 'prometheus', ref: q },
  };
}

function nodeEvent(node: string, message: string, count = 412): CoreV1Event {
  return {
    metadata: { name: `${node}.17f3a`, namespace: 'default' },
    involvedObject: { kind: 'Node', name: node },
    reason: 'ConntrackTableFull',
    source: { component: 'kernel-monitor', host: node },
    type: 'Warning',
    message,
    count,
    firstTimestamp: at(-8 * MIN),
    lastTimestamp: at(-10_000),
  };
}

describe('resource-exhaustion', () => {
  it('recognises the kernel-resource wordings of common runtimes, and not their look-alikes', () => {
    expect(exhaustedResource('accept4() failed (24: Too many open files)')).toBe('file_descriptors');
    expect(exhaustedResource('java.net.SocketException: Too many open files')).toBe('file_descriptors');
    expect(exhaustedResource("Error: EMFILE: too many open files, open '/app/data/cache.json'")).toBe('file_descriptors');
    expect(exhaustedResource('OSError: [Errno 23] Too many open files in system')).toBe('file_descriptors');
    expect(exhaustedResource('dial tcp 10.96.12.4:5432: connect: cannot assign requested address')).toBe('ephemeral_ports');
    expect(exhaustedResource('Error: connect EADDRNOTAVAIL 10.96.12.4:6379 - Local (0.0.0.0:0)')).toBe('ephemeral_ports');
    expect(exhaustedResource('listen tcp 10.1.2.3:8080: bind: cannot assign requested address')).toBeUndefined();
    expect(exhaustedResource('listen tcp :8080: bind: address already in use')).toBeUndefined();
    expect(exhaustedResource('nf_conntrack: nf_conntrack: table full, dropping packet')).toBe('conntrack');
    expect(exhaustedResource('java.lang.OutOfMemoryError: unable to create native thread: possibly out of memory or process/resource limits reached')).toBe('pids');
    expect(exhaustedResource('runtime: failed to create new OS thread (have 1024 already; errno=11)')).toBe('pids');
    expect(exhaustedResource('/bin/sh: fork: retry: Resource temporarily unavailable')).toBe('pids');
    expect(exhaustedResource('RuntimeError: can\'t start new thread')).toBe('pids');
    expect(exhaustedResource('ERROR:  could not resize shared memory segment "/PostgreSQL.1939" to 8388608 bytes: No space left on device')).toBe('shm');
    expect(exhaustedResource('write /var/lib/data/wal/000123: no space left on device')).toBeUndefined();
    expect(exhaustedResource('connection refused')).toBeUndefined();
    expect(exhaustedResource('Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "d5": plugin type="aws-cni" name="aws-cni" failed (add): add cmd: failed to assign an IP address to container')).toBe('ip_addresses');
    expect(exhaustedResource('failed to allocate for range 0: no IP addresses available in range set: 10.244.3.1-10.244.3.254')).toBe('ip_addresses');
    expect(exhaustedResource('plugin type="calico" failed (add): failed to request IPv4 addresses: no more free affinity blocks')).toBe('ip_addresses');
  });

  it('localises pods that get no IP to the node whose CNI has none left, and proposes a cordon', () => {
    const stuck: V1Pod = { ...pod('gateway-6d8f9-zzzzz', 'node-c'), status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True' }] } };
    const sandbox: CoreV1Event = {
      metadata: { name: 'gateway-6d8f9-zzzzz.17f3b', namespace: NS },
      involvedObject: { kind: 'Pod', name: 'gateway-6d8f9-zzzzz', namespace: NS },
      reason: 'FailedCreatePodSandBox',
      source: { component: 'kubelet', host: 'node-c' },
      type: 'Warning',
      message: 'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "797764e7": plugin type="aws-cni" name="aws-cni" failed (add): add cmd: failed to assign an IP address to container',
      count: 51,
      firstTimestamp: at(-14 * MIN),
      lastTimestamp: at(-10_000),
    };
    const nodes = [{ metadata: { name: 'node-c' }, spec: {}, status: { conditions: [{ type: 'Ready', status: 'True' }] } }];
    const [f] = resourceExhaustion.analyze(input({ pods: [...PODS, stuck], events: [sandbox] }, { cluster: { snapshot: { pods: [...PODS, stuck], nodes } } as unknown as TriageInput['cluster'] }));
    expect(f).toMatchObject({ status: 'supported', component: { kind: 'Node', name: 'node-c' }, facts: { resource: 'ip_addresses', node: 'node-c' }, mitigation: { action: 'cordon_node', target: { kind: 'Node', name: 'node-c' } } });
    expect(f!.supporting.map((e) => e.citation.ref)).toContain('api/v1/nodes/node-c#status.conditions');
  });

  it('finds a file-descriptor leak from the pod logs alone and proposes a restart', () => {
    const [f] = resourceExhaustion.analyze(
      input({ containerLogs: [logs('gateway-6d8f9-abcde', [{ template: EMFILE, example: EMFILE_EX, count: 240, first: at(-6 * MIN) }]), logs('gateway-6d8f9-fghij', [{ template: EMFILE, example: EMFILE_EX, count: 180, first: at(-4 * MIN) }])] }),
    );
    expect(f).toMatchObject({ key: 'resource-exhaustion:edge/Deployment/gateway', analyzer: 'resource-exhaustion', family: 'resource-exhaustion', status: 'supported', confidence: 0.86 });
    expect(f!.component).toEqual({ kind: 'Deployment', namespace: NS, name: 'gateway' });
    expect(f!.facts).toMatchObject({ resource: 'file_descriptors', container: 'gateway', logCount: 420, pods: 2, firstSeen: at(-6 * MIN).toISOString() });
    expect(f!.supporting[0]!.citation.ref).toBe('api/v1/namespaces/edge/pods/gateway-6d8f9-abcde/log?container=gateway');
    expect(f!.mitigation).toMatchObject({ action: 'rollout_restart', target: { kind: 'Deployment', namespace: NS, name: 'gateway' }, params: {} });
    expect(f!.mitigation!.command).toBe('kubectl rollout restart deployment/gateway -n edge');
    expect(f!.mechanism).toContain('too many open files');
    expect(f!.title).toBe('gateway out of file descriptors ("accept4: too many open files")');
    expect(f!.affected).toEqual(expect.arrayContaining([{ kind: 'Deployment', namespace: NS, name: 'gateway' }, { kind: 'Service', namespace: NS, name: 'gateway' }]));
  });

  it('undoes the rollout the leak came with, even 40 minutes before it filled the limit; restarts when it predates the rollout', () => {
    const rs = (revision: number, createdMin: number) => ({ metadata: { name: `gateway-${revision}`, namespace: NS, annotations: { 'deployment.kubernetes.io/revision': String(revision) }, creationTimestamp: at(createdMin * MIN) } });
    const leaking = (firstMin: number) => [logs('gateway-6d8f9-abcde', [{ template: EMFILE, example: EMFILE_EX, count: 240, first: at(firstMin * MIN) }]), logs('gateway-6d8f9-fghij', [{ template: EMFILE, example: EMFILE_EX, count: 180, first: at((firstMin + 1) * MIN) }])];
    const [f] = resourceExhaustion.analyze(input({ replicaSets: [rs(26, -3 * 24 * 60), rs(27, -46)] as never, containerLogs: leaking(-6) }));
    expect(f!.mitigation).toMatchObject({ action: 'rollout_undo', params: { toRevision: 26 } });
    expect(f!.mitigation!.command).toBe('kubectl rollout undo deployment/gateway -n edge --to-revision=26');
    expect(f!.facts).toMatchObject({ revision: 27, previousRevision: 26, changedAt: at(-46 * MIN).toISOString() });
    expect(f!.supporting.some((e) => e.kind === 'change' && e.summary.includes('rollout to revision 27'))).toBe(true);
    // The same failures already there before revision 27 rolled out: not its doing.
    const [g] = resourceExhaustion.analyze(input({ replicaSets: [rs(26, -3 * 24 * 60), rs(27, -4)] as never, containerLogs: leaking(-6) }));
    expect(g!.mitigation).toMatchObject({ action: 'rollout_restart' });
    expect(g!.facts).not.toHaveProperty('previousRevision');
  });

  it('is corroborated by the open-fds ratio, and doubted when that ratio is low', () => {
    const kube = { containerLogs: [logs('gateway-6d8f9-abcde', [{ template: EMFILE, example: EMFILE_EX, count: 240, first: at(-6 * MIN) }])] };
    const [f] = resourceExhaustion.analyze(input(kube, { metrics: { summaries: [fdsRatio(0.99)] } }));
    expect(f!.status).toBe('supported');
    expect(f!.confidence).toBe(0.9);
    expect(f!.facts!['usedRatio']).toBe(0.99);
    expect(f!.supporting.some((e) => e.kind === 'metric' && e.citation.source === 'prometheus')).toBe(true);
    const [g] = resourceExhaustion.analyze(input(kube, { metrics: { summaries: [fdsRatio(0.2)] } }));
    expect(g!.status).toBe('inconclusive');
    expect(g!.refuting[0]!.kind).toBe('metric');
    expect(g!.mitigation).toBeUndefined();
  });

  it('finds ephemeral port exhaustion on outgoing connections', () => {
    const [f] = resourceExhaustion.analyze(
      input({ containerLogs: [logs('gateway-6d8f9-abcde', [{ template: 'level=error msg="upstream" err="dial tcp <IP>: connect: cannot assign requested address"', example: 'level=error msg="upstream" err="dial tcp 10.96.12.4:5432: connect: cannot assign requested address"', count: 95, first: at(-3 * MIN) }])] }),
    );
    expect(f!.status).toBe('supported');
    expect(f!.facts).toMatchObject({ resource: 'ephemeral_ports', container: 'gateway' });
    expect(f!.mitigation?.action).toBe('rollout_restart');
  });

  it('ignores a wrong listen address and a port clash', () => {
    expect(
      resourceExhaustion.analyze(
        input({ containerLogs: [logs('gateway-6d8f9-abcde', [{ template: 'listen tcp <IP>: bind: cannot assign requested address', example: 'listen tcp 10.1.2.3:8080: bind: cannot assign requested address', count: 5, first: at(-MIN) }, { template: 'listen tcp :<NUM>: bind: address already in use', count: 4, first: at(-MIN) }])] }),
      ),
    ).toEqual([]);
  });

  it('localises a full conntrack table to the node the kernel reports it on', () => {
    const [f] = resourceExhaustion.analyze(input({ warningEvents: [nodeEvent('node-a', 'kernel: nf_conntrack: nf_conntrack: table full, dropping packet')] }, { cluster: { snapshot: { pods: [...PODS, { metadata: { name: 'cart-1', namespace: 'shop' }, spec: { nodeName: 'node-a', containers: [] } }] } } as unknown as TriageInput['cluster'] }));
    expect(f).toMatchObject({ key: 'resource-exhaustion:Node/node-a', status: 'supported', component: { kind: 'Node', name: 'node-a' } });
    expect(f!.facts).toMatchObject({ resource: 'conntrack', node: 'node-a' });
    expect(f!.supporting[0]!.citation.ref).toBe('api/v1/namespaces/default/events/node-a.17f3a');
    expect(f!.mitigation).toBeUndefined();
    expect(f!.scope).toContain('1 other pod on node-a');
  });

  it('reads the node\'s table from the cluster metrics, labelled by the node\'s address, for used and limit', () => {
    const gauge = (id: string, inst: string, max: number, last = max): MetricSummary => ({
      id,
      title: id,
      unit: id === 'node_conntrack' ? 'ratio' : 'entries',
      badWhen: 'high',
      threshold: id === 'node_conntrack' ? 0.9 : undefined,
      query: id,
      range: { from: at(-60 * MIN), to: at(5 * MIN) },
      stepSeconds: 15,
      status: 'success',
      series: [{ metric: { instance: `${inst}:9100` }, points: 100, nonFinite: 0, from: at(-60 * MIN), to: at(5 * MIN), first: max / 4, last, min: max / 4, max, mean: max / 2, baseline: null, changePoints: [] }],
      citation: { source: 'prometheus', ref: id },
    });
    const metrics = [gauge('node_conntrack', '10.0.0.1', 1), gauge('node_conntrack_entries', '10.0.0.1', 262144), gauge('node_conntrack_limit', '10.0.0.1', 262144), gauge('node_conntrack', '10.0.0.2', 0.12)];
    const nodes = [{ metadata: { name: 'node-a' }, status: { addresses: [{ type: 'InternalIP', address: '10.0.0.1' }] } }, { metadata: { name: 'node-b' }, status: { addresses: [{ type: 'InternalIP', address: '10.0.0.2' }] } }];
    const [f] = resourceExhaustion.analyze(input({ warningEvents: [nodeEvent('node-a', 'kernel: nf_conntrack: nf_conntrack: table full, dropping packet')] }, { cluster: { snapshot: { pods: PODS, nodes }, metrics } as unknown as TriageInput['cluster'] }));
    expect(f).toMatchObject({ component: { kind: 'Node', name: 'node-a' }, facts: { resource: 'conntrack', used: 262144, limit: 262144, usedRatio: 1 } });
    expect(f!.confidence).toBe(0.9);
    expect(f!.supporting.map((e) => e.summary).join(' ')).toContain('100% on node-a (262144 of 262144)');
  });

  it('localises conntrack exhaustion to the workload when its pods fill it on several nodes', () => {
    const [f] = resourceExhaustion.analyze(input({ warningEvents: [nodeEvent('node-a', 'nf_conntrack: table full, dropping packet'), nodeEvent('node-b', 'nf_conntrack: table full, dropping packet')] }));
    expect(f!.component).toEqual({ kind: 'Deployment', namespace: NS, name: 'gateway' });
    expect(f!.mechanism).toContain('2 nodes');
  });

  it('reads thread exhaustion and the count the Go runtime prints, without a restart proposal', () => {
    const [f] = resourceExhaustion.analyze(
      input({ containerLogs: [logs('gateway-6d8f9-abcde', [{ template: 'runtime: failed to create new OS thread (have <NUM> already; errno=<NUM>)', example: 'runtime: failed to create new OS thread (have 1024 already; errno=11)', count: 3, first: at(-2 * MIN) }], true)] }),
    );
    expect(f!.status).toBe('supported');
    expect(f!.facts).toMatchObject({ resource: 'pids', used: 1024 });
    expect(f!.supporting[0]!.citation.ref).toBe('api/v1/namespaces/edge/pods/gateway-6d8f9-abcde/log?container=gateway&previous=true');
    expect(f!.mitigation).toBeUndefined();
  });

  it('finds /dev/shm exhaustion in Loki templates new since the onset', () => {
    const q = '{namespace="edge", app="gateway"}';
    const pattern = { template: 'ERROR: could not resize shared memory segment "<*>" to <NUM> bytes: No space left on device', example: 'ERROR:  could not resize shared memory segment "/PostgreSQL.1939" to 8388608 bytes: No space left on device', count: 37, first: at(-2 * MIN), level: 'error' as const };
    const loki: LogSummary = {
      selector: q,
      query: q,
      range: { from: at(-60 * MIN), to: at(5 * MIN) },
      status: 'success',
      totalLines: 900,
      sampled: false,
      patterns: [pattern],
      errorPatterns: [pattern],
      newSinceOnset: [{ ...pattern, change: { kind: 'new', countBefore: 0, countAfter: 37, perMinuteBefore: 0, perMinuteAfter: 5 } }],
      citation: { source: 'loki', ref: q },
    };
    const [f] = resourceExhaustion.analyze(input({}, { logs: { summaries: [loki] } }));
    expect(f!.status).toBe('supported');
    expect(f!.facts).toMatchObject({ resource: 'shm', container: 'gateway' });
    expect(f!.supporting[0]!.citation).toEqual({ source: 'loki', ref: q });
  });

  it('leaves a single line, or errors that began hours before the alert, open', () => {
    const [one] = resourceExhaustion.analyze(input({ containerLogs: [logs('gateway-6d8f9-abcde', [{ template: EMFILE, example: EMFILE_EX, count: 1, first: at(-MIN) }])] }));
    expect(one!.status).toBe('open');
    expect(one!.mitigation).toBeUndefined();
    const [old] = resourceExhaustion.analyze(input({ containerLogs: [logs('gateway-6d8f9-abcde', [{ template: EMFILE, example: EMFILE_EX, count: 50, first: at(-4 * 60 * MIN) }], true)] }));
    expect(old!.status).toBe('open');
    expect(old!.mechanism).toContain('well before the alert');
  });

  it('returns nothing without such wordings', () => {
    expect(resourceExhaustion.analyze(input({ containerLogs: [logs('gateway-6d8f9-abcde', [{ template: 'upstream connect error: connection refused', count: 40, first: at(-MIN) }])] }))).toEqual([]);
  });
});

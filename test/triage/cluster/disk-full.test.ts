import type { V1Pod, V1StatefulSet } from '@kubernetes/client-node';
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
import { diskFull } from '../../../src/triage/cluster/disk-full.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const at = (min: number) => new Date(ONSET.getTime() + min * 60_000);
const alert: Alert = { source: 'alertmanager', status: 'firing', title: '[FIRING:1] OrdersApiHighErrorRate (orders orders-api critical)', alertName: 'OrdersApiHighErrorRate', labels: { namespace: 'orders', deployment: 'orders-api' }, labelValues: [], annotations: {}, count: 1, text: '' };

const PG_PANIC = '[<NUM>] PANIC: could not write to file "pg_wal/xlogtemp.<NUM>": No space left on device';
const PG_EXTEND = '[<NUM>] ERROR: could not extend file "base/<NUM>/<NUM>": No space left on device';
const PG_READY = '[<NUM>] LOG: database system is ready to accept connections';
const API_FAIL = 'level=error msg="create order failed" error="PANIC: could not write to file \\"pg_wal/xlogtemp.<NUM>\\": No space left on device (SQLSTATE 53100)"';
const API_OK = 'level=info msg=request method=<*> path=<*> status=<NUM> duration_ms=<NUM>';

const ordersDb: V1StatefulSet = {
  metadata: { name: 'orders-db', namespace: 'orders', uid: 'sts' },
  spec: {
    replicas: 1,
    serviceName: 'orders-db',
    selector: { matchLabels: { app: 'orders-db' } },
    template: { metadata: { labels: { app: 'orders-db' } }, spec: { containers: [{ name: 'postgres', image: 'docker.io/library/postgres:16.4', volumeMounts: [{ name: 'data', mountPath: '/var/lib/postgresql/data' }] }] } },
    volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'gp3', resources: { requests: { storage: '50Gi' } } } }],
  },
};

const dbPod: V1Pod = {
  metadata: { name: 'orders-db-0', namespace: 'orders', labels: { app: 'orders-db', 'statefulset.kubernetes.io/pod-name': 'orders-db-0' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'orders-db', uid: 'sts', controller: true }] },
  spec: { nodeName: 'node-2', containers: [{ name: 'postgres', image: 'docker.io/library/postgres:16.4' }], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data-orders-db-0' } }] },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }], containerStatuses: [{ name: 'postgres', ready: false, restartCount: 0, image: 'docker.io/library/postgres:16.4', imageID: '', state: { running: { startedAt: at(-41 * 24 * 60) } } }] },
};
const apiPod = (name: string): V1Pod => ({
  metadata: { name, namespace: 'orders', labels: { app: 'orders-api' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'orders-api-7f8b9c6d5', uid: 'rs', controller: true }] },
  spec: { nodeName: 'node-1', containers: [{ name: 'orders-api', image: 'registry.example/orders/orders-api:2.8.1' }] },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
});
const redisPod: V1Pod = {
  metadata: { name: 'orders-redis-0', namespace: 'orders', labels: { app: 'orders-redis' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'orders-redis', uid: 'redis', controller: true }] },
  spec: { nodeName: 'node-1', containers: [{ name: 'redis', image: 'docker.io/library/redis:7.2.5' }], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data-orders-redis-0' } }] },
  status: { phase: 'Running' },
};

const logs = (pod: string, container: string, patterns: { template: string; count: number }[]): ContainerLogs => ({
  pod,
  container,
  previous: false,
  running: true,
  patterns: patterns.map((p) => ({ ...p, example: p.template.replace(/<NUM>/g, '48213').replace(/<\*>/g, 'POST'), first: at(-6), last: at(-1) })),
  tail: [],
});

function series(metric: Record<string, string>, v: { last: number; max?: number; baseline?: number; shiftAt?: Date }): SeriesSummary {
  return {
    metric,
    points: 130,
    nonFinite: 0,
    from: at(-60),
    to: at(5),
    first: v.baseline ?? v.last,
    last: v.last,
    min: v.baseline ?? v.last,
    max: v.max ?? v.last,
    mean: v.last,
    baseline: { median: v.baseline ?? v.last, mad: 0.002 },
    changePoints: v.shiftAt ? [{ at: v.shiftAt, before: v.baseline ?? 0, after: v.last }] : [],
    ...(v.shiftAt ? { deviationStart: v.shiftAt, deviationDirection: 'up' as const } : {}),
  };
}

const PVC_QUERY = 'max by (namespace, persistentvolumeclaim) (kubelet_volume_stats_used_bytes{namespace=~"orders"} / kubelet_volume_stats_capacity_bytes{namespace=~"orders"})';
const summary = (id: string, title: string, unit: string, query: string, s: SeriesSummary[]): MetricSummary => ({
  id,
  title,
  unit,
  badWhen: 'high',
  threshold: 0.95,
  query,
  range: { from: at(-60), to: at(5) },
  stepSeconds: 30,
  status: 'success',
  series: s,
  citation: { source: 'prometheus', ref: query },
});
const usage = (dbLast: number, extra: SeriesSummary[] = []) =>
  summary('pvc_usage', 'Volume used / capacity', 'ratio', PVC_QUERY, [
    series({ namespace: 'orders', persistentvolumeclaim: 'data-orders-db-0' }, { last: dbLast, baseline: 0.93, shiftAt: at(-6) }),
    series({ namespace: 'orders', persistentvolumeclaim: 'data-orders-redis-0' }, { last: 0.078 }),
    ...extra,
  ]);

interface World {
  metrics?: MetricSummary[];
  dbLogs?: ContainerLogs[];
  apiLogs?: ContainerLogs[];
  pods?: V1Pod[];
  statefulSets?: V1StatefulSet[];
}

function world(o: World = {}): ClusterTriageInput {
  const pods = o.pods ?? [dbPod, apiPod('orders-api-7f8b9c6d5-k2p9x'), apiPod('orders-api-7f8b9c6d5-q8w4n'), redisPod];
  const snapshot: ClusterSnapshot = {
    ...emptySnapshot(),
    readAt: at(1),
    namespaces: [{ metadata: { name: 'orders' } }],
    deployments: [
      {
        metadata: { name: 'orders-api', namespace: 'orders', uid: 'dep' },
        spec: { replicas: 2, selector: { matchLabels: { app: 'orders-api' } }, template: { metadata: { labels: { app: 'orders-api' } }, spec: { containers: [{ name: 'orders-api', env: [{ name: 'DATABASE_URL', value: 'postgres://orders@orders-db.orders.svc:5432/orders' }] }] } } },
      },
    ],
    statefulSets: o.statefulSets ?? [
      ordersDb,
      {
        metadata: { name: 'orders-redis', namespace: 'orders', uid: 'redis' },
        spec: { replicas: 1, serviceName: 'orders-redis', selector: { matchLabels: { app: 'orders-redis' } }, template: { metadata: { labels: { app: 'orders-redis' } }, spec: { containers: [{ name: 'redis' }] } }, volumeClaimTemplates: [{ metadata: { name: 'data' } }] },
      },
    ],
    replicaSets: [{ metadata: { name: 'orders-api-7f8b9c6d5', namespace: 'orders', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'orders-api', uid: 'dep', controller: true }] } }],
    pods,
    services: [
      { metadata: { name: 'orders-api', namespace: 'orders' }, spec: { selector: { app: 'orders-api' }, ports: [{ port: 8080 }] } },
      { metadata: { name: 'orders-db', namespace: 'orders' }, spec: { selector: { app: 'orders-db' }, ports: [{ port: 5432 }] } },
      { metadata: { name: 'orders-redis', namespace: 'orders' }, spec: { selector: { app: 'orders-redis' }, ports: [{ port: 6379 }] } },
    ],
    pvcs: [
      { metadata: { name: 'data-orders-db-0', namespace: 'orders' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'gp3', resources: { requests: { storage: '50Gi' } } }, status: { phase: 'Bound', capacity: { storage: '50Gi' } } },
      { metadata: { name: 'data-orders-redis-0', namespace: 'orders' }, spec: { storageClassName: 'gp3', resources: { requests: { storage: '10Gi' } } }, status: { phase: 'Bound', capacity: { storage: '10Gi' } } },
    ],
    storageClasses: [{ metadata: { name: 'gp3' }, provisioner: 'ebs.csi.aws.com', allowVolumeExpansion: true }],
  };
  const topology = buildTopology(snapshot);
  const subjects = [{ ref: { kind: 'Deployment', namespace: 'orders', name: 'orders-api' } as ComponentRef, how: 'label deployment=orders-api' }];
  const walk = walkFrom(subjects, topology);
  const candidate = (kind: 'Deployment' | 'StatefulSet', name: string, containerLogs: ContainerLogs[]): TriageInput => {
    const kube: KubeEvidence = {
      ...emptyKubeEvidence(ONSET, 'https://k8s.test'),
      target: { kind, namespace: 'orders', name },
      workload: kind === 'Deployment' ? snapshot.deployments[0]! : snapshot.statefulSets.find((s) => s.metadata?.name === name)!,
      pods: pods.filter((p) => p.metadata?.labels?.['app'] === name),
      services: snapshot.services.filter((s) => s.metadata?.name === name).map((service) => ({ service })),
      containerLogs,
    };
    return { alert, onset: ONSET, kube, changes: [], cluster: { snapshot, topology, walk, subjects, candidate: walk.reached.get(`${kind}/orders/${name}`)! } };
  };
  const inputs = [
    candidate('Deployment', 'orders-api', o.apiLogs ?? [logs('orders-api-7f8b9c6d5-k2p9x', 'orders-api', [{ template: API_OK, count: 900 }, { template: API_FAIL, count: 72 }])]),
    candidate('StatefulSet', 'orders-db', o.dbLogs ?? [logs('orders-db-0', 'postgres', [{ template: PG_PANIC, count: 3 }, { template: PG_EXTEND, count: 1 }, { template: PG_READY, count: 3 }])]),
  ];
  return { alert, onset: ONSET, cluster: { snapshot, topology, walk, subjects }, inputs, changes: [], metrics: o.metrics ?? [usage(1)], jobs: [] };
}

describe('disk-full', () => {
  it('blames the full claim of the database the alerted API writes through, with usage, writer, logs and scope', () => {
    const [f, ...rest] = diskFull.analyze(world());
    expect(rest).toEqual([]);
    expect(f).toMatchObject({
      key: 'disk-full:orders/PersistentVolumeClaim/data-orders-db-0',
      analyzer: 'disk-full',
      family: 'disk-full',
      status: 'supported',
      component: { kind: 'PersistentVolumeClaim', namespace: 'orders', name: 'data-orders-db-0' },
      facts: { pvc: 'data-orders-db-0', usedPercent: 100, workload: 'orders-db', storageClass: 'gp3' },
    });
    // pvc_usage is a ratio: the bytes are not invented from it.
    expect(f!.facts).not.toHaveProperty('usedBytes');
    expect(f!.facts).not.toHaveProperty('capacityBytes');
    expect(f!.confidence).toBeGreaterThanOrEqual(0.85);
    expect(f!.confidence).toBeLessThanOrEqual(0.92);
    expect(f!.mitigation).toBeUndefined();
    expect(f!.affected).toEqual(
      expect.arrayContaining([
        { kind: 'StatefulSet', namespace: 'orders', name: 'orders-db' },
        { kind: 'Service', namespace: 'orders', name: 'orders-db' },
        { kind: 'Deployment', namespace: 'orders', name: 'orders-api' },
      ]),
    );
    expect(f!.affected![0]).toEqual({ kind: 'StatefulSet', namespace: 'orders', name: 'orders-db' });
    const refs = f!.supporting.map((e) => e.citation.ref);
    expect(refs).toContain(PVC_QUERY);
    expect(refs).toContain('api/v1/namespaces/orders/pods/orders-db-0/log?container=postgres');
    expect(refs).toContain('api/v1/namespaces/orders/pods/orders-api-7f8b9c6d5-k2p9x/log?container=orders-api');
    expect(refs).toContain('api/v1/namespaces/orders/persistentvolumeclaims/data-orders-db-0#status');
    expect(f!.mechanism).toMatch(/100% used since 11:54:00/);
    expect(f!.mechanism).toMatch(/allows expansion/);
    expect(f!.mechanism).toMatch(/Its callers orders-api get the error back/);
    expect(f!.refuting).toEqual([]);
  });

  it('reports used and capacity bytes only when the kubelet gauges are in the evidence', () => {
    const labels = { namespace: 'orders', persistentvolumeclaim: 'data-orders-db-0' };
    const used = summary('pvc_used_bytes', 'Volume used bytes', 'bytes', 'max by (namespace, persistentvolumeclaim) (kubelet_volume_stats_used_bytes{namespace=~"orders"})', [series(labels, { last: 52521566208 })]);
    const capacity = summary('pvc_capacity_bytes', 'Volume capacity bytes', 'bytes', 'max by (namespace, persistentvolumeclaim) (kubelet_volume_stats_capacity_bytes{namespace=~"orders"})', [series(labels, { last: 52521566208 })]);
    const [f] = diskFull.analyze(world({ metrics: [usage(1), used, capacity] }));
    expect(f!.facts).toMatchObject({ usedPercent: 100, usedBytes: 52521566208, capacityBytes: 52521566208 });
    expect(f!.mechanism).toContain('48.9 GiB of 48.9 GiB');
  });

  it('matches a StatefulSet claim `<template>-<pod>` even without a pod volume in the evidence', () => {
    const bare: V1Pod = { ...dbPod, spec: { ...dbPod.spec!, volumes: [] } };
    const [f] = diskFull.analyze(world({ pods: [bare, apiPod('orders-api-7f8b9c6d5-k2p9x')] }));
    expect(f).toMatchObject({ status: 'supported', facts: { pvc: 'data-orders-db-0', workload: 'orders-db' } });
    expect(f!.supporting.some((e) => /volumeClaimTemplate data/.test(e.summary))).toBe(true);
  });

  it('calls a search engine\'s data claim full at its 95% flood-stage watermark when writers quote the index block', () => {
    const esClaim = 'elasticsearch-data-orders-db-0';
    const esPod: V1Pod = { ...dbPod, spec: { ...dbPod.spec!, volumes: [{ name: 'data', persistentVolumeClaim: { claimName: esClaim } }] } };
    const BLOCK = 'level=error msg="bulk request had failed items" status=429 error_type=cluster_block_exception error_reason="index [orders-2026.12] blocked by: [TOO_MANY_REQUESTS/12/disk usage exceeded flood-stage watermark, index has read-only-allow-delete block]"';
    const metric = (last: number) => [summary('pvc_usage', 'Volume used / capacity', 'ratio', PVC_QUERY, [series({ namespace: 'orders', persistentvolumeclaim: esClaim }, { last, baseline: 0.93, shiftAt: at(-20) })])];
    const o = { pods: [esPod, apiPod('orders-api-7f8b9c6d5-k2p9x'), redisPod], apiLogs: [logs('orders-api-7f8b9c6d5-k2p9x', 'orders-api', [{ template: BLOCK, count: 180 }])], dbLogs: [logs('orders-db-0', 'postgres', [{ template: PG_READY, count: 3 }])] };
    const [f] = diskFull.analyze(world({ ...o, metrics: metric(0.951) }));
    expect(f).toMatchObject({ status: 'supported', component: { kind: 'PersistentVolumeClaim', name: esClaim }, facts: { usedPercent: 95 } });
    expect(f!.supporting[0]!.summary).toMatch(/flood-stage watermark/);
    // Without the index block in anyone's logs, 95% is just a full-ish disk.
    const quiet = { ...o, apiLogs: [logs('orders-api-7f8b9c6d5-k2p9x', 'orders-api', [{ template: API_OK, count: 900 }])] };
    expect(diskFull.analyze(world({ ...quiet, metrics: metric(0.951) })).filter((x) => x.status === 'supported')).toEqual([]);
  });

  it('supports a claim at 100% with no write error yet, with less confidence; keeps 98% open', () => {
    const quiet = { dbLogs: [logs('orders-db-0', 'postgres', [{ template: PG_READY, count: 3 }])], apiLogs: [logs('orders-api-7f8b9c6d5-k2p9x', 'orders-api', [{ template: API_OK, count: 900 }])] };
    const [full] = diskFull.analyze(world({ ...quiet, metrics: [usage(0.9995)] }));
    expect(full).toMatchObject({ status: 'supported', facts: { usedPercent: 100 } });
    expect(full!.confidence).toBeLessThan(0.8);
    expect(full!.mechanism).toMatch(/No candidate log line reports a failed write yet/);
    const [almost] = diskFull.analyze(world({ ...quiet, metrics: [usage(0.981)] }));
    expect(almost).toMatchObject({ status: 'open', facts: { usedPercent: 98 } });
  });

  it('gives logs without a usage metric at most an open finding, on the claim the writer mounts', () => {
    const [f] = diskFull.analyze(world({ metrics: [] }));
    expect(f).toMatchObject({ status: 'open', component: { kind: 'PersistentVolumeClaim', namespace: 'orders', name: 'data-orders-db-0' }, facts: { pvc: 'data-orders-db-0', workload: 'orders-db' } });
    expect(f!.confidence).toBeLessThanOrEqual(0.5);
    expect(f!.facts).not.toHaveProperty('usedPercent');
    expect(f!.mechanism).toMatch(/no volume usage metric was available/);

    // Only the caller's quote of the database error: the claim behind the service it calls, weaker still.
    const callerOnly = diskFull.analyze(world({ metrics: [], dbLogs: [logs('orders-db-0', 'postgres', [{ template: PG_READY, count: 3 }])] }));
    expect(callerOnly).toHaveLength(1);
    expect(callerOnly[0]).toMatchObject({ status: 'open', component: { name: 'data-orders-db-0' } });
    expect(callerOnly[0]!.confidence).toBeLessThan(0.4);
  });

  it('ties a StatefulSet pod\'s write errors to its own claim, not its siblings\'', () => {
    const replica = (i: number): V1Pod => ({ ...dbPod, metadata: { ...dbPod.metadata!, name: `orders-db-${i}` }, spec: { ...dbPod.spec!, volumes: [{ name: 'data', persistentVolumeClaim: { claimName: `data-orders-db-${i}` } }] } });
    const findings = diskFull.analyze(
      world({
        metrics: [],
        statefulSets: [{ ...ordersDb, spec: { ...ordersDb.spec!, replicas: 3 } }],
        pods: [replica(0), replica(1), replica(2), apiPod('orders-api-7f8b9c6d5-k2p9x')],
        dbLogs: [logs('orders-db-1', 'postgres', [{ template: PG_EXTEND, count: 5 }]), logs('orders-db-0', 'postgres', [{ template: PG_READY, count: 2 }])],
        apiLogs: [logs('orders-api-7f8b9c6d5-k2p9x', 'orders-api', [{ template: API_OK, count: 900 }])],
      }),
    );
    expect(findings.map((f) => f.component?.name)).toEqual(['data-orders-db-1']);
    expect(findings[0]).toMatchObject({ status: 'open', facts: { pvc: 'data-orders-db-1', workload: 'orders-db' } });
  });

  it('does not blame a claim the metric shows far from full, even when its writer logs ENOSPC', () => {
    const [f] = diskFull.analyze(world({ metrics: [usage(0.45)] }));
    expect(f).toMatchObject({ status: 'inconclusive', component: { name: 'data-orders-db-0' }, facts: { usedPercent: 45 } });
    expect(f!.refuting[0]!.summary).toMatch(/inodes/);
  });

  it('marks a full claim no candidate mounts unrelated, and ignores claims with room', () => {
    const other = series({ namespace: 'orders', persistentvolumeclaim: 'scratch-batch-export' }, { last: 0.99 });
    const quiet = { dbLogs: [logs('orders-db-0', 'postgres', [{ template: PG_READY, count: 3 }])], apiLogs: [logs('orders-api-7f8b9c6d5-k2p9x', 'orders-api', [{ template: API_OK, count: 900 }])] };
    const findings = diskFull.analyze(world({ ...quiet, metrics: [usage(0.71, [other])] }));
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({ status: 'unrelated', component: { kind: 'PersistentVolumeClaim', namespace: 'orders', name: 'scratch-batch-export' }, supporting: [] });
    expect(diskFull.analyze(world({ ...quiet, metrics: [usage(0.71)] }))).toEqual([]);
  });
});

import type { V1Deployment, V1EnvVar, V1ManagedFieldsEntry, V1Pod, V1ReplicaSet } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { KubeEvidence } from '../../../src/evidence/kubernetes/gather.js';
import { emptySurroundings, type ContainerLogs } from '../../../src/evidence/kubernetes/surroundings.js';
import type { MetricSummary, SeriesSummary } from '../../../src/evidence/prometheus/types.js';
import type { ClusterTriageInput, TriageInput } from '../../../src/triage/analyzer.js';
import { queueBacklog, recordOf } from '../../../src/triage/cluster/queue-backlog.js';
import { buildTopology } from '../../../src/topology/graph.js';
import { emptySnapshot, type ClusterSnapshot, type CustomObject } from '../../../src/topology/snapshot.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const at = (min: number) => new Date(ONSET.getTime() + min * 60_000);
const iso = (min: number) => at(min).toISOString();

function deployment(name: string, env: V1EnvVar[], opts: { replicas?: number; revision?: number; managedFields?: V1ManagedFieldsEntry[]; image?: string } = {}): V1Deployment {
  return {
    metadata: { name, namespace: 'shop', annotations: { 'deployment.kubernetes.io/revision': String(opts.revision ?? 3) }, managedFields: opts.managedFields ?? [] },
    spec: {
      replicas: opts.replicas ?? 2,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name, image: opts.image ?? `registry.example.com/shop/${name}:1.4.0`, env }] } },
    },
    status: { replicas: opts.replicas ?? 2, readyReplicas: opts.replicas ?? 2 },
  };
}

function pod(name: string, owner: string, opts: { ready?: boolean; crashLoop?: boolean; restarts?: number } = {}): V1Pod {
  const ready = opts.ready ?? !opts.crashLoop;
  return {
    metadata: { name, namespace: 'shop', labels: { app: owner }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `${owner}-7d9f8b6c5`, uid: 'rs', controller: true }], creationTimestamp: at(-120) },
    spec: { containers: [{ name: owner, image: 'x' }] },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
      containerStatuses: [
        {
          name: owner,
          image: 'x',
          imageID: 'x',
          ready,
          restartCount: opts.restarts ?? (opts.crashLoop ? 9 : 0),
          state: opts.crashLoop ? { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 5m0s restarting failed container' } } : { running: { startedAt: at(-120) } },
          ...(opts.crashLoop ? { lastState: { terminated: { exitCode: 1, reason: 'Error', finishedAt: at(-2) } } } : {}),
        },
      ],
    },
  };
}

function replicaSet(owner: string, revision: number, createdMin: number, image: string): V1ReplicaSet {
  return {
    metadata: { name: `${owner}-rev${revision}`, namespace: 'shop', creationTimestamp: at(createdMin), annotations: { 'deployment.kubernetes.io/revision': String(revision) }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: owner, uid: 'd', controller: true }] },
    spec: { selector: { matchLabels: { app: owner } }, template: { metadata: { labels: { app: owner } }, spec: { containers: [{ name: owner, image }] } } },
  };
}

function kube(workload: V1Deployment, over: Partial<KubeEvidence> = {}): KubeEvidence {
  const name = workload.metadata!.name!;
  return {
    ...emptySurroundings(),
    onset: ONSET,
    target: { kind: 'Deployment', namespace: 'shop', name },
    workload,
    replicaSets: [],
    pods: [pod(`${name}-7d9f8b6c5-abcde`, name), pod(`${name}-7d9f8b6c5-fghjk`, name)],
    services: [],
    events: [],
    related: [],
    dependents: [],
    unhealthyPods: [],
    warningEvents: [],
    gaps: [],
    server: 'https://k8s.test',
    ...over,
  };
}

const candidate = (k: KubeEvidence, metrics?: MetricSummary[]): TriageInput => ({
  alert: { labels: {}, labelValues: [] } as unknown as TriageInput['alert'],
  onset: ONSET,
  kube: k,
  changes: [],
  ...(metrics ? { metrics: { summaries: metrics } } : {}),
});

function series(labels: Record<string, string>, before: number, now: number, startMin: number | undefined, direction: 'up' | 'down' = 'up'): SeriesSummary {
  return {
    metric: labels,
    points: 120,
    nonFinite: 0,
    from: at(-60),
    to: at(5),
    first: before,
    last: now,
    min: Math.min(before, now),
    max: Math.max(before, now),
    mean: (before + now) / 2,
    baseline: { median: before, mad: 1 },
    changePoints: [],
    ...(startMin !== undefined ? { deviationStart: at(startMin), deviationDirection: direction } : {}),
  };
}

function summary(id: string, s: SeriesSummary[], unit = 'messages'): MetricSummary {
  return {
    id,
    title: id === 'queue_depth' ? 'RabbitMQ messages ready' : id === 'queue_consumers' ? 'RabbitMQ consumers' : id === 'request_rate' ? 'Request rate' : 'Kafka consumer group lag (summed)',
    unit,
    badWhen: id === 'queue_consumers' ? 'low' : 'high',
    query: `sum by (consumergroup, topic) (kafka_consumergroup_lag_sum{}) # ${id}`,
    range: { from: at(-60), to: at(5) },
    stepSeconds: 30,
    status: 'success',
    series: s,
    citation: { source: 'prometheus', ref: `sum by (consumergroup, topic) (kafka_consumergroup_lag_sum{}) # ${id}` },
  };
}

function cluster(inputs: TriageInput[], metrics: MetricSummary[], snap: Partial<ClusterSnapshot> = {}): ClusterTriageInput {
  const snapshot: ClusterSnapshot = { ...emptySnapshot(), readAt: ONSET, ...snap };
  const topology = buildTopology(snapshot);
  const walk = { subjects: [], starts: [], reached: new Map(), candidates: [] };
  return { alert: { labels: {}, labelValues: [] } as unknown as ClusterTriageInput['alert'], onset: ONSET, cluster: { snapshot, topology, walk, subjects: [] }, inputs, changes: [], metrics, jobs: [] };
}

const CONSUMER_ENV: V1EnvVar[] = [
  { name: 'KAFKA_BOOTSTRAP_SERVERS', value: 'kafka.kafka.svc:9092' },
  { name: 'KAFKA_GROUP_ID', value: 'order-processor' },
  { name: 'KAFKA_TOPIC', value: 'orders' },
];
const PRODUCER_ENV: V1EnvVar[] = [{ name: 'ORDERS_TOPIC', value: 'orders' }, { name: 'KAFKA_BOOTSTRAP_SERVERS', value: 'kafka.kafka.svc:9092' }];
const POISON_LINE = (offset: number) =>
  `2026-03-01 11:58:0${offset % 10},123 ERROR [org.springframework.kafka.KafkaListenerEndpointContainer#0-0-C-1] o.a.k.c.c.i.Fetcher - org.apache.kafka.common.errors.RecordDeserializationException: Error deserializing key/value for partition orders-2 at offset ${offset}. If needed, please seek past the record to continue consumption.`;

function logs(pod: string, container: string, template: string, example: string, count: number, tail: string[], previous = false): ContainerLogs {
  return { pod, container, previous, running: !previous, patterns: [{ template, example, count, first: at(-13), last: at(0), level: 'error' }], tail };
}

const lag = (before: number, now: number, startMin = -14) => summary('queue_lag_sum', [series({ consumergroup: 'order-processor', topic: 'orders' }, before, now, startMin)]);

describe('queue-backlog', () => {
  it('localises a Kafka lag to the consumer stuck on a poison message at one offset, with no mitigation', () => {
    const consumer = kube(deployment('order-processor', CONSUMER_ENV), {
      containerLogs: [
        logs(
          'order-processor-7d9f8b6c5-abcde',
          'order-processor',
          '<TS> ERROR [org.springframework.kafka.KafkaListenerEndpointContainer#<NUM>-<NUM>-C-<NUM>] o.a.k.c.c.i.Fetcher - org.apache.kafka.common.errors.RecordDeserializationException: Error deserializing key/value for partition orders-<NUM> at offset <NUM>. If needed, please seek past the record to continue consumption.',
          POISON_LINE(48213),
          340,
          [POISON_LINE(48213), POISON_LINE(48213), POISON_LINE(48213)],
        ),
      ],
    });
    const producer = kube(deployment('checkout', PRODUCER_ENV));
    const [f, ...rest] = queueBacklog.analyze(cluster([candidate(producer), candidate(consumer)], [lag(12, 48_000)]));
    expect(rest).toEqual([]);
    expect(f).toMatchObject({
      key: 'queue-backlog:shop/Deployment/order-processor',
      analyzer: 'queue-backlog',
      family: 'queue-backlog',
      status: 'supported',
      component: { kind: 'Deployment', namespace: 'shop', name: 'order-processor' },
      facts: { topic: 'orders', consumerGroup: 'order-processor', lag: 48_000, lagBefore: 12, consumer: 'order-processor', reason: 'poison_message', partition: '2', offset: '48213' },
    });
    expect(f!.confidence).toBeGreaterThanOrEqual(0.85);
    expect(String(f!.facts!['logPattern'])).toMatch(/Error deserializing key\/value for partition/);
    expect(f!.mitigation).toBeUndefined();
    expect(f!.supporting.map((e) => e.citation.ref)).toEqual(
      expect.arrayContaining([expect.stringContaining('kafka_consumergroup_lag_sum'), 'api/v1/namespaces/shop/pods/order-processor-7d9f8b6c5-abcde/log?container=order-processor']),
    );
    expect(f!.mechanism).toMatch(/orders-2@48213/);
    expect(f!.affected?.[0]).toEqual({ kind: 'Deployment', namespace: 'shop', name: 'order-processor' });
  });

  it('proposes rollout_undo when a consumer rollout right before the lag fails every record', () => {
    const line = (o: number) => `level=error msg="failed to process message" topic=orders partition=1 offset=${o} err="json: cannot unmarshal string into Go struct field Order.total of type float64"`;
    const consumer = kube(deployment('order-processor', CONSUMER_ENV, { revision: 7, image: 'registry.example.com/shop/order-processor:2.0.0' }), {
      replicaSets: [replicaSet('order-processor', 6, -3 * 24 * 60, 'registry.example.com/shop/order-processor:1.9.3'), replicaSet('order-processor', 7, -18, 'registry.example.com/shop/order-processor:2.0.0')],
      containerLogs: [logs('order-processor-7d9f8b6c5-abcde', 'order-processor', 'level=error msg="failed to process message" topic=orders partition=<NUM> offset=<NUM> err=<*>', line(9001), 5200, [line(14190), line(14191), line(14192)])],
    });
    const [f] = queueBacklog.analyze(cluster([candidate(consumer)], [lag(5, 22_000, -15)]));
    expect(f).toMatchObject({ status: 'supported', component: { name: 'order-processor' }, facts: { reason: 'processing_errors', revision: 7, previousRevision: 6 } });
    expect(f!.mitigation).toMatchObject({ action: 'rollout_undo', target: { kind: 'Deployment', namespace: 'shop', name: 'order-processor' }, params: { toRevision: 6 } });
    expect(f!.mechanism).toMatch(/1\.9\.3 → 2\.0\.0/);
  });

  it('names who scaled the consumer to zero (managedFields), without a mitigation', () => {
    const mf: V1ManagedFieldsEntry[] = [{ manager: 'kubectl', operation: 'Update', subresource: 'scale', time: at(-25), fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:replicas': {} } } }];
    const consumer = kube(deployment('order-processor', CONSUMER_ENV, { replicas: 0, managedFields: mf }), { pods: [] });
    const [f] = queueBacklog.analyze(cluster([candidate(consumer)], [lag(0, 9_000, -24)]));
    expect(f).toMatchObject({ status: 'supported', facts: { reason: 'scaled_to_zero', manager: 'kubectl', changedAt: iso(-25), consumer: 'order-processor' } });
    expect(f!.supporting.some((e) => e.citation.ref.includes('deployments/order-processor#metadata.managedFields[0]'))).toBe(true);
    expect(f!.mitigation).toBeUndefined();
  });

  it('blames a KEDA ScaledObject whose trigger watches another topic for keeping the consumer at zero', () => {
    const so: CustomObject = {
      apiVersion: 'keda.sh/v1alpha1',
      kind: 'ScaledObject',
      metadata: { name: 'order-processor', namespace: 'shop', managedFields: [{ manager: 'kubectl-edit', operation: 'Update', time: at(-40).toISOString() as unknown as Date, fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:triggers': {} } } }] },
      spec: { scaleTargetRef: { name: 'order-processor' }, minReplicaCount: 0, maxReplicaCount: 10, triggers: [{ type: 'kafka', metadata: { bootstrapServers: 'kafka.kafka.svc:9092', consumerGroup: 'order-processor', topic: 'order', lagThreshold: '50' } }] },
      status: { conditions: [{ type: 'Ready', status: 'True' }, { type: 'Active', status: 'False', reason: 'ScalerNotActive' }] },
    };
    const consumer = kube(deployment('order-processor', CONSUMER_ENV, { replicas: 0 }), { pods: [] });
    const [f] = queueBacklog.analyze(cluster([candidate(consumer)], [lag(0, 3_100, -30)], { custom: { ScaledObject: [so] } }));
    expect(f).toMatchObject({ status: 'supported', component: { kind: 'Deployment', name: 'order-processor' }, facts: { reason: 'autoscaler_at_zero', scaler: 'ScaledObject/order-processor', manager: 'kubectl-edit' } });
    expect(f!.mechanism).toMatch(/watches topic order of group order-processor, not group order-processor on orders/);
    expect(f!.supporting.some((e) => e.citation.ref === 'apis/keda.sh/v1alpha1/namespaces/shop/scaledobjects/order-processor#spec.triggers')).toBe(true);
  });

  it('reads a RabbitMQ backlog: queue depth up, consumers gone, the consumer crash-looping', () => {
    const env: V1EnvVar[] = [{ name: 'AMQP_URL', value: 'amqp://rabbitmq.messaging.svc:5672' }, { name: 'QUEUE_NAME', value: 'email-outbox' }];
    const worker = kube(deployment('mailer', env), {
      pods: [pod('mailer-7d9f8b6c5-abcde', 'mailer', { crashLoop: true })],
      containerLogs: [logs('mailer-7d9f8b6c5-abcde', 'mailer', 'Error: SMTP_PASSWORD is not set', 'Error: SMTP_PASSWORD is not set', 9, ['Error: SMTP_PASSWORD is not set'], true)],
    });
    const depth = summary('queue_depth', [series({ queue: 'email-outbox', vhost: '/' }, 3, 5_400, -20)]);
    const consumers = summary('queue_consumers', [series({ queue: 'email-outbox', vhost: '/' }, 2, 0, -21, 'down')], 'consumers');
    const [f] = queueBacklog.analyze(cluster([candidate(worker)], [depth, consumers]));
    expect(f).toMatchObject({ status: 'supported', component: { name: 'mailer' }, facts: { topic: 'email-outbox', vhost: '/', lag: 5_400, lagBefore: 3, reason: 'crash_loop', consumer: 'mailer', logPattern: 'Error: SMTP_PASSWORD is not set' } });
    expect(f!.facts!['consumerGroup']).toBeUndefined();
    expect(f!.mechanism).toMatch(/no consumer is attached/);
    expect(f!.supporting.some((e) => e.citation.ref.includes('mailer-7d9f8b6c5-abcde/log?container=mailer&previous=true'))).toBe(true);
  });

  it('stays open on a healthy consumer when nothing explains the lag, and names a flooding producer when its rate rose', () => {
    const consumer = kube(deployment('order-processor', CONSUMER_ENV));
    const [open] = queueBacklog.analyze(cluster([candidate(consumer)], [lag(10, 4_000)]));
    expect(open).toMatchObject({ status: 'open', component: { name: 'order-processor' }, facts: { reason: 'undetermined' } });
    expect(open!.confidence).toBeLessThan(0.6);
    expect(open!.supporting.length).toBeGreaterThan(0);

    const producerEnv: V1EnvVar[] = [{ name: 'KAFKA_PRODUCER_TOPIC', value: 'orders' }];
    const rate = summary('request_rate', [series({ service: 'checkout' }, 40, 900, -16)], 'req/s');
    const producer = kube(deployment('checkout', producerEnv));
    const [flood] = queueBacklog.analyze(cluster([candidate(consumer), candidate(producer, [rate])], [lag(10, 4_000)]));
    expect(flood).toMatchObject({ status: 'supported', component: { kind: 'Deployment', name: 'checkout' }, facts: { reason: 'producer_flood', producer: 'checkout', topic: 'orders' } });
    expect(flood!.confidence).toBeLessThan(0.8);
  });

  it('reports nothing without a growing lag: flat, too small, long-standing or starting well after the onset', () => {
    const consumer = candidate(kube(deployment('order-processor', CONSUMER_ENV)));
    expect(queueBacklog.analyze(cluster([consumer], [summary('queue_lag_sum', [series({ consumergroup: 'order-processor', topic: 'orders' }, 10, 12, undefined)])]))).toEqual([]);
    expect(queueBacklog.analyze(cluster([consumer], [lag(3, 9)]))).toEqual([]);
    expect(queueBacklog.analyze(cluster([consumer], [lag(0, 50_000, -3 * 24 * 60)]))).toEqual([]);
    expect(queueBacklog.analyze(cluster([consumer], [lag(0, 50_000, 30)]))).toEqual([]);
    expect(queueBacklog.analyze(cluster([consumer], []))).toEqual([]);
  });

  it('keeps a backlog with no consumer among the candidates open, localised to nothing (the broker is not its consumer)', () => {
    const other = candidate(kube(deployment('storefront', [{ name: 'CART_URL', value: 'http://cart.shop.svc:8080' }])));
    const broker = kube(deployment('kafka', [{ name: 'KAFKA_CREATE_TOPICS', value: 'orders:6:3,payments:3:3' }], { image: 'bitnami/kafka:3.7' }));
    const [f] = queueBacklog.analyze(cluster([other, candidate(broker)], [lag(0, 7_000)]));
    expect(f).toMatchObject({ status: 'open', key: 'queue-backlog:/ConsumerGroup/order-processor', facts: { topic: 'orders', consumerGroup: 'order-processor', lag: 7_000 } });
    expect(f!.component).toBeUndefined();
  });

  it('without any lag metric, still reports a consumer stuck on the same offset', () => {
    const consumer = kube(deployment('order-processor', CONSUMER_ENV), {
      containerLogs: [logs('order-processor-7d9f8b6c5-abcde', 'order-processor', 'org.apache.kafka.common.errors.SerializationException: Error deserializing key/value for partition orders-<NUM> at offset <NUM>', POISON_LINE(777), 60, [POISON_LINE(777), POISON_LINE(777)])],
    });
    const [f] = queueBacklog.analyze(cluster([candidate(consumer)], []));
    expect(f).toMatchObject({ status: 'supported', component: { name: 'order-processor' }, facts: { topic: 'orders', partition: '2', offset: '777', reason: 'poison_message' } });
    expect(f!.confidence).toBeLessThan(0.85);
    // …but not when the error moves on from record to record.
    const moving = kube(deployment('order-processor', CONSUMER_ENV), {
      containerLogs: [logs('order-processor-7d9f8b6c5-abcde', 'order-processor', 'x', POISON_LINE(777), 60, [POISON_LINE(800), POISON_LINE(801)])],
    });
    expect(queueBacklog.analyze(cluster([candidate(moving)], []))).toEqual([]);
  });

  it('reads the record a consumer error names, in the wordings of common clients', () => {
    expect(recordOf(POISON_LINE(48213))).toEqual({ topic: 'orders', partition: '2', offset: '48213' });
    expect(recordOf('Backoff FixedBackOff{interval=0, currentAttempts=10, maxAttempts=9} exhausted for orders-0@4711')).toEqual({ topic: 'orders', partition: '0', offset: '4711' });
    expect(recordOf('{"level":"ERROR","message":"[Runner] Error when calling eachMessage","topic":"payments","partition":3,"offset":"1902"}')).toEqual({ topic: 'payments', partition: '3', offset: '1902' });
    expect(recordOf('ERROR failed to handle delivery message_id=5f1c2b7a-order-99 queue=email-outbox')).toEqual({ messageId: '5f1c2b7a-order-99' });
    expect(recordOf('INFO consumer started')).toBeUndefined();
  });
});

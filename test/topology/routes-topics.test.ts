// Edges real clusters need that no catalog declares: a caller of a public host served by a Gateway API
// HTTPRoute reaches the route and its backends; a workload whose config names a Kafka topic consumes the
// KafkaTopic; a check job that ran fine hands the walk to its system's workloads; Services with only
// EndpointSlices (Endpoints deprecated since 1.33) still show their backends.
import { describe, expect, it } from 'vitest';
import { withSlices } from '../../src/evidence/kubernetes/endpoint-slices.js';
import { buildTopology, nodeId } from '../../src/topology/graph.js';
import { byHost } from '../../src/topology/subjects.js';
import { emptySnapshot, summariseConfigMap, topicNames, type CustomObject } from '../../src/topology/snapshot.js';
import { walkFrom } from '../../src/topology/walk.js';

const route: CustomObject = {
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'HTTPRoute',
  metadata: { name: 'api', namespace: 'shop' },
  spec: {
    hostnames: ['api.shop.example.com'],
    rules: [
      { matches: [{ path: { type: 'PathPrefix', value: '/api/orders' } }], backendRefs: [{ name: 'orders', port: 8080 }] },
      { matches: [{ path: { value: '/api/cart' } }], backendRefs: [{ group: '', kind: 'Service', name: 'cart', port: 80 }] },
      { backendRefs: [{ group: 'example.io', kind: 'Bucket', name: 'static' }] },
    ],
  },
};

function shop() {
  const s = emptySnapshot();
  s.namespaces = [{ metadata: { name: 'shop' } }, { metadata: { name: 'ledger' } }];
  s.services = [
    { metadata: { name: 'orders', namespace: 'shop' }, spec: { selector: { app: 'orders' }, ports: [{ port: 80, targetPort: 8080 }] } },
    { metadata: { name: 'cart', namespace: 'shop' }, spec: { selector: { app: 'cart' }, ports: [{ port: 80 }] } },
  ] as never;
  s.deployments = [
    { metadata: { name: 'frontend', namespace: 'shop' }, spec: { template: { metadata: { labels: { app: 'frontend' } }, spec: { containers: [{ name: 'web', env: [{ name: 'ORDERS_API_URL', value: 'https://api.shop.example.com/api/orders' }] }] } } } },
    { metadata: { name: 'orders', namespace: 'shop' }, spec: { template: { metadata: { labels: { app: 'orders' } }, spec: { containers: [{ name: 'orders' }] } } } },
    { metadata: { name: 'ledger-writer', namespace: 'ledger' }, spec: { template: { metadata: { labels: { app: 'ledger-writer' } }, spec: { containers: [{ name: 'w' }], volumes: [{ name: 'config', configMap: { name: 'ledger-writer-config' } }] } } } },
    { metadata: { name: 'statements', namespace: 'ledger' }, spec: { template: { metadata: { labels: { app: 'statements' } }, spec: { containers: [{ name: 's', args: ['--topic=payments.refunds'] }] } } } },
  ] as never;
  s.custom['HTTPRoute'] = [route];
  s.custom['KafkaTopic'] = [
    { apiVersion: 'kafka.strimzi.io/v1beta2', kind: 'KafkaTopic', metadata: { name: 'payments-events', namespace: 'kafka' }, spec: { topicName: 'payments.events' } },
    { apiVersion: 'kafka.strimzi.io/v1beta2', kind: 'KafkaTopic', metadata: { name: 'payments.refunds', namespace: 'kafka' }, spec: {} },
  ];
  const topics = topicNames(s.custom);
  s.configMaps = [summariseConfigMap({ metadata: { name: 'ledger-writer-config', namespace: 'ledger' }, data: { 'application.yaml': 'ledger:\n  topic: payments.events\n  dlq: payments.events-dlq\n' } }, topics)];
  s.jobs = [{ metadata: { name: 'ledger-reconcile-1', namespace: 'ledger', creationTimestamp: new Date('2026-03-01T11:00:00Z'), ownerReferences: [{ kind: 'CronJob', name: 'ledger-reconcile' }] }, status: { succeeded: 1 } }] as never;
  s.cronJobs = [{ metadata: { name: 'ledger-reconcile', namespace: 'ledger' }, spec: { jobTemplate: { spec: { template: { spec: { containers: [{ name: 'r' }] } } } } } }] as never;
  return s;
}

describe('Gateway API routes', () => {
  const t = buildTopology(shop());

  it('routes each rule to its backend Service, skipping non-Service backends', () => {
    const out = t.outgoing(nodeId({ kind: 'HTTPRoute', namespace: 'shop', name: 'api' }));
    expect(out.map((e) => [e.kind, e.to, e.via])).toEqual([
      ['routes', 'Service/shop/orders', 'rule 0 /api/orders'],
      ['routes', 'Service/shop/cart', 'rule 1 /api/cart'],
    ]);
  });

  it('links a workload calling the public host to the route, and resolves the host to it', () => {
    const calls = t.outgoing(nodeId({ kind: 'Deployment', namespace: 'shop', name: 'frontend' })).filter((e) => e.kind === 'calls');
    expect(calls.map((e) => e.to)).toEqual(['HTTPRoute/shop/api']);
    expect(byHost(t, 'api.shop.example.com', undefined)).toEqual([{ kind: 'HTTPRoute', namespace: 'shop', name: 'api' }]);
    const walk = walkFrom([{ ref: { kind: 'Deployment', namespace: 'shop', name: 'frontend' }, how: 'test' }], t);
    expect(walk.reached.has('Deployment/shop/orders')).toBe(true);
  });
});

describe('Kafka topics', () => {
  const t = buildTopology(shop());

  it('keeps only the topic names a ConfigMap mentions as whole names, never its values', () => {
    const cm = shop().configMaps[0]!;
    expect(cm.topics).toEqual(['payments.events']);
    expect(JSON.stringify(cm)).not.toContain('dlq');
  });

  it('links consumers through their ConfigMaps and their args', () => {
    expect(t.incoming('KafkaTopic/kafka/payments-events').map((e) => [e.from, e.kind, e.via])).toEqual([['Deployment/ledger/ledger-writer', 'consumes', 'topic payments.events in configmap ledger-writer-config']]);
    expect(t.incoming('KafkaTopic/kafka/payments.refunds').map((e) => e.from)).toEqual(['Deployment/ledger/statements']);
  });
});

describe('a check job that ran fine', () => {
  it('hands the walk to the workloads of its system (same namespace, same first word)', () => {
    const t = buildTopology(shop());
    const walk = walkFrom([{ ref: { kind: 'CronJob', namespace: 'ledger', name: 'ledger-reconcile' }, how: 'label job=ledger-reconcile' }], t);
    expect(walk.candidates.map((c) => c.id)).toContain('Deployment/ledger/ledger-writer');
    expect(walk.reached.has('KafkaTopic/kafka/payments-events')).toBe(true);
  });

  it('does not when its last run failed: the job itself is the suspect', () => {
    const s = shop();
    s.jobs = [{ ...s.jobs[0]!, status: { failed: 1 } }];
    const walk = walkFrom([{ ref: { kind: 'CronJob', namespace: 'ledger', name: 'ledger-reconcile' }, how: 'label job=ledger-reconcile' }], buildTopology(s));
    expect(walk.candidates.map((c) => c.id)).not.toContain('Deployment/ledger/ledger-writer');
  });
});

describe('withSlices', () => {
  it('builds Endpoints from a Service’s EndpointSlices when the cluster serves no Endpoints object', () => {
    const built = withSlices(
      [{ metadata: { namespace: 'shop', name: 'cart' }, subsets: [] }],
      [
        { addressType: 'IPv4', metadata: { namespace: 'shop', name: 'orders-abc', labels: { 'kubernetes.io/service-name': 'orders' } }, ports: [{ name: 'http', port: 8080 }], endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true } }, { addresses: ['10.0.0.2'], conditions: { ready: false } }] },
        { addressType: 'IPv4', metadata: { namespace: 'shop', name: 'cart-xyz', labels: { 'kubernetes.io/service-name': 'cart' } }, endpoints: [{ addresses: ['10.0.0.9'] }] },
      ],
    );
    expect(built).toHaveLength(2);
    expect(built[1]).toMatchObject({ metadata: { namespace: 'shop', name: 'orders' }, subsets: [{ addresses: [{ ip: '10.0.0.1' }], notReadyAddresses: [{ ip: '10.0.0.2' }], ports: [{ name: 'http', port: 8080 }] }] });
  });
});

/**
 * The service graph, built from a small but real-shaped cluster: an Ingress in front of a frontend that
 * calls quotes (env URL) and a cache (ConfigMap), quotes reads a ConfigMap and runs on a node, a
 * ServiceEntry declares an external API, a NetworkPolicy isolates quotes, an HPA scales it, a CronJob
 * runs a Job. Then the subjects an alert resolves to, the walk from them, and the scope of an origin.
 */
import { describe, expect, it } from 'vitest';
import type { Alert } from '../../src/alerts/types.js';
import { buildTopology, nodeId } from '../../src/topology/graph.js';
import { hostReferences, serviceOfHost, settingHostRefs } from '../../src/topology/references.js';
import { emptySnapshot, summariseConfigMap, type ClusterSnapshot } from '../../src/topology/snapshot.js';
import { resolveSubjects } from '../../src/topology/subjects.js';
import { affectedBy, dependsOn, pathText, walkFrom } from '../../src/topology/walk.js';

const meta = (name: string, namespace?: string, extra: Record<string, unknown> = {}) => ({ name, ...(namespace ? { namespace } : {}), uid: `uid-${namespace}-${name}`, ...extra });

function deployment(ns: string, name: string, spec: Record<string, unknown> = {}) {
  return { metadata: meta(name, ns), spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name, image: `reg/${name}:1` }], ...spec } } } };
}

function world(): ClusterSnapshot {
  const s = emptySnapshot();
  s.namespaces = ['edge', 'shop', 'kube-system'].map((n) => ({ metadata: { name: n } }));
  s.nodes = [{ metadata: { name: 'node-1' }, status: { addresses: [{ type: 'InternalIP', address: '10.0.0.1' }] } }];
  s.deployments = [
    deployment('shop', 'frontend', { containers: [{ name: 'frontend', env: [{ name: 'QUOTES_URL', value: 'http://quotes.shop.svc.cluster.local:8080/v1' }, { name: 'PAY_ADDR', value: 'payments:50051' }], envFrom: [{ configMapRef: { name: 'frontend-config' } }] }] }),
    deployment('shop', 'quotes', { volumes: [{ name: 'cfg', configMap: { name: 'quotes-config' } }] }),
    deployment('shop', 'cache'),
    deployment('kube-system', 'coredns'),
  ] as never;
  s.replicaSets = [{ metadata: { ...meta('quotes-7d9f8b6c5', 'shop'), ownerReferences: [{ kind: 'Deployment', name: 'quotes', uid: 'uid-shop-quotes', controller: true }] } }] as never;
  s.pods = [{ metadata: { ...meta('quotes-7d9f8b6c5-x2x9z', 'shop'), labels: { app: 'quotes' }, ownerReferences: [{ kind: 'ReplicaSet', name: 'quotes-7d9f8b6c5', controller: true }] }, spec: { nodeName: 'node-1', containers: [] } }] as never;
  s.services = [
    { metadata: meta('frontend', 'shop'), spec: { selector: { app: 'frontend' } } },
    { metadata: meta('quotes', 'shop'), spec: { selector: { app: 'quotes' } } },
    { metadata: meta('cache', 'shop'), spec: { selector: { app: 'cache' } } },
    { metadata: meta('kube-dns', 'kube-system'), spec: { selector: { app: 'coredns' } } },
  ] as never;
  s.ingresses = [{ metadata: meta('edge', 'shop'), spec: { rules: [{ host: 'shop.example.com', http: { paths: [{ path: '/', backend: { service: { name: 'frontend', port: { number: 80 } } } }] } }], tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }] } }] as never;
  s.configMaps = [
    summariseConfigMap({ metadata: meta('frontend-config', 'shop'), data: { 'app.yaml': 'cache:\n  url: redis://:hunter2@cache:6379/0\npayments: https://api.stripe.com/v1' } }),
    summariseConfigMap({ metadata: meta('quotes-config', 'shop'), data: { rounding: 'bankers' } }),
  ];
  s.networkPolicies = [{ metadata: meta('quotes-ingress', 'shop'), spec: { podSelector: { matchLabels: { app: 'quotes' } } } }] as never;
  s.hpas = [{ metadata: meta('quotes', 'shop'), spec: { scaleTargetRef: { kind: 'Deployment', name: 'quotes' } } }] as never;
  s.cronJobs = [{ metadata: meta('report', 'shop'), spec: { jobTemplate: { spec: { template: { spec: { containers: [{ name: 'r', env: [{ name: 'API_URL', value: 'http://frontend.shop:80' }] }] } } } } } }] as never;
  s.jobs = [{ metadata: { ...meta('report-29410', 'shop'), ownerReferences: [{ kind: 'CronJob', name: 'report' }] } }] as never;
  s.custom = { ServiceEntry: [{ apiVersion: 'networking.istio.io/v1', kind: 'ServiceEntry', metadata: meta('stripe', 'shop'), spec: { hosts: ['api.stripe.com'] } }] };
  return s;
}

const alert = (labels: Record<string, string>, extra: Partial<Alert> = {}): Alert => ({ source: 'alertmanager', status: 'firing', title: '[FIRING:1] X', alertName: labels['alertname'] ?? 'X', labels, labelValues: [], annotations: {}, count: 1, text: '', ...extra });

describe('host references in configuration', () => {
  it('finds URLs, connection strings, host:port lists and cluster names, never credentials', () => {
    expect(hostReferences('postgres://orders:Xq7vR2@orders-db.data.svc:5432/orders')).toEqual(['orders-db.data.svc:5432']);
    expect(hostReferences('kafka-0.kafka:9092,kafka-1.kafka:9092')).toEqual(['kafka-0.kafka:9092', 'kafka-1.kafka:9092']);
    expect(hostReferences('see quotes.shop.svc.cluster.local for prices')).toEqual(['quotes.shop.svc.cluster.local']);
    expect(settingHostRefs('PAYMENT_ADDR', 'payment')).toEqual([{ host: 'payment' }]);
    expect(settingHostRefs('LOG_LEVEL', 'debug')).toEqual([]);
  });

  it('maps cluster names to Services, and leaves external names alone', () => {
    expect(serviceOfHost('quotes', 'shop')).toEqual({ namespace: 'shop', name: 'quotes' });
    expect(serviceOfHost('quotes.shop.svc.cluster.local', 'edge')).toEqual({ namespace: 'shop', name: 'quotes' });
    expect(serviceOfHost('kafka-0.kafka-headless.data.svc', 'x')).toEqual({ namespace: 'data', name: 'kafka-headless', pod: 'kafka-0' });
    expect(serviceOfHost('api.stripe.com', 'shop')).toBeUndefined();
  });
});

describe('buildTopology', () => {
  const t = buildTopology(world());
  const edges = (from: string) => t.outgoing(from).map((e) => `${e.kind} ${e.to} (${e.via})`);

  it('links Ingress → Service → workload, callers → Services from env and ConfigMaps, and pod specs → config', () => {
    expect(edges('Ingress/shop/edge')).toEqual(expect.arrayContaining(['routes Service/shop/frontend (rule shop.example.com/)', 'serves-tls Secret/shop/shop-tls (tls shop.example.com)']));
    expect(edges('Service/shop/frontend')).toContain('selects Deployment/shop/frontend (selector app=frontend)');
    const fe = edges('Deployment/shop/frontend');
    expect(fe).toContain('calls Service/shop/quotes (env QUOTES_URL)');
    expect(fe).toContain('calls Service/shop/cache (configmap frontend-config)');
    expect(fe).toContain('reads ConfigMap/shop/frontend-config (envFrom)');
    expect(fe).toContain('calls Service/shop/payments (env PAY_ADDR (no such Service))');
    expect(fe.some((e) => e.startsWith('calls ExternalService//api.stripe.com'))).toBe(true);
    expect(edges('ExternalService//api.stripe.com')).toContain('configured-by ServiceEntry/shop/stripe (ServiceEntry for api.stripe.com)');
  });

  it('knows what a workload runs on, is scaled and isolated by, and who owns Jobs', () => {
    const q = edges('Deployment/shop/quotes');
    expect(q).toEqual(expect.arrayContaining(['runs-on Node//node-1 (pod quotes-7d9f8b6c5-x2x9z)', 'scaled-by HorizontalPodAutoscaler/shop/quotes (scaleTargetRef)', 'isolated-by NetworkPolicy/shop/quotes-ingress (podSelector)', 'reads ConfigMap/shop/quotes-config (volume cfg)']));
    expect(edges('CronJob/shop/report')).toEqual(expect.arrayContaining(['owns Job/shop/report-29410 (job of the cronjob)', 'calls Service/shop/frontend (env API_URL)']));
    expect(t.workloadOf('shop', 'quotes-7d9f8b6c5-x2x9z')).toEqual({ kind: 'Deployment', namespace: 'shop', name: 'quotes' });
  });
});

describe('subjects, the walk and the scope', () => {
  const t = buildTopology(world());

  it('resolves a probe URL to the Ingress, a pod label to its workload, a rule name to the workload it names', () => {
    expect(resolveSubjects(alert({ alertname: 'BlackboxProbeFailed', instance: 'https://shop.example.com/health' }), t).map((s) => nodeId(s.ref))).toEqual(['Ingress/shop/edge']);
    expect(resolveSubjects(alert({ namespace: 'shop', pod: 'quotes-7d9f8b6c5-x2x9z' }), t).map((s) => nodeId(s.ref))).toEqual(['Deployment/shop/quotes']);
    expect(resolveSubjects(alert({ alertname: 'QuotesLatencyP95' }, { alertName: 'QuotesLatencyP95' }), t).map((s) => nodeId(s.ref))).toEqual(['Deployment/shop/quotes']);
    expect(resolveSubjects(alert({ namespace: 'shop' }), t).map((s) => nodeId(s.ref))).toEqual(['Namespace//shop']);
  });

  it('reads key=value labels quoted in the body (a PagerDuty field citing the source alert) like the alert\'s own', () => {
    const a = alert({ service: 'Storefront (shop.example.org)' }, { source: 'pagerduty', text: 'Source: Prometheus / Alertmanager: StorefrontLatencySLOBurn service_name=quotes k8s_namespace_name=shop' });
    expect(resolveSubjects(a, t).map((s) => nodeId(s.ref))).toEqual(['Service/shop/quotes']);
  });

  it('reads a title\'s keyless values: a namespace given twice, and a queue to the workloads KEDA scales on it', () => {
    const a = alert({ service: 'Media Pipeline (Prometheus)' }, { source: 'pagerduty', labelValues: ['RabbitMQQueueBacklogHigh', 'quotes.requests', 'critical', 'shop', 'shop'] });
    expect(resolveSubjects(a, t).map((s) => nodeId(s.ref))).toEqual(['Namespace//shop']);
    const w = world();
    w.custom['ScaledObject'] = [{ apiVersion: 'keda.sh/v1alpha1', kind: 'ScaledObject', metadata: { name: 'quotes', namespace: 'shop' }, spec: { scaleTargetRef: { name: 'quotes' }, triggers: [{ type: 'rabbitmq', metadata: { queueName: 'quotes.requests', vhostName: 'shop' } }] } }];
    expect(resolveSubjects(a, buildTopology(w)).map((s) => nodeId(s.ref))).toEqual(['Deployment/shop/quotes']);
  });

  it('resolves a Sloth SLO burn by its service: the front door of that name, else its namespace, narrowed by the SLO\'s words', () => {
    // `sloth_slo: quotes-success` would match the quotes workload by words; the SLO's service is what users hit.
    const slo = { alertname: 'CheckoutSuccessSLOBurn', sloth_id: 'edge-quotes-success', sloth_service: 'edge', sloth_slo: 'quotes-success' };
    expect(resolveSubjects(alert(slo), t).map((s) => nodeId(s.ref))).toEqual(['Ingress/shop/edge']);
    expect(resolveSubjects(alert({ ...slo, sloth_service: 'shop' }), t).map((s) => nodeId(s.ref))).toEqual(['Deployment/shop/quotes']);
    expect(resolveSubjects(alert({ alertname: 'SLOBurn', sloth_service: 'shop', sloth_slo: 'availability' }), t).map((s) => nodeId(s.ref))).toEqual(['Namespace//shop']);
  });

  it('resolves each alert of a grouped post', () => {
    const a = alert({ alertname: 'HighErrorRate' }, { members: [{ labels: { namespace: 'shop', service: 'quotes' }, annotations: {} }, { labels: { namespace: 'shop', service: 'cache' }, annotations: {} }] });
    expect(resolveSubjects(a, t).map((s) => nodeId(s.ref)).sort()).toEqual(['Service/shop/cache', 'Service/shop/quotes']);
  });

  it('walks from the front door to candidate origins with their paths', () => {
    const w = walkFrom(resolveSubjects(alert({ instance: 'https://shop.example.com/' }), t), t);
    expect(w.candidates.map((c) => c.id)).toEqual(expect.arrayContaining(['Deployment/shop/frontend', 'Deployment/shop/quotes', 'Deployment/shop/cache']));
    expect(pathText(w.reached.get('Deployment/shop/quotes')!.path)).toBe('edge → frontend → quotes');
    expect(w.reached.get('ConfigMap/shop/quotes-config')).toBeDefined();
  });

  it('scopes a ConfigMap fault to its readers, their Services, their callers and the front door', () => {
    const hurt = affectedBy({ kind: 'ConfigMap', namespace: 'shop', name: 'quotes-config' }, t).map(nodeId);
    expect(hurt).toEqual(expect.arrayContaining(['Deployment/shop/quotes', 'Service/shop/quotes', 'Deployment/shop/frontend', 'Ingress/shop/edge', 'CronJob/shop/report']));
    expect(dependsOn(t, { kind: 'Ingress', namespace: 'shop', name: 'edge' }, { kind: 'ConfigMap', namespace: 'shop', name: 'quotes-config' })).toBe(true);
    expect(dependsOn(t, { kind: 'Deployment', namespace: 'shop', name: 'quotes' }, { kind: 'Deployment', namespace: 'shop', name: 'frontend' })).toBe(false);
  });

  it('keeps ConfigMap values out of the snapshot: keys and hosts only', () => {
    const cm = world().configMaps[0]!;
    expect(cm.keys).toEqual(['app.yaml']);
    expect(cm.hosts).toEqual(['cache:6379', 'api.stripe.com']);
    expect(JSON.stringify(cm)).not.toContain('hunter2');
  });
});

/**
 * Metric discovery against a real Prometheus (Debian's 2.42): one world in which many workloads expose their
 * request, pool and data-store series in different conventions (Micrometer, OpenTelemetry stable and old,
 * Istio, Linkerd, Envoy, ingress-nginx, gRPC, Prometheus client defaults, HikariCP, redis_exporter,
 * postgres_exporter). For each workload `discoverMetrics` asks the real series API, and the queries it writes
 * are run through `gatherMetrics` to see that they select exactly the workload's own series.
 *
 * Decoys in the same world: other workloads in the same namespace, callers' and mesh-source-reported series
 * that name the workload, the same service name in another namespace (through the same OpenTelemetry collector
 * and the same ingress controller), a workload whose name is a prefix of another (`cart` / `cart-cache`), names
 * with regex metacharacters (`a.b` next to `axb`, `c+d` next to `ccd`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CatalogEntry } from '../../../src/evidence/prometheus/catalog.js';
import { PrometheusClient } from '../../../src/evidence/prometheus/client.js';
import { discoverMetrics, discoveryMatchers, type DiscoveredMetrics, type WorkloadIdentity } from '../../../src/evidence/prometheus/discover.js';
import { gatherMetrics } from '../../../src/evidence/prometheus/gather.js';
import type { MetricSummary, MetricsEvidence, SeriesSummary } from '../../../src/evidence/prometheus/types.js';
import { buildSeries, prometheusSkipReason, startPrometheus, type PromSeries, type RunningPrometheus, type SeriesSpec } from '../../support/prometheus.js';

const skip = prometheusSkipReason();
if (skip) console.warn(`[prometheus-discover] skipped: ${skip}`);

const STEP_MS = 15_000;
// Onset on the 15 s grid, far enough back that onset + 5 m is already in the past for the server's clock.
const onset = new Date(Math.floor(Date.now() / STEP_MS) * STEP_MS - 10 * 60_000);
/** What investigate.ts passes: an hour before the onset to five minutes after. */
const range = { from: new Date(onset.getTime() - 60 * 60_000), to: new Date(onset.getTime() + 5 * 60_000) };

// ---------------------------------------------------------------------------------------------------------------
// Series shorthands

function counter(metric: string, labels: Record<string, string>, before: number, after = before): SeriesSpec {
  return { metric, labels, type: 'counter', from: '@-70m', to: '@+5m', step: '15s', segments: [{ until: '@0', rate: before }, { until: '@+5m', rate: after }] };
}

function gauge(metric: string, labels: Record<string, string>, before: number, after = before): SeriesSpec {
  return { metric, labels, type: 'gauge', from: '@-70m', to: '@+5m', step: '15s', segments: [{ until: '@0', value: before }, { until: '@+5m', value: after }] };
}

interface Traffic {
  /** Requests per second, constant. */
  rate: number;
  /** Error fraction before and after the onset. */
  before: number;
  after: number;
}

/** A request counter split by its status label: `ok`, `err` (the failures) and optionally a non-failure `other` class. */
function traffic(metric: string, labels: Record<string, string>, label: string, ok: string, err: string, t: Traffic, other?: { value: string; share: number }): SeriesSpec[] {
  const share = other?.share ?? 0;
  return [
    counter(metric, { ...labels, [label]: ok }, t.rate * (1 - share - t.before), t.rate * (1 - share - t.after)),
    counter(metric, { ...labels, [label]: err }, t.rate * t.before, t.rate * t.after),
    ...(other ? [counter(metric, { ...labels, [label]: other.value }, t.rate * share)] : []),
  ];
}

const SECONDS_LE = ['0.05', '0.1', '0.25', '0.5', '+Inf'];
const MS_LE = ['50', '100', '250', '500', '+Inf'];
/** Cumulative shares per bucket: the p99 interpolates to 0.375 s (375 ms) inside the (0.25, 0.5] bucket. */
const CUMULATIVE = [0.5, 0.9, 0.98, 1, 1];
/** Everything slower than the last finite bucket: a decoy whose buckets would drag the p99 up if mixed in. */
const SLOW = [0, 0, 0, 0, 1];
const P99_SECONDS = 0.375;

function histogram(bucket: string, labels: Record<string, string>, rate: number, unit: 's' | 'ms', shares = CUMULATIVE): SeriesSpec[] {
  return (unit === 's' ? SECONDS_LE : MS_LE).map((le, i) => counter(bucket, { ...labels, le }, rate * shares[i]!));
}

// ---------------------------------------------------------------------------------------------------------------
// The world

const shop = { namespace: 'shop' };
const checkoutPods = ['checkout-7d9f8b6c5-x2x9k', 'checkout-7d9f8b6c5-p4q7r'];
const GIB = 1_073_741_824;

const specs: SeriesSpec[] = [
  // checkout — Micrometer through a ServiceMonitor (`service` and `application`), HikariCP, and an Istio sidecar
  // whose series must lose to the app's own: 5xx from 0.1% to 30% at the onset, the pool filling up.
  ...checkoutPods.flatMap((pod, i) => {
    const labels = { ...shop, service: 'checkout', job: 'checkout', endpoint: 'http', pod, container: 'checkout', instance: `10.0.1.${10 + i}:8080`, application: 'checkout', method: 'POST', uri: '/api/checkout' };
    const pool = { ...shop, service: 'checkout', job: 'checkout', pod, application: 'checkout', pool: 'HikariPool-1' };
    const sidecar = { ...shop, pod, job: 'envoy-stats', reporter: 'destination', source_workload: 'istio-ingressgateway', destination_workload: 'checkout', destination_workload_namespace: 'shop', destination_service_name: 'checkout' };
    return [
      ...traffic('http_server_requests_seconds_count', labels, 'status', '200', '503', { rate: 50, before: 0.001, after: 0.3 }),
      ...histogram('http_server_requests_seconds_bucket', labels, 50, 's'),
      gauge('hikaricp_connections_active', pool, 3, 10),
      gauge('hikaricp_connections_max', pool, 10),
      ...traffic('istio_requests_total', sidecar, 'response_code', '200', '503', { rate: 50, before: 0.001, after: 0.001 }),
    ];
  }),
  // inventory — Micrometer scraped through pod annotations: `application` only, no `service`.
  ...(() => {
    const labels = { ...shop, pod: 'inventory-6b5d4c3f2-m8n9b', job: 'kubernetes-pods', application: 'inventory', method: 'GET', uri: '/api/stock' };
    return [...traffic('http_server_requests_seconds_count', labels, 'status', '200', '500', { rate: 40, before: 0.005, after: 0.005 }), ...histogram('http_server_requests_seconds_bucket', labels, 40, 's')];
  })(),
  // cart — Prometheus client defaults (`code`).
  ...(() => {
    const labels = { ...shop, service: 'cart', job: 'cart', pod: 'cart-5f6d7c8b9-abcde', method: 'POST', handler: '/cart' };
    return [...traffic('http_requests_total', labels, 'code', '200', '500', { rate: 20, before: 0.01, after: 0.15 }), ...histogram('http_request_duration_seconds_bucket', labels, 20, 's')];
  })(),
  // cart-cache — a Redis StatefulSet whose name starts with `cart-`: its exporter through a ServiceMonitor, steady.
  ...(() => {
    const labels = { ...shop, service: 'cart-cache', job: 'cart-cache', endpoint: 'metrics', pod: 'cart-cache-0', container: 'redis-exporter', instance: '10.0.1.30:9121' };
    return [
      gauge('redis_up', labels, 1),
      gauge('redis_memory_used_bytes', labels, 100e6),
      gauge('redis_memory_max_bytes', labels, 512 * 1_048_576),
      counter('redis_evicted_keys_total', labels, 0),
      counter('redis_keyspace_hits_total', labels, 200),
      counter('redis_keyspace_misses_total', labels, 20),
    ];
  })(),
  // search — Prometheus client with a `status` label instead of `code`.
  ...(() => {
    const labels = { ...shop, service: 'search', job: 'search', pod: 'search-84c7d6e5f-s3r4t' };
    return [...traffic('http_requests_total', labels, 'status', '200', '503', { rate: 30, before: 0.02, after: 0.02 }), ...histogram('http_request_duration_seconds_bucket', labels, 30, 's')];
  })(),
  // payments — OpenTelemetry stable semconv through a collector in `observability`: the scrape's `namespace` is
  // the collector's, the app's is `k8s_namespace_name`. The same service name in `staging` goes through the same
  // collector (ten times the traffic, half of it failing).
  ...(['shop', 'staging'] as const).flatMap((ns) => {
    const labels = {
      namespace: 'observability', service: 'otel-collector', job: 'otel-collector', pod: 'otel-collector-5c6d7e8f9-c0l01', instance: '10.0.9.9:8889',
      exported_job: `${ns}/payments`, exported_instance: `payments-${ns}-1`, service_name: 'payments', service_namespace: ns, k8s_namespace_name: ns,
      k8s_pod_name: `payments-7f8e9d0c1-${ns === 'shop' ? 'qwert' : 'stgng'}`, http_request_method: 'POST', http_route: '/pay', url_scheme: 'http',
    };
    const t = ns === 'shop' ? { rate: 30, before: 0.005, after: 0.2 } : { rate: 300, before: 0.5, after: 0.5 };
    return [
      ...traffic('http_server_request_duration_seconds_count', labels, 'http_response_status_code', '200', '500', t),
      ...histogram('http_server_request_duration_seconds_bucket', labels, t.rate, 's', ns === 'shop' ? CUMULATIVE : SLOW),
    ];
  }),
  // shipping — OpenTelemetry old semconv in milliseconds, scraped through pod annotations (`app`).
  ...(() => {
    const labels = { ...shop, pod: 'shipping-7b8c9d0e1-zx9cv', job: 'kubernetes-pods', app: 'shipping', http_method: 'GET', http_route: '/ship', http_scheme: 'http', net_host_name: 'shipping' };
    return [...traffic('http_server_duration_milliseconds_count', labels, 'http_status_code', '200', '503', { rate: 12, before: 0.01, after: 0.01 }), ...histogram('http_server_duration_milliseconds_bucket', labels, 12, 'ms')];
  })(),
  // reviews — Istio, destination-reported; productpage's sidecar reports the same calls as `source`, failing and slow.
  ...(() => {
    const dest = { destination_workload: 'reviews', destination_workload_namespace: 'shop', destination_service_name: 'reviews', source_workload: 'productpage', source_workload_namespace: 'shop' };
    const own = { ...shop, pod: 'reviews-6f7a8b9c0-rvw01', job: 'envoy-stats', reporter: 'destination', response_flags: '-', ...dest };
    const caller = { ...shop, pod: 'productpage-5d4c3b2a1-pp001', job: 'envoy-stats', reporter: 'source', response_flags: 'UF', ...dest };
    return [
      ...traffic('istio_requests_total', own, 'response_code', '200', '503', { rate: 25, before: 0.001, after: 0.25 }),
      ...histogram('istio_request_duration_milliseconds_bucket', own, 25, 'ms'),
      ...traffic('istio_requests_total', caller, 'response_code', '200', '503', { rate: 60, before: 0.5, after: 0.5 }),
      ...histogram('istio_request_duration_milliseconds_bucket', caller, 60, 'ms', SLOW),
    ];
  })(),
  // ledger — Linkerd inbound; its own outbound calls and web's outbound calls to it are in the same metric.
  ...(() => {
    const proxy = { ...shop, job: 'linkerd-proxy', container: 'linkerd-proxy', tls: 'true' };
    const inbound = { ...proxy, pod: 'ledger-8c9d0e1f2-ldg01', deployment: 'ledger', direction: 'inbound' };
    const ownOutbound = { ...proxy, pod: 'ledger-8c9d0e1f2-ldg01', deployment: 'ledger', direction: 'outbound', dst_deployment: 'accounts', dst_namespace: 'shop' };
    const webOutbound = { ...proxy, pod: 'web-6a5b4c3d2-web01', deployment: 'web', direction: 'outbound', dst_deployment: 'ledger', dst_namespace: 'shop' };
    return [
      ...traffic('response_total', inbound, 'classification', 'success', 'failure', { rate: 8, before: 0.002, after: 0.002 }),
      ...histogram('response_latency_ms_bucket', inbound, 8, 'ms'),
      ...traffic('response_total', ownOutbound, 'classification', 'success', 'failure', { rate: 50, before: 0.9, after: 0.9 }),
      ...histogram('response_latency_ms_bucket', ownOutbound, 50, 'ms', SLOW),
      ...traffic('response_total', webOutbound, 'classification', 'success', 'failure', { rate: 100, before: 0.6, after: 0.6 }),
      ...histogram('response_latency_ms_bucket', webOutbound, 100, 'ms', SLOW),
    ];
  })(),
  // edge-proxy — a standalone Envoy (downstream stats, code classes; 4xx are not failures).
  ...(() => {
    const labels = { ...shop, service: 'edge-proxy', job: 'edge-proxy', pod: 'edge-proxy-9d8c7b6a5-env01', envoy_http_conn_manager_prefix: 'ingress_http' };
    return [
      ...traffic('envoy_http_downstream_rq_xx', labels, 'envoy_response_code_class', '2', '5', { rate: 60, before: 0.002, after: 0.4 }, { value: '4', share: 0.05 }),
      ...histogram('envoy_http_downstream_rq_time_bucket', labels, 60, 'ms'),
    ];
  })(),
  // storefront — only behind ingress-nginx (scraped through pod annotations: `namespace` is the controller's,
  // `exported_namespace` the Ingress's). A `storefront` Service in `staging` sits behind the same controller.
  ...(['shop', 'staging'] as const).flatMap((ns) => {
    const labels = {
      namespace: 'ingress-nginx', pod: 'ingress-nginx-controller-7f9b8c6d5-ngx01', job: 'kubernetes-pods', controller_class: 'k8s.io/ingress-nginx', controller_namespace: 'ingress-nginx',
      controller_pod: 'ingress-nginx-controller-7f9b8c6d5-ngx01', exported_namespace: ns, ingress: 'storefront', service: 'storefront', host: `${ns}.example.com`, path: '/', method: 'GET',
    };
    const t = ns === 'shop' ? { rate: 50, before: 0.001, after: 0.3 } : { rate: 500, before: 0.5, after: 0.5 };
    return [
      ...traffic('nginx_ingress_controller_requests', labels, 'status', '200', '502', t),
      ...histogram('nginx_ingress_controller_request_duration_seconds_bucket', labels, t.rate, 's', ns === 'shop' ? CUMULATIVE : SLOW),
    ];
  }),
  // recommendations — gRPC server (NotFound is the client's problem, Unavailable a failure).
  ...(() => {
    const labels = { ...shop, service: 'recommendations', job: 'recommendations', pod: 'recommendations-5e6f7a8b9-rec01', grpc_service: 'reco.v1.Recommender', grpc_method: 'Recommend', grpc_type: 'unary' };
    return [
      ...traffic('grpc_server_handled_total', labels, 'grpc_code', 'OK', 'Unavailable', { rate: 15, before: 0.01, after: 0.01 }, { value: 'NotFound', share: 0.05 }),
      ...histogram('grpc_server_handling_seconds_bucket', labels, 15, 's'),
    ];
  })(),
  // a.b — a name with a regex dot, known by its pods only; `axb` (which `a.b` matches as a regex) is busy and failing.
  ...(['a.b', 'axb'] as const).flatMap((name) => {
    const labels = { ...shop, pod: `${name}-5d6f7c8d9-k2l3m`, job: 'kubernetes-pods' };
    const t = name === 'a.b' ? { rate: 10, before: 0.001, after: 0.001 } : { rate: 1000, before: 0.5, after: 0.5 };
    return [...traffic('http_requests_total', labels, 'code', '200', '500', t), ...histogram('http_request_duration_seconds_bucket', labels, t.rate, 's', name === 'a.b' ? CUMULATIVE : SLOW)];
  }),
  // c+d — a `+` in names, two Services of one workload (`c+d`, `c+d-api`); `ccd` (which `c+d` matches as a regex) is busy and failing.
  ...([
    ['c+d', 5, 0.01],
    ['c+d-api', 3, 0.01],
    ['ccd', 700, 0.5],
  ] as const).flatMap(([service, rate, errors]) => {
    const labels = { ...shop, service, job: service, pod: `${service}-6c7d8e9f0-plus1` };
    return [...traffic('http_requests_total', labels, 'code', '200', '500', { rate, before: errors, after: errors }), ...histogram('http_request_duration_seconds_bucket', labels, rate, 's', service === 'ccd' ? SLOW : CUMULATIVE)];
  }),
  // api and api-worker — two Deployments scraped through pod annotations (only `namespace` and `pod` name them),
  // one name a prefix of the other; the worker is busy and failing.
  ...([
    ['api-7c9d8f6b5-q1w2e', 10, 0.001],
    ['api-worker-5b4c3d2e1-w0rk1', 1000, 0.5],
  ] as const).flatMap(([pod, rate, errors]) => {
    const labels = { ...shop, pod, job: 'kubernetes-pods' };
    return [...traffic('http_requests_total', labels, 'code', '200', '500', { rate, before: errors, after: errors }), ...histogram('http_request_duration_seconds_bucket', labels, rate, 's', rate > 100 ? SLOW : CUMULATIVE)];
  }),
  // wishlist — never failed: client libraries create a code's series at its first request, so there is no 5xx series.
  counter('http_requests_total', { ...shop, service: 'wishlist', job: 'wishlist', pod: 'wishlist-6d5c4b3a2-wsh01', code: '200' }, 7),
  // session-cache — redis_exporter as a sidecar of the StatefulSet pod session-cache-0, scraped through its
  // `-metrics` Service (so only the pod names the workload). maxmemory is hit at the onset: memory to ~100% of
  // the limit, evictions from 0, the hit ratio falls.
  ...(() => {
    const labels = { ...shop, service: 'session-cache-metrics', job: 'session-cache-metrics', endpoint: 'http-metrics', pod: 'session-cache-0', container: 'metrics', instance: '10.0.1.40:9121' };
    return [
      gauge('redis_up', labels, 1),
      gauge('redis_memory_used_bytes', labels, 0.7 * GIB, 0.999 * GIB),
      gauge('redis_memory_max_bytes', labels, GIB),
      counter('redis_evicted_keys_total', labels, 0, 50),
      counter('redis_keyspace_hits_total', labels, 950, 400),
      counter('redis_keyspace_misses_total', labels, 50, 600),
    ];
  })(),
  // orders-db — postgres_exporter as a sidecar of orders-db-0: a migration's lock at the onset; locks, connections
  // and the oldest transaction climb (the last one is added below, as a ramp).
  ...(() => {
    const labels = { ...shop, service: 'orders-db-metrics', job: 'orders-db-metrics', endpoint: 'http-metrics', pod: 'orders-db-0', container: 'metrics', instance: '10.0.1.50:9187' };
    return [
      gauge('pg_up', labels, 1),
      gauge('pg_settings_max_connections', labels, 100),
      gauge('pg_locks_count', { ...labels, datname: 'orders', mode: 'accessexclusivelock' }, 0, 1),
      gauge('pg_locks_count', { ...labels, datname: 'orders', mode: 'rowexclusivelock' }, 3, 40),
      gauge('pg_locks_count', { ...labels, datname: 'orders', mode: 'accesssharelock' }, 10, 60),
      gauge('pg_stat_activity_count', { ...labels, datname: 'orders', state: 'active' }, 5, 80),
      gauge('pg_stat_activity_count', { ...labels, datname: 'orders', state: 'idle' }, 15, 10),
      gauge('pg_stat_activity_count', { ...labels, datname: 'postgres', state: 'idle' }, 1, 1),
    ];
  })(),
  // notifier — a known request counter but without any status label: no convention.
  counter('http_requests_total', { ...shop, service: 'notifier', job: 'notifier', pod: 'notifier-7a8b9c0d1-ntf01', method: 'POST' }, 5),
  // legacy-batch — nothing discovery knows.
  counter('process_cpu_seconds_total', { ...shop, pod: 'legacy-batch-28391234-abcde', job: 'kubernetes-pods' }, 0.1),
  gauge('up', { ...shop, pod: 'legacy-batch-28391234-abcde', job: 'kubernetes-pods' }, 1),
];

/** `pg_stat_activity_max_tx_duration`: 0.5 s before the onset, then the migration's transaction ages by one second per second. */
function oldestTransaction(): PromSeries {
  const points = [];
  for (let t = onset.getTime() - 70 * 60_000; t <= onset.getTime() + 5 * 60_000; t += STEP_MS) {
    points.push({ t: new Date(t), v: t < onset.getTime() ? 0.5 : 1 + (t - onset.getTime()) / 1000 });
  }
  return {
    metric: 'pg_stat_activity_max_tx_duration',
    type: 'gauge',
    labels: { ...shop, service: 'orders-db-metrics', job: 'orders-db-metrics', endpoint: 'http-metrics', pod: 'orders-db-0', container: 'metrics', instance: '10.0.1.50:9187', datname: 'orders', state: 'active', usename: 'migrator', application_name: 'flyway' },
    points,
  };
}

const world: PromSeries[] = [...specs.map((s) => buildSeries(s, onset)), oldestTransaction()];

// ---------------------------------------------------------------------------------------------------------------
// Helpers

function workload(name: string, services: string[], pods: string[], namespace = 'shop'): WorkloadIdentity {
  return { namespace, name, services, pods };
}

function entry(d: DiscoveredMetrics, id: string): CatalogEntry {
  const found = d.entries.filter((e) => e.id === id);
  expect(found, `${id} in ${JSON.stringify(d.entries.map((e) => e.id))}`).toHaveLength(1);
  return found[0]!;
}

function summary(evidence: MetricsEvidence, id: string): MetricSummary {
  const found = evidence.summaries.filter((s) => s.id === id);
  expect(found, id).toHaveLength(1);
  return found[0]!;
}

/** The one series of a query that sums everything; the query must have run without error. */
function single(evidence: MetricsEvidence, id: string): SeriesSummary {
  const s = summary(evidence, id);
  expect(s.status, `${id}: ${s.query} ${s.error ?? ''}`).toBe('success');
  expect(s.series, `${id}: ${s.query}`).toHaveLength(1);
  return s.series[0]!;
}

function expectRelative(actual: number | null | undefined, expected: number, tolerance: number, what: string): void {
  expect(actual, what).not.toBeNull();
  expect(actual, what).toBeDefined();
  expect(Math.abs(actual! - expected), `${what}: ${actual} vs ${expected}`).toBeLessThanOrEqual(Math.abs(expected) * tolerance + 1e-9);
}

function expectDeviation(s: SeriesSummary, direction: 'up' | 'down', what: string, withinMs = STEP_MS): void {
  expect(s.deviationDirection, what).toBe(direction);
  expect(s.deviationStart, what).toBeDefined();
  const late = s.deviationStart!.getTime() - onset.getTime();
  expect(late, `${what}: deviation ${late} ms after the onset`).toBeGreaterThanOrEqual(0);
  expect(late, `${what}: deviation ${late} ms after the onset`).toBeLessThanOrEqual(withinMs);
}

function expectSteady(s: SeriesSummary, what: string): void {
  expect(s.deviationStart, what).toBeUndefined();
  expect(s.changePoints, what).toEqual([]);
}

// ---------------------------------------------------------------------------------------------------------------
// The request conventions, one row per workload

interface HttpCase {
  workload: WorkloadIdentity;
  convention: string;
  /** Exact selector, or (for regex alternatives whose order is Prometheus' series order) a check. */
  selector: string | ((selector: string) => void);
  requests: string;
  errors: string;
  bucket: string;
  scale?: string;
  /** Every metric name discovery should attribute to the workload. */
  names: string[];
  /** Entry ids, in order. */
  ids: string[];
  traffic: Traffic;
  /** Set when `exactly its own` is expected to fail because of a bug in src (named here). */
}

const HTTP_IDS = ['error_ratio', 'request_rate', 'latency_p99'];

const HTTP_CASES: HttpCase[] = [
  {
    workload: workload('checkout', ['checkout'], checkoutPods),
    convention: 'micrometer',
    selector: 'namespace="shop",service="checkout"',
    requests: 'http_server_requests_seconds_count',
    errors: 'status=~"5.."',
    bucket: 'http_server_requests_seconds_bucket',
    names: ['hikaricp_connections_active', 'hikaricp_connections_max', 'http_server_requests_seconds_count', 'istio_requests_total'],
    ids: [...HTTP_IDS, 'db_pool_saturation'],
    traffic: { rate: 100, before: 0.001, after: 0.3 },
  },
  {
    workload: workload('inventory', [], ['inventory-6b5d4c3f2-m8n9b']),
    convention: 'micrometer',
    selector: 'namespace="shop",application="inventory"',
    requests: 'http_server_requests_seconds_count',
    errors: 'status=~"5.."',
    bucket: 'http_server_requests_seconds_bucket',
    names: ['http_server_requests_seconds_count'],
    ids: HTTP_IDS,
    traffic: { rate: 40, before: 0.005, after: 0.005 },
  },
  {
    workload: workload('cart', ['cart'], ['cart-5f6d7c8b9-abcde']),
    convention: 'prometheus-client',
    selector: 'namespace="shop",service="cart"',
    requests: 'http_requests_total',
    errors: 'code=~"5.."',
    bucket: 'http_request_duration_seconds_bucket',
    names: ['http_requests_total'],
    ids: HTTP_IDS,
    traffic: { rate: 20, before: 0.01, after: 0.15 },
  },
  {
    workload: workload('search', ['search'], ['search-84c7d6e5f-s3r4t']),
    convention: 'prometheus-client-status',
    selector: 'namespace="shop",service="search"',
    requests: 'http_requests_total',
    errors: 'status=~"5.."',
    bucket: 'http_request_duration_seconds_bucket',
    names: ['http_requests_total'],
    ids: HTTP_IDS,
    traffic: { rate: 30, before: 0.02, after: 0.02 },
  },
  {
    workload: workload('payments', ['payments'], ['payments-7f8e9d0c1-qwert']),
    convention: 'otel-http-stable',
    selector: 'k8s_namespace_name="shop",service_name="payments"',
    requests: 'http_server_request_duration_seconds_count',
    errors: 'http_response_status_code=~"5.."',
    bucket: 'http_server_request_duration_seconds_bucket',
    names: ['http_server_request_duration_seconds_count'],
    ids: HTTP_IDS,
    traffic: { rate: 30, before: 0.005, after: 0.2 },
  },
  {
    workload: workload('shipping', ['shipping'], ['shipping-7b8c9d0e1-zx9cv']),
    convention: 'otel-http-old-ms',
    selector: 'namespace="shop",app="shipping"',
    requests: 'http_server_duration_milliseconds_count',
    errors: 'http_status_code=~"5.."',
    bucket: 'http_server_duration_milliseconds_bucket',
    scale: ' * 0.001',
    names: ['http_server_duration_milliseconds_count'],
    ids: HTTP_IDS,
    traffic: { rate: 12, before: 0.01, after: 0.01 },
  },
  {
    workload: workload('reviews', ['reviews'], ['reviews-6f7a8b9c0-rvw01']),
    convention: 'istio',
    selector: 'namespace="shop",destination_workload="reviews",reporter="destination"',
    requests: 'istio_requests_total',
    errors: 'response_code=~"5.."',
    bucket: 'istio_request_duration_milliseconds_bucket',
    scale: ' * 0.001',
    names: ['istio_requests_total'],
    ids: HTTP_IDS,
    traffic: { rate: 25, before: 0.001, after: 0.25 },
  },
  {
    workload: workload('ledger', ['ledger'], ['ledger-8c9d0e1f2-ldg01']),
    convention: 'linkerd',
    selector: 'namespace="shop",deployment="ledger",direction="inbound"',
    requests: 'response_total',
    errors: 'classification="failure"',
    bucket: 'response_latency_ms_bucket',
    scale: ' * 0.001',
    names: ['response_total'],
    ids: HTTP_IDS,
    traffic: { rate: 8, before: 0.002, after: 0.002 },
  },
  {
    workload: workload('edge-proxy', ['edge-proxy'], ['edge-proxy-9d8c7b6a5-env01']),
    convention: 'envoy-downstream',
    selector: 'namespace="shop",service="edge-proxy"',
    requests: 'envoy_http_downstream_rq_xx',
    errors: 'envoy_response_code_class="5"',
    bucket: 'envoy_http_downstream_rq_time_bucket',
    scale: ' * 0.001',
    names: ['envoy_http_downstream_rq_xx'],
    ids: HTTP_IDS,
    traffic: { rate: 60, before: 0.002, after: 0.4 },
  },
  {
    workload: workload('recommendations', ['recommendations'], ['recommendations-5e6f7a8b9-rec01']),
    convention: 'grpc',
    selector: 'namespace="shop",service="recommendations"',
    requests: 'grpc_server_handled_total',
    errors: 'grpc_code=~"Unknown|DeadlineExceeded|Internal|Unavailable|DataLoss|ResourceExhausted|Unimplemented"',
    bucket: 'grpc_server_handling_seconds_bucket',
    names: ['grpc_server_handled_total'],
    ids: HTTP_IDS,
    traffic: { rate: 15, before: 0.01, after: 0.01 },
  },
  {
    workload: workload('a.b', [], ['a.b-5d6f7c8d9-k2l3m']),
    convention: 'prometheus-client',
    // The dot is regex-escaped, then the backslash escaped for the PromQL string.
    selector: String.raw`namespace="shop",pod=~"a\\.b-([a-z0-9]{1,10}-[a-z0-9]{5}|[0-9]+|[a-z0-9]{5})"`,
    requests: 'http_requests_total',
    errors: 'code=~"5.."',
    bucket: 'http_request_duration_seconds_bucket',
    names: ['http_requests_total'],
    ids: HTTP_IDS,
    traffic: { rate: 10, before: 0.001, after: 0.001 },
  },
  {
    workload: workload('c+d', ['c+d', 'c+d-api'], ['c+d-6c7d8e9f0-plus1', 'c+d-api-6c7d8e9f0-plus1']),
    convention: 'prometheus-client',
    selector: (sel) => {
      const m = /^namespace="shop",service=~"(.*)"$/.exec(sel);
      expect(m, sel).not.toBeNull();
      expect(m![1]!.split('|').sort()).toEqual([String.raw`c\\+d`, String.raw`c\\+d-api`]);
    },
    requests: 'http_requests_total',
    errors: 'code=~"5.."',
    bucket: 'http_request_duration_seconds_bucket',
    names: ['http_requests_total'],
    ids: HTTP_IDS,
    traffic: { rate: 8, before: 0.01, after: 0.01 },
  },
];

// ---------------------------------------------------------------------------------------------------------------

describe.skipIf(skip !== undefined)(`metric discovery against a real Prometheus${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let prometheus: RunningPrometheus;
  let client: PrometheusClient;
  const discovered = new Map<string, Promise<DiscoveredMetrics>>();
  const gathered = new Map<string, Promise<MetricsEvidence>>();

  /** Discovery once per workload (the tests of a workload share it). */
  function discover(w: WorkloadIdentity): Promise<DiscoveredMetrics> {
    const key = `${w.namespace}/${w.name}`;
    if (!discovered.has(key)) discovered.set(key, discoverMetrics(client, w, range));
    return discovered.get(key)!;
  }

  /** The discovered entries as the whole catalog, around the onset (the default hour before, five minutes after). */
  function gather(w: WorkloadIdentity): Promise<MetricsEvidence> {
    const key = `${w.namespace}/${w.name}`;
    if (!gathered.has(key)) gathered.set(key, discover(w).then((d) => gatherMetrics(client, { namespace: w.namespace, workload: w.name }, onset, { catalog: d.entries })));
    return gathered.get(key)!;
  }

  beforeAll(async () => {
    prometheus = await startPrometheus({ series: world });
    console.info(`Prometheus built blocks for ${world.length} series and was ready in ${prometheus.startupMs} ms`);
    client = new PrometheusClient({ baseUrl: prometheus.url, retries: 0 });
  });
  afterAll(async () => {
    await prometheus?.stop();
  });

  describe('request conventions', () => {
    for (const c of HTTP_CASES) {
      const name = c.workload.name;
      const t = c.traffic;

      it(`${name}: recognised as ${c.convention}, with the convention's names and the workload's labels`, async () => {
        const d = await discover(c.workload);
        expect(d.convention).toBe(c.convention);
        if (typeof c.selector === 'string') expect(d.selector).toBe(c.selector);
        else c.selector(d.selector!);
        const sel = d.selector!;
        expect(entry(d, 'error_ratio')).toMatchObject({
          // `or vector(0)`: before the first error no error series exists, and the ratio must read 0, not nothing.
          template: `(sum(rate(${c.requests}{${sel},${c.errors}}[1m])) or vector(0)) / sum(rate(${c.requests}{${sel}}[1m]))`,
          unit: 'ratio',
          badWhen: 'high',
          threshold: 0.05,
        });
        expect(entry(d, 'request_rate')).toMatchObject({ template: `sum(rate(${c.requests}{${sel}}[1m]))`, unit: 'req/s', badWhen: 'low' });
        expect(entry(d, 'latency_p99')).toMatchObject({
          template: `histogram_quantile(0.99, sum by (le) (rate(${c.bucket}{${sel}}[1m])))${c.scale ?? ''}`,
          unit: 'seconds',
          badWhen: 'high',
        });
      });

      it(`${name}: the queries read its own traffic (${t.rate} req/s, 5xx ${t.before * 100}% → ${t.after * 100}%, p99 ${P99_SECONDS} s)`, async () => {
        const evidence = await gather(c.workload);
        const ratio = single(evidence, 'error_ratio');
        expectRelative(ratio.baseline?.median, t.before, 0.01, `${name} error_ratio baseline`);
        expectRelative(ratio.last, t.after, 0.01, `${name} error_ratio last`);
        if (t.after > 10 * t.before) expectDeviation(ratio, 'up', `${name} error_ratio`);
        else expectSteady(ratio, `${name} error_ratio`);

        const rate = single(evidence, 'request_rate');
        expectRelative(rate.mean, t.rate, 0.01, `${name} request_rate mean`);
        expectRelative(rate.min, t.rate, 0.01, `${name} request_rate min`);
        expectRelative(rate.max, t.rate, 0.01, `${name} request_rate max`);
        expectSteady(rate, `${name} request_rate`);

        const p99 = single(evidence, 'latency_p99');
        expectRelative(p99.min, P99_SECONDS, 0.01, `${name} latency_p99 min`);
        expectRelative(p99.max, P99_SECONDS, 0.01, `${name} latency_p99 max`);
        expect(p99.nonFinite).toBe(0);
      });

      it(`${name}: exactly its own series and entries`, async () => {
        const d = await discover(c.workload);
        expect(d.names).toEqual(c.names);
        expect(d.entries.map((e) => e.id)).toEqual(c.ids);
      });
    }

    it('checkout: the HikariCP pool per pool name, from 30% to full at the onset', async () => {
      const d = await discover(HTTP_CASES[0]!.workload);
      expect(entry(d, 'db_pool_saturation')).toMatchObject({
        template:
          'sum by (pool) (hikaricp_connections_active{namespace="shop",service="checkout"}) / sum by (pool) (hikaricp_connections_max{namespace="shop",service="checkout"})',
        unit: 'ratio',
        badWhen: 'high',
        threshold: 0.9,
      });
      const pool = single(await gather(HTTP_CASES[0]!.workload), 'db_pool_saturation');
      expect(pool.metric).toEqual({ pool: 'HikariPool-1' });
      expectRelative(pool.baseline?.median, 0.3, 1e-6, 'pool baseline');
      expectRelative(pool.last, 1, 1e-6, 'pool last');
      expectDeviation(pool, 'up', 'db_pool_saturation');
    });

    it("checkout: the app's own Micrometer metrics win over its Istio sidecar's", async () => {
      const d = await discover(HTTP_CASES[0]!.workload);
      expect(d.convention).toBe('micrometer');
      expect(d.entries.some((e) => e.template.includes('istio_'))).toBe(false);
    });
  });

  describe('ingress-nginx (per backend Service)', () => {
    const storefront = workload('storefront', ['storefront'], ['storefront-5b6c7d8e9-stf01']);

    it('storefront: recognised as nginx-ingress through its Service, with the convention\'s names', async () => {
      const d = await discover(storefront);
      expect(d.convention).toBe('nginx-ingress');
      expect(d.names).toEqual(['nginx_ingress_controller_requests']);
      expect(d.entries.map((e) => e.id)).toEqual(HTTP_IDS);
      const sel = d.selector!;
      expect(sel.split(',')).toContain('service=~"storefront"');
      expect(entry(d, 'error_ratio').template).toBe(`(sum(rate(nginx_ingress_controller_requests{${sel},status=~"5.."}[1m])) or vector(0)) / sum(rate(nginx_ingress_controller_requests{${sel}}[1m]))`);
      expect(entry(d, 'request_rate').template).toBe(`sum(rate(nginx_ingress_controller_requests{${sel}}[1m]))`);
      expect(entry(d, 'latency_p99').template).toBe(`histogram_quantile(0.99, sum by (le) (rate(nginx_ingress_controller_request_duration_seconds_bucket{${sel}}[1m])))`);
      const evidence = await gather(storefront);
      for (const s of evidence.summaries) expect(s.status, `${s.id}: ${s.error ?? ''}`).toBe('success');
    });

    // The controller serves every namespace: without the Ingress's namespace the queries would sum staging's
    // `storefront` (500 req/s, 50% failing) into shop's.
    it('storefront: the queries are scoped to its namespace (exported_namespace), not every storefront behind the controller', async () => {
      const d = await discover(storefront);
      expect(d.selector!.split(',')).toContain('exported_namespace="shop"');
      const evidence = await gather(storefront);
      expectRelative(single(evidence, 'request_rate').mean, 50, 0.01, 'storefront request_rate');
      const ratio = single(evidence, 'error_ratio');
      expectRelative(ratio.baseline?.median, 0.001, 0.01, 'storefront error_ratio baseline');
      expectRelative(ratio.last, 0.3, 0.01, 'storefront error_ratio last');
      expectDeviation(ratio, 'up', 'storefront error_ratio');
      expectRelative(single(evidence, 'latency_p99').max, P99_SECONDS, 0.01, 'storefront latency_p99');
    });
  });

  describe('data stores through their exporters', () => {
    const sessionCache = workload('session-cache', ['session-cache', 'session-cache-headless'], ['session-cache-0']);
    const ordersDb = workload('orders-db', ['orders-db', 'orders-db-hl'], ['orders-db-0']);
    const cartCache = workload('cart-cache', ['cart-cache'], ['cart-cache-0']);

    it('session-cache: redis_exporter on session-cache-0 found by its pod, one entry per store id', async () => {
      const d = await discover(sessionCache);
      expect(d.convention).toBeUndefined();
      expect(d.selector).toBeUndefined();
      expect(d.names).toEqual(['redis_evicted_keys_total', 'redis_keyspace_hits_total', 'redis_keyspace_misses_total', 'redis_memory_max_bytes', 'redis_memory_used_bytes', 'redis_up']);
      const sel = 'namespace="shop",pod=~"session-cache-([a-z0-9]{1,10}-[a-z0-9]{5}|[0-9]+|[a-z0-9]{5})"';
      expect(d.entries.map((e) => [e.id, e.template])).toEqual([
        ['store_up', `min(redis_up{${sel}})`],
        ['store_evictions', `sum(rate(redis_evicted_keys_total{${sel}}[1m]))`],
        ['store_memory_ratio', `max(redis_memory_used_bytes{${sel}}) / max(redis_memory_max_bytes{${sel}} > 0)`],
        ['store_hit_ratio', `sum(rate(redis_keyspace_hits_total{${sel}}[1m])) / (sum(rate(redis_keyspace_hits_total{${sel}}[1m])) + sum(rate(redis_keyspace_misses_total{${sel}}[1m])))`],
      ]);
      expect(entry(d, 'store_up')).toMatchObject({ badWhen: 'low', threshold: 0.5 });
      expect(entry(d, 'store_evictions')).toMatchObject({ badWhen: 'high', unit: 'keys/s' });
      expect(entry(d, 'store_memory_ratio')).toMatchObject({ badWhen: 'high', threshold: 0.95 });
      expect(entry(d, 'store_hit_ratio')).toMatchObject({ badWhen: 'low', unit: 'ratio' });
    });

    it('session-cache: up stays 1, evictions rise from 0, memory reaches ~100% of maxmemory, the hit ratio falls', async () => {
      const evidence = await gather(sessionCache);
      const up = single(evidence, 'store_up');
      expect([up.min, up.max]).toEqual([1, 1]);
      expectSteady(up, 'store_up');

      const evictions = single(evidence, 'store_evictions');
      expect(evictions.baseline?.median).toBe(0);
      expectRelative(evictions.last, 50, 0.01, 'evictions last');
      expectDeviation(evictions, 'up', 'store_evictions');

      const memory = single(evidence, 'store_memory_ratio');
      expectRelative(memory.baseline?.median, 0.7, 1e-6, 'memory baseline');
      expectRelative(memory.last, 0.999, 1e-6, 'memory last');
      expectDeviation(memory, 'up', 'store_memory_ratio');

      const hits = single(evidence, 'store_hit_ratio');
      expectRelative(hits.baseline?.median, 0.95, 1e-3, 'hit ratio baseline');
      expectRelative(hits.last, 0.4, 1e-3, 'hit ratio last');
      expectDeviation(hits, 'down', 'store_hit_ratio');
    });

    it('orders-db: postgres_exporter on orders-db-0 found by its pod, one entry per store id', async () => {
      const d = await discover(ordersDb);
      expect(d.convention).toBeUndefined();
      expect(d.selector).toBeUndefined();
      expect(d.names).toEqual(['pg_locks_count', 'pg_settings_max_connections', 'pg_stat_activity_count', 'pg_stat_activity_max_tx_duration', 'pg_up']);
      const sel = 'namespace="shop",pod=~"orders-db-([a-z0-9]{1,10}-[a-z0-9]{5}|[0-9]+|[a-z0-9]{5})"';
      expect(d.entries.map((e) => [e.id, e.template])).toEqual([
        ['store_up', `min(pg_up{${sel}})`],
        ['store_connections_ratio', `sum(pg_stat_activity_count{${sel}}) / max(pg_settings_max_connections{${sel}})`],
        ['store_locks', `sum(pg_locks_count{${sel}})`],
        ['store_oldest_tx', `max(pg_stat_activity_max_tx_duration{${sel}})`],
      ]);
    });

    it("orders-db: locks, connections and the oldest transaction climb at the migration's onset; up stays 1", async () => {
      const evidence = await gather(ordersDb);
      const up = single(evidence, 'store_up');
      expect([up.min, up.max]).toEqual([1, 1]);
      expectSteady(up, 'store_up');

      const locks = single(evidence, 'store_locks');
      expect(locks.baseline?.median).toBe(13);
      expect(locks.last).toBe(101);
      expectDeviation(locks, 'up', 'store_locks');

      const connections = single(evidence, 'store_connections_ratio');
      expectRelative(connections.baseline?.median, 0.21, 1e-6, 'connections baseline');
      expectRelative(connections.last, 0.91, 1e-6, 'connections last');
      expectDeviation(connections, 'up', 'store_connections_ratio');

      const oldest = single(evidence, 'store_oldest_tx');
      expect(oldest.baseline?.median).toBe(0.5);
      expectRelative(oldest.last, 301, 1e-6, 'oldest tx last');
      expectDeviation(oldest, 'up', 'store_oldest_tx');
    });

    it('cart-cache: its own exporter found by its Service, steady; nothing of cart', async () => {
      const d = await discover(cartCache);
      expect(d.convention).toBeUndefined();
      expect(d.names).toEqual(['redis_evicted_keys_total', 'redis_keyspace_hits_total', 'redis_keyspace_misses_total', 'redis_memory_max_bytes', 'redis_memory_used_bytes', 'redis_up']);
      expect(d.entries.map((e) => e.id)).toEqual(['store_up', 'store_evictions', 'store_memory_ratio', 'store_hit_ratio']);
      expect(entry(d, 'store_up').template).toBe('min(redis_up{namespace="shop",service="cart-cache"})');
      const evidence = await gather(cartCache);
      expectRelative(single(evidence, 'store_memory_ratio').last, 100e6 / (512 * 1_048_576), 1e-5, 'cart-cache memory');
      expectRelative(single(evidence, 'store_hit_ratio').last, 200 / 220, 1e-5, 'cart-cache hit ratio');
      expect(single(evidence, 'store_evictions').max).toBe(0);
      for (const s of evidence.summaries) for (const x of s.series) expectSteady(x, `cart-cache ${s.id}`);
    });
  });

  describe('boundaries', () => {
    it('a collector whose scrape namespace differs: the same service name in another namespace stays out', async () => {
      // The staging payments (300 req/s, 50% failing, slow) share the collector, `service_name` and the scrape labels.
      const d = await discover(workload('payments', ['payments'], ['payments-7f8e9d0c1-qwert']));
      expect(d.selector).toBe('k8s_namespace_name="shop",service_name="payments"');
      const staging = await discoverMetrics(client, workload('payments', ['payments'], [], 'staging'), range);
      expect(staging.selector).toBe('k8s_namespace_name="staging",service_name="payments"');
      const evidence = await gatherMetrics(client, { namespace: 'staging', workload: 'payments' }, onset, { catalog: staging.entries });
      expectRelative(single(evidence, 'request_rate').mean, 300, 0.01, 'staging payments request_rate');
      expectRelative(single(evidence, 'error_ratio').last, 0.5, 0.01, 'staging payments error_ratio');
    });

    it('a workload known by its pods does not take the pods of one whose name differs only by a regex metacharacter', async () => {
      const axb = await discoverMetrics(client, workload('axb', [], ['axb-5d6f7c8d9-k2l3m']), range);
      expect(axb.selector).toBe('namespace="shop",pod=~"axb-([a-z0-9]{1,10}-[a-z0-9]{5}|[0-9]+|[a-z0-9]{5})"');
      const evidence = await gatherMetrics(client, { namespace: 'shop', workload: 'axb' }, onset, { catalog: axb.entries });
      expectRelative(single(evidence, 'request_rate').mean, 1000, 0.01, 'axb request_rate');
    });

    // A name that is a prefix of another's: `api` must not take api-worker's pods (1000 req/s, 50% failing).
    it('api: known by its pods only, does not take the pods of api-worker (a name it is a prefix of)', async () => {
      const api = workload('api', [], ['api-7c9d8f6b5-q1w2e']);
      const d = await discover(api);
      expect(d.convention).toBe('prometheus-client');
      const evidence = await gather(api);
      expectRelative(single(evidence, 'request_rate').mean, 10, 0.01, 'api request_rate');
      expectRelative(single(evidence, 'error_ratio').last, 0.001, 0.01, 'api error_ratio');
      expectRelative(single(evidence, 'latency_p99').max, P99_SECONDS, 0.01, 'api latency_p99');
    });

    it('api-worker: known by its pods only, its queries read only its own pods', async () => {
      const worker = workload('api-worker', [], ['api-worker-5b4c3d2e1-w0rk1']);
      const d = await discover(worker);
      expect(d.selector).toBe('namespace="shop",pod=~"api-worker-([a-z0-9]{1,10}-[a-z0-9]{5}|[0-9]+|[a-z0-9]{5})"');
      const evidence = await gather(worker);
      expectRelative(single(evidence, 'request_rate').mean, 1000, 0.01, 'api-worker request_rate');
      expectRelative(single(evidence, 'error_ratio').last, 0.5, 0.01, 'api-worker error_ratio');
    });

    it('wishlist (no 5xx series at all): the error ratio reads 0, not no_data', async () => {
      const wishlist = workload('wishlist', ['wishlist'], ['wishlist-6d5c4b3a2-wsh01']);
      const d = await discover(wishlist);
      expect(d.convention).toBe('prometheus-client');
      expect(d.selector).toBe('namespace="shop",service="wishlist"');
      // No histogram for it in the world: the p99 query runs and finds nothing.
      const evidence = await gather(wishlist);
      const ratio = single(evidence, 'error_ratio');
      expect([ratio.min, ratio.max, ratio.nonFinite]).toEqual([0, 0, 0]);
      expectSteady(ratio, 'wishlist error_ratio');
      expectRelative(single(evidence, 'request_rate').mean, 7, 0.01, 'wishlist request_rate');
      expect(summary(evidence, 'latency_p99').status).toBe('no_data');
    });

    it('the discovery matchers of hostile names parse in Prometheus and find nothing', async () => {
      const hostile = workload('x"} or vector(1) #', ['a.b+(c)|*', 'back\\slash', 'new\nline'], ['x-0'], 'shop"}');
      for (const matcher of discoveryMatchers(hostile)) {
        const out = await client.series([matcher], range.from, range.to);
        expect(out.data, matcher).toEqual([]);
      }
      await expect(discoverMetrics(client, hostile, range)).resolves.toEqual({ entries: [], names: [] });
    });

    it('the discovery matchers of a regex-metacharacter name match it literally', async () => {
      const matchers = discoveryMatchers(workload('c+d', ['c+d', 'c+d-api'], []));
      expect(matchers.map((m) => m.replace(/^\{__name__=~"[^"]*",/, ''))).toEqual([
        'namespace="shop"}',
        'k8s_namespace_name="shop"}',
        'destination_workload_namespace="shop"}',
        'exported_namespace="shop"}',
        String.raw`service_name=~"c\\+d|c\\+d-api"}`,
        String.raw`job=~"(.+/)?(c\\+d|c\\+d-api)"}`,
        String.raw`application=~"c\\+d|c\\+d-api"}`,
      ]);
      const byJob = await client.series([matchers.find((m) => m.includes('job=~'))!], range.from, range.to);
      expect([...new Set(byJob.data.map((s) => s['job']))].sort()).toEqual(['c+d', 'c+d-api']);
    });
  });

  describe('nothing to recognise', () => {
    it('legacy-batch (only process metrics): no convention, no entries, no names', async () => {
      await expect(discoverMetrics(client, workload('legacy-batch', [], ['legacy-batch-28391234-abcde']), range)).resolves.toEqual({ entries: [], names: [] });
    });

    it('notifier (a request counter without any status label): no convention, no entries', async () => {
      const d = await discoverMetrics(client, workload('notifier', ['notifier'], ['notifier-7a8b9c0d1-ntf01']), range);
      expect(d).toEqual({ entries: [], names: ['http_requests_total'] });
    });

    it('a workload in a namespace with no series at all', async () => {
      await expect(discoverMetrics(client, workload('ghost', ['ghost'], ['ghost-0'], 'nowhere'), range)).resolves.toEqual({ entries: [], names: [] });
    });
  });
});

/**
 * The standard queries Vigil runs around an onset, as PromQL templates.
 *
 * Placeholders (filled by `renderPromQL`, values escaped for PromQL double-quoted strings):
 * - `$namespace`, `$service`, `$workload` — label values (`$service` defaults to the workload name);
 * - `$pods` — an RE2 regex for the workload's pod names (its parts regex-escaped), for `pod=~"$pods"`.
 *
 * Metric names scenarios (and real clusters) must expose for these to find data:
 * | query                     | metrics and labels                                                                                         |
 * |---------------------------|------------------------------------------------------------------------------------------------------------|
 * | error_ratio, request_rate | `http_requests_total{namespace, service, code}` (counter; `code` is the HTTP status, e.g. "503")             |
 * | latency_p99               | `http_request_duration_seconds_bucket{namespace, service, le}` (Prometheus histogram buckets)               |
 * | container_restarts        | kube-state-metrics `kube_pod_container_status_restarts_total{namespace, pod, container}`                   |
 * | memory_*                  | cAdvisor `container_memory_working_set_bytes{namespace, pod, container}`; kube-state-metrics              |
 * |                           | `kube_pod_container_resource_limits{namespace, pod, container, resource="memory"}`                         |
 * | cpu_throttling            | cAdvisor `container_cpu_cfs_throttled_periods_total` / `container_cpu_cfs_periods_total` {namespace, pod, container} |
 * | db_pool_saturation        | OpenTelemetry semconv (≤ 1.24) exported to Prometheus: `db_client_connections_usage{namespace, service,    |
 * |                           | pool_name, state="used"|"idle"}` and `db_client_connections_max{namespace, service, pool_name}`            |
 * The `service` label on app metrics is what the Prometheus Operator adds for ServiceMonitor targets.
 */
import type { MetricTarget } from './types.js';

export interface CatalogEntry {
  id: string;
  title: string;
  /** PromQL with the placeholders above. */
  template: string;
  /** `ratio` (0–1), `seconds`, `bytes`, `req/s`, `restarts`. */
  unit: string;
  /** Which direction is trouble. */
  badWhen: 'high' | 'low';
  /** A level that is bad on its own, in `unit`, regardless of the baseline. */
  threshold?: number;
}

/** The label matchers shared by the HTTP queries. */
const HTTP = 'namespace="$namespace",service="$service"';
/** cAdvisor also reports a pod-level cgroup (container="") and the pause container (container="POD"). */
const CONTAINERS = 'namespace="$namespace",pod=~"$pods",container!="",container!="POD"';

export const ERROR_RATIO: CatalogEntry = {
  id: 'error_ratio',
  title: 'HTTP 5xx ratio',
  // Client libraries create a status code's series at its first request: before the first 5xx there is
  // no error series at all, and a bare ratio would be absent (not 0) for the whole healthy baseline.
  template: `(sum(rate(http_requests_total{${HTTP},code=~"5.."}[1m])) or vector(0)) / sum(rate(http_requests_total{${HTTP}}[1m]))`,
  unit: 'ratio',
  badWhen: 'high',
  threshold: 0.05,
};

export const LATENCY_P99: CatalogEntry = {
  id: 'latency_p99',
  title: 'HTTP latency p99',
  template: `histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket{${HTTP}}[1m])))`,
  unit: 'seconds',
  badWhen: 'high',
};

export const REQUEST_RATE: CatalogEntry = {
  id: 'request_rate',
  title: 'HTTP request rate',
  template: `sum(rate(http_requests_total{${HTTP}}[1m]))`,
  unit: 'req/s',
  badWhen: 'low',
};

export const CONTAINER_RESTARTS: CatalogEntry = {
  id: 'container_restarts',
  title: 'Container restarts (per 5 minutes)',
  template: 'sum by (pod, container) (increase(kube_pod_container_status_restarts_total{namespace="$namespace",pod=~"$pods"}[5m]))',
  unit: 'restarts',
  badWhen: 'high',
  threshold: 1,
};

export const MEMORY_WORKING_SET: CatalogEntry = {
  id: 'memory_working_set',
  title: 'Memory working set',
  template: `sum by (pod, container) (container_memory_working_set_bytes{${CONTAINERS}})`,
  unit: 'bytes',
  badWhen: 'high',
};

export const MEMORY_LIMIT_RATIO: CatalogEntry = {
  id: 'memory_limit_ratio',
  title: 'Memory working set / limit',
  template:
    `sum by (pod, container) (container_memory_working_set_bytes{${CONTAINERS}})` +
    ` / sum by (pod, container) (kube_pod_container_resource_limits{namespace="$namespace",pod=~"$pods",resource="memory"})`,
  unit: 'ratio',
  badWhen: 'high',
  threshold: 0.9,
};

export const CPU_THROTTLING: CatalogEntry = {
  id: 'cpu_throttling',
  title: 'CPU throttled periods ratio',
  template:
    `sum by (pod, container) (rate(container_cpu_cfs_throttled_periods_total{${CONTAINERS}}[5m]))` +
    ` / sum by (pod, container) (rate(container_cpu_cfs_periods_total{${CONTAINERS}}[5m]))`,
  unit: 'ratio',
  badWhen: 'high',
  threshold: 0.25,
};

export const DB_POOL_SATURATION: CatalogEntry = {
  id: 'db_pool_saturation',
  title: 'DB connection pool in use / max',
  template:
    `sum by (pool_name) (db_client_connections_usage{${HTTP},state="used"})` +
    ` / sum by (pool_name) (db_client_connections_max{${HTTP}})`,
  unit: 'ratio',
  badWhen: 'high',
  threshold: 0.9,
};

/** What runs for the alert's own workload. */
export const TARGET_CATALOG: readonly CatalogEntry[] = [
  ERROR_RATIO,
  LATENCY_P99,
  REQUEST_RATE,
  CONTAINER_RESTARTS,
  MEMORY_WORKING_SET,
  MEMORY_LIMIT_RATIO,
  CPU_THROTTLING,
  DB_POOL_SATURATION,
];

/** What runs for each downstream service the target calls (its target is the dependency). */
export const DEPENDENCY_CATALOG: readonly CatalogEntry[] = [
  { ...ERROR_RATIO, id: 'dependency_error_ratio', title: 'Dependency HTTP 5xx ratio' },
  { ...LATENCY_P99, id: 'dependency_latency_p99', title: 'Dependency HTTP latency p99' },
];

/** A PromQL double-quoted string literal's content (Go escapes: backslash, quote, control characters). */
export function escapeLabelValue(value: string): string {
  return value.replace(/[\\"\u0000-\u001f\u007f]/g, (c) => {
    switch (c) {
      case '\\':
        return '\\\\';
      case '"':
        return '\\"';
      case '\n':
        return '\\n';
      case '\r':
        return '\\r';
      case '\t':
        return '\\t';
      default:
        return `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;
    }
  });
}

/** RE2 metacharacters escaped, so a name is matched literally inside a regex matcher. */
export function escapeRegex(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * What follows a workload's name in its pods' names: Deployment `-<hash>-<id>` (a ReplicaSet hash of up
 * to 10 characters, a 5-character id), StatefulSet `-<ordinal>`, DaemonSet/Job `-<id>`. Exact, so that
 * `cart`'s pods do not take in `cart-cache-0` or `cart-worker-7c9d8f6b5-q1w2e`.
 */
export const POD_NAME_SUFFIX = '([a-z0-9]{1,10}-[a-z0-9]{5}|[0-9]+|[a-z0-9]{5})';
const POD_NAME_SUFFIX_RE = new RegExp(`^${POD_NAME_SUFFIX}$`);

/** Is `pod` one of `workload`'s pods by name alone? */
export function isPodOf(workload: string, pod: string): boolean {
  return pod.startsWith(`${workload}-`) && POD_NAME_SUFFIX_RE.test(pod.slice(workload.length + 1));
}

/** The RE2 regex (anchored by Prometheus) of a workload's pod names. */
export function defaultPodRegex(workload: string): string {
  return `${escapeRegex(workload)}-${POD_NAME_SUFFIX}`;
}

/** Fill a template for a target: every value is escaped, so a hostile label value cannot change the query. */
export function renderPromQL(template: string, target: MetricTarget): string {
  const values: Record<string, string> = {
    namespace: target.namespace,
    workload: target.workload,
    service: target.service ?? target.workload,
    pods: target.podRegex ?? defaultPodRegex(target.workload),
  };
  return template.replace(/\$(namespace|workload|service|pods)\b/g, (_, name: string) => escapeLabelValue(values[name]!));
}

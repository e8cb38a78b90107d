/**
 * Metrics discovered rather than guessed: ask Prometheus which request and pool series exist for a
 * workload (`/api/v1/series`), recognise the convention they follow, and write the standard queries
 * (`error_ratio`, `latency_p99`, `request_rate`, `db_pool_saturation`) in that convention's names and
 * labels. The analyzers read the same ids whatever the stack.
 *
 * Conventions recognised (names and labels as the libraries and exporters write them; see
 * docs/metric-conventions.md): Prometheus client defaults, Micrometer, OpenTelemetry HTTP semantic
 * conventions in the stable and the old names, gRPC, Istio (destination-reported), Linkerd (inbound),
 * OpenTelemetry span metrics, ingress-nginx (per backend Service); pools: HikariCP and the OpenTelemetry
 * DB client connection metrics in both names; data stores: the exporters' own metrics (stores.ts).
 */
import type { CatalogEntry } from './catalog.js';
import { escapeLabelValue, escapeRegex as escapeRegexOnly, ERROR_RATIO, LATENCY_P99, REQUEST_RATE, DB_POOL_SATURATION, isPodOf, POD_NAME_SUFFIX } from './catalog.js';
import type { PrometheusClient } from './client.js';
import { STORE_METRIC_NAMES, storeEntries } from './stores.js';

/** A regex literal inside a PromQL double-quoted string: regex metacharacters escaped, then the string's own escapes. */
const escapeRegex = (v: string): string => escapeLabelValue(escapeRegexOnly(v));

export interface HttpConvention {
  id: string;
  /** The request counter (a `_total` counter, or a histogram's `_count`). */
  requests: string;
  /** The matcher that selects failed requests, e.g. `code=~"5.."`. */
  errors: string;
  /** The label the error matcher reads: a series without it is not of this convention. */
  errorLabel: string;
  /** The histogram's bucket series, when there is one. */
  bucket?: string;
  /** Multiplies the histogram's unit into seconds. */
  scale?: number;
  /** Matchers every query of the convention needs (Istio's reporter, Linkerd's direction). */
  fixed?: string;
}

/** In order of preference: the workload's own server metrics first, the mesh and the edge after. */
export const HTTP_CONVENTIONS: readonly HttpConvention[] = [
  { id: 'prometheus-client', requests: 'http_requests_total', errors: 'code=~"5.."', errorLabel: 'code', bucket: 'http_request_duration_seconds_bucket' },
  { id: 'prometheus-client-status', requests: 'http_requests_total', errors: 'status=~"5.."', errorLabel: 'status', bucket: 'http_request_duration_seconds_bucket' },
  { id: 'promhttp-server', requests: 'http_server_requests_total', errors: 'code=~"5.."', errorLabel: 'code', bucket: 'http_server_request_duration_seconds_bucket' },
  { id: 'micrometer', requests: 'http_server_requests_seconds_count', errors: 'status=~"5.."', errorLabel: 'status', bucket: 'http_server_requests_seconds_bucket' },
  { id: 'otel-http-stable', requests: 'http_server_request_duration_seconds_count', errors: 'http_response_status_code=~"5.."', errorLabel: 'http_response_status_code', bucket: 'http_server_request_duration_seconds_bucket' },
  { id: 'otel-http-old-ms', requests: 'http_server_duration_milliseconds_count', errors: 'http_status_code=~"5.."', errorLabel: 'http_status_code', bucket: 'http_server_duration_milliseconds_bucket', scale: 0.001 },
  { id: 'otel-http-old', requests: 'http_server_duration_count', errors: 'http_status_code=~"5.."', errorLabel: 'http_status_code', bucket: 'http_server_duration_bucket', scale: 0.001 },
  { id: 'otel-rpc-old', requests: 'rpc_server_duration_milliseconds_count', errors: 'rpc_grpc_status_code!~"0|"', errorLabel: 'rpc_grpc_status_code', bucket: 'rpc_server_duration_milliseconds_bucket', scale: 0.001 },
  { id: 'grpc', requests: 'grpc_server_handled_total', errors: 'grpc_code=~"Unknown|DeadlineExceeded|Internal|Unavailable|DataLoss|ResourceExhausted|Unimplemented"', errorLabel: 'grpc_code', bucket: 'grpc_server_handling_seconds_bucket' },
  { id: 'spanmetrics', requests: 'traces_spanmetrics_calls_total', errors: 'status_code="STATUS_CODE_ERROR"', errorLabel: 'status_code', bucket: 'traces_spanmetrics_latency_bucket', scale: 0.001, fixed: 'span_kind="SPAN_KIND_SERVER"' },
  { id: 'spanmetrics-new', requests: 'traces_span_metrics_calls_total', errors: 'status_code="STATUS_CODE_ERROR"', errorLabel: 'status_code', bucket: 'traces_span_metrics_duration_milliseconds_bucket', scale: 0.001, fixed: 'span_kind="SPAN_KIND_SERVER"' },
  { id: 'spanmetrics-old', requests: 'calls_total', errors: 'status_code="STATUS_CODE_ERROR"', errorLabel: 'status_code', bucket: 'duration_milliseconds_bucket', scale: 0.001, fixed: 'span_kind="SPAN_KIND_SERVER"' },
  { id: 'istio', requests: 'istio_requests_total', errors: 'response_code=~"5.."', errorLabel: 'response_code', bucket: 'istio_request_duration_milliseconds_bucket', scale: 0.001, fixed: 'reporter="destination"' },
  { id: 'linkerd', requests: 'response_total', errors: 'classification="failure"', errorLabel: 'classification', bucket: 'response_latency_ms_bucket', scale: 0.001, fixed: 'direction="inbound"' },
  { id: 'envoy-downstream', requests: 'envoy_http_downstream_rq_xx', errors: 'envoy_response_code_class="5"', errorLabel: 'envoy_response_code_class', bucket: 'envoy_http_downstream_rq_time_bucket', scale: 0.001 },
  { id: 'nginx-ingress', requests: 'nginx_ingress_controller_requests', errors: 'status=~"5.."', errorLabel: 'status', bucket: 'nginx_ingress_controller_request_duration_seconds_bucket' },
];

/** Identity labels that come from the app's own resource attributes: the scrape's `namespace` may be the collector's. */
const RESOURCE_IDENTITY = new Set(['service_name', 'k8s_deployment_name', 'k8s_statefulset_name', 'destination_workload', 'application', 'app', 'app_kubernetes_io_name', 'job', 'exported_job', 'workload']);
/** Namespace labels that are the app's own (not the scrape target's). */
// (OpenTelemetry's `service_namespace` is a logical grouping, often not the Kubernetes namespace: not used.)
const OWN_NAMESPACE = ['k8s_namespace_name', 'destination_workload_namespace', 'exported_namespace'];

/** Labels that can say a series is the workload's, checked in this order. */
const IDENTITY = ['destination_workload', 'deployment', 'k8s_deployment_name', 'k8s_statefulset_name', 'dst_deployment', 'workload', 'service', 'service_name', 'application', 'app', 'app_kubernetes_io_name', 'job', 'exported_job', 'pod', 'k8s_pod_name'] as const;
const NAMESPACE = ['namespace', 'k8s_namespace_name', 'destination_workload_namespace', 'exported_namespace'];

const POOL = [
  { id: 'hikaricp', used: 'hikaricp_connections_active', max: 'hikaricp_connections_max', by: 'pool', usedFilter: '' },
  { id: 'otel-db-pool', used: 'db_client_connection_count', max: 'db_client_connection_max', by: 'db_client_connection_pool_name', usedFilter: 'db_client_connection_state="used"' },
  { id: 'otel-db-pool-old', used: 'db_client_connections_usage', max: 'db_client_connections_max', by: 'pool_name', usedFilter: 'state="used"' },
];

export interface DiscoveredMetrics {
  /** The convention of the workload's request metrics, when found. */
  convention?: string;
  /** The label matchers that select the workload's series in it. */
  selector?: string;
  entries: CatalogEntry[];
  /** Every metric name seen for the workload (a few dozen at most), for the model and the record. */
  names: string[];
}

export interface WorkloadIdentity {
  namespace: string;
  name: string;
  /** Services selecting its pods. */
  services: string[];
  /** Its pod names (the series' `pod` label). */
  pods: string[];
}

function alternatives(w: WorkloadIdentity): string {
  return [...new Set([w.name, ...w.services])].map(escapeRegex).join('|');
}

/** Series selectors that find the workload's request and pool series in any of the conventions. */
export function discoveryMatchers(w: WorkloadIdentity): string[] {
  const names = [...new Set([...HTTP_CONVENTIONS.map((c) => c.requests), ...POOL.flatMap((p) => [p.used, p.max]), ...STORE_METRIC_NAMES])].map(escapeRegex).join('|');
  const ns = escapeLabelValue(w.namespace);
  const alt = alternatives(w);
  return [
    `{__name__=~"${names}",namespace="${ns}"}`,
    `{__name__=~"${names}",k8s_namespace_name="${ns}"}`,
    `{__name__=~"${names}",destination_workload_namespace="${ns}"}`,
    `{__name__=~"${names}",exported_namespace="${ns}"}`,
    `{__name__=~"${names}",service_name=~"${alt}"}`,
    `{__name__=~"${names}",job=~"(.+/)?(${alt})"}`,
    `{__name__=~"${names}",application=~"${alt}"}`,
  ];
}

/** Which identity label of a series names the workload, or undefined when the series is someone else's. */
function identityOf(series: Record<string, string>, w: WorkloadIdentity): { label: string; value: string } | undefined {
  const names = new Set([w.name, ...w.services]);
  const pods = new Set(w.pods);
  const own = OWN_NAMESPACE.find((l) => series[l] !== undefined);
  if (own && series[own] !== w.namespace) return undefined;
  const scrapeNsMatches = series['namespace'] === undefined || series['namespace'] === w.namespace || series['__name__'] === 'nginx_ingress_controller_requests';
  for (const label of IDENTITY) {
    const v = series[label];
    if (v === undefined) continue;
    // `namespace` is the scrape target's: it must match for pod- and Service-level labels, not for the app's own attributes.
    if (!scrapeNsMatches && !RESOURCE_IDENTITY.has(label)) continue;
    if (label === 'pod' || label === 'k8s_pod_name') {
      if (pods.has(v) || isPodOf(w.name, v)) return { label, value: v };
      continue;
    }
    const bare = label === 'job' || label === 'exported_job' ? v.split('/').pop()! : v;
    if (names.has(bare)) return { label, value: v };
  }
  return undefined;
}

export async function discoverMetrics(client: PrometheusClient, w: WorkloadIdentity, range: { from: Date; to: Date }, signal?: AbortSignal): Promise<DiscoveredMetrics> {
  const { data } = await client.series(discoveryMatchers(w), range.from, range.to, signal ? { signal } : {});
  const mine = data.map((s) => ({ s, id: identityOf(s, w) })).filter((x) => x.id);
  const names = [...new Set(mine.map((x) => x.s['__name__']!))].sort();
  const out: DiscoveredMetrics = { entries: [], names };

  for (const c of HTTP_CONVENTIONS) {
    const hits = mine.filter((x) => x.s['__name__'] === c.requests && x.s[c.errorLabel] !== undefined && (!c.fixed || matchesFixed(x.s, c.fixed)));
    if (!hits.length) continue;
    const sel = selectorFor(hits.map((h) => h.s), hits[0]!.id!, w, c.requests === 'nginx_ingress_controller_requests');
    const base = [sel, c.fixed].filter(Boolean).join(',');
    const scale = c.scale ? ` * ${c.scale}` : '';
    out.convention = c.id;
    out.selector = base;
    out.entries.push(
      // `or vector(0)`: no error series exists before the first error (see catalog.ts).
      { ...ERROR_RATIO, template: `(sum(rate(${c.requests}{${base},${c.errors}}[1m])) or vector(0)) / sum(rate(${c.requests}{${base}}[1m]))` },
      { ...REQUEST_RATE, template: `sum(rate(${c.requests}{${base}}[1m]))` },
    );
    if (c.bucket) out.entries.push({ ...LATENCY_P99, template: `histogram_quantile(0.99, sum by (le) (rate(${c.bucket}{${base}}[1m])))${scale}` });
    break;
  }
  for (const p of POOL) {
    const used = mine.filter((x) => x.s['__name__'] === p.used);
    if (!used.length || !mine.some((x) => x.s['__name__'] === p.max)) continue;
    const sel = selectorFor(used.map((u) => u.s), used[0]!.id!, w, false);
    const usedSel = [sel, p.usedFilter].filter(Boolean).join(',');
    out.entries.push({ ...DB_POOL_SATURATION, template: `sum by (${p.by}) (${p.used}{${usedSel}}) / sum by (${p.by}) (${p.max}{${sel}})` });
    break;
  }
  // The candidate is a data store with an exporter: its own health in its engine's words.
  const store = mine.filter((x) => STORE_METRIC_NAMES.includes(x.s['__name__']!));
  if (store.length) {
    const first = store[0]!;
    const same = store.filter((x) => x.id!.label === first.id!.label);
    out.entries.push(...storeEntries(new Set(same.map((x) => x.s['__name__']!)), selectorFor(same.map((x) => x.s), first.id!, w, false)));
  }
  return out;
}

function matchesFixed(series: Record<string, string>, fixed: string): boolean {
  return fixed.split(',').every((m) => {
    const eq = /^(\w+)="(.*)"$/.exec(m.trim());
    return !eq || series[eq[1]!] === eq[2];
  });
}

/** The narrowest matchers that select the workload's series: its namespace label and identity label. */
function selectorFor(series: Record<string, string>[], id: { label: string; value: string }, w: WorkloadIdentity, edge: boolean): string {
  // At the edge (ingress-nginx) `namespace` is often the controller's and the Ingress's is `exported_namespace`:
  // whichever carries the workload's namespace narrows it (a same-named Service elsewhere shares the controller).
  const nsLabel = (edge ? ['exported_namespace', ...NAMESPACE] : NAMESPACE).find((l) => series.some((s) => s[l] === w.namespace));
  const parts: string[] = [];
  if (nsLabel) parts.push(`${nsLabel}="${escapeLabelValue(w.namespace)}"`);
  if (id.label === 'pod' || id.label === 'k8s_pod_name') parts.push(`${id.label}=~"${escapeRegex(w.name)}-${POD_NAME_SUFFIX}"`);
  else if (edge) parts.push(`${id.label}=~"${w.services.map(escapeRegex).join('|') || escapeRegex(w.name)}"`);
  else {
    const values = [...new Set(series.map((s) => s[id.label]).filter((v): v is string => !!v))];
    parts.push(values.length === 1 ? `${id.label}="${escapeLabelValue(values[0]!)}"` : `${id.label}=~"${values.map(escapeRegex).join('|')}"`);
  }
  return parts.join(',');
}

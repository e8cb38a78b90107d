/**
 * Prometheus evidence: a typed HTTP client, the standard queries around an onset (summarised, never raw
 * samples), and the model's read-only tools.
 *
 * ```ts
 * const client = new PrometheusClient({ baseUrl, publicUrl, bearerToken });
 * const { summaries } = await gatherMetrics(client, { namespace: 'shop', workload: 'checkout' }, onset);
 * const evidence = summaries.flatMap((s) => metricEvidence(s));
 * const tools = prometheusTools(client); // prometheus_query, prometheus_query_range
 * const discover = prometheusDiscoverTool(client, graphs); // prometheus_discover (src/evidence/tools.ts adds it)
 * ```
 */
export { PrometheusClient, PrometheusError, promTime, type PrometheusClientOptions, type PrometheusErrorType } from './client.js';
export { TARGET_CATALOG, DEPENDENCY_CATALOG, renderPromQL, escapeLabelValue, type CatalogEntry } from './catalog.js';
export { gatherMetrics, chooseStep, type GatherOptions } from './gather.js';
export { summarizeMatrix, summarizeSeries, type SummarizeOptions } from './summarize.js';
export { metricEvidence, describeSeries } from './evidence.js';
export { prometheusTools, prometheusQueryTool, prometheusQueryRangeTool } from './tools.js';
export { prometheusDiscoverTool } from './discover-tool.js';
export type { ChangePoint, MetricStatus, MetricSummary, MetricTarget, MetricsEvidence, SeriesSummary } from './types.js';

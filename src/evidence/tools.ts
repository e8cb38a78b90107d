/**
 * The model's tool list, assembled in one place: every read-only evidence tool over the adapters the
 * settings configured (the same adapters the deterministic gatherers use). The app (`src/vigil.ts`) and
 * the model-loop tests both build the list here, so they offer the model exactly the same tools.
 */
import type { GitHubReader } from './github/client.js';
import { githubTools } from './github/tools.js';
import type { KubeReader } from './kubernetes/client.js';
import { kubernetesTools } from './kubernetes/tools/index.js';
import type { LokiClient } from './loki/client.js';
import { createLokiQueryRangeTool } from './loki/tools.js';
import type { PrometheusClient } from './prometheus/client.js';
import { prometheusDiscoverTool } from './prometheus/discover-tool.js';
import { prometheusTools } from './prometheus/tools.js';
import type { EvidenceTool } from './tool.js';
import { ClusterGraphs } from './topology/graph-source.js';
import { topologyTool } from './topology/tools.js';

export interface ToolSources {
  kube?: KubeReader;
  prometheus?: PrometheusClient;
  loki?: LokiClient;
  github?: GitHubReader;
}

export function evidenceTools(s: ToolSources): EvidenceTool[] {
  // One graph source for the graph tools: the investigation's graph, or one shared snapshot outside a run.
  const graphs = s.kube ? new ClusterGraphs(s.kube, s.prometheus ? { prometheus: s.prometheus } : {}) : undefined;
  return [
    ...(graphs ? [topologyTool(graphs) as EvidenceTool] : []),
    ...(s.kube ? kubernetesTools(s.kube) : []),
    ...(s.prometheus ? [prometheusDiscoverTool(s.prometheus, graphs) as EvidenceTool, ...prometheusTools(s.prometheus)] : []),
    ...(s.loki ? [createLokiQueryRangeTool(s.loki) as EvidenceTool] : []),
    ...(s.github ? githubTools(s.github) : []),
  ];
}

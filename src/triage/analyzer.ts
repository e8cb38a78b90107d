import type { V1Job, V1Pod } from '@kubernetes/client-node';
import type { Alert } from '../alerts/types.js';
import type { ContainerLogs } from '../evidence/kubernetes/surroundings.js';
import type { MetricSummary } from '../evidence/prometheus/types.js';
import type { RankedChange } from '../changes/types.js';
import type { KubeEvidence } from '../evidence/kubernetes/gather.js';
import type { LogsEvidence } from '../evidence/loki/types.js';
import type { MetricsEvidence } from '../evidence/prometheus/types.js';
import type { ServiceEntry } from '../knowledge/catalog.js';
import type { Topology } from '../topology/graph.js';
import type { ClusterSnapshot } from '../topology/snapshot.js';
import type { Subject } from '../topology/subjects.js';
import type { Reached, Walk } from '../topology/walk.js';
import type { Finding } from './types.js';

/** The cluster around the candidate: what the alert names, the graph, and where this candidate stands on it. */
export interface ClusterContext {
  snapshot: ClusterSnapshot;
  topology: Topology;
  walk: Walk;
  subjects: Subject[];
  /** The candidate this input is about (absent for the cluster-level input). */
  candidate?: Reached;
  /** Every candidate's input, so an analyzer can read the symptoms of the workloads that depend on its own. */
  inputs?: TriageInput[];
  /** Cluster-wide metric summaries (nodes, volumes, queues), read before triage so a candidate's analyzer can corroborate with them. */
  metrics?: MetricSummary[];
}

/**
 * What every analyzer sees: the alert, its onset and the evidence read so far. Sources that are not
 * configured or failed are absent/empty (and listed in gaps); an analyzer never assumes they passed.
 */
export interface TriageInput {
  alert: Alert;
  onset: Date;
  kube: KubeEvidence;
  /** Prometheus summaries for the target (and its dependencies), if Prometheus is configured. */
  metrics?: MetricsEvidence;
  /** Loki log templates for the target (and its dependencies), if Loki is configured. */
  logs?: LogsEvidence;
  /** Every source's changes, ranked against the alert (newest-relevant first). */
  changes: RankedChange[];
  /** The service catalog entry of the target, when the catalog knows it. */
  service?: ServiceEntry;
  /** The cluster snapshot, the service graph and the walk from the alert (absent without Kubernetes). */
  cluster?: ClusterContext;
}

/**
 * The whole investigation, for analyzers whose faulty object is not a workload's own (a node, a quota,
 * a webhook, a DNS config, a chaos experiment, a CronJob): the cluster, every candidate's input, the
 * change timeline ranked against what the alert names, and the cluster-wide metric and log evidence.
 */
export interface ClusterTriageInput {
  alert: Alert;
  onset: Date;
  cluster: ClusterContext;
  inputs: TriageInput[];
  changes: RankedChange[];
  /** Cluster-level summaries: `pvc_usage`, `node_clock_offset`, `queue_lag`, `coredns_errors`, `client_errors` … */
  metrics: MetricSummary[];
  /** Jobs of the CronJob/Job candidates, newest first, with their pods and the logs of failed ones. */
  jobs: JobEvidence[];
}

export interface JobEvidence {
  owner: { kind: 'CronJob' | 'Job'; namespace: string; name: string };
  jobs: V1Job[];
  pods: V1Pod[];
  logs: ContainerLogs[];
}

export interface ClusterAnalyzer {
  name: string;
  analyze(input: ClusterTriageInput): Finding[];
}

/** A deterministic analyzer: evidence in, findings (with evidence for and against) out. No I/O, no model. */
export interface Analyzer {
  name: string;
  analyze(input: TriageInput): Finding[];
}

/** A change this long before the onset can still explain it; older changes are background. */
export const CHANGE_WINDOW_MS = 60 * 60_000;

/**
 * A change whose effect waits for load or traffic (a lowered ceiling, a smaller pool, a config read at
 * the next restart) can explain an onset this long after it, when the analyzer ties the symptom to the
 * exact thing it changed: the fixed window above would clear it as background.
 */
export const DELAYED_EFFECT_MS = 12 * 3600_000;

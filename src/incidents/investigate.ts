import type { Alert } from '../alerts/types.js';
import { kubernetesChanges } from '../changes/kubernetes.js';
import { rankChanges } from '../changes/rank.js';
import type { ChangeEvent, RankedChange } from '../changes/types.js';
import type { GitHubReader } from '../evidence/github/client.js';
import { githubChanges } from '../evidence/github/changes.js';
import type { KubeReader } from '../evidence/kubernetes/client.js';
import { emptyKubeEvidence, gatherKubeEvidence } from '../evidence/kubernetes/gather.js';
import type { LokiClient } from '../evidence/loki/client.js';
import { gatherLogs } from '../evidence/loki/gather.js';
import type { LogsEvidence } from '../evidence/loki/types.js';
import type { PrometheusClient } from '../evidence/prometheus/client.js';
import { gatherMetrics } from '../evidence/prometheus/gather.js';
import type { MetricsEvidence } from '../evidence/prometheus/types.js';
import { ServiceCatalog, type ServiceEntry } from '../knowledge/catalog.js';
import type { Redactor } from '../redact/index.js';
import type { TriageInput } from '../triage/analyzer.js';
import { runTriage } from '../triage/index.js';
import type { Finding } from '../triage/types.js';

export interface InvestigationOutcome {
  findings: Finding[];
  target?: { namespace: string; kind: string; name: string };
  /** The ranked change timeline (most related first), for the record and the model. */
  changes: RankedChange[];
  gaps: string[];
  /** Everything the analyzers saw (kept in memory for the model loop; never stored raw). */
  input: TriageInput;
}

/** The evidence sources an investigation may use; absent ones are reported as gaps. */
export interface EvidenceSources {
  kube?: KubeReader;
  prometheus?: PrometheusClient;
  loki?: LokiClient;
  github?: GitHubReader;
  catalog?: ServiceCatalog;
  /** Changes stored as they arrived (flag webhooks, Slack announcements) in a window. */
  storedChanges?: (from: Date, to: Date) => Promise<ChangeEvent[]>;
  redactor: Redactor;
  now?: () => Date;
}

/** How far back the change timeline looks. Older changes are rarely the cause and would drown the rest. */
const TIMELINE_LOOKBACK_MS = 7 * 24 * 3600_000;
const TIMELINE_AFTER_MS = 5 * 60_000;
const TIMELINE_KEEP = 40;


const describe = (what: string, err: unknown) => `${what}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`;

/**
 * Deterministic investigation: Kubernetes first (it names the target), then metrics, logs and changes of
 * every source in parallel, then the analyzers. No model involved; every failure is a gap, not an abort.
 */
export async function investigateDeterministically(alert: Alert, onset: Date, sources: EvidenceSources): Promise<InvestigationOutcome> {
  const now = sources.now?.() ?? new Date();
  const kube = sources.kube ? await gatherKubeEvidence(sources.kube, alert, onset, { redactor: sources.redactor }) : emptyKubeEvidence(onset, '', ['kubernetes: not configured (set KUBECONFIG or run in-cluster)']);
  const gaps = [...kube.gaps];
  const t = kube.target;
  const service: ServiceEntry | undefined = t ? sources.catalog?.find(t.namespace, t.name) : undefined;
  const deps = (service?.dependsOn ?? []).map((name) => sources.catalog?.find(undefined, name) ?? { name, namespace: t?.namespace ?? '' });

  const window = { since: new Date(onset.getTime() - TIMELINE_LOOKBACK_MS), until: new Date(Math.min(onset.getTime() + TIMELINE_AFTER_MS, now.getTime())) };
  const [metrics, logs, github, stored] = await Promise.all([
    sources.prometheus && t
      ? gatherMetrics(sources.prometheus, { namespace: t.namespace, workload: t.name }, onset, {
          now,
          dependencies: deps.map((d) => ({ namespace: d.namespace, workload: d.name })),
        }).catch((err): MetricsEvidence | undefined => (gaps.push(describe('prometheus', err)), undefined))
      : Promise.resolve(undefined),
    sources.loki && t
      ? gatherLogs(sources.loki, { namespace: t.namespace, workload: t.name }, onset, { redactor: sources.redactor, now }).catch(
          (err): LogsEvidence | undefined => (gaps.push(describe('loki', err)), undefined),
        )
      : Promise.resolve(undefined),
    sources.github && service?.repo
      ? githubChanges(sources.github, service.repo, window, { service: service.name, ...(service.environment ? { environment: service.environment } : {}) })
      : Promise.resolve(undefined),
    sources.storedChanges ? sources.storedChanges(window.since, window.until).catch((err) => (gaps.push(describe('stored changes', err)), [])) : Promise.resolve([]),
  ]);
  if (!sources.prometheus) gaps.push('prometheus: not configured (set PROMETHEUS_URL)');
  if (!sources.loki) gaps.push('loki: not configured (set LOKI_URL)');
  if (github) gaps.push(...github.gaps);
  for (const s of [...(metrics?.summaries ?? []), ...(logs?.summaries ?? [])]) if (s.status === 'error' && s.error) gaps.push(`${s.citation.source}: ${s.error}`);

  const usedByTarget = new Set<string>();
  for (const r of kube.related) usedByTarget.add(`${r.kind}/${r.namespace}/${r.name}`);
  if (kube.helm && t) usedByTarget.add(`HelmRelease/${t.namespace}/${kube.helm.release}`);
  if (service?.repo) usedByTarget.add(`Repository//${service.repo}`);
  for (const flag of service?.flags ?? []) usedByTarget.add(`FeatureFlag//${flag}`);

  const changes = rankChanges([...kubernetesChanges(kube), ...(github?.changes ?? []), ...stored], {
    onset,
    target: t,
    usedByTarget,
    dependencies: deps.map((d) => d.name),
  }).slice(0, TIMELINE_KEEP);

  const input: TriageInput = { alert, onset, kube, metrics, logs, changes, service };
  const triage = runTriage(input);
  return { findings: triage.findings, target: t, changes, gaps: [...gaps, ...triage.errors], input };
}

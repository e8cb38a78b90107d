import type { Alert } from '../alerts/types.js';
import { kubernetesChanges, snapshotChanges } from '../changes/kubernetes.js';
import { rankChanges } from '../changes/rank.js';
import type { ChangeEvent, RankedChange } from '../changes/types.js';
import type { GitHubReader } from '../evidence/github/client.js';
import { githubChanges } from '../evidence/github/changes.js';
import { describeGitHubFailure } from '../evidence/github/errors.js';
import type { KubeReader } from '../evidence/kubernetes/client.js';
import { emptyKubeEvidence, type KubeEvidence } from '../evidence/kubernetes/gather.js';
import type { WorkloadRef } from '../evidence/kubernetes/target.js';
import { NamespaceReads, workloadEvidence } from '../evidence/kubernetes/workload-evidence.js';
import type { LokiClient } from '../evidence/loki/client.js';
import { gatherLogs } from '../evidence/loki/gather.js';
import type { LogsEvidence } from '../evidence/loki/types.js';
import { CONTAINER_RESTARTS, CPU_THROTTLING, MEMORY_LIMIT_RATIO, MEMORY_WORKING_SET, TARGET_CATALOG, type CatalogEntry } from '../evidence/prometheus/catalog.js';
import type { PrometheusClient } from '../evidence/prometheus/client.js';
import { discoverMetrics, type DiscoveredMetrics } from '../evidence/prometheus/discover.js';
import { gatherMetrics } from '../evidence/prometheus/gather.js';
import type { MetricSummary, MetricsEvidence } from '../evidence/prometheus/types.js';
import { ServiceCatalog, type ServiceEntry } from '../knowledge/catalog.js';
import type { Redactor } from '../redact/index.js';
import { buildTopology, nodeId, refOfId, type Topology } from '../topology/graph.js';
import type { ComponentRef } from '../evidence/types.js';
import { addServiceGraphEdges } from '../topology/service-graph.js';
import { emptySnapshot, objectMeta, readClusterSnapshot, type ClusterSnapshot } from '../topology/snapshot.js';
import { suspicionOf } from '../topology/suspicion.js';
import { resolveSubjects, type Subject } from '../topology/subjects.js';
import { walkFrom, type Reached, type Walk } from '../topology/walk.js';
import type { ClusterTriageInput, TriageInput } from '../triage/analyzer.js';
import { runClusterTriage } from '../triage/cluster/index.js';
import { gatherClusterEvidence } from '../evidence/cluster.js';
import { runTriage } from '../triage/index.js';
import { reconcileFindings } from '../triage/reconcile.js';
import type { Finding } from '../triage/types.js';
import { TransientSourceError } from '../evidence/transient.js';
import { OTHER_ALERTS_LOOKBACK_MS, type OtherAlert } from '../triage/concurrent-alerts.js';

export interface InvestigationOutcome {
  findings: Finding[];
  /** The alerted workload (or the first candidate), for the incident record and the model brief. */
  target?: { namespace: string; kind: string; name: string };
  /** The ranked change timeline (most related first), for the record and the model. */
  changes: RankedChange[];
  gaps: string[];
  /** Everything the analyzers saw about the primary target (kept in memory for the model loop; never stored raw). */
  input: TriageInput;
  /** The same for every candidate workload the walk reached. */
  inputs: TriageInput[];
  /** What the alert names, and the graph walked from it. */
  subjects: Subject[];
  topology?: Topology;
  walk?: Walk;
  /** The cluster-level input (cluster metrics, jobs, the whole timeline), for the model tools and the record. */
  cluster?: ClusterTriageInput;
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
  /** Alerts of other incidents received in a window (not those of `alert`'s own incident): look-alikes to clear. */
  otherAlerts?: (alert: Alert, from: Date, to: Date) => Promise<OtherAlert[]>;
  redactor: Redactor;
  now?: () => Date;
  /** How far back the change timeline looks (default 7 days): delayed effects need more than an hour. */
  changeLookbackMs?: number;
  /** Workloads added in the follow-the-errors round (default 4). */
  maxFollow?: number;
  /** Candidate workloads gathered per investigation (default 8). */
  maxCandidates?: number;
}

const TIMELINE_LOOKBACK_MS = 7 * 24 * 3600_000;
const TIMELINE_AFTER_MS = 5 * 60_000;
const TIMELINE_KEEP = 40;
/** Recently pushed repositories read besides the candidates' own. */
const PUSHED_REPOS_KEEP = 4;
const APP_KINDS = new Set(['Deployment', 'StatefulSet', 'DaemonSet']);

const describe = (what: string, err: unknown) => `${what}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`;

/**
 * Deterministic investigation:
 * 1. one read of the cluster, the service graph built from it (plus the catalog and service-graph metrics);
 * 2. the alert resolved to what it names (subjects), the graph walked to candidate origins;
 * 3. evidence per candidate workload: Kubernetes (running pods' logs included), discovered metrics,
 *    Loki, GitHub, stored changes, each ranked against that candidate;
 * 4. the analyzers per candidate, then the reconcile: which finding is the origin, which are victims,
 *    which are unrelated, with the path and the scope from the graph.
 * No model involved; every failure is a gap, not an abort, except a cluster that cannot answer its core
 * lists for now (TransientSourceError): the runner retries that with backoff.
 */
export async function investigateDeterministically(alert: Alert, onset: Date, sources: EvidenceSources): Promise<InvestigationOutcome> {
  const now = sources.now?.() ?? new Date();
  const gaps: string[] = [];
  if (!sources.prometheus) gaps.push('prometheus: not configured (set PROMETHEUS_URL)');
  if (!sources.loki) gaps.push('loki: not configured (set LOKI_URL)');
  const window = { since: new Date(onset.getTime() - (sources.changeLookbackMs ?? TIMELINE_LOOKBACK_MS)), until: new Date(Math.min(onset.getTime() + TIMELINE_AFTER_MS, now.getTime())) };
  const othersPromise = sources.otherAlerts
    ? sources.otherAlerts(alert, new Date(onset.getTime() - OTHER_ALERTS_LOOKBACK_MS), new Date(Math.min(onset.getTime() + TIMELINE_AFTER_MS, now.getTime()))).catch((err) => (gaps.push(describe('other alerts', err)), [] as OtherAlert[]))
    : Promise.resolve([] as OtherAlert[]);
  const storedPromise = sources.storedChanges ? sources.storedChanges(window.since, window.until).catch((err) => (gaps.push(describe('stored changes', err)), [])) : Promise.resolve([] as ChangeEvent[]);

  if (!sources.kube) {
    const kube = emptyKubeEvidence(onset, '', ['kubernetes: not configured (set KUBECONFIG or run in-cluster)']);
    const changes = rankChanges(await storedPromise, { onset }).slice(0, TIMELINE_KEEP);
    const input: TriageInput = { alert, onset, kube, changes };
    const triage = runTriage(input);
    return { findings: triage.findings, changes, gaps: [...gaps, ...kube.gaps, ...triage.errors], input, inputs: [input], subjects: [] };
  }

  const reader = sources.kube;
  // A cluster that could not answer for a moment is retried by the runner, not diagnosed as empty.
  const snapshot: ClusterSnapshot = await readClusterSnapshot(reader, { now }).catch((err) => {
    if (err instanceof TransientSourceError) throw err;
    return emptySnapshot([describe('kubernetes', err)]);
  });
  gaps.push(...snapshot.gaps);
  const catalogDeps = (sources.catalog?.services ?? []).flatMap((s) =>
    (s.dependsOn ?? []).map((d) => ({ from: catalogWorkload(snapshot, s), toName: d, toNamespace: sources.catalog?.find(undefined, d)?.namespace })),
  ).filter((d) => d.from.name);
  const topology = buildTopology(snapshot, { catalogDeps });
  if (sources.prometheus) await addServiceGraphEdges(topology, sources.prometheus, onset, now).catch((err) => gaps.push(describe('prometheus service graph', err)));

  const subjects = resolveSubjects(alert, topology);
  const walk = walkFrom(subjects, topology, { maxCandidates: sources.maxCandidates ?? 8, suspicion: (id) => suspicionOf(snapshot, id, onset) });
  if (subjects.length === 0) gaps.push('the alert names nothing found in the cluster (no namespace, workload, Service, Ingress host, node or PVC of its labels or text)');

  const reads = new NamespaceReads(reader);
  const candidates = walk.candidates.filter((c) => APP_KINDS.has(c.ref.kind));
  const gather = async (cs: Reached[]) => {
    const kubes = await Promise.all(
      cs.map((c) => {
        const since = dependencyChangedAt(topology, c.ref, onset);
        return workloadEvidence(reader, snapshot, c.ref as WorkloadRef, onset, { redactor: sources.redactor, reads, now, ...(since ? { logsSince: since } : {}) });
      }),
    );
    const [metrics, logs] = await Promise.all([
      Promise.all(cs.map((_, i) => candidateMetrics(sources, kubes[i]!, onset, now, gaps))),
      Promise.all(
        cs.map((c) =>
          sources.loki
            ? gatherLogs(sources.loki, { namespace: c.ref.namespace!, workload: c.ref.name }, onset, { redactor: sources.redactor, now }).catch((err): LogsEvidence | undefined => (gaps.push(describe('loki', err)), undefined))
            : Promise.resolve(undefined),
        ),
      ),
    ]);
    return { kubes, metrics, logs };
  };
  const first = await gather(candidates);
  const kubes = first.kubes;
  const metricsBy = first.metrics;
  const logsBy = first.logs;
  // Follow the errors: a candidate that fails while calling something the walk ranked out gets that
  // callee gathered too (frontend → search → geo → the database geo cannot read), one more round.
  const next = followErrors(topology, walk, candidates, kubes, metricsBy, sources.maxFollow ?? 4);
  if (next.length) {
    const more = await gather(next);
    candidates.push(...next);
    walk.candidates.push(...next);
    for (const r of next) if (!walk.reached.has(r.id)) walk.reached.set(r.id, r);
    kubes.push(...more.kubes);
    metricsBy.push(...more.metrics);
    logsBy.push(...more.logs);
  }
  gaps.push(...reads.gaps, ...kubes.flatMap((k) => k.gaps));
  const stored = await storedPromise;
  const repos = candidateRepos(sources.catalog, snapshot, candidates);
  // Repositories no candidate names but that moved in the window (GitOps, platform, chart repos): a
  // route, policy or values change lands there and reaches the cluster through a sync.
  const pushed = sources.github
    ? await sources.github.recentlyPushedRepos(window.since, PUSHED_REPOS_KEEP).catch((err: unknown) => (gaps.push(describeGitHubFailure('GitHub repositories the token can read', err)), [] as string[]))
    : [];
  const github = sources.github
    ? await Promise.all([
        ...[...repos.entries()].map(([repo, { service, environment }]) =>
          githubChanges(sources.github!, repo, window, { service, ...(environment ? { environment } : {}) }).catch(() => undefined),
        ),
        ...pushed.filter((repo) => !repos.has(repo)).map((repo) => githubChanges(sources.github!, repo, window, { kinds: ['pr_merged', 'commit'] }).catch(() => undefined)),
      ])
    : [];
  for (const g of github) if (g) gaps.push(...g.gaps);
  const githubEvents = github.flatMap((g) => g?.changes ?? []);
  for (const m of metricsBy) for (const s of m?.summaries ?? []) if (s.status === 'error' && s.error) gaps.push(`${s.citation.source}: ${s.error}`);
  for (const l of logsBy) for (const s of l?.summaries ?? []) if (s.status === 'error' && s.error) gaps.push(`${s.citation.source}: ${s.error}`);

  // Cluster-wide evidence (node, volume and queue metrics; jobs) before any triage: a candidate's own
  // analyzer corroborates with it too (a conntrack error in its logs, the node's table in the metrics).
  const subjectLabels = alert.members?.length ? alert.members.map((m) => ({ ...alert.labels, ...m.labels })) : [alert.labels];
  const clusterEvidence = await gatherClusterEvidence({ kube: reader, ...(sources.prometheus ? { prometheus: sources.prometheus } : {}), redactor: sources.redactor, now }, snapshot, [...walk.reached.values()], subjectLabels, onset);
  gaps.push(...clusterEvidence.gaps);

  // Changes of every candidate in one timeline; each input ranks it against its own workload.
  const allKubeChanges = dedupeChanges([...kubes.flatMap((k) => kubernetesChanges(k)), ...snapshotChanges(snapshot, new Date(onset.getTime() - 24 * 3600_000))]);
  const inputs: TriageInput[] = candidates.map((c, i) => {
    const kube = kubes[i]!;
    const service = sources.catalog?.find(c.ref.namespace, c.ref.name);
    const usedByTarget = new Set<string>();
    for (const r of kube.related) usedByTarget.add(`${r.kind}/${r.namespace}/${r.name}`);
    if (kube.helm) usedByTarget.add(`HelmRelease/${c.ref.namespace}/${kube.helm.release}`);
    if (service?.repo) usedByTarget.add(`Repository//${service.repo}`);
    for (const [repo, r] of repos) if (r.service === c.ref.name) usedByTarget.add(`Repository//${repo}`);
    for (const flag of service?.flags ?? []) usedByTarget.add(`FeatureFlag//${flag}`);
    const callees = calleesOf(topology, c, candidates);
    const changes = rankChanges([...allKubeChanges, ...githubEvents, ...stored], {
      onset,
      target: c.ref as WorkloadRef,
      usedByTarget,
      dependencies: [...(service?.dependsOn ?? []), ...callees.map((x) => x.ref.name)],
    }).slice(0, TIMELINE_KEEP);
    const metrics = withDependencies(metricsBy[i], callees.map((x) => ({ ref: x.ref, metrics: metricsBy[candidates.indexOf(x)] })));
    return { alert, onset, kube, metrics, logs: logsBy[i], changes, service, cluster: { snapshot, topology, walk, subjects, candidate: c, metrics: clusterEvidence.metrics } };
  });

  for (const i of inputs) if (i.cluster) i.cluster.inputs = inputs;
  const primaryIndex = Math.max(0, candidates.findIndex((c) => walk.starts.some((s) => s.id === c.id)));
  const primary: TriageInput = inputs[primaryIndex] ?? {
    alert,
    onset,
    kube: { ...emptyKubeEvidence(onset, reader.server), unhealthyPods: [], warningEvents: snapshot.warningEvents },
    changes: rankChanges([...githubEvents, ...stored], { onset }).slice(0, TIMELINE_KEEP),
    cluster: { snapshot, topology, walk, subjects },
  };
  const all: Finding[] = [];
  const errors: string[] = [];
  for (const input of inputs.length ? inputs : [primary]) {
    const triage = runTriage(input);
    all.push(...triage.findings);
    errors.push(...triage.errors);
  }
  // The cluster pass: objects that are not a candidate workload's own (quotas, webhooks, nodes, jobs…).
  const clusterInput: ClusterTriageInput = {
    alert,
    onset,
    cluster: { snapshot, topology, walk, subjects },
    inputs,
    changes: rankChanges([...allKubeChanges, ...githubEvents, ...stored], { onset }).slice(0, TIMELINE_KEEP * 2),
    metrics: clusterEvidence.metrics,
    jobs: clusterEvidence.jobs,
  };
  const clusterTriage = runClusterTriage(clusterInput);
  all.push(...clusterTriage.findings.map((f) => ({ ...f, family: f.family ?? f.analyzer })));
  errors.push(...clusterTriage.errors);
  const findings = reconcileFindings(dedupeFindings(all), { topology, walk, subjects, onset, inputs, changes: clusterInput.changes, otherAlerts: await othersPromise });
  const target = candidates[primaryIndex] ? (candidates[primaryIndex]!.ref as WorkloadRef) : undefined;
  return {
    findings,
    ...(target ? { target: { namespace: target.namespace, kind: target.kind, name: target.name } } : {}),
    changes: primary.changes,
    gaps: [...new Set([...gaps, ...errors])],
    input: primary,
    inputs,
    subjects,
    topology,
    walk,
    cluster: clusterInput,
  };
}

/** The catalog entry's workload as a graph node (Deployment unless the cluster says otherwise). */
function catalogWorkload(snapshot: ClusterSnapshot, s: ServiceEntry): { kind: string; namespace?: string; name: string } {
  const ns = s.namespace;
  const sts = snapshot.statefulSets.find((x) => x.metadata?.name === s.name && (!ns || x.metadata?.namespace === ns));
  if (sts) return { kind: 'StatefulSet', namespace: sts.metadata?.namespace, name: s.name };
  const dep = snapshot.deployments.find((x) => x.metadata?.name === s.name && (!ns || x.metadata?.namespace === ns));
  return { kind: 'Deployment', namespace: dep?.metadata?.namespace ?? ns, name: s.name };
}

/** Metrics for one candidate: the container defaults, plus the request/pool queries its series' convention calls for. */
async function candidateMetrics(sources: EvidenceSources, kube: KubeEvidence, onset: Date, now: Date, gaps: string[]): Promise<MetricsEvidence | undefined> {
  if (!sources.prometheus || !kube.target) return undefined;
  const t = kube.target;
  const services = kube.services.map((s) => s.service.metadata?.name ?? '').filter(Boolean);
  const range = { from: new Date(onset.getTime() - 60 * 60_000), to: new Date(Math.min(onset.getTime() + 5 * 60_000, now.getTime())) };
  let discovered: DiscoveredMetrics | undefined;
  try {
    discovered = await discoverMetrics(sources.prometheus, { namespace: t.namespace, name: t.name, services, pods: kube.pods.map((p) => p.metadata?.name ?? '') }, range);
  } catch (err) {
    gaps.push(describe('prometheus series', err));
  }
  const container: CatalogEntry[] = [CONTAINER_RESTARTS, MEMORY_WORKING_SET, MEMORY_LIMIT_RATIO, CPU_THROTTLING];
  const found = new Set(discovered?.entries.map((e) => e.id));
  // Without a recognised convention, the Prometheus-client defaults by `service` label stay.
  const fallback = TARGET_CATALOG.filter((e) => !container.includes(e) && !found.has(e.id));
  const catalog = [...(discovered?.entries ?? []), ...(discovered?.convention ? fallback.filter((e) => e.id === 'db_pool_saturation' && !found.has(e.id)) : fallback), ...container];
  const metrics = await gatherMetrics(sources.prometheus, { namespace: t.namespace, workload: t.name, ...(services[0] ? { service: services.includes(t.name) ? t.name : services[0] } : {}) }, onset, { now, catalog }).catch(
    (err): MetricsEvidence | undefined => (gaps.push(describe('prometheus', err)), undefined),
  );
  if (metrics && discovered) (metrics as MetricsEvidence & { discovered?: DiscoveredMetrics }).discovered = discovered;
  return metrics;
}

/** A candidate whose own evidence shows failure: error-level log patterns, or a 5xx ratio that left its baseline. */
function failing(kube: KubeEvidence, metrics: MetricsEvidence | undefined): boolean {
  if (kube.containerLogs.some((l) => l.patterns.some((p) => p.level === 'error' || (!p.level && FAILURE_LINE.test(p.template))))) return true;
  return (metrics?.summaries ?? []).some((s) => s.id === 'error_ratio' && s.status === 'success' && s.series.some((x) => x.deviationDirection === 'up'));
}
const FAILURE_LINE = /\b(failed|error|exception|refused|timeout|timed out|unavailable|denied|unauthori[sz]ed)\b/i;

/** Workloads behind the Services a failing candidate calls, that the walk reached but did not keep. */
function followErrors(t: Topology, walk: Walk, candidates: Reached[], kubes: KubeEvidence[], metrics: (MetricsEvidence | undefined)[], max: number): Reached[] {
  if (max <= 0) return [];
  const have = new Set(candidates.map((c) => c.id));
  const out: Reached[] = [];
  for (const [i, c] of candidates.entries()) {
    if (!failing(kubes[i]!, metrics[i])) continue;
    const services = t.outgoing(c.id).filter((e) => e.kind === 'calls').map((e) => e.to);
    for (const s of services) {
      for (const w of t.outgoing(s).filter((e) => e.kind === 'selects').map((e) => e.to)) {
        if (have.has(w) || out.length >= max) continue;
        const reached = walk.reached.get(w);
        const ref = refOfId(w);
        if (!APP_KINDS.has(ref.kind)) continue;
        have.add(w);
        out.push(reached ?? { id: w, ref, path: [...c.path, { ref: refOfId(s) }, { ref }], hops: c.hops + 1 });
      }
    }
  }
  return out;
}

/** The candidates a candidate calls (directly, through a Service that selects them). */
function calleesOf(t: Topology, c: Reached, candidates: Reached[]): Reached[] {
  const services = t.outgoing(c.id).filter((e) => e.kind === 'calls').map((e) => e.to);
  const targets = new Set(services.flatMap((s) => [s, ...t.outgoing(s).filter((e) => e.kind === 'selects').map((e) => e.to)]));
  return candidates.filter((x) => x.id !== c.id && targets.has(x.id));
}

/** A callee's HTTP symptoms as `dependency_*` summaries of its caller, titled `(<ns>/<service>)`. */
function withDependencies(own: MetricsEvidence | undefined, callees: { ref: { namespace?: string; name: string }; metrics: MetricsEvidence | undefined }[]): MetricsEvidence | undefined {
  if (!own) return own;
  const extra: MetricSummary[] = [];
  for (const callee of callees) {
    for (const s of callee.metrics?.summaries ?? []) {
      if (s.id !== 'error_ratio' && s.id !== 'latency_p99') continue;
      if (own.summaries.some((x) => x.id === `dependency_${s.id}` && x.title.endsWith(`(${callee.ref.namespace}/${callee.ref.name})`))) continue;
      extra.push({ ...s, id: `dependency_${s.id}`, title: `Dependency ${s.title} (${callee.ref.namespace}/${callee.ref.name})` });
    }
  }
  return extra.length ? { ...own, summaries: [...own.summaries, ...extra] } : own;
}

/** GitHub repositories of the candidates: the catalog's, a Backstage slug annotation, or a ghcr.io image's. */
function candidateRepos(catalog: ServiceCatalog | undefined, snapshot: ClusterSnapshot, candidates: Reached[]): Map<string, { service: string; environment?: string }> {
  const out = new Map<string, { service: string; environment?: string }>();
  for (const c of candidates) {
    const entry = catalog?.find(c.ref.namespace, c.ref.name);
    if (entry?.repo) {
      out.set(entry.repo, { service: entry.name, ...(entry.environment ? { environment: entry.environment } : {}) });
      continue;
    }
    const w = [...snapshot.deployments, ...snapshot.statefulSets].find((d) => d.metadata?.namespace === c.ref.namespace && d.metadata?.name === c.ref.name);
    const annotations = { ...w?.metadata?.annotations, ...w?.spec?.template?.metadata?.annotations };
    const slug = annotations['github.com/project-slug'] ?? annotations['app.kubernetes.io/source-repository']?.replace(/^https:\/\/github\.com\//, '');
    const image = w?.spec?.template?.spec?.containers?.[0]?.image;
    const ghcr = image ? /^ghcr\.io\/([\w.-]+)\/([\w.-]+)[:@]/.exec(image) : null;
    const repo = slug && /^[\w.-]+\/[\w.-]+$/.test(slug) ? slug : ghcr ? `${ghcr[1]}/${ghcr[2]}` : undefined;
    if (repo && !out.has(repo)) out.set(repo, { service: c.ref.name });
  }
  return new Map([...out].slice(0, 8));
}

/** How far back a dependency's change widens a candidate's log window. */
const LOG_WIDEN_MS = 3 * 3600_000;

/**
 * When an object the workload reads, consumes or is configured by was last written (managedFields), if
 * that is within a few hours before the onset: its effect may have shown in the workload's logs long
 * before the alert (a retention cut that reset a consumer 40 minutes before the reconciliation noticed).
 */
function dependencyChangedAt(t: Topology, ref: ComponentRef, onset: Date): Date | undefined {
  let latest: number | undefined;
  for (const e of t.outgoing(nodeId(ref))) {
    if (e.kind !== 'reads' && e.kind !== 'consumes' && e.kind !== 'isolated-by' && e.kind !== 'configured-by') continue;
    for (const m of objectMeta(t.snapshot, refOfId(e.to))?.managedFields ?? []) {
      const at = m.time ? new Date(m.time).getTime() : NaN;
      if (!Number.isFinite(at) || m.subresource || at > onset.getTime() || onset.getTime() - at > LOG_WIDEN_MS) continue;
      latest = Math.max(latest ?? 0, at);
    }
  }
  return latest !== undefined ? new Date(latest - 2 * 60_000) : undefined;
}

function dedupeChanges(changes: ChangeEvent[]): ChangeEvent[] {
  const seen = new Set<string>();
  return changes.filter((c) => {
    const k = `${c.citation.ref}|${c.at.getTime()}|${c.kind}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** One finding per key: the first candidate that produced it wins (noise repeats per candidate). */
function dedupeFindings(findings: Finding[]): Finding[] {
  const byKey = new Map<string, Finding>();
  for (const f of findings) if (!byKey.has(f.key)) byKey.set(f.key, f);
  return [...byKey.values()];
}

export { nodeId };

/**
 * `deploy-regression`: "the deploy right before the spike broke it". A rollout or image change of the
 * target (its ReplicaSets), or a GitHub deployment / merged PR of its repository, shortly before the
 * target's 5xx ratio or p99 latency left its baseline — without crashes (a crashing rollout is the pods
 * family's: its analyzers name the exit reason).
 *
 * It refutes itself when the symptom began BEFORE the deploy (the classic red herring), when a
 * dependency degraded first, and when the last deploy is older than the change window.
 *
 * Facts (camelCase): `revision` (ReplicaSet revision, e.g. "5"), `image` (`container=image`), `sha`
 * (short commit of a GitHub deployment), `pr` (e.g. 214), `prTitle`, `prMergedBy` (or `prAuthor` when
 * GitHub names no merger — the change timeline keeps one actor per PR),
 * `deployedAt` (ISO), `metric` (`error_ratio`|`latency_p99`), `before`/`after` (baseline and deviated
 * level, in the metric's unit), `symptomStart` (ISO).
 *
 * Also exports the symptom helpers the other change analyzers share (`targetSymptoms`, `symptomAfter`).
 */
import type { RankedChange } from '../../changes/types.js';
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import { metricEvidence } from '../../evidence/prometheus/evidence.js';
import type { MetricSummary, SeriesSummary } from '../../evidence/prometheus/types.js';
import type { Analyzer, TriageInput } from '../analyzer.js';
import { CHANGE_WINDOW_MS } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime, humanDuration, relativeToOnset, timeNear } from '../time.js';
import type { Finding, MitigationProposal } from '../types.js';

/** Clocks of different sources disagree a little; a symptom this much before a change still counts as after it. */
export const SKEW_MS = 60_000;
/** A symptom starting within this long after a change is "right after" it. */
export const CLOSE_AFTER_MS = 15 * 60_000;

/** A target metric that left its baseline in its bad direction: 5xx ratio or p99 latency, or a store's own health (stores.ts). */
export interface MetricSymptom {
  metric: string;
  start: Date;
  before: number | null;
  after: number | null;
  unit: string;
  evidence: Evidence;
}

/** A log template new (or spiking) since the onset that reads like a failure. */
export interface LogSymptom {
  template: string;
  example: string;
  first?: Date;
  evidence: Evidence;
}

export interface Symptoms {
  metrics: MetricSymptom[];
  logs: LogSymptom[];
  /** Earliest start of any dated symptom. */
  start?: Date;
  /** Whether any metric for the target answered at all (else "no symptom" means "not known"). */
  metricsKnown: boolean;
}

/** The metric ids a symptom is read from: the request metrics, then a data store's own (when it has an exporter). */
export const SYMPTOM_METRICS = ['error_ratio', 'latency_p99', 'store_evictions', 'store_memory_ratio', 'store_hit_ratio', 'store_connections_ratio', 'store_locks', 'store_oldest_tx', 'store_up', 'store_replication_lag', 'store_latency'] as const;

const METRIC_LABELS: Record<string, [label: string, word: string]> = {
  error_ratio: ['5xx ratio', 'errors'],
  latency_p99: ['p99 latency', 'latency'],
  store_evictions: ['evictions', 'evictions'],
  store_memory_ratio: ['memory use against its limit', 'memory use'],
  store_hit_ratio: ['cache hit ratio', 'cache misses'],
  store_connections_ratio: ['connections against max_connections', 'connections'],
  store_locks: ['lock count', 'lock waits'],
  store_oldest_tx: ['oldest transaction age', 'long transactions'],
  store_up: ['exporter reachability', 'unreachability'],
  store_replication_lag: ['replication lag', 'replication lag'],
  store_latency: ['server-side command latency', 'slow commands'],
};
/** `5xx ratio`, `p99 latency`, `evictions`… for a symptom's metric id. */
export const metricLabel = (id: string): string => METRIC_LABELS[id]?.[0] ?? id.replace(/_/g, ' ');
/** `errors`, `latency`… as in "errors started at 10:02". */
export const metricWord = (id: string): string => METRIC_LABELS[id]?.[1] ?? id.replace(/_/g, ' ');
/** "rose" or "fell", from the symptom's levels. */
export const moved = (m: { before: number | null; after: number | null }): string => (m.before !== null && m.after !== null && m.after < m.before ? 'fell' : 'rose');

export const FAILURE_TEXT = /error|fail|exception|panic|fatal|timeout|timed out|refused|unavailable|no such host|deadline|reset by peer|5\d\d\b/i;

const round = (x: number | null | undefined): number | null => (x === null || x === undefined ? null : Number(x.toPrecision(3)));

function deviatedLevel(s: SeriesSummary): number | null {
  const shift = s.changePoints.find((c) => s.deviationStart && c.at.getTime() >= s.deviationStart.getTime() - SKEW_MS);
  return round(shift ? shift.after : s.max);
}

/** Error ratios (5xx / requests), the target's or a dependency's as its callers see it. */
const ERROR_RATIOS = new Set(['error_ratio', 'dependency_error_ratio']);
/** The least 5xx share that is a symptom: 1% of requests (SLOs page at 0.1-1% burned over hours, not 0.01% now). */
const MATERIAL_ERROR_RATIO = 0.01;

/** The deviations of one summary in its bad direction (or the one asked for), as symptoms. */
export function metricSymptoms(summary: MetricSummary | undefined, direction?: 'up' | 'down'): (Omit<MetricSymptom, 'metric'> & { series: SeriesSummary })[] {
  if (!summary || summary.status !== 'success') return [];
  const out: (Omit<MetricSymptom, 'metric'> & { series: SeriesSummary })[] = [];
  for (const s of summary.series) {
    if (!s.deviationStart || s.deviationDirection !== (direction ?? (summary.badWhen === 'low' ? 'down' : 'up'))) continue;
    // A 5xx ratio that doubled from 0.004% to 0.009% left its baseline, but no one is paged for it:
    // an error-ratio symptom counts once errors reach a share a user would notice.
    if (ERROR_RATIOS.has(summary.id) && (s.max ?? 0) < MATERIAL_ERROR_RATIO) continue;
    const evidence = metricEvidence({ ...summary, series: [s] })[0];
    if (!evidence) continue;
    out.push({ start: s.deviationStart, before: round(s.baseline?.median), after: deviatedLevel(s), unit: summary.unit, evidence, series: s });
  }
  return out;
}

/** The target's symptoms: 5xx ratio / p99 latency deviating up, and failure-like log templates new since the onset. */
export function targetSymptoms({ metrics, logs, kube }: Pick<TriageInput, 'metrics' | 'logs' | 'kube'>): Symptoms {
  const out: Symptoms = { metrics: [], logs: [], metricsKnown: false };
  for (const id of SYMPTOM_METRICS) {
    const summary = metrics?.summaries.find((s) => s.id === id);
    if (summary?.status === 'success') out.metricsKnown = true;
    for (const m of metricSymptoms(summary)) out.metrics.push({ metric: id, start: m.start, before: m.before, after: m.after, unit: m.unit, evidence: m.evidence });
  }
  for (const s of logs?.summaries ?? []) {
    if (s.status !== 'success') continue;
    for (const p of s.newSinceOnset) {
      if (p.level !== 'error' && p.level !== 'warn' && !FAILURE_TEXT.test(p.template)) continue;
      if (out.logs.some((l) => l.template === p.template)) continue;
      out.logs.push({
        template: p.template,
        example: p.example,
        ...(p.first ? { first: p.first } : {}),
        evidence: {
          kind: 'log',
          summary: `${p.change.kind === 'new' ? 'New since onset' : 'Rate jumped at onset'}: ${p.level ? `[${p.level}] ` : ''}"${p.template.slice(0, 160)}" ×${p.change.countAfter}`,
          citation: s.citation,
          ...(p.first ? { observedAt: p.first } : {}),
          detail: { template: p.template, example: p.example, ...p.change },
        },
      });
    }
  }
  // Logs of restarted target containers (read from the kubelet) count too.
  for (const c of kube.containerLogs) {
    for (const p of c.patterns) {
      if (p.level !== 'error' || out.logs.some((l) => l.template === p.template)) continue;
      out.logs.push({
        template: p.template,
        example: p.example,
        ...(p.first ? { first: p.first } : {}),
        evidence: {
          kind: 'log',
          summary: `[error] "${p.template.slice(0, 160)}" ×${p.count} in ${c.pod}/${c.container}${c.previous ? ' (previous container)' : ''}`,
          citation: objectCitation('Pod', kube.target?.namespace, c.pod, `log?container=${c.container}${c.previous ? '&previous=true' : ''}`),
          ...(p.first ? { observedAt: p.first } : {}),
        },
      });
    }
  }
  const starts = [...out.metrics.map((m) => m.start), ...out.logs.map((l) => l.first).filter((d): d is Date => !!d)];
  if (starts.length) out.start = new Date(Math.min(...starts.map((d) => d.getTime())));
  return out;
}

/** How the symptoms sit against a change at `at`: after it (and how soon), before it, or unknown. */
export interface SymptomTiming {
  relation: 'after' | 'before' | 'unknown';
  /** Metric symptoms that began after the change (earliest first). */
  metricsAfter: MetricSymptom[];
  logsAfter: LogSymptom[];
  /** The earliest metric symptom that began before the change, when one did. */
  earlierMetric?: MetricSymptom;
  /** Delay from the change to the first symptom after it. */
  delayMs?: number;
}

export function symptomAfter(symptoms: Symptoms, at: Date): SymptomTiming {
  const t = at.getTime();
  const metricsAfter = symptoms.metrics.filter((m) => m.start.getTime() >= t - SKEW_MS).sort((a, b) => a.start.getTime() - b.start.getTime());
  const logsAfter = symptoms.logs.filter((l) => !l.first || l.first.getTime() >= t - SKEW_MS);
  const earlierMetric = symptoms.metrics.filter((m) => m.start.getTime() < t - SKEW_MS).sort((a, b) => a.start.getTime() - b.start.getTime())[0];
  if (earlierMetric) return { relation: 'before', metricsAfter, logsAfter, earlierMetric };
  const firsts = [...metricsAfter.map((m) => m.start), ...logsAfter.map((l) => l.first).filter((d): d is Date => !!d)];
  if (!firsts.length && !logsAfter.length) return { relation: 'unknown', metricsAfter, logsAfter };
  const first = firsts.length ? Math.min(...firsts.map((d) => d.getTime())) : undefined;
  return { relation: 'after', metricsAfter, logsAfter, ...(first !== undefined ? { delayMs: Math.max(0, first - t) } : {}) };
}

/** The target workload, its Services and its callers: who a change of the target affects. */
export function targetScope(input: TriageInput): ComponentRef[] {
  const t = input.kube.target;
  if (!t) return [];
  return [
    { kind: t.kind, namespace: t.namespace, name: t.name },
    ...input.kube.services.map(({ service }) => ({ kind: 'Service', namespace: t.namespace, name: service.metadata?.name ?? '?' })),
    ...input.kube.dependents.map((d) => ({ kind: d.kind, namespace: t.namespace, name: d.name })),
  ];
}

export function fmtLevel(x: number | null, unit: string): string {
  if (x === null) return 'n/a';
  if (unit === 'ratio') return `${Number((x * 100).toPrecision(3))}%`;
  if (unit === 'seconds') return x < 1 ? `${Math.round(x * 1000)} ms` : `${Number(x.toPrecision(3))} s`;
  return `${x} ${unit}`;
}

const DEPLOY_KINDS = new Set(['rollout', 'image', 'deploy', 'pr_merged']);

/** Changes that deploy the target: its rollouts/image changes, and GitHub deploys/PRs of its service or repo. */
export function deploysOf(input: TriageInput): RankedChange[] {
  const t = input.kube.target;
  if (!t) return [];
  const names = new Set([t.name, input.service?.name].filter((n): n is string => !!n));
  return input.changes
    .filter((c) => DEPLOY_KINDS.has(c.kind))
    .filter((c) =>
      c.source === 'kubernetes'
        ? c.target.kind === t.kind && c.target.name === t.name && c.target.namespace === t.namespace
        : (c.target.kind === 'Service' && names.has(c.target.name)) || (c.target.kind === 'Repository' && c.target.name === input.service?.repo),
    )
    .sort((a, b) => b.at.getTime() - a.at.getTime());
}

/** `#214 "Switch price rounding to bankers" merged by alice` → number, title. */
const PR_SUMMARY = /^#(\d+) "(.*)" merged/;
/** `rollout to revision 5: cart=registry/cart:1.9.0` */
const REVISION = /revision (\d+)/;

interface DeployFacts {
  revision?: number;
  previousRevision?: number;
  image?: string;
  sha?: string;
  pr?: number;
  prTitle?: string;
  prAuthor?: string;
  prMergedBy?: string;
}

function describeDeploy(group: RankedChange[]): DeployFacts {
  const f: DeployFacts = {};
  for (const c of group) {
    if (c.source === 'kubernetes') {
      f.revision ??= Number(REVISION.exec(c.after ?? c.summary)?.[1] ?? REVISION.exec(c.summary)?.[1]) || undefined;
      if (c.kind === 'image') f.image ??= c.after;
      const prev = Number(REVISION.exec(c.before ?? '')?.[1]);
      if (prev) f.previousRevision ??= prev;
    } else if (c.kind === 'deploy') f.sha ??= c.after;
    else if (c.kind === 'pr_merged') {
      const m = PR_SUMMARY.exec(c.summary);
      if (m) {
        f.pr ??= Number(m[1]);
        f.prTitle ??= m[2];
      }
      // The change's actor is the merger when GitHub names one, else the author.
      if (/ merged by /.test(c.summary)) f.prMergedBy ??= c.actor;
      else f.prAuthor ??= c.actor;
      f.sha ??= c.after;
    }
  }
  return f;
}

/** Revision numbers of the target's ReplicaSets, newest first. */
function revisions(input: TriageInput): number[] {
  return input.kube.replicaSets
    .map((rs) => Number(rs.metadata?.annotations?.['deployment.kubernetes.io/revision'] ?? 0))
    .filter((n) => n > 0)
    .sort((a, b) => b - a);
}

const CANNOT_START = ['CrashLoopBackOff', 'ErrImagePull', 'ImagePullBackOff', 'CreateContainerConfigError', 'CreateContainerError', 'RunContainerError', 'InvalidImageName'];

/** Pods that crash, cannot pull or create their containers, or hang in an init container: the pods family names why. */
function crashing(input: TriageInput): boolean {
  return input.kube.pods.some(
    (p) =>
      (p.status?.containerStatuses ?? []).some((c) => CANNOT_START.includes(c.state?.waiting?.reason ?? '') || c.lastState?.terminated?.reason === 'OOMKilled') ||
      (p.status?.phase === 'Pending' && (p.status?.initContainerStatuses ?? []).some((c) => !(c.state?.terminated && c.state.terminated.exitCode === 0) || CANNOT_START.includes(c.state?.waiting?.reason ?? ''))),
  );
}

/** The dependency metric that deviated up first, if any did before `before`. */
function dependencyFirst(input: TriageInput, before: Date): { summary: MetricSummary; start: Date } | undefined {
  let best: { summary: MetricSummary; start: Date } | undefined;
  for (const s of input.metrics?.summaries ?? []) {
    if (!s.id.startsWith('dependency_')) continue;
    for (const m of metricSymptoms(s)) {
      if (m.start.getTime() <= before.getTime() + SKEW_MS / 2 && (!best || m.start < best.start)) best = { summary: s, start: m.start };
    }
  }
  return best;
}

function changeEvidence(c: RankedChange, onset?: Date): Evidence {
  return { kind: 'change', summary: `${c.summary} (${onset ? timeNear(c.at, onset) : clockTime(c.at)}, by ${c.actor})`, citation: c.citation, observedAt: c.at, detail: { kind: c.kind, before: c.before ?? null, after: c.after ?? null } };
}

export const deployRegression: Analyzer = {
  name: 'deploy-regression',
  analyze(input: TriageInput): Finding[] {
    const t = input.kube.target;
    if (!t) return [];
    const onset = input.onset.getTime();
    const deploys = deploysOf(input).filter((c) => c.at.getTime() <= onset + 2 * 60_000);
    if (!deploys.length) return [];
    const latest = deploys[0]!;
    const component = { kind: t.kind, namespace: t.namespace, name: t.name };
    const key = `deploy-regression:${t.namespace}/${t.kind}/${t.name}`;
    const title = `Deploy of ${t.name} ${relativeToOnset(latest.at, input.onset)} caused it`;

    if (onset - latest.at.getTime() > CHANGE_WINDOW_MS) {
      return [
        {
          key,
          analyzer: 'deploy-regression',
          status: 'ruled_out',
          confidence: 0.05,
          title: `A deploy of ${t.name} caused it`,
          component,
          mechanism: `The last deploy of ${t.name} (${latest.summary}) is too old to explain an onset at ${clockTime(input.onset)}.`,
          reason: `last deploy of ${t.name} was ${humanDuration(onset - latest.at.getTime())} before the alert (${latest.at.toISOString().slice(0, 16).replace('T', ' ')}), outside the ${humanDuration(CHANGE_WINDOW_MS)} change window`,
          supporting: [],
          refuting: [changeEvidence(latest, input.onset)],
        },
      ];
    }

    // A deploy is several records (GitHub deployment, PR, rollout): group those within 30 min of the latest.
    const group = deploys.filter((c) => latest.at.getTime() - c.at.getTime() <= 30 * 60_000);
    const facts = describeDeploy(group);
    // When it went live: the rollout (or the deployment record); a merge alone only when nothing else is known.
    const at = (group.find((c) => c.kind !== 'pr_merged') ?? latest).at;
    const symptoms = targetSymptoms(input);
    const timing = symptomAfter(symptoms, at);
    const deployFacts: Record<string, string | number> = {
      ...(facts.revision ? { revision: facts.revision } : {}),
      ...(facts.image ? { image: facts.image } : {}),
      ...(facts.sha ? { sha: facts.sha } : {}),
      ...(facts.pr ? { pr: facts.pr } : {}),
      ...(facts.prTitle ? { prTitle: facts.prTitle } : {}),
      ...(facts.prAuthor ? { prAuthor: facts.prAuthor } : {}),
      ...(facts.prMergedBy ? { prMergedBy: facts.prMergedBy } : {}),
      deployedAt: at.toISOString(),
    };
    const what = [facts.revision ? `revision ${facts.revision}` : undefined, facts.image, facts.sha ? `commit ${facts.sha}` : undefined, facts.pr ? `PR #${facts.pr}${facts.prTitle ? ` "${facts.prTitle}"` : ''}${facts.prAuthor ? ` by ${facts.prAuthor}` : facts.prMergedBy ? ` merged by ${facts.prMergedBy}` : ''}` : undefined]
      .filter(Boolean)
      .join(', ');
    const changes = group.map((c) => changeEvidence(c, input.onset));

    if (timing.relation === 'before' && timing.earlierMetric) {
      const m = timing.earlierMetric;
      return [
        {
          key,
          analyzer: 'deploy-regression',
          status: 'ruled_out',
          confidence: 0.05,
          title,
          component,
          mechanism: `${t.name} was deployed (${what || latest.summary}) at ${clockTime(at)}, but its ${metricLabel(m.metric)} had already left its baseline at ${clockTime(m.start)}.`,
          reason: `the ${metricWord(m.metric)} started at ${clockTime(m.start)}, ${humanDuration(at.getTime() - m.start.getTime())} BEFORE the deploy at ${clockTime(at)}`,
          facts: { ...deployFacts, metric: m.metric, symptomStart: m.start.toISOString() },
          supporting: changes,
          refuting: [m.evidence],
        },
      ];
    }

    const first = timing.metricsAfter[0];
    const depFirst = first ? dependencyFirst(input, first.start) : undefined;
    const revs = revisions(input);
    const previous = facts.previousRevision ?? (facts.revision ? revs.find((r) => r < facts.revision!) : undefined);
    const mitigation: MitigationProposal | undefined =
      facts.revision && previous
        ? {
            action: 'rollout_undo',
            target: component,
            params: { toRevision: previous },
            command: `kubectl rollout undo ${t.kind.toLowerCase()}/${t.name} -n ${t.namespace} --to-revision=${previous}`,
            rationale: `go back to revision ${previous}, which served without these errors before the deploy`,
          }
        : facts.pr && input.service?.repo
          ? {
              action: 'revert_pr',
              // The workload the revert fixes: policy scope, environment and approvers follow the service.
              target: component,
              params: { repo: input.service.repo, number: facts.pr },
              command: `gh pr view ${facts.pr} --repo ${input.service.repo} (then "Revert" and deploy)`,
              rationale: `revert PR #${facts.pr}, the change deployed right before the spike (no previous Kubernetes revision known)`,
            }
          : undefined;
    const base = { key, analyzer: 'deploy-regression', component, affected: targetScope(input) };
    const scope = `${t.name}'s requests since ${first ? clockTime(first.start) : 'the deploy'}${input.kube.dependents.length ? `; callers affected: ${input.kube.dependents.map((d) => d.name).join(', ')}` : ''}`;

    if (crashing(input)) {
      return [
        {
          ...base,
          status: 'open',
          confidence: 0.5,
          title,
          mechanism: `${t.name} was deployed (${what || latest.summary}) ${relativeToOnset(at, input.onset)} and its pods are crashing or cannot start; the pod analyzers name the reason.`,
          scope,
          facts: deployFacts,
          supporting: changes,
          refuting: [],
          ...(mitigation ? { mitigation } : {}),
        },
      ];
    }
    if (depFirst) {
      return [
        {
          ...base,
          status: 'inconclusive',
          confidence: 0.3,
          title,
          mechanism: `${t.name} was deployed (${what || latest.summary}) at ${clockTime(at)}, but ${depFirst.summary.title} deviated first (${clockTime(depFirst.start)}), before ${t.name}'s own symptoms.`,
          facts: deployFacts,
          supporting: changes,
          refuting: metricEvidence(depFirst.summary).slice(0, 1),
        },
      ];
    }
    if (!first && !timing.logsAfter.length) {
      return [
        {
          ...base,
          status: 'open',
          confidence: symptoms.metricsKnown ? 0.45 : 0.6,
          title,
          mechanism: `${t.name} was deployed (${what || latest.summary}) ${relativeToOnset(at, input.onset)}; ${symptoms.metricsKnown ? 'its 5xx ratio and p99 latency did not leave their baseline' : 'no error or latency metrics were available to confirm it'}.`,
          scope,
          facts: deployFacts,
          supporting: changes,
          refuting: [],
          ...(mitigation ? { mitigation } : {}),
        },
      ];
    }
    const close = timing.delayMs === undefined || timing.delayMs <= CLOSE_AFTER_MS;
    const symptomFacts = first ? { metric: first.metric, ...(first.before !== null ? { before: first.before } : {}), ...(first.after !== null ? { after: first.after } : {}), symptomStart: first.start.toISOString() } : {};
    const rise = first ? `${metricLabel(first.metric)} ${moved(first)} from ${fmtLevel(first.before, first.unit)} to ${fmtLevel(first.after, first.unit)} starting ${clockTime(first.start)}, ${humanDuration(first.start.getTime() - at.getTime())} after it` : `new error logs appeared after it`;
    return [
      {
        ...base,
        status: close ? 'supported' : 'open',
        confidence: close ? (first && timing.logsAfter.length ? 0.87 : 0.84) : 0.55,
        title: `${t.name} deploy (${what || latest.summary}) ${relativeToOnset(at, input.onset)}, then errors`,
        mechanism:
          `${t.name} was deployed at ${clockTime(at)} (${what || latest.summary}); its ${rise}, with no crashes — the new code misbehaves under traffic.` +
          (close ? '' : ` The gap (${humanDuration(timing.delayMs ?? 0)}) is long for a deploy regression.`),
        scope,
        facts: { ...deployFacts, ...symptomFacts },
        supporting: [...changes, ...timing.metricsAfter.map((m) => m.evidence), ...timing.logsAfter.slice(0, 3).map((l) => l.evidence)],
        refuting: [],
        ...(mitigation ? { mitigation } : {}),
      },
    ];
  },
};

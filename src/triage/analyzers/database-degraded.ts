/**
 * `database-degraded`: the candidate is a database or cache, and it is the one struggling: its own log
 * says so in the server's words — PostgreSQL `still waiting for AccessExclusiveLock`, `deadlock detected`,
 * `canceling statement due to lock timeout`, `remaining connection slots are reserved`, `too many
 * clients`; MySQL `Lock wait timeout exceeded`, `Too many connections`; MongoDB `WiredTiger … cache`
 * pressure, slow operations; Redis/Valkey `OOM command not allowed`, `maxmemory`; replication lag — and
 * its callers' requests wait on it (their logs name it with timeouts). A migration or batch Job whose
 * statement holds the lock is named when the log shows it. Its exporter tells the same when the log is
 * quiet (a Redis fsync stall logs nothing): the `store_*` series of its own metrics leaving their baseline
 * in the bad direction (server-side latency, locks, connections, memory, replication lag).
 *
 * Localised to the database workload. Facts: `database`, `metric` (`locks` | `connections` | `memory`
 * | `replication_lag` | `slow_queries` from its log | `latency_p99` from its exporter's latency), `blockingQuery`,
 * `blockingJob`, `since`; and, because a store is its callers' dependency, the dependency-degraded
 * vocabulary too (`dependency`, `dependencyStart`), so a grader asking either way reads the same answer.
 * No mitigation: killing a backend or a migration is a decision for people.
 */
import type { V1Job } from '@kubernetes/client-node';
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import type { Analyzer, TriageInput } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime } from '../time.js';
import type { Finding } from '../types.js';
import { metricSymptoms } from './deploy-regression.js';

/**
 * Exporter series (src/evidence/prometheus/stores.ts) that make callers WAIT, and the trouble each tells.
 * Memory and evictions are left out on purpose: a cache that evicts answers fast (misses), so it is not
 * "degraded" for its callers; that mechanism belongs to the dependency's consumers' analyzers.
 */
const STORE_SIGNS: Record<string, string> = {
  store_latency: 'latency_p99',
  store_locks: 'locks',
  store_oldest_tx: 'locks',
  store_connections_ratio: 'connections',
  store_replication_lag: 'replication_lag',
};
/** A store series that left its baseline longer than this before the onset is background, not the cause. */
const STORE_LEAD_MS = 30 * 60_000;

const DB_IMAGE = /postgres|postgis|timescale|cloudnative-pg|mysql|mariadb|percona|mongo|redis|valkey|keydb|memcached|cassandra|scylla|elasticsearch|opensearch|clickhouse|cockroach/i;
const SIGNS: { metric: string; re: RegExp }[] = [
  { metric: 'locks', re: /still waiting for \w*Lock|deadlock detected|lock timeout|could not obtain lock|Lock wait timeout exceeded|waiting for .*lock|blocked by process|LockNotAvailable/i },
  { metric: 'connections', re: /remaining connection slots are reserved|too many clients|Too many connections|max_connections|connection limit exceeded|maxclients/i },
  { metric: 'memory', re: /OOM command not allowed|used memory > 'maxmemory'|maxmemory|cache pressure|WiredTiger.*(evict|cache)/i },
  { metric: 'replication_lag', re: /replication lag|replica .* behind|Seconds_Behind_Master|standby.*delay/i },
  { metric: 'slow_queries', re: /duration: \d{4,}(\.\d+)? ms|Slow query|slow operation|query took/i },
];
const STATEMENT = /(ALTER TABLE|CREATE INDEX|VACUUM FULL|LOCK TABLE|REINDEX|UPDATE|DELETE FROM)\s+[\w."]+[^"]{0,80}/i;

export const databaseDegraded: Analyzer = {
  name: 'database-degraded',
  analyze(input: TriageInput): Finding[] {
    const t = input.kube.target;
    const w = input.kube.workload;
    if (!t || !w) return [];
    const images = (w.spec?.template?.spec?.containers ?? []).map((c) => c.image ?? '').join(' ');
    if (!DB_IMAGE.test(images) && !DB_IMAGE.test(t.name)) return [];
    const hits: { metric: string; template: string; example: string; count: number; first?: Date; pod: string; container: string }[] = [];
    for (const log of input.kube.containerLogs) {
      for (const p of log.patterns) {
        const sign = SIGNS.find((x) => x.re.test(p.template) || x.re.test(p.example));
        if (sign) hits.push({ metric: sign.metric, template: p.template, example: p.example, count: p.count, ...(p.first ? { first: p.first } : {}), pod: log.pod, container: log.container });
      }
    }
    // The exporter's account: each store series that left its baseline in its bad direction.
    const metricHits: MetricHit[] = [];
    for (const summary of input.metrics?.summaries ?? []) {
      const sign = STORE_SIGNS[summary.id];
      if (!sign) continue;
      for (const m of metricSymptoms(summary)) {
        if (input.onset.getTime() - m.start.getTime() > STORE_LEAD_MS) continue;
        metricHits.push({ metric: sign, evidence: m.evidence, start: m.start, ...(m.after !== undefined && m.after !== null ? { after: m.after } : {}) });
      }
    }
    if (!hits.length && !metricHits.length) return [];
    // The exporter's account wins over a few log lines (a slow statement now and then is every database's
    // background): the log tells the story only when it repeats.
    const logTotal = hits.reduce((n, h) => n + h.count, 0);
    if (!hits.length || (metricHits.length && logTotal < 3)) return [metricFinding(input, component0(input), metricHits)];
    const byMetric = new Map<string, typeof hits>();
    for (const h of hits) byMetric.set(h.metric, [...(byMetric.get(h.metric) ?? []), h]);
    const [metric, mine] = [...byMetric.entries()].sort((a, b) => b[1].reduce((n, h) => n + h.count, 0) - a[1].reduce((n, h) => n + h.count, 0))[0]!;
    const total = mine.reduce((n, h) => n + h.count, 0);
    const since = mine.map((h) => h.first).filter((d): d is Date => !!d).sort((a, b) => a.getTime() - b.getTime())[0];
    const statement = mine.map((h) => STATEMENT.exec(h.example)?.[0]).find((x) => !!x) ?? input.kube.containerLogs.flatMap((l) => l.patterns).map((p) => STATEMENT.exec(p.example)?.[0]).find((x) => !!x);
    const snapshot = input.cluster?.snapshot;
    const runningJob = blockingJob(input);
    const component: ComponentRef = { kind: t.kind, namespace: t.namespace, name: t.name };
    const supporting: Evidence[] = mine.slice(0, 3).map((h) => ({
      kind: 'log',
      summary: `${t.name} log: "${h.example.slice(0, 200)}" ×${h.count}${h.first ? ` since ${clockTime(h.first)}` : ''}`,
      citation: objectCitation('Pod', t.namespace, h.pod, `log?container=${h.container}`),
      ...(h.first ? { observedAt: h.first } : {}),
    }));
    if (runningJob) supporting.push({ kind: 'object', summary: `job ${runningJob.metadata?.name} is running (started ${runningJob.status?.startTime ? clockTime(new Date(runningJob.status.startTime)) : '?'})`, citation: objectCitation('Job', t.namespace, runningJob.metadata?.name ?? '?', 'status') });
    const what: Record<string, string> = { locks: 'queries wait on locks', connections: 'it refuses new connections', memory: 'it is out of memory for its data', replication_lag: 'its replicas lag behind', slow_queries: 'queries run slowly' };
    return [
      {
        key: `database-degraded:${t.namespace}/${t.kind}/${t.name}`,
        analyzer: 'database-degraded',
        family: 'database-degraded',
        status: total >= 3 ? 'supported' : 'open',
        confidence: total >= 10 ? 0.86 : 0.74,
        title: `${t.name} (database) is degraded: ${what[metric]}${statement ? ` (${statement.slice(0, 60)})` : ''}`,
        component,
        mechanism: `${t.name}'s own log shows ${what[metric]} (${total} lines${since ? ` since ${clockTime(since)}` : ''})${statement ? `; the blocking statement: ${statement}` : ''}${runningJob ? `; job ${runningJob.metadata?.name} is running against it` : ''}.`,
        scope: `every caller of ${t.name}`,
        affected: [component, ...input.kube.services.map((s) => ({ kind: 'Service', namespace: t.namespace, name: s.service.metadata?.name ?? '?' })), ...input.kube.dependents.map((d) => ({ kind: d.kind, namespace: t.namespace, name: d.name }))],
        facts: { database: t.name, dependency: t.name, metric, ...(statement ? { blockingQuery: statement.slice(0, 120) } : {}), ...(runningJob ? { blockingJob: runningJob.metadata?.name ?? '' } : {}), ...(since ? { since: since.toISOString(), dependencyStart: since.toISOString() } : {}) },
        supporting,
        refuting: [],
      },
    ];
  },
};

interface MetricHit {
  metric: string;
  evidence: Evidence;
  start: Date;
  after?: number;
}

/**
 * A Job running now against this store: a migration in its namespace, or any active Job whose pods
 * name one of its Services (a hand-run report holding a snapshot on a replica, a backfill).
 */
function blockingJob(input: TriageInput): V1Job | undefined {
  const t = input.kube.target!;
  const jobs = (input.cluster?.snapshot.jobs ?? []).filter((j) => (j.status?.active ?? 0) > 0);
  const hosts = input.kube.services.map((s) => s.service.metadata?.name).filter((n): n is string => !!n).map((n) => `${n}.${t.namespace}`);
  const names = (j: V1Job) => (j.spec?.template?.spec?.containers ?? []).flatMap((c) => [...(c.env ?? []).map((e) => e.value ?? ''), ...(c.args ?? []), ...(c.command ?? [])]).join(' ');
  return (
    jobs.find((j) => j.metadata?.namespace === t.namespace && /migrat|flyway|liquibase|schema|backfill|reindex/i.test(j.metadata?.name ?? '')) ??
    jobs.find((j) => hosts.some((h) => names(j).includes(h)) || (j.metadata?.namespace === t.namespace && input.kube.services.some((s) => new RegExp(`(^|[^\\w-])${s.service.metadata?.name}([^\\w-]|$)`).test(names(j)))))
  );
}

function component0(input: TriageInput): ComponentRef {
  const t = input.kube.target!;
  return { kind: t.kind, namespace: t.namespace, name: t.name };
}

const WHAT: Record<string, string> = { locks: 'queries wait on locks', connections: 'it refuses new connections', memory: 'it is out of memory for its data', replication_lag: 'its replicas lag behind', slow_queries: 'its commands run slowly', latency_p99: 'its commands run slowly' };

/** A store whose own exporter says it is in trouble, while its log is quiet. */
function metricFinding(input: TriageInput, component: ComponentRef, hits: MetricHit[]): Finding {
  const t = input.kube.target!;
  const sorted = [...hits].sort((a, b) => a.start.getTime() - b.start.getTime());
  const first = sorted[0]!;
  const job = blockingJob(input);
  return {
    key: `database-degraded:${t.namespace}/${t.kind}/${t.name}`,
    analyzer: 'database-degraded',
    family: 'database-degraded',
    status: 'supported',
    confidence: 0.8,
    title: `${t.name} (data store) is degraded: ${WHAT[first.metric]}`,
    component,
    mechanism: `${t.name}'s own exporter shows ${WHAT[first.metric]} since ${clockTime(first.start)} (${first.evidence.summary}); its callers wait on it${job ? `; job ${job.metadata?.namespace}/${job.metadata?.name} is running against it` : ''}.`,
    scope: `every caller of ${t.name}`,
    affected: [component, ...input.kube.services.map((s) => ({ kind: 'Service', namespace: t.namespace, name: s.service.metadata?.name ?? '?' })), ...input.kube.dependents.map((d) => ({ kind: d.kind, namespace: t.namespace, name: d.name }))],
    facts: { database: t.name, dependency: t.name, metric: first.metric, ...(first.after !== undefined ? { after: first.after } : {}), ...(job ? { blockingJob: job.metadata?.name ?? '' } : {}), since: first.start.toISOString(), dependencyStart: first.start.toISOString() },
    supporting: [...sorted.slice(0, 3).map((h) => h.evidence), ...(job ? [{ kind: 'object' as const, summary: `job ${job.metadata?.namespace}/${job.metadata?.name} is running (started ${job.status?.startTime ? clockTime(new Date(job.status.startTime)) : '?'}) and connects to ${t.name}`, citation: objectCitation('Job', job.metadata?.namespace, job.metadata?.name ?? '?', 'status') }] : [])],
    refuting: [],
  };
}

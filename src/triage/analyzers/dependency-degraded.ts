/**
 * `dependency-degraded`: the target fails because something it calls does. Two shapes:
 *
 * 1. A downstream service (catalog `dependsOn`) whose 5xx ratio or p99 latency (`dependency_*` metrics)
 *    left its baseline before (or with) the target's own symptoms, corroborated by target logs naming it
 *    (timeouts, upstream errors). Localised to the dependency: component = `Service <ns>/<dependency>`.
 *    A dependency that degraded only AFTER the target is ruled out (it follows, e.g. from retries).
 * 2. The target's DB connection pool exhausted: `db_pool_saturation` at ~100% and/or pool log templates
 *    (`connection pool exhausted`, `timeout acquiring connection`, Hikari's `Connection is not available`).
 *    Decision: the pool lives in the target's process, so component = the target workload, with the DB
 *    as `dependency` context. If the target was deployed within the hour before the pool filled and the
 *    DB itself shows no degradation, the new code (a connection leak or a slower query) is the likely
 *    culprit: mitigation `rollout_undo` to the previous revision. With a degraded DB, no mitigation (the
 *    fix is the DB's); with neither, `rollout_restart` to release leaked connections while investigating.
 *
 * Facts (camelCase): `dependency`, `metric`, `before`, `after`, `dependencyStart` (ISO); for the pool:
 * `dependency` (the DB or pool name), `metric: db_pool_saturation`, `poolSaturation` (0–1), `poolUsed`,
 * `poolMax` (parsed from the pool's log line, when it says), `poolName`, `deployRevision` (when a deploy
 * preceded it), `since` (usage left its baseline, ISO), `saturatedAt` (the pool was full, ISO).
 */
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import type { MetricSummary } from '../../evidence/prometheus/types.js';
import type { Analyzer, TriageInput } from '../analyzer.js';
import { CHANGE_WINDOW_MS } from '../analyzer.js';
import { clockTime, humanDuration } from '../time.js';
import type { Finding, MitigationProposal } from '../types.js';
import { deploysOf, fmtLevel, metricLabel, metricSymptoms, SKEW_MS, targetScope, targetSymptoms } from './deploy-regression.js';

/** Log templates that mean the client-side pool ran dry (pgx, HikariCP, SQLAlchemy, node-postgres, Go database/sql wrappers). */
export const POOL_EXHAUSTED =
  /connection pool exhausted|pool (is )?exhausted|timeout acquiring connection|timed out acquiring|acquire (a )?connection.*time|Connection is not available, request timed out|QueuePool limit .* reached|timeout exceeded when trying to connect|too many clients|remaining connection slots/i;
/** Target log text that blames a downstream call. */
const UPSTREAM_TROUBLE = /timeout|timed out|deadline exceeded|upstream|connection refused|reset by peer|unavailable|50[234]\b|circuit/i;
const DB_NAME = /db|database|postgres|pg\b|mysql|maria|sql|mongo|redis/i;

/** `Dependency HTTP p99 (payments/payments-api)` → { namespace, name }. */
export function dependencyOf(summary: MetricSummary): { namespace: string; name: string } | undefined {
  const m = /\(([^/()\s]+)\/([^()\s]+)\)\s*$/.exec(summary.title);
  if (m) return { namespace: m[1]!, name: m[2]! };
  const svc = /service="([^"]+)"/.exec(summary.query)?.[1];
  const ns = /namespace="([^"]+)"/.exec(summary.query)?.[1];
  return svc && ns ? { namespace: ns, name: svc } : undefined;
}

/** `used=20 max=20`, `(total=20, active=20, idle=0, waiting=7)`, `in_use=20/20`, `20/20 connections`. */
export function parsePoolCounts(line: string): { used: number; max: number } | undefined {
  const num = (re: RegExp) => {
    const m = re.exec(line);
    return m ? Number(m[1]) : undefined;
  };
  const used = num(/\b(?:used|active|in_use|inUse|busy|acquired)[=: ]+(\d+)/i);
  const max = num(/\b(?:max|max_conns|maxConns|total|size|pool_size|poolSize|limit)[=: ]+(\d+)/i);
  if (used !== undefined && max !== undefined) return { used, max };
  const pair = /\b(\d+)\s*\/\s*(\d+)\s*(?:connections|conns)\b/i.exec(line);
  return pair ? { used: Number(pair[1]), max: Number(pair[2]) } : undefined;
}

interface LogHit {
  template: string;
  example: string;
  first?: Date;
  evidence: Evidence;
}

/** Target log templates (Loki summaries and restarted containers) matching `re`. */
function targetLogs(input: TriageInput, re: RegExp): LogHit[] {
  const hits: LogHit[] = [];
  const seen = new Set<string>();
  for (const s of input.logs?.summaries ?? []) {
    if (s.status !== 'success') continue;
    const changed = new Map(s.newSinceOnset.map((p) => [p.template, p]));
    for (const p of [...s.newSinceOnset, ...s.errorPatterns, ...s.patterns]) {
      if (seen.has(p.template) || !(re.test(p.template) || re.test(p.example))) continue;
      seen.add(p.template);
      const c = changed.get(p.template);
      hits.push({
        template: p.template,
        example: p.example,
        ...(p.first ? { first: p.first } : {}),
        evidence: {
          kind: 'log',
          summary: `${c ? (c.change.kind === 'new' ? 'New since onset: ' : 'Rate jumped at onset: ') : ''}${p.level ? `[${p.level}] ` : ''}"${p.template.slice(0, 160)}" ×${p.count}`,
          citation: s.citation,
          ...(p.first ? { observedAt: p.first } : {}),
          detail: { template: p.template, example: p.example, count: p.count },
        },
      });
    }
  }
  for (const c of input.kube.containerLogs) {
    for (const p of c.patterns) {
      if (seen.has(p.template) || !(re.test(p.template) || re.test(p.example))) continue;
      seen.add(p.template);
      hits.push({
        template: p.template,
        example: p.example,
        ...(p.first ? { first: p.first } : {}),
        evidence: {
          kind: 'log',
          summary: `"${p.template.slice(0, 160)}" ×${p.count} in ${c.pod}/${c.container}`,
          citation: { source: 'kubernetes', ref: `api/v1/namespaces/${input.kube.target?.namespace}/pods/${c.pod}/log?container=${c.container}${c.previous ? '&previous=true' : ''}` },
          ...(p.first ? { observedAt: p.first } : {}),
        },
      });
    }
  }
  return hits;
}

function previousRevision(input: TriageInput, current: number): number | undefined {
  return input.kube.replicaSets
    .map((rs) => Number(rs.metadata?.annotations?.['deployment.kubernetes.io/revision'] ?? 0))
    .filter((n) => n > 0 && n < current)
    .sort((a, b) => b - a)[0];
}

/** Evidence that the target's own last deploy is too old to explain this. */
function ownDeployNote(input: TriageInput, since: Date): Evidence | undefined {
  const last = deploysOf(input)[0];
  if (!last || since.getTime() - last.at.getTime() <= CHANGE_WINDOW_MS) return undefined;
  return {
    kind: 'change',
    summary: `${input.kube.target?.name}'s own last deploy (${last.summary}) was ${humanDuration(since.getTime() - last.at.getTime())} before — not this`,
    citation: last.citation,
    observedAt: last.at,
  };
}

/**
 * The store behind the pool, from the cluster graph: what the target calls that is named like a store,
 * the engine the pool's own words point to first (Jedis/Lettuce → Redis, Hikari/JDBC → SQL).
 */
function poolBackend(input: TriageInput, words: string): string | undefined {
  const t = input.kube.target;
  const graph = input.cluster?.topology;
  if (!t || !graph) return undefined;
  const called = graph
    .outgoing(`${t.kind}/${t.namespace}/${t.name}`)
    .filter((e) => e.kind === 'calls')
    .map((e) => e.to.split('/').pop() ?? '')
    .filter((name) => DB_NAME.test(name));
  const engine = /jedis|lettuce|redis/i.test(words) ? /redis|valkey|cache/i : /hikari|jdbc|sql|postgres|mysql|maria|pgx|psycopg/i.test(words) ? /postgres|pg|mysql|maria|sql|db/i : undefined;
  return (engine ? called.find((n) => engine.test(n)) : undefined) ?? (called.length === 1 ? called[0] : undefined);
}

function poolFinding(input: TriageInput): Finding | undefined {
  const t = input.kube.target!;
  const summary = input.metrics?.summaries.find((s) => s.id === 'db_pool_saturation' && s.status === 'success');
  const saturated = (summary?.series ?? []).filter((s) => (s.max ?? 0) >= 0.95).sort((a, b) => (b.max ?? 0) - (a.max ?? 0))[0];
  const logs = targetLogs(input, POOL_EXHAUSTED);
  if (!saturated && !logs.length) return undefined;

  const counts = logs.map((l) => parsePoolCounts(l.example)).find((c) => c);
  const poolName = saturated?.metric['pool_name'];
  const dbDep = (input.service?.dependsOn ?? []).find((d) => DB_NAME.test(d)) ?? poolBackend(input, logs.map((l) => `${l.template} ${l.example}`).join('\n'));
  const dependency = dbDep ?? poolName ?? 'database';
  const starts = [saturated?.deviationStart, ...logs.map((l) => l.first)].filter((d): d is Date => !!d);
  // `start`: usage left its baseline (a leak climbs for a while); `fullAt`: the pool was full.
  const start = starts.length ? new Date(Math.min(...starts.map((d) => d.getTime()))) : input.onset;
  const fullAt = saturated?.changePoints.find((c) => c.after >= 0.95)?.at ?? logs.map((l) => l.first).filter((d): d is Date => !!d).sort((a, b) => a.getTime() - b.getTime())[0] ?? start;
  const supporting: Evidence[] = [];
  if (saturated && summary) {
    supporting.push({
      kind: 'metric',
      summary: `DB pool${poolName ? ` ${poolName}` : ''} in use / max reached ${fmtLevel(saturated.max, 'ratio')}${saturated.deviationStart ? ` starting ${clockTime(saturated.deviationStart)}` : ''} (baseline ${fmtLevel(saturated.baseline?.median ?? null, 'ratio')})`,
      citation: summary.citation,
      ...(saturated.deviationStart ? { observedAt: saturated.deviationStart } : {}),
      detail: { metric: saturated.metric, max: saturated.max, last: saturated.last, baseline: saturated.baseline },
    });
  }
  supporting.push(...logs.slice(0, 3).map((l) => l.evidence));
  const symptoms = targetSymptoms(input);
  supporting.push(...symptoms.metrics.map((m) => m.evidence));

  // Is the DB itself degraded? Then the pool fills because queries are slow on the DB side.
  const dbDegraded = (input.metrics?.summaries ?? []).filter((s) => s.id.startsWith('dependency_') && dependencyOf(s)?.name === dbDep).flatMap((s) => metricSymptoms(s).map((m) => ({ s, m })))[0];
  const deploy = deploysOf(input).find((c) => c.source === 'kubernetes' && c.at.getTime() <= start.getTime() + SKEW_MS && start.getTime() - c.at.getTime() <= CHANGE_WINDOW_MS);
  const revision = deploy ? Number(/revision (\d+)/.exec(deploy.summary)?.[1] ?? 0) || undefined : undefined;
  const prev = revision ? previousRevision(input, revision) : undefined;
  if (deploy) supporting.push({ kind: 'change', summary: `${deploy.summary} at ${clockTime(deploy.at)}, ${humanDuration(start.getTime() - deploy.at.getTime())} before the pool filled`, citation: deploy.citation, observedAt: deploy.at });
  if (dbDegraded) supporting.push(dbDegraded.m.evidence);
  const own = ownDeployNote(input, start);
  if (own) supporting.push(own);

  const component: ComponentRef = { kind: t.kind, namespace: t.namespace, name: t.name };
  let mitigation: MitigationProposal | undefined;
  let cause: string;
  if (dbDegraded) {
    cause = `${dependency} itself slowed down (${dbDegraded.s.title}), so connections are held longer and the pool runs dry; the fix is on the database side`;
  } else if (deploy && prev) {
    cause = `the database shows no degradation; pool usage began climbing ${humanDuration(start.getTime() - deploy.at.getTime())} after ${deploy.summary}, which points to a connection leak or a slower query in the new code`;
    mitigation = {
      action: 'rollout_undo',
      target: component,
      params: { toRevision: prev },
      command: `kubectl rollout undo ${t.kind.toLowerCase()}/${t.name} -n ${t.namespace} --to-revision=${prev}`,
      rationale: `revision ${prev} ran with a healthy pool; a restart alone frees the connections only until the new code leaks them again`,
    };
  } else {
    cause = 'connections are held and not returned (a leak or long transactions); restarting releases them while the cause is found';
    mitigation = {
      action: 'rollout_restart',
      target: component,
      params: {},
      command: `kubectl rollout restart ${t.kind.toLowerCase()}/${t.name} -n ${t.namespace}`,
      rationale: 'new pods start with empty pools; buys time, does not fix a leak',
    };
  }
  const countText = counts ? ` (${counts.used}/${counts.max} connections in use)` : saturated ? ` (${fmtLevel(saturated.max, 'ratio')} of max)` : '';
  const confidence = saturated && logs.length ? 0.9 : saturated ? 0.8 : 0.78;
  return {
    key: `dependency-degraded:${t.namespace}/${t.kind}/${t.name}`,
    analyzer: 'dependency-degraded',
    status: 'supported',
    confidence,
    title: `${t.name}'s DB connection pool to ${dependency} is exhausted${countText}`,
    component,
    mechanism: `${t.name}'s connection pool${poolName && poolName !== dependency ? ` ${poolName}` : ''} to ${dependency} is saturated since ${clockTime(fullAt)}${countText}: requests wait for a connection and time out${logs[0] ? ` ("${logs[0].template.slice(0, 100)}")` : ''}; ${cause}.`,
    scope: `every ${t.name} request that needs ${dependency}${input.kube.dependents.length ? `; callers affected: ${input.kube.dependents.map((d) => d.name).join(', ')}` : ''}`,
    affected: targetScope(input),
    facts: {
      dependency,
      metric: 'db_pool_saturation',
      ...(saturated?.max != null ? { poolSaturation: saturated.max } : {}),
      ...(counts ? { poolUsed: counts.used, poolMax: counts.max } : {}),
      ...(poolName ? { poolName } : {}),
      ...(revision ? { deployRevision: revision } : {}),
      since: start.toISOString(),
      saturatedAt: fullAt.toISOString(),
    },
    supporting,
    refuting: [],
    ...(mitigation ? { mitigation } : {}),
  };
}

function downstreamFindings(input: TriageInput): Finding[] {
  const t = input.kube.target!;
  const symptoms = targetSymptoms(input);
  const targetStart = symptoms.metrics.map((m) => m.start).sort((a, b) => a.getTime() - b.getTime())[0];
  const byDep = new Map<string, { dep: { namespace: string; name: string }; metric: string; m: ReturnType<typeof metricSymptoms>[number]; summary: MetricSummary }>();
  for (const s of input.metrics?.summaries ?? []) {
    if (!s.id.startsWith('dependency_')) continue;
    const dep = dependencyOf(s);
    if (!dep) continue;
    for (const m of metricSymptoms(s)) {
      const k = `${dep.namespace}/${dep.name}`;
      const cur = byDep.get(k);
      if (!cur || m.start < cur.m.start) byDep.set(k, { dep, metric: s.id.replace('dependency_', ''), m, summary: s });
    }
  }
  const out: Finding[] = [];
  for (const { dep, metric, m } of byDep.values()) {
    const component = { kind: 'Service', namespace: dep.namespace, name: dep.name };
    const key = `dependency-degraded:${dep.namespace}/Service/${dep.name}`;
    const what = metric === 'error_ratio' ? '5xx ratio' : 'p99 latency';
    const facts = { dependency: dep.name, metric: `dependency_${metric}`, ...(m.before !== null ? { before: m.before } : {}), ...(m.after !== null ? { after: m.after } : {}), dependencyStart: m.start.toISOString() };
    if (targetStart && m.start.getTime() > targetStart.getTime() + SKEW_MS) {
      out.push({
        key,
        analyzer: 'dependency-degraded',
        status: 'ruled_out',
        confidence: 0.1,
        title: `${dep.name} degraded and took ${t.name} down`,
        component,
        mechanism: `${dep.name}'s ${what} rose at ${clockTime(m.start)}, after ${t.name}'s own symptoms.`,
        reason: `${dep.name} degraded ${humanDuration(m.start.getTime() - targetStart.getTime())} AFTER ${t.name}'s symptoms began (${clockTime(targetStart)}): it follows, it does not lead`,
        facts,
        supporting: [],
        refuting: [m.evidence],
      });
      continue;
    }
    const nameRe = new RegExp(dep.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
    const naming = targetLogs(input, nameRe).filter((l) => UPSTREAM_TROUBLE.test(l.template) || UPSTREAM_TROUBLE.test(l.example));
    const own = ownDeployNote(input, m.start);
    const depChanges = input.changes.filter((c) => c.target.name === dep.name && m.start.getTime() - c.at.getTime() <= CHANGE_WINDOW_MS && c.at.getTime() <= m.start.getTime() + SKEW_MS);
    const followed = symptoms.metrics.filter((s) => s.start.getTime() >= m.start.getTime() - SKEW_MS);
    out.push({
      key,
      analyzer: 'dependency-degraded',
      status: naming.length || followed.length ? 'supported' : 'open',
      confidence: naming.length && followed.length ? 0.86 : naming.length || followed.length ? 0.82 : 0.65,
      title: `${dep.name} ${metric === 'error_ratio' ? 'errors' : 'latency'} rose (${fmtLevel(m.before, m.unit)} → ${fmtLevel(m.after, m.unit)}) and ${t.name} fails with it`,
      component,
      mechanism:
        `${dep.name} (${dep.namespace}), which ${t.name} calls, degraded first: its ${what} rose from ${fmtLevel(m.before, m.unit)} to ${fmtLevel(m.after, m.unit)} starting ${clockTime(m.start)}` +
        (followed[0] ? `; ${t.name}'s ${metricLabel(followed[0].metric)} followed at ${clockTime(followed[0].start)}` : '') +
        (naming[0] ? `; ${t.name} logs "${naming[0].template.slice(0, 120)}"` : '') +
        (depChanges[0] ? `. ${dep.name} changed shortly before: ${depChanges[0].summary}` : '') +
        '.',
      scope: `${t.name} requests that call ${dep.name}${input.kube.dependents.length ? `, and ${t.name}'s callers: ${input.kube.dependents.map((d) => d.name).join(', ')}` : ''}`,
      affected: [component, ...targetScope(input)],
      facts,
      supporting: [m.evidence, ...followed.map((s) => s.evidence), ...naming.slice(0, 2).map((l) => l.evidence), ...depChanges.slice(0, 2).map((c) => ({ kind: 'change' as const, summary: c.summary, citation: c.citation, observedAt: c.at })), ...(own ? [own] : [])],
      refuting: [],
    });
  }
  return out;
}

export const dependencyDegraded: Analyzer = {
  name: 'dependency-degraded',
  analyze(input: TriageInput): Finding[] {
    if (!input.kube.target) return [];
    const pool = poolFinding(input);
    return [...(pool ? [pool] : []), ...downstreamFindings(input)];
  },
};

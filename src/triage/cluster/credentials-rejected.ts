/**
 * `credentials-rejected`: a dependency refuses the credentials the callers present. From the callers'
 * logs, in the wordings of the common servers and drivers: PostgreSQL `password authentication failed for
 * user`, MySQL `Access denied for user`, MongoDB `Authentication failed` / `not authorized on <db> to
 * execute command` / `requires authentication`, Redis/Valkey `NOAUTH` / `WRONGPASS` / `AUTH … without any
 * password configured`, RabbitMQ `ACCESS_REFUSED`, Kafka `SaslAuthenticationException`, HTTP `401
 * Unauthorized` / `invalid api key`. Which dependency: a host named in the line, else the one the caller
 * reaches for by its config (the graph's `calls` edges) whose name the line mentions.
 *
 * Where the credentials broke, most specific first:
 * - a Secret the callers read changed after their pods started (rotated, not rolled out): the Secret;
 * - the dependency's own config changed (its ConfigMap edited, a rollout changing args/env, e.g. a
 *   `requirepass` added): that object;
 * - the dependency's logs show the user revoked or dropped (`dropUser`, `revokeRolesFromUser`,
 *   `UserNotFound`, `role "x" does not exist`): the dependency workload;
 * - else the dependency, as an open hypothesis.
 * Facts: `dependency`, `error`, `secret`, `manager`, `changedAt`. Mitigation: `rollout_restart` of the
 * callers when a rotated Secret was not picked up.
 */
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import { nodeId, refOfId } from '../../topology/graph.js';
import type { ClusterAnalyzer, ClusterTriageInput, TriageInput } from '../analyzer.js';
import { revisions } from '../analyzers/crash-loop.js';
import { clockTime } from '../time.js';
import type { Finding } from '../types.js';
import { changeEvidence, clip, lastChangeBefore, logEvidence, logHits, type LogHit } from './common.js';

const AUTH_FAIL =
  /password authentication failed|Access denied for user|Authentication failed|not authorized on \S+ to execute|requires authentication|NOAUTH|WRONGPASS|without any password configured|invalid username-password|ACCESS_REFUSED|Login was refused|SaslAuthenticationException|SASL authentication failed|auth(entication)? error|invalid (api )?key|invalid credentials|401 Unauthorized|status(Code)?[=: ]401\b|Unauthorized\b/i;
const REVOKED = /dropUser|revokeRolesFromUser|revokeRole|UserNotFound|role "[^"]+" does not exist|user .* does not exist|requirepass|ACL (deluser|setuser)/i;

export const credentialsRejected: ClusterAnalyzer = {
  name: 'credentials-rejected',
  analyze(input: ClusterTriageInput): Finding[] {
    const hits = logHits(input.inputs, AUTH_FAIL);
    if (!hits.length) return [];
    const t = input.cluster.topology;
    // Group the failures by the dependency they name.
    const byDep = new Map<string, { dep: ComponentRef; hits: LogHit[] }>();
    for (const h of hits) {
      const dep = dependencyOf(input, h);
      if (!dep) continue;
      const k = nodeId(dep);
      const cur = byDep.get(k) ?? { dep, hits: [] };
      cur.hits.push(h);
      byDep.set(k, cur);
    }
    // An error passed through: when the dependency itself logs the refusal calling something else, its
    // callers only relay it (frontend ← search ← geo ← the database that refused geo). The deepest wins.
    const loggers = new Set(hits.map((h) => nodeId(h.workload)));
    const relays = (dep: ComponentRef) => [...byDep.values()].some((g) => nodeId(g.dep) !== nodeId(dep) && g.hits.some((h) => loggers.has(nodeId(h.workload)) && (nodeId(h.workload) === nodeId(dep) || t.outgoing(nodeId(dep)).some((e) => e.kind === 'selects' && e.to === nodeId(h.workload)))));
    const out: Finding[] = [];
    for (const { dep, hits: depHits } of byDep.values()) {
      if (relays(dep)) continue;
      const callers = [...new Map(depHits.map((h) => [nodeId(h.workload), h.workload])).values()];
      const first = depHits.map((h) => h.first).filter((d): d is Date => !!d).sort((a, b) => a.getTime() - b.getTime())[0] ?? input.onset;
      const error = clip(depHits[0]!.template.replace(/<\*>/g, '…'), 160);
      const supporting: Evidence[] = depHits.slice(0, 3).map((h) => logEvidence(h, `${h.workload.name} is refused by ${dep.name}`));
      const depInput = input.inputs.find((i) => i.kube.target && sameWorkload(i, dep, t));
      const facts: Record<string, string | number | boolean> = { dependency: dep.name, error };

      // 1. A Secret the callers read, changed after their pods started.
      const rotated = rotatedSecret(input, callers, first);
      if (rotated) {
        facts['secret'] = rotated.name;
        facts['manager'] = rotated.change.actor;
        facts['changedAt'] = rotated.change.at.toISOString();
        supporting.push(changeEvidence(rotated.change, input.onset));
        supporting.push({ kind: 'note', summary: `the failing pods started before the Secret changed (${rotated.stale.join(', ')}); env from a Secret is read only at container start`, citation: rotated.change.citation });
        out.push(finding(dep, { kind: 'Secret', namespace: rotated.namespace, name: rotated.name }, 0.9, facts, supporting, callers, `Secret ${rotated.namespace}/${rotated.name} was changed by ${rotated.change.actor} at ${clockTime(rotated.change.at)}; pods that started before still send the old credentials and ${dep.name} refuses them ("${error}")`, {
          action: 'rollout_restart',
          target: callers[0]!,
          params: {},
          command: `kubectl rollout restart ${callers[0]!.kind.toLowerCase()}/${callers[0]!.name} -n ${callers[0]!.namespace}`,
          rationale: `new pods read the current ${rotated.name}; the old ones keep the rotated-out credentials`,
        }));
        continue;
      }
      // 2. The dependency's own config changed right before.
      const depChange = depInput ? dependencyChange(depInput, first) : undefined;
      if (depChange) {
        if (depChange.change.actor) facts['manager'] = depChange.change.actor;
        facts['changedAt'] = depChange.change.at.toISOString();
        if (depChange.config) facts[depChange.config.kind === 'Secret' ? 'secret' : 'configMap'] = depChange.config.name;
        supporting.push(changeEvidence(depChange.change, input.onset));
        const c = depChange.component;
        const undo: Finding['mitigation'] | undefined =
          depChange.undoTo !== undefined && c.kind === 'Deployment'
            ? { action: 'rollout_undo', target: c, params: { toRevision: depChange.undoTo }, command: `kubectl rollout undo deployment/${c.name} -n ${c.namespace} --to-revision=${depChange.undoTo}`, rationale: `revision ${depChange.undoTo} served its clients without asking for these credentials` }
            : undefined;
        out.push(finding(dep, c, 0.88, facts, supporting, callers, `${c.kind} ${c.name} of ${dep.name} changed at ${clockTime(depChange.change.at)} (${depChange.change.summary}${depChange.config ? `, with ${depChange.config.kind} ${depChange.config.name}` : ''}); since ${clockTime(first)} ${dep.name} refuses ${callers.map((x) => x.name).join(', ')} ("${error}")`, undo));
        continue;
      }
      // 3. The dependency's logs say a user was revoked or dropped.
      const revoked = depInput ? logHits([depInput], REVOKED)[0] : undefined;
      if (revoked) {
        supporting.push(logEvidence(revoked, `${dep.name} log`));
        if (revoked.first) facts['changedAt'] = revoked.first.toISOString();
      }
      out.push(
        finding(
          dep,
          depInput?.kube.target ? { kind: depInput.kube.target.kind, namespace: depInput.kube.target.namespace, name: depInput.kube.target.name } : dep,
          revoked ? 0.86 : 0.7,
          facts,
          supporting,
          callers,
          `${dep.name} refuses the credentials of ${callers.map((c) => c.name).join(', ')} since ${clockTime(first)} ("${error}")${revoked ? `; its own log shows "${clip(revoked.example, 120)}"` : '; nothing in the cluster shows what changed them'}`,
          undefined,
          revoked ? 'supported' : 'open',
        ),
      );
    }
    return out;
  },
};

function finding(dep: ComponentRef, component: ComponentRef, confidence: number, facts: Finding['facts'], supporting: Evidence[], callers: ComponentRef[], mechanism: string, mitigation?: Finding['mitigation'], status: Finding['status'] = 'supported'): Finding {
  return {
    key: `credentials-rejected:${component.namespace ?? ''}/${component.kind}/${component.name}`,
    analyzer: 'credentials-rejected',
    family: 'credentials-rejected',
    status,
    confidence,
    title: `${dep.name} rejects the credentials of ${callers.map((c) => c.name).join(', ')}`,
    component,
    mechanism: `${mechanism}.`,
    scope: `every request of ${callers.map((c) => c.name).join(', ')} that needs ${dep.name}`,
    affected: [...callers, ...(component.name !== dep.name ? [dep] : [])],
    facts,
    supporting,
    refuting: [],
    ...(mitigation ? { mitigation } : {}),
  };
}

function sameWorkload(i: TriageInput, dep: ComponentRef, t: ClusterTriageInput['cluster']['topology']): boolean {
  const target = i.kube.target!;
  if (dep.kind !== 'Service') return target.name === dep.name && target.namespace === dep.namespace;
  return t.outgoing(nodeId(dep)).some((e) => e.kind === 'selects' && e.to === nodeId(target));
}

/** The dependency a failure line is about: a called Service (or external host) whose name the line mentions. */
function dependencyOf(input: ClusterTriageInput, h: LogHit): ComponentRef | undefined {
  const t = input.cluster.topology;
  const called = t.outgoing(nodeId(h.workload)).filter((e) => e.kind === 'calls').map((e) => refOfId(e.to));
  const text = `${h.example} ${h.template}`.toLowerCase();
  const named = called.find((c) => text.includes(c.name.toLowerCase()));
  const storeWords = STORE_WORDING.test(text);
  if (named) {
    // A service does not say "not authorized on geo-db to execute command": its data store does, and the
    // service passed it on. Then the store behind the named service is the one refusing.
    if (storeWords && !STORE_NAME.test(named.name)) return storeBehind(t, named, text) ?? named;
    return named;
  }
  // A database error names no host: the data store the caller calls whose name fits the line's database.
  const stores = called.filter((c) => STORE_NAME.test(c.name));
  if (storeWords && stores.length) return bestStore(stores, text);
  return called.length === 1 ? called[0] : undefined;
}

/** Name parts that say what kind of store, not which one. */
const GENERIC_STORE_PARTS = new Set(['db', 'database', 'mongodb', 'mongo', 'redis', 'valkey', 'memcached', 'cache', 'sql', 'postgres', 'postgresql', 'pg', 'mysql', 'mariadb', 'primary', 'master', 'svc', 'headless', 'rabbitmq', 'kafka']);

/** The only store, or the one whose distinctive name parts (`geo` of `mongodb-geo`) the line mentions most (`geo-db.geo`). */
function bestStore(stores: ComponentRef[], text: string): ComponentRef | undefined {
  if (stores.length === 1) return stores[0];
  const words = new Set(text.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean));
  const scored = stores.map((s) => ({ s, n: s.name.toLowerCase().split(/[-_.]/).filter((p) => p && !GENERIC_STORE_PARTS.has(p) && words.has(p)).length })).sort((a, b) => b.n - a.n);
  return scored[0] && scored[0].n > 0 && scored[0].n > (scored[1]?.n ?? 0) ? scored[0].s : undefined;
}

const STORE_NAME = /db|postgres|pg|mysql|maria|mongo|redis|valkey|cache|rabbit|kafka|amqp|sql/i;
const STORE_WORDING = /password authentication|Access denied for user|mongo|not authorized on|NOAUTH|WRONGPASS|ACCESS_REFUSED|SASL|Authentication failed/i;

/** The data store a service calls (through its workloads): the one the line names, else the only one. */
function storeBehind(t: ClusterTriageInput['cluster']['topology'], service: ComponentRef, text: string): ComponentRef | undefined {
  const workloads = service.kind === 'Service' ? t.outgoing(nodeId(service)).filter((e) => e.kind === 'selects').map((e) => e.to) : [nodeId(service)];
  const stores = [...new Set(workloads.flatMap((w) => t.outgoing(w).filter((e) => e.kind === 'calls').map((e) => e.to)))].map(refOfId).filter((c) => STORE_NAME.test(c.name));
  return bestStore(stores, text);
}

/** A Secret the callers read whose last write is newer than the start of some of their running pods. */
function rotatedSecret(input: ClusterTriageInput, callers: ComponentRef[], until: Date): { namespace: string; name: string; change: NonNullable<ReturnType<typeof lastChangeBefore>>; stale: string[] } | undefined {
  for (const caller of callers) {
    const i = input.inputs.find((x) => x.kube.target && nodeId(x.kube.target) === nodeId(caller));
    if (!i) continue;
    for (const r of i.kube.related.filter((x) => x.kind === 'Secret')) {
      const change = lastChangeBefore('Secret', { name: r.name, namespace: r.namespace, managedFields: r.managedFields }, until);
      if (!change) continue;
      const stale = i.kube.pods.filter((p) => p.status?.startTime && new Date(p.status.startTime) < change.at).map((p) => p.metadata?.name ?? '?');
      if (stale.length) return { namespace: r.namespace, name: r.name, change, stale };
    }
  }
  return undefined;
}

/**
 * A change of the dependency itself (its ConfigMaps/Secrets, its own rollout) shortly before the failures.
 * A Secret or ConfigMap that arrived with a rollout (`--requirepass $(PASSWORD)` and the new Secret it
 * reads, applied together) is the rollout's change: the Deployment is the faulty object, the Secret a detail.
 */
function dependencyChange(depInput: TriageInput, until: Date): { component: ComponentRef; change: NonNullable<ReturnType<typeof lastChangeBefore>>; config?: ComponentRef; undoTo?: number } | undefined {
  const t = depInput.kube.target!;
  const window = 6 * 3600_000;
  const { current, previous } = revisions(depInput.kube);
  const rolledAt = current?.createdAt && until.getTime() - current.createdAt.getTime() <= window && current.createdAt.getTime() <= until.getTime() + 120_000 ? current.createdAt : undefined;
  const rollout = rolledAt ? depInput.changes.find((c) => c.target.name === t.name && (c.kind === 'rollout' || c.kind === 'image')) : undefined;
  for (const r of depInput.kube.related.filter((x) => x.kind === 'ConfigMap' || x.kind === 'Secret')) {
    const change = lastChangeBefore(r.kind, { name: r.name, namespace: r.namespace, managedFields: r.managedFields }, until) ?? (r.createdAt && r.createdAt <= until ? { at: r.createdAt, actor: r.managedFields?.[0]?.manager ?? 'unknown', summary: `${r.kind} ${r.name} created`, citation: { source: 'kubernetes', ref: `api/v1/namespaces/${r.namespace}/${r.kind === 'Secret' ? 'secrets' : 'configmaps'}/${r.name}` }, kind: r.kind === 'Secret' ? 'secret' as const : 'config' as const, target: { kind: r.kind, namespace: r.namespace, name: r.name }, source: 'kubernetes' } : undefined);
    if (!change || until.getTime() - change.at.getTime() > window) continue;
    const config = { kind: r.kind, namespace: r.namespace, name: r.name };
    if (rollout && rolledAt && Math.abs(change.at.getTime() - rolledAt.getTime()) <= 5 * 60_000) return { component: { kind: t.kind, namespace: t.namespace, name: t.name }, change: rollout, config, ...(previous ? { undoTo: previous.revision } : {}) };
    return { component: config, change };
  }
  if (rollout) return { component: { kind: t.kind, namespace: t.namespace, name: t.name }, change: rollout, ...(previous ? { undoTo: previous.revision } : {}) };
  const own = lastChangeBefore(t.kind, depInput.kube.workload?.metadata, until);
  if (own && until.getTime() - own.at.getTime() <= window) return { component: { kind: t.kind, namespace: t.namespace, name: t.name }, change: own };
  return undefined;
}

/**
 * `dependency-degraded` of a particular kind: after a failover the client still writes to the old
 * primary, which is now a replica and refuses every write. The store is healthy (its new primary takes
 * writes from everyone who re-resolved); the client pinned the old address at boot (a host name read
 * once, a connection pool never revalidated, no Sentinel/cluster discovery), so the client is where it
 * is fixed and where the restart helps.
 *
 * Read from the candidates' logs (Running pods; nothing restarts): the servers' own refusals as the
 * drivers quote them:
 *   - Redis/Valkey: `READONLY You can't write against a read only replica.`
 *   - PostgreSQL: `cannot execute INSERT in a read-only transaction` (SQLSTATE 25006) on a standby
 *   - MySQL/MariaDB: `--read-only option so it cannot execute this statement` (error 1290 / 1836)
 *   - MongoDB: `NotWritablePrimary` / `not master` / `not primary`
 * Supported when the wording repeats (3+ lines) and began within 2 h before the onset (to 10 min after);
 * corroborated, when present, by a store pod that restarted shortly before (the failover) and the
 * exporter's role series (`redis_instance_info{role}`, `pg_replication_is_replica`). Localised to the
 * client workload; the store is raised and ruled out (it answers). Facts: `logPattern`, `logCount`,
 * `store` (`redis` | `postgresql` | `mysql` | `mongodb`), `pods`, `firstSeen`, `failedOverPod`, `clientSideOf`
 * (the store, so reconcile never calls the client the store's victim). Mitigation:
 * `rollout_restart` of the client, so its new connections resolve the current primary.
 */
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import { nodeId } from '../../topology/graph.js';
import type { ClusterAnalyzer, ClusterTriageInput } from '../analyzer.js';
import { targetScope } from '../analyzers/deploy-regression.js';
import { objectCitation } from '../citations.js';
import { clockTime, relativeToOnset } from '../time.js';
import type { Finding } from '../types.js';
import { logEvidence, logHits } from './common.js';

const BEFORE_MS = 2 * 3600_000;
const AFTER_MS = 10 * 60_000;
const REPEATS = 3;

/** Each store's refusal of a write on a replica, and the names its pods, images and Services go by. */
export const READ_ONLY_WORDINGS: readonly { store: string; re: RegExp; names: RegExp }[] = [
  { store: 'redis', re: /READONLY You can't write against a read only (?:replica|slave)/i, names: /redis|valkey|keydb|sentinel/i },
  { store: 'postgresql', re: /cannot execute (?:INSERT|UPDATE|DELETE|CREATE|ALTER|DROP|TRUNCATE|nextval\(\))[^\n]{0,40} in a read-only transaction|SQLSTATE[ =:]*25006/i, names: /postgres|pg-|patroni/i },
  { store: 'mysql', re: /running with the --read-only option so it cannot execute this statement|\b(?:ERROR|Error) ?(?:1290|1836)\b[^\n]{0,80}read.only/i, names: /mysql|mariadb|percona/i },
  { store: 'mongodb', re: /NotWritablePrimary|not master and slaveOk=false|\bnot (?:master|primary)\b[^\n]{0,40}(?:write|insert|update)|NotPrimaryNoSecondaryOk/i, names: /mongo/i },
];
const ANY = new RegExp(READ_ONLY_WORDINGS.map((w) => w.re.source).join('|'), 'i');
const STORE_POD = new RegExp(READ_ONLY_WORDINGS.map((w) => w.names.source).join('|'), 'i');
const namesOf = (store: string) => READ_ONLY_WORDINGS.find((w) => w.store === store)?.names ?? STORE_POD;

export const stalePrimary: ClusterAnalyzer = {
  name: 'stale-primary',
  analyze(input: ClusterTriageInput): Finding[] {
    const out: Finding[] = [];
    const hits = logHits(input.inputs, ANY);
    const byWorkload = new Map<string, typeof hits>();
    for (const h of hits) byWorkload.set(nodeId(h.workload), [...(byWorkload.get(nodeId(h.workload)) ?? []), h]);
    for (const [, hs] of byWorkload) {
      const w = hs[0]!.workload;
      // The store logging its own refusals is not a client.
      if (STORE_POD.test(w.name) && !/api|service|app|web|worker/i.test(w.name)) continue;
      const count = hs.reduce((n, h) => n + h.count, 0);
      const firsts = hs.map((h) => h.first?.getTime()).filter((x): x is number => x !== undefined);
      const first = firsts.length ? new Date(Math.min(...firsts)) : undefined;
      const near = !first || (first.getTime() >= input.onset.getTime() - BEFORE_MS && first.getTime() <= input.onset.getTime() + AFTER_MS);
      if (count < REPEATS || !near) continue;
      const main = hs.sort((a, b) => b.count - a.count)[0]!;
      const store = READ_ONLY_WORDINGS.find((x) => x.re.test(`${main.example} ${main.template}`))?.store ?? 'store';
      const wording = READ_ONLY_WORDINGS.find((x) => x.store === store)?.re.exec(`${main.example} ${main.template}`)?.[0] ?? main.template;
      const failover = failoverEvidence(input, store, first);
      // Only a direct client of the store: callers further up quote its errors (checkout → cart → redis).
      if (!callsStore(input, w, failover.owner, store)) continue;
      const wl = input.inputs.find((i) => i.kube.target && nodeId(i.kube.target) === nodeId(w));
      const pods = [...new Set(hs.map((h) => h.pod).filter((p): p is string => !!p))];
      const component: ComponentRef = { kind: w.kind, namespace: w.namespace, name: w.name };
      const supporting: Evidence[] = [...hs.slice(0, 2).map((h) => logEvidence(h, `${w.name} writes to a read-only ${store}`)), ...failover.evidence];
      const facts: Record<string, string | number> = { logPattern: wording, logCount: count, store, ...(pods.length ? { pods: pods.length } : {}), ...(first ? { firstSeen: first.toISOString() } : {}), ...(failover.pod ? { failedOverPod: failover.pod } : {}), ...(failover.owner ? { clientSideOf: failover.owner.name } : {}) };
      out.push({
        key: `dependency-degraded:${w.namespace}/${w.kind}/${w.name}:read-only`,
        analyzer: 'stale-primary',
        family: 'dependency-degraded',
        status: 'supported',
        confidence: failover.evidence.length ? 0.9 : 0.82,
        title: `${w.name} writes to a ${store} that is now a read-only replica ("${wording.slice(0, 70)}")${failover.pod ? ` since ${failover.pod} failed over` : ''}`,
        component,
        mechanism:
          `${w.kind.toLowerCase()}/${w.name}'s writes are refused by its ${store}: "${wording}" ×${count}${pods.length ? ` in ${pods.length} pod(s)` : ''}${first ? ` since ${clockTime(first)} (${relativeToOnset(first, input.onset)})` : ''}. ` +
          `${failover.text || 'A failover promoted another member to primary'}; ${w.name} still holds connections to the old one (a host name read at boot, a pool never revalidated, no Sentinel/cluster discovery), while the store answers others. ` +
          `Fix: restart ${w.name} so it connects to the current primary, then make its client follow failovers.`,
        scope: `every write of ${w.name} and whatever calls it`,
        affected: wl ? targetScope(wl) : [component],
        facts,
        supporting,
        refuting: [],
        ...(w.kind === 'Deployment' || w.kind === 'StatefulSet'
          ? { mitigation: { action: 'rollout_restart', target: component, params: {}, command: `kubectl rollout restart ${w.kind.toLowerCase()}/${w.name} -n ${w.namespace}`, rationale: `new pods resolve and connect to the current ${store} primary; the store itself is healthy` } }
          : {}),
      });
      // "Is the database down?" — it answers: it refuses writes as a replica, which is what it should do.
      const storeWl = failover.owner;
      if (storeWl) {
        out.push({
          key: `database-degraded:${storeWl.namespace}/${storeWl.kind}/${storeWl.name}:read-only`,
          analyzer: 'stale-primary',
          family: 'database-degraded',
          status: 'ruled_out',
          confidence: 0.05,
          title: `${storeWl.name} (${store}) is failing`,
          component: storeWl,
          mechanism: `${w.name}'s writes to ${storeWl.name} fail.`,
          reason: `${storeWl.name} answers: the member ${w.name} writes to is a replica after the failover and refuses writes as it should; the new primary serves everyone who reconnected`,
          facts: { database: storeWl.name },
          supporting: [],
          refuting: failover.evidence.slice(0, 1),
        });
      }
    }
    return out;
  },
};

/** Does the workload call the store itself: a Service it calls selects the store's pods (or is named like one)? */
function callsStore(input: ClusterTriageInput, w: ComponentRef, store: ComponentRef | undefined, kind: string): boolean {
  const t = input.cluster.topology;
  const names = namesOf(kind);
  const storeRe = kind === 'postgresql' || kind === 'mysql' ? new RegExp(`${names.source}|(^|[-/])db($|[-/])`, 'i') : names;
  for (const e of t.outgoing(nodeId(w))) {
    if (e.kind !== 'calls') continue;
    const selected = t.outgoing(e.to).filter((x) => x.kind === 'selects').map((x) => x.to);
    if (store && selected.includes(nodeId(store))) return true;
    if (!store && (storeRe.test(e.to) || selected.some((x) => storeRe.test(x)))) return true;
  }
  return false;
}

/** The store member that restarted shortly before the first refusal (the failover), and its owner. */
function failoverEvidence(input: ClusterTriageInput, store: string, first: Date | undefined): { evidence: Evidence[]; text: string; pod?: string; owner?: ComponentRef } {
  const s = input.cluster.snapshot;
  const storeRe = namesOf(store);
  const ref = first?.getTime() ?? input.onset.getTime();
  for (const p of s.pods) {
    const name = p.metadata?.name ?? '';
    const image = (p.spec?.containers ?? []).map((c) => c.image ?? '').join(' ');
    if (!storeRe.test(name) && !storeRe.test(image)) continue;
    const restarted = (p.status?.containerStatuses ?? []).find((c) => {
      const at = c.lastState?.terminated?.finishedAt ? new Date(c.lastState.terminated.finishedAt).getTime() : c.state?.running?.startedAt && (c.restartCount ?? 0) > 0 ? new Date(c.state.running.startedAt).getTime() : undefined;
      return at !== undefined && at <= ref + 120_000 && ref - at <= BEFORE_MS;
    });
    if (!restarted) continue;
    const owner = input.cluster.topology.podOwner.get(`${p.metadata?.namespace}/${name}`);
    return {
      pod: name,
      ...(owner ? { owner } : {}),
      text: `${name} restarted${restarted.lastState?.terminated?.reason ? ` (${restarted.lastState.terminated.reason})` : ''} just before, and came back as a replica`,
      evidence: [{ kind: 'object', summary: `pod ${p.metadata?.namespace}/${name}: container ${restarted.name} restarted ${restarted.restartCount ?? 0}×${restarted.lastState?.terminated?.finishedAt ? `, last at ${clockTime(new Date(restarted.lastState.terminated.finishedAt))}` : ''} — the failover`, citation: objectCitation('Pod', p.metadata?.namespace, name, 'status.containerStatuses') }],
    };
  }
  return { evidence: [], text: '' };
}

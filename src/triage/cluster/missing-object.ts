/**
 * `missing-object`: something the workloads need does not exist.
 * - A Service that callers name (env, args, ConfigMaps: the graph keeps those references as `calls`
 *   edges marked "no such Service"), corroborated by the callers' resolution errors for that name
 *   (`no such host`, `NXDOMAIN`, `Name or service not known`, `getaddrinfo ENOTFOUND`, `UnknownHostException`).
 * - A ConfigMap or Secret the pods reference: the kubelet's `CreateContainerConfigError` (`configmap "x"
 *   not found`, `secret "x" not found`) and `FailedMount` events, or a `(missing!)` reference.
 * - A ServiceAccount or PVC a controller cannot find (`FailedCreate … serviceaccount "x" not found`).
 * Localised to the missing object as it was named; affected are the workloads that need it.
 * Facts: `missingKind`, `missingName`, `referencedBy`, `deletedAt` (when an event says when it went).
 */
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import { nodeId, refOfId } from '../../topology/graph.js';
import type { ClusterAnalyzer, ClusterTriageInput } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime } from '../time.js';
import type { Finding } from '../types.js';
import { revisions } from '../analyzers/crash-loop.js';
import { allEvents, eventEvidenceOf, eventFirstTime, eventTime, lastChangeBefore, logEvidence, logHits } from './common.js';

const RESOLVE_FAIL = /no such host|NXDOMAIN|Name or service not known|getaddrinfo ENOTFOUND|ENOTFOUND|UnknownHostException|could not resolve|Could not resolve host|nodename nor servname|Temporary failure in name resolution|server misbehaving/i;
const NOT_FOUND_REF = /\b(configmap|secret|serviceaccount|persistentvolumeclaim)s? "([\w.-]+)" not found/i;
const RECENT_MS = 3 * 3600_000;

interface Missing {
  ref: ComponentRef;
  referencedBy: ComponentRef[];
  evidence: Evidence[];
  first?: Date;
}

export const missingObject: ClusterAnalyzer = {
  name: 'missing-object',
  analyze(input: ClusterTriageInput): Finding[] {
    const t = input.cluster.topology;
    const s = input.cluster.snapshot;
    const missing = new Map<string, Missing>();
    const wrongName = new Map<string, string>();
    const note = (ref: ComponentRef, by: ComponentRef | undefined, ev: Evidence[], first?: Date) => {
      const id = nodeId(ref);
      const m = missing.get(id) ?? { ref, referencedBy: [], evidence: [] };
      if (by && !m.referencedBy.some((r) => nodeId(r) === nodeId(by))) m.referencedBy.push(by);
      for (const e of ev) if (!m.evidence.some((x) => x.citation.ref === e.citation.ref)) m.evidence.push(e);
      if (first && (!m.first || first < m.first)) m.first = first;
      missing.set(id, m);
    };

    // Services named by callers that do not exist, with the callers failing to resolve them.
    for (const [from, edges] of t.out) {
      for (const e of edges) {
        if (e.kind !== 'calls' || !/no such Service/.test(e.via)) continue;
        const svc = refOfId(e.to);
        if (s.services.some((x) => x.metadata?.namespace === svc.namespace && x.metadata?.name === svc.name)) continue;
        const caller = refOfId(from);
        const input1 = input.inputs.find((i) => i.kube.target && nodeId(i.kube.target) === from);
        if (!input1) continue;
        const nameRe = new RegExp(`\\b${svc.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(\\.|:|\\b)`, 'i');
        const hits = logHits([input1], RESOLVE_FAIL).filter((h) => nameRe.test(h.example) || nameRe.test(h.template));
        if (!hits.length) continue;
        const ev: Evidence[] = [
          ...hits.slice(0, 2).map((h) => logEvidence(h, `${caller.name} cannot resolve ${svc.name}`)),
          { kind: 'object', summary: `${caller.kind.toLowerCase()}/${caller.name} is configured to call ${svc.name} (${e.via.replace(' (no such Service)', '')}), but no Service ${svc.namespace}/${svc.name} exists`, citation: objectCitation('Service', svc.namespace, svc.name) },
        ];
        const first = hits.map((h) => h.first).filter((d): d is Date => !!d).sort((a, b) => a.getTime() - b.getTime())[0];
        // A reference that arrived with a recent change (an edited ConfigMap, a rollout that set the env)
        // makes that change the fault: the Service is not missing, the name is wrong.
        const newRef = referenceChange(input1, e.via, first ?? input.onset);
        if (newRef) {
          wrongName.set(nodeId(svc), newRef);
          ev.push({ kind: 'note', summary: `the reference arrived with ${newRef}`, citation: ev[1]!.citation });
        }
        note(svc, caller, ev, first);
      }
    }

    // ConfigMaps, Secrets, ServiceAccounts and claims the kubelet or a controller cannot find.
    for (const e of allEvents(input)) {
      const m = NOT_FOUND_REF.exec(e.message ?? '');
      if (!m) continue;
      const at = eventTime(e);
      if (!at || Math.abs(input.onset.getTime() - at.getTime()) > RECENT_MS) continue;
      const kind = { configmap: 'ConfigMap', secret: 'Secret', serviceaccount: 'ServiceAccount', persistentvolumeclaim: 'PersistentVolumeClaim' }[m[1]!.toLowerCase()]!;
      const ns = e.involvedObject?.namespace ?? e.metadata?.namespace ?? '';
      const exists = kind === 'ConfigMap' ? s.configMaps.some((c) => c.metadata.namespace === ns && c.metadata.name === m[2]) : kind === 'PersistentVolumeClaim' ? s.pvcs.some((c) => c.metadata?.namespace === ns && c.metadata?.name === m[2]) : false;
      if (exists) continue;
      const io = e.involvedObject;
      const by = io?.kind === 'Pod' && io.name ? t.workloadOf(ns, io.name) : io?.kind === 'ReplicaSet' && io.name ? { kind: 'Deployment', namespace: ns, name: io.name.replace(/-[a-z0-9]{6,10}$/, '') } : undefined;
      // Only what the alert's walk reaches: a missing Secret in a namespace nothing leads to is noise.
      if (!by || !input.cluster.walk.reached.has(nodeId(by))) continue;
      note({ kind, namespace: ns, name: m[2]! }, by, [eventEvidenceOf(e)], eventFirstTime(e));
    }

    const out: Finding[] = [];
    for (const m of missing.values()) {
      const deletedAt = deletionTime(input, m.ref);
      const facts: Record<string, string | number | boolean> = { missingKind: m.ref.kind, missingName: m.ref.name, referencedBy: m.referencedBy.map((r) => r.name).join(',') };
      if (deletedAt) facts['deletedAt'] = deletedAt.toISOString();
      const changed = wrongName.get(nodeId(m.ref));
      out.push({
        key: `missing-object:${m.ref.namespace ?? ''}/${m.ref.kind}/${m.ref.name}`,
        analyzer: 'missing-object',
        family: 'missing-object',
        status: changed ? 'open' : 'supported',
        confidence: changed ? 0.45 : 0.9,
        ...(changed ? { reason: `no ${m.ref.kind} of that name ever served: the name came with ${changed}, which is the change to look at` } : {}),
        title: `${m.ref.kind} ${m.ref.namespace}/${m.ref.name} does not exist; ${m.referencedBy.map((r) => r.name).join(', ') || 'its users'} need it`,
        component: m.ref,
        mechanism: `${m.ref.kind} ${m.ref.namespace}/${m.ref.name} is not in the cluster, but ${m.referencedBy.map((r) => `${r.kind.toLowerCase()}/${r.name}`).join(', ') || 'pods'} ${m.ref.kind === 'Service' ? 'call it by name and fail to resolve it' : 'reference it and cannot start'}${m.first ? `, since ${clockTime(m.first)}` : ''}${deletedAt ? `; it was removed at ${clockTime(deletedAt)}` : ''}.`,
        scope: `everything that needs ${m.ref.name}: ${m.referencedBy.map((r) => r.name).join(', ')}`,
        affected: m.referencedBy,
        facts,
        supporting: m.evidence.slice(0, 5),
        refuting: [],
      });
    }
    return out;
  },
};

/** The recent change that introduced a reference (`configmap X` edited, or the rollout that set `env X`), in words. */
function referenceChange(i: ClusterTriageInput['inputs'][number], via: string, until: Date): string | undefined {
  const window = 6 * 3600_000;
  const cm = /^configmap ([\w.-]+)/.exec(via)?.[1];
  if (cm) {
    const r = i.kube.related.find((x) => x.kind === 'ConfigMap' && x.name === cm);
    const change = r ? lastChangeBefore('ConfigMap', { name: r.name, namespace: r.namespace, managedFields: r.managedFields }, until) : undefined;
    return change && until.getTime() - change.at.getTime() <= window ? `the edit of ConfigMap ${cm} at ${clockTime(change.at)}` : undefined;
  }
  const env = /^env (\S+)/.exec(via)?.[1];
  if (env) {
    const { current, previous } = revisions(i.kube);
    if (!current || !previous || !current.createdAt || until.getTime() - current.createdAt.getTime() > window) return undefined;
    const value = (rs: typeof current) => (rs.replicaSet.spec?.template?.spec?.containers ?? []).flatMap((c) => c.env ?? []).find((x) => x.name === env)?.value;
    return value(current) !== value(previous) ? `revision ${current.revision} (rollout at ${clockTime(current.createdAt)}), which set ${env}` : undefined;
  }
  return undefined;
}

/** A deletion is rarely recorded; an event about the object (or its Endpoints) after which nothing more came is the best sign. */
function deletionTime(input: ClusterTriageInput, ref: ComponentRef): Date | undefined {
  const about = input.cluster.snapshot.warningEvents.filter((e) => e.involvedObject?.name === ref.name && e.involvedObject?.namespace === ref.namespace && /delet|prun/i.test(`${e.reason} ${e.message}`));
  const at = about.map(eventTime).filter((d): d is Date => !!d).sort((a, b) => b.getTime() - a.getTime())[0];
  return at;
}

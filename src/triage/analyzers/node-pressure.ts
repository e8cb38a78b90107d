/**
 * `node-pressure`: a node under MemoryPressure / DiskPressure / PIDPressure, or NotReady, took the
 * target's pods with it — the kubelet evicted them (`status.reason: Evicted`, `The node was low on
 * resource: memory…`) or they sit on a node that stopped reporting.
 *
 * Only nodes that hit the target count: a node in trouble that runs none of the target's pods (and
 * evicted none) is reported `unrelated`; a condition that started long before the onset is not the
 * onset's cause (`inconclusive`). Mitigation, when supported, the node is not cordoned yet and other
 * nodes are fine: `cordon_node`, so the evicted pods' replacements stop landing on it when the pressure
 * eases for a moment (nothing is evicted by it; draining or freeing the node stays a human call).
 *
 * Facts (camelCase):
 * - `node`: the node; `condition`: MemoryPressure | DiskPressure | PIDPressure | NotReady
 * - `conditionSince`: the condition's lastTransitionTime (ISO)
 * - `evictedPods`: pods the kubelet evicted from it around the onset, the target's and others' (events of
 *   pods that are gone count); `targetEvictedPods` when others were evicted too; `evictedResource`: memory | ephemeral-storage | pids | …
 * - `podsOnNode`: target pods still bound to it; `pendingPods`: target pods Pending (replacements that do not fit)
 */
import type { CoreV1Event, V1Node, V1Pod } from '@kubernetes/client-node';
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import type { KubeEvidence } from '../../evidence/kubernetes/gather.js';
import { scopeRefs } from '../scope.js';
import type { Analyzer, TriageInput } from '../analyzer.js';
import { CHANGE_WINDOW_MS } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime, humanDuration, relativeToOnset } from '../time.js';
import type { Finding } from '../types.js';

const PRESSURES = ['MemoryPressure', 'DiskPressure', 'PIDPressure'] as const;
/** A condition this long after the onset may still be what the alert saw (alerts fire after a `for:`). */
const AFTER_ONSET_MS = 5 * 60_000;

interface NodeTrouble {
  node: V1Node;
  name: string;
  condition: string;
  since?: Date;
  message?: string;
}

/** Conditions that are bad now: a pressure condition True, or Ready not True. */
export function nodeTroubles(nodes: V1Node[]): NodeTrouble[] {
  const out: NodeTrouble[] = [];
  for (const node of nodes) {
    const name = node.metadata?.name ?? '?';
    const conds = node.status?.conditions ?? [];
    for (const c of conds) {
      const bad = (PRESSURES as readonly string[]).includes(c.type) ? c.status === 'True' : c.type === 'Ready' ? c.status !== 'True' : false;
      if (!bad) continue;
      out.push({
        node,
        name,
        condition: c.type === 'Ready' ? 'NotReady' : c.type,
        since: c.lastTransitionTime ? new Date(c.lastTransitionTime) : undefined,
        message: c.message,
      });
    }
  }
  // Pressure explains more than NotReady (which often follows it); keep the most specific first.
  return out.sort((a, b) => Number(a.condition === 'NotReady') - Number(b.condition === 'NotReady'));
}

/** `The node was low on resource: memory. Threshold quantity: …` → `memory`. */
function evictedResource(message: string | undefined): string | undefined {
  return /low on resource: ([\w/-]+)/.exec(message ?? '')?.[1];
}

function eventTime(e: CoreV1Event): Date | undefined {
  const t = e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp;
  return t ? new Date(t) : undefined;
}

function isReady(p: V1Pod): boolean {
  return p.status?.phase === 'Running' && (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}


/** Evicted events of the node (kubelet `source.host`) about pods other than the target's, with their owners. */
function otherEvictions(kube: KubeEvidence, cluster: TriageInput['cluster'], node: string, onset: Date, known: Set<string>): { pod: string; owner?: ComponentRef; evidence: Evidence }[] {
  const out: { pod: string; owner?: ComponentRef; evidence: Evidence }[] = [];
  const seen = new Set(known);
  for (const e of kube.warningEvents) {
    if (e.reason !== 'Evicted' || e.involvedObject?.kind !== 'Pod' || e.source?.host !== node) continue;
    const at = eventTime(e);
    if (!at || Math.abs(onset.getTime() - at.getTime()) > CHANGE_WINDOW_MS) continue;
    const ns = e.involvedObject.namespace ?? e.metadata?.namespace ?? '';
    const pod = e.involvedObject.name ?? '';
    if (!pod || seen.has(`${ns}/${pod}`)) continue;
    seen.add(`${ns}/${pod}`);
    const owner = cluster?.topology.workloadOf(ns, pod) ?? jobOfGonePod(cluster, ns, pod);
    out.push({
      pod: `${ns}/${pod}`,
      ...(owner ? { owner } : {}),
      evidence: { kind: 'event', summary: `pod ${ns}/${pod}${owner ? ` (${owner.kind.toLowerCase()}/${owner.name})` : ''} Evicted from ${node} at ${clockTime(at)}: "${(e.message ?? '').split('. ')[0]}"`, citation: objectCitation('Event', e.metadata?.namespace, e.metadata?.name ?? '?'), observedAt: at },
    });
  }
  return out;
}

/** A pod that is gone names its Job by its prefix (`<job>-<5 chars>`), when the Job is in the graph. */
function jobOfGonePod(cluster: TriageInput['cluster'], ns: string, pod: string): ComponentRef | undefined {
  const job = pod.replace(/-[a-z0-9]{5}$/, '');
  return job !== pod && cluster?.topology.has({ kind: 'Job', namespace: ns, name: job }) ? { kind: 'Job', namespace: ns, name: job } : undefined;
}

function dedupeRefs(refs: ComponentRef[]): ComponentRef[] {
  const seen = new Set<string>();
  return refs.filter((r) => {
    const k = `${r.kind}/${r.namespace ?? ''}/${r.name}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

export const nodePressure: Analyzer = {
  name: 'node-pressure',
  analyze({ kube, onset, cluster }: TriageInput): Finding[] {
    const t = kube.target;
    if (!t) return [];
    const troubles = nodeTroubles(kube.nodes);
    if (troubles.length === 0) return [];
    const component = { kind: t.kind, namespace: t.namespace, name: t.name };
    const out: Finding[] = [];
    const seen = new Set<string>();
    const allEvicted = kube.pods.filter((p) => p.status?.reason === 'Evicted');
    const pending = kube.pods.filter((p) => p.status?.phase === 'Pending' && !p.spec?.nodeName);

    for (const trouble of troubles) {
      if (seen.has(trouble.name)) continue;
      seen.add(trouble.name);
      const evicted = allEvicted.filter((p) => p.spec?.nodeName === trouble.name);
      const onNode = kube.pods.filter((p) => p.spec?.nodeName === trouble.name && p.status?.reason !== 'Evicted' && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
      const nodeCitation = objectCitation('Node', undefined, trouble.name, `status.conditions[type=${trouble.condition === 'NotReady' ? 'Ready' : trouble.condition}]`);
      const conditionEvidence: Evidence = {
        kind: 'object',
        summary: `node ${trouble.name}: ${trouble.condition}${trouble.since ? ` since ${clockTime(trouble.since)} (${relativeToOnset(trouble.since, onset)})` : ''}${trouble.message ? `: "${trouble.message}"` : ''}`,
        citation: nodeCitation,
        observedAt: trouble.since,
      };

      if (evicted.length === 0 && onNode.length === 0) {
        out.push({
          key: `node-pressure:${trouble.name}`,
          analyzer: 'node-pressure',
          status: 'unrelated',
          confidence: 0.05,
          title: `node ${trouble.name} ${trouble.condition}`,
          component: { kind: 'Node', name: trouble.name },
          mechanism: `Node ${trouble.name} reports ${trouble.condition}${trouble.message ? ` (${trouble.message})` : ''}.`,
          reason: `runs no pod of ${t.namespace}/${t.name} and evicted none`,
          supporting: [],
          refuting: [conditionEvidence],
        });
        continue;
      }

      // Every pod the kubelet evicted from this node around the onset, the target's or not, including
      // pods that no longer exist (only their Evicted event is left): the node's whole account.
      const elsewhere = otherEvictions(kube, cluster, trouble.name, onset, new Set(evicted.map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`)));
      const supporting: Evidence[] = [conditionEvidence];
      const refuting: Evidence[] = [];
      const evictionTimes: Date[] = [];
      let resource: string | undefined;
      for (const p of evicted) {
        const name = p.metadata?.name ?? '?';
        const ev = kube.events.filter((e) => e.reason === 'Evicted' && e.involvedObject?.name === name).sort((a, b) => (eventTime(b)?.getTime() ?? 0) - (eventTime(a)?.getTime() ?? 0))[0];
        const at = ev ? eventTime(ev) : undefined;
        if (at) evictionTimes.push(at);
        resource ??= evictedResource(p.status?.message ?? ev?.message);
        supporting.push({
          kind: ev ? 'event' : 'object',
          summary: `pod ${name} Evicted from ${trouble.name}${at ? ` at ${clockTime(at)}` : ''}: "${(p.status?.message ?? ev?.message ?? '').split('. ')[0]}"`,
          citation: ev ? objectCitation('Event', t.namespace, ev.metadata?.name ?? '?') : objectCitation('Pod', t.namespace, name, 'status.message'),
          observedAt: at,
        });
      }
      // The kubelet's own account, cluster-wide warnings on the node (EvictionThresholdMet, NodeNotReady…).
      for (const e of kube.warningEvents.filter((e) => e.involvedObject?.kind === 'Node' && e.involvedObject?.name === trouble.name)) {
        const at = eventTime(e);
        if (at && Math.abs(onset.getTime() - at.getTime()) > CHANGE_WINDOW_MS) continue;
        supporting.push({
          kind: 'event',
          summary: `event ${e.reason} ×${e.count ?? 1} on node ${trouble.name}${at ? ` (last ${clockTime(at)})` : ''}: "${e.message ?? ''}"`,
          citation: objectCitation('Event', e.metadata?.namespace, e.metadata?.name ?? '?'),
          observedAt: at,
        });
        break;
      }

      // Other nodes healthy: the problem is this node, not the cluster.
      const healthy = kube.nodes.filter((n) => !troubles.some((x) => x.name === n.metadata?.name)).map((n) => n.metadata?.name ?? '?');
      if (healthy.length) {
        supporting.push({
          kind: 'object',
          summary: `other nodes Ready without pressure: ${healthy.join(', ')}`,
          citation: objectCitation('Node', undefined, healthy[0]!, 'status.conditions'),
        });
      }
      if (pending.length) {
        supporting.push({
          kind: 'object',
          summary: `${pending.length} replacement pod(s) of ${t.name} Pending: ${pending.map((p) => p.metadata?.name).join(', ')}`,
          citation: objectCitation('Pod', t.namespace, pending[0]!.metadata?.name ?? '?', 'status.conditions[type=PodScheduled]'),
        });
      }

      const started = trouble.since ?? (evictionTimes.length ? new Date(Math.min(...evictionTimes.map((d) => d.getTime()))) : undefined);
      const delta = started ? onset.getTime() - started.getTime() : undefined;
      const nearOnset = delta !== undefined && delta <= CHANGE_WINDOW_MS && delta >= -AFTER_ONSET_MS;
      if (delta !== undefined && !nearOnset) {
        refuting.push({
          kind: 'note',
          summary: `${trouble.condition} on ${trouble.name} began ${humanDuration(Math.abs(delta))} ${delta >= 0 ? 'before' : 'after'} the alert, not at its onset`,
          citation: nodeCitation,
        });
      }
      for (const o of elsewhere.slice(0, 3)) supporting.push(o.evidence);
      const ready = kube.pods.filter(isReady).length;
      const desired = (kube.workload?.spec as { replicas?: number } | undefined)?.replicas;
      const affected = scopeRefs(kube);
      const facts: Record<string, string | number | boolean> = {
        node: trouble.name,
        condition: trouble.condition,
        evictedPods: evicted.length + elsewhere.length,
        ...(elsewhere.length ? { targetEvictedPods: evicted.length } : {}),
        podsOnNode: onNode.length,
        pendingPods: pending.length,
        ...(trouble.since ? { conditionSince: trouble.since.toISOString() } : {}),
        ...(resource ? { evictedResource: resource } : {}),
      };
      const decisive = nearOnset && (evicted.length > 0 || trouble.condition === 'NotReady');
      out.push({
        key: `node-pressure:${t.namespace}/${t.kind}/${t.name}:${trouble.name}`,
        analyzer: 'node-pressure',
        status: decisive ? 'supported' : 'inconclusive',
        confidence: decisive ? (evicted.length > 0 ? 0.94 : 0.85) : nearOnset ? 0.55 : 0.3,
        title: `node ${trouble.name} ${trouble.condition}${evicted.length ? `: ${evicted.length} ${t.name} pod(s) evicted` : `: hosts ${onNode.length} ${t.name} pod(s)`}`,
        // The faulty object is the node; the workload it took pods from is the first of the affected.
        component: { kind: 'Node', name: trouble.name },
        mechanism:
          `Node ${trouble.name} reports ${trouble.condition}${trouble.since ? ` since ${clockTime(trouble.since)} (${relativeToOnset(trouble.since, onset)})` : ''}` +
          (evicted.length ? `; the kubelet evicted ${evicted.length} pod(s) of ${t.kind.toLowerCase()}/${t.name}${resource ? ` because the node was low on ${resource}` : ''}` : '') +
          (onNode.length ? `; ${onNode.length} pod(s) of ${t.name} are still bound to it` : '') +
          (pending.length ? `; ${pending.length} replacement pod(s) are Pending (the other nodes lack room)` : '') +
          `. ${healthy.length ? `Other nodes (${healthy.join(', ')}) are fine, so this is the node, not the workload's own change. ` : ''}` +
          `Cordoning/draining ${trouble.name} or freeing its ${resource ?? 'resources'} is a human decision.`,
        scope: `${ready}${desired !== undefined ? ` of ${desired}` : ''} replica(s) of ${t.name} ready${affected.length ? `; ${affected.map((a) => `${a.kind.toLowerCase()}/${a.name}`).join(', ')} run on reduced capacity` : ''}`,
        affected: dedupeRefs([component, ...affected, ...elsewhere.flatMap((o) => (o.owner ? [o.owner] : []))]),
        facts,
        supporting,
        refuting,
        ...(decisive && healthy.length > 0 && kube.nodes.find((n) => n.metadata?.name === trouble.name)?.spec?.unschedulable !== true
          ? {
              mitigation: {
                action: 'cordon_node',
                // A Node has no namespace: the proposal carries the workload's, which the policy judges it by.
                target: { kind: 'Node', namespace: t.namespace, name: trouble.name },
                params: {},
                command: `kubectl cordon ${trouble.name}`,
                rationale: `keep ${t.name}'s replacements off ${trouble.name} (${trouble.condition}) while ${healthy.join(', ')} have room; nothing is evicted, draining stays a human call`,
              },
            }
          : {}),
      });
    }
    return out;
  },
};

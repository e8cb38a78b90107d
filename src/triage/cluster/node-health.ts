/**
 * `node-health`: a node stopped working under the candidates' pods. What the control plane records:
 * - the `Ready` condition `False` (`KubeletNotReady`: "PLEG is not healthy…", "container runtime is
 *   down", "container runtime network not ready…") or `Unknown` (`NodeStatusUnknown`: "Kubelet stopped
 *   posting node status."), set by the kubelet or the node lifecycle controller, with the
 *   `node.kubernetes.io/not-ready|unreachable` taints (`NoExecute`, `timeAdded`) that evict pods after
 *   their toleration (300 s by default: `TaintManagerEviction` "Marking for deletion Pod ns/name");
 * - `NodeNotReady` events on the node ("Node node-2 status is now: NodeNotReady") and on each of its
 *   pods ("Node is not ready");
 * - a cordon (`spec.unschedulable: true`, `NodeNotSchedulable`), which only hurts when the pods it sent
 *   away (a drain) cannot be placed elsewhere: FailedScheduling "… node(s) were unschedulable".
 *
 * Localised to the Node. A node that is Ready now and was Ready at the onset is not the cause, however
 * recently it blinked; a node NotReady since long before the onset is background (`inconclusive`); a
 * bad node that runs none of the candidates' pods is `unrelated`. Mitigation, for a supported NotReady
 * or Unknown node that is not cordoned while other nodes are Ready: `cordon_node` (no eviction; the
 * scheduler already avoids a NotReady node through its automatic taints, the cordon keeps new pods off
 * it when it flaps back to Ready). Draining and repairing stay human calls.
 *
 * Facts: `node`, `condition` (`NotReady` | `Unknown` | `Unschedulable`), `conditionSince` (ISO),
 * `podsOnNode` (candidate pods bound to it), `reason` (`KubeletNotReady`, `NodeStatusUnknown`,
 * `NodeNotSchedulable`), and `pendingPods` for a cordon that leaves pods Pending.
 *
 * Also exports the helpers the other node/volume analyzers use: the candidates' pods (of the analysed
 * candidates and of the workloads the walk reached) and the Services of a workload.
 */
import type { CoreV1Event, V1Node, V1Pod } from '@kubernetes/client-node';
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import { nodeId, refOfId, WORKLOAD_KINDS, type Topology } from '../../topology/graph.js';
import type { ClusterAnalyzer, ClusterTriageInput } from '../analyzer.js';
import { CHANGE_WINDOW_MS } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime, humanDuration, relativeToOnset } from '../time.js';
import type { Finding } from '../types.js';
import { allEvents, clip, eventEvidenceOf, eventFirstTime, eventTime, logEvidence, type LogHit } from './common.js';

const NAME = 'node-health';
/** Alerts fire after their `for:`: a node that went bad a few minutes after the onset may still be what the alert saw. */
const AFTER_ONSET_MS = 5 * 60_000;
const UNREACHABLE = 'node.kubernetes.io/unreachable';
const NOT_READY = 'node.kubernetes.io/not-ready';
const UNSCHEDULABLE_TAINT = 'node.kubernetes.io/unschedulable';

// ------------------------------------------------------------------ shared helpers (also used by clock-skew, disk-full)

export interface CandidatePod {
  pod: V1Pod;
  /** The workload that owns it. */
  workload: ComponentRef;
  /** True for the analysed candidates' own pods, false for pods of workloads the walk only reached. */
  analysed: boolean;
}

/**
 * The pods of the investigation's candidates: the analysed inputs' pods, then every snapshot pod whose
 * workload the walk reached (workloads reached only through cluster DNS are left out: every pod
 * resolves names, that does not make CoreDNS's node a suspect).
 */
export function candidatePods(input: ClusterTriageInput): CandidatePod[] {
  const out = new Map<string, CandidatePod>();
  const add = (pod: V1Pod, workload: ComponentRef, analysed: boolean) => {
    const k = `${pod.metadata?.namespace ?? workload.namespace}/${pod.metadata?.name}`;
    if (!pod.metadata?.name || out.has(k)) return;
    out.set(k, { pod, workload, analysed });
  };
  for (const i of input.inputs) {
    const t = i.kube.target;
    if (!t) continue;
    const ref = { kind: t.kind, namespace: t.namespace, name: t.name };
    for (const p of i.kube.pods) add(p, ref, true);
  }
  const wanted = candidateWorkloadIds(input);
  const t = input.cluster.topology;
  for (const p of input.cluster.snapshot.pods) {
    const w = t.workloadOf(p.metadata?.namespace ?? '', p.metadata?.name ?? '');
    if (w && wanted.has(nodeId(w))) add(p, w, input.inputs.some((i) => i.kube.target && nodeId(i.kube.target) === nodeId(w)));
  }
  return [...out.values()];
}

/** Graph ids (`Kind/ns/name`) of the analysed candidates and of the workloads the walk reached (not through DNS). */
export function candidateWorkloadIds(input: ClusterTriageInput): Set<string> {
  const wanted = new Set<string>();
  for (const i of input.inputs) if (i.kube.target) wanted.add(nodeId(i.kube.target));
  for (const [id, r] of input.cluster.walk.reached) {
    if (!WORKLOAD_KINDS.has(r.ref.kind)) continue;
    if (r.path.some((s) => s.via?.kind === 'resolves-via')) continue;
    wanted.add(id);
  }
  return wanted;
}

/** The Services that select a workload (from the graph, else from the candidate's own evidence). */
export function servicesOf(input: ClusterTriageInput, w: ComponentRef): ComponentRef[] {
  const t: Topology = input.cluster.topology;
  const fromGraph = t.incoming(nodeId(w)).filter((e) => e.kind === 'selects' && e.from.startsWith('Service/')).map((e) => refOfId(e.from));
  const own = input.inputs.find((i) => i.kube.target && nodeId(i.kube.target) === nodeId(w));
  const fromInput = (own?.kube.services ?? []).map(({ service }) => ({ kind: 'Service', namespace: service.metadata?.namespace ?? w.namespace, name: service.metadata?.name ?? '?' }));
  return dedupeRefs([...fromGraph, ...fromInput]);
}

export function dedupeRefs(refs: ComponentRef[]): ComponentRef[] {
  const seen = new Set<string>();
  return refs.filter((r) => {
    const k = nodeId(r);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** Every node the investigation read (the snapshot, and the candidates' own reads). */
export function allNodes(input: ClusterTriageInput): V1Node[] {
  const seen = new Map<string, V1Node>();
  for (const n of [...input.cluster.snapshot.nodes, ...input.inputs.flatMap((i) => i.kube.nodes)]) {
    const name = n.metadata?.name;
    if (name && !seen.has(name)) seen.set(name, n);
  }
  return [...seen.values()];
}

/** Pods still holding a place on their node (a Terminating pod on an unreachable node stays bound until the node answers). */
export function isBound(p: V1Pod): boolean {
  return !!p.spec?.nodeName && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed';
}

export function podReady(p: V1Pod): boolean {
  return (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** `logEvidence` with the pod log cited as the API path a reviewer can GET: `api/v1/namespaces/<ns>/pods/<pod>/log?container=<c>`. */
export function logHitEvidence(h: LogHit, what = ''): Evidence {
  const e = logEvidence(h, what);
  return { ...e, citation: { ...e.citation, ref: e.citation.ref.replace(/(\/pods\/[^/#]+)#log\?/, '$1/log?') } };
}

/** `workload(s) with pods on the node, then their Services`, candidates first. */
export function nodeScope(input: ClusterTriageInput, workloads: ComponentRef[]): ComponentRef[] {
  return dedupeRefs([...workloads, ...workloads.flatMap((w) => servicesOf(input, w))]);
}

// ------------------------------------------------------------------ the analyzer

interface NodeState {
  node: V1Node;
  name: string;
  condition: 'NotReady' | 'Unknown' | 'Unschedulable';
  reason: string;
  message?: string;
  since?: Date;
  /** Set when the node is Ready again: it was not Ready until then. */
  recoveredAt?: Date;
  evidence: Evidence[];
}

function taint(node: V1Node, key: string) {
  return (node.spec?.taints ?? []).find((t) => t.key === key);
}

function nodeEventsOf(events: CoreV1Event[], name: string): CoreV1Event[] {
  return events.filter((e) => e.involvedObject?.kind === 'Node' && e.involvedObject?.name === name);
}

/** The newest managedFields write of `spec.unschedulable` (kubectl cordon/drain), with its citation. */
function cordonWrite(node: V1Node): { at: Date; manager: string; index: number } | undefined {
  let best: { at: Date; manager: string; index: number } | undefined;
  (node.metadata?.managedFields ?? []).forEach((m, index) => {
    const spec = (m.fieldsV1 as Record<string, unknown> | undefined)?.['f:spec'] as Record<string, unknown> | undefined;
    if (!m.time || !spec || !('f:unschedulable' in spec)) return;
    const at = new Date(m.time);
    if (!best || at > best.at) best = { at, manager: m.manager ?? '?', index };
  });
  return best;
}

function stateOf(node: V1Node, events: CoreV1Event[], onset: Date, podNode: (ns: string | undefined, pod: string | undefined) => string | undefined): NodeState | undefined {
  const name = node.metadata?.name ?? '?';
  const ready = (node.status?.conditions ?? []).find((c) => c.type === 'Ready');
  const unreachable = taint(node, UNREACHABLE);
  const notReady = taint(node, NOT_READY);
  const readyCitation = objectCitation('Node', undefined, name, 'status.conditions[type=Ready]');
  const taintEvidence = (t: { key: string; effect: string; timeAdded?: Date | string } | undefined): Evidence[] =>
    t ? [{ kind: 'object', summary: `node ${name} tainted ${t.key}:${t.effect}${t.timeAdded ? ` since ${clockTime(new Date(t.timeAdded))}` : ''}`, citation: objectCitation('Node', undefined, name, 'spec.taints'), ...(t.timeAdded ? { observedAt: new Date(t.timeAdded) } : {}) }] : [];

  if ((ready && ready.status !== 'True') || (!ready && (unreachable || notReady))) {
    const unknown = ready ? ready.status === 'Unknown' : !!unreachable;
    const t = unreachable ?? notReady;
    const since = ready?.lastTransitionTime ? new Date(ready.lastTransitionTime) : t?.timeAdded ? new Date(t.timeAdded) : undefined;
    const reason = ready?.reason ?? (unknown ? 'NodeStatusUnknown' : 'KubeletNotReady');
    return {
      node,
      name,
      condition: unknown ? 'Unknown' : 'NotReady',
      reason,
      ...(ready?.message ? { message: ready.message } : {}),
      ...(since ? { since } : {}),
      evidence: [
        ...(ready
          ? [{ kind: 'object' as const, summary: `node ${name}: Ready=${ready.status} (${reason})${since ? ` since ${clockTime(since)} (${relativeToOnset(since, onset)})` : ''}${ready.message ? `: "${clip(ready.message, 200)}"` : ''}${ready.lastHeartbeatTime ? `; last heartbeat ${clockTime(new Date(ready.lastHeartbeatTime))}` : ''}`, citation: readyCitation, ...(since ? { observedAt: since } : {}) }]
          : []),
        ...taintEvidence(t),
      ],
    };
  }

  // Ready again, but only since after the onset: it was not Ready when the alert's symptoms began.
  if (ready?.lastTransitionTime) {
    const back = new Date(ready.lastTransitionTime);
    const created = node.metadata?.creationTimestamp ? new Date(node.metadata.creationTimestamp) : undefined;
    // The node controller's NodeNotReady on the node ("status is now: NodeNotReady", Normal) or on its pods ("Node is not ready", Warning).
    const wentBad = [...nodeEventsOf(events, name), ...events.filter((e) => e.involvedObject?.kind === 'Pod' && podNode(e.involvedObject.namespace ?? e.metadata?.namespace, e.involvedObject.name) === name)]
      .filter((e) => e.reason === 'NodeNotReady')
      .map(eventFirstTime)
      .filter((d): d is Date => !!d && d <= back)
      .sort((a, b) => b.getTime() - a.getTime())[0];
    // Only with the NodeNotReady event that says when it went bad: before the onset (or just after, within the alert's `for:`).
    const badAtOnset = !!wentBad && onset.getTime() - wentBad.getTime() <= CHANGE_WINDOW_MS && wentBad.getTime() - onset.getTime() <= AFTER_ONSET_MS;
    if (back > onset && badAtOnset && (!created || back.getTime() - created.getTime() > 10 * 60_000)) {
      return {
        node,
        name,
        condition: 'NotReady',
        reason: 'NodeNotReady',
        since: wentBad!,
        recoveredAt: back,
        evidence: [{ kind: 'object', summary: `node ${name}: Ready again only since ${clockTime(back)} (${relativeToOnset(back, onset)}): it was not Ready at the onset`, citation: readyCitation, observedAt: back }],
      };
    }
  }

  if (node.spec?.unschedulable) {
    const write = cordonWrite(node);
    const ev = nodeEventsOf(events, name).filter((e) => e.reason === 'NodeNotSchedulable').sort((a, b) => (eventTime(b)?.getTime() ?? 0) - (eventTime(a)?.getTime() ?? 0))[0];
    const since = write?.at ?? (ev ? eventFirstTime(ev) : undefined);
    return {
      node,
      name,
      condition: 'Unschedulable',
      reason: 'NodeNotSchedulable',
      ...(since ? { since } : {}),
      evidence: [
        {
          kind: write ? 'managed_fields' : 'object',
          summary: `node ${name} cordoned (spec.unschedulable: true)${write ? ` by ${write.manager} at ${clockTime(write.at)} (${relativeToOnset(write.at, onset)})` : ''}`,
          citation: objectCitation('Node', undefined, name, write ? `metadata.managedFields[${write.index}]` : 'spec.unschedulable'),
          ...(since ? { observedAt: since } : {}),
        },
        ...taintEvidence(taint(node, UNSCHEDULABLE_TAINT)),
      ],
    };
  }
  return undefined;
}

/** Pending candidate pods the scheduler could not place, with the event that says a node was unschedulable. */
function pendingForCordon(input: ClusterTriageInput, pods: CandidatePod[], events: CoreV1Event[]): { pods: CandidatePod[]; events: CoreV1Event[] } {
  const pending = pods.filter((p) => p.pod.status?.phase === 'Pending' && !p.pod.spec?.nodeName);
  const names = new Set(pending.map((p) => `${p.pod.metadata?.namespace}/${p.pod.metadata?.name}`));
  const evs = events.filter(
    (e) =>
      e.reason === 'FailedScheduling' &&
      names.has(`${e.involvedObject?.namespace ?? e.metadata?.namespace}/${e.involvedObject?.name}`) &&
      /node\(s\) were unschedulable|untolerated taint\(s\)?.*node\.kubernetes\.io\/unschedulable|node\.kubernetes\.io\/unschedulable/i.test(e.message ?? '') &&
      Math.abs((eventTime(e)?.getTime() ?? 0) - input.onset.getTime()) <= CHANGE_WINDOW_MS,
  );
  const blocked = new Set(evs.map((e) => `${e.involvedObject?.namespace ?? e.metadata?.namespace}/${e.involvedObject?.name}`));
  return { pods: pending.filter((p) => blocked.has(`${p.pod.metadata?.namespace}/${p.pod.metadata?.name}`)), events: evs };
}

export const nodeHealth: ClusterAnalyzer = {
  name: NAME,
  analyze(input: ClusterTriageInput): Finding[] {
    const onset = input.onset;
    const events = allEvents(input);
    const nodes = allNodes(input);
    if (!nodes.length) return [];
    const podNodes = new Map([...input.cluster.snapshot.pods, ...input.inputs.flatMap((i) => i.kube.pods)].map((p) => [`${p.metadata?.namespace}/${p.metadata?.name}`, p.spec?.nodeName] as const));
    const states = nodes.map((n) => stateOf(n, events, onset, (ns, pod) => podNodes.get(`${ns}/${pod}`))).filter((s): s is NodeState => !!s);
    if (!states.length) return [];
    const pods = candidatePods(input);
    const badNow = states.filter((s) => s.condition !== 'Unschedulable' && !s.recoveredAt);
    const healthy = nodes.filter((n) => !states.some((s) => s.name === n.metadata?.name)).map((n) => n.metadata?.name ?? '?');
    const out: Finding[] = [];

    for (const s of states) {
      const on = pods.filter((p) => p.pod.spec?.nodeName === s.name && isBound(p.pod));
      const cordonPending = s.condition === 'Unschedulable' ? pendingForCordon(input, pods, events) : { pods: [], events: [] };
      const component: ComponentRef = { kind: 'Node', name: s.name };
      const key = `${NAME}:/Node/${s.name}`;
      const nodeCitation = s.evidence[0]?.citation ?? objectCitation('Node', undefined, s.name, 'status.conditions');
      const delta = s.since ? onset.getTime() - s.since.getTime() : undefined;
      const near = delta !== undefined && delta <= CHANGE_WINDOW_MS && delta >= -AFTER_ONSET_MS;
      const what = s.recoveredAt ? `was NotReady at the onset (Ready again since ${clockTime(s.recoveredAt)})` : s.condition === 'Unschedulable' ? 'is cordoned' : s.condition === 'Unknown' ? 'stopped reporting (Ready Unknown)' : 'is NotReady';

      if (on.length === 0 && cordonPending.pods.length === 0) {
        // A cordoned node without consequence is routine maintenance; a dead node without candidates is noise.
        if (s.condition === 'Unschedulable' || s.recoveredAt) continue;
        out.push({
          key,
          analyzer: NAME,
          family: 'node-not-ready',
          status: 'unrelated',
          confidence: 0.05,
          title: `node ${s.name} ${what}`,
          component,
          mechanism: `Node ${s.name} ${what}${s.since ? ` since ${clockTime(s.since)}` : ''}${s.message ? ` ("${clip(s.message, 160)}")` : ''}.`,
          reason: 'it runs none of the pods of the workloads this alert reaches',
          facts: { node: s.name, condition: s.condition, podsOnNode: 0, reason: s.reason, ...(s.since ? { conditionSince: s.since.toISOString() } : {}) },
          supporting: [],
          refuting: s.evidence,
        });
        continue;
      }

      const supporting: Evidence[] = [...s.evidence];
      const refuting: Evidence[] = [];
      // The control plane's account: NodeNotReady/NodeNotSchedulable/Rebooted on the node, around the onset.
      const windowStart = Math.min(s.since?.getTime() ?? onset.getTime(), onset.getTime()) - 10 * 60_000;
      const nodeEvents = nodeEventsOf(events, s.name)
        .filter((e) => /NodeNotReady|NodeNotSchedulable|Rebooted|NodeStatusUnknown|ContainerRuntimeUnhealthy|KubeletNotReady/.test(e.reason ?? ''))
        .filter((e) => {
          const at = eventTime(e)?.getTime();
          return at !== undefined && at >= windowStart && at <= onset.getTime() + 15 * 60_000;
        })
        .sort((a, b) => (eventTime(b)?.getTime() ?? 0) - (eventTime(a)?.getTime() ?? 0))
        .slice(0, 2);
      supporting.push(...nodeEvents.map(eventEvidenceOf));
      // The candidates' pods on it: not Ready, Terminating (evicted, waiting for a kubelet that does not answer).
      const onNames = new Set(on.map((p) => `${p.pod.metadata?.namespace}/${p.pod.metadata?.name}`));
      const notReady = on.filter((p) => !podReady(p.pod));
      const terminating = on.filter((p) => !!p.pod.metadata?.deletionTimestamp);
      if (on.length) {
        const first = on[0]!.pod;
        supporting.push({
          kind: 'object',
          summary: `${on.length} candidate pod(s) bound to ${s.name}: ${on.slice(0, 5).map((p) => `${p.pod.metadata?.namespace}/${p.pod.metadata?.name}${p.pod.metadata?.deletionTimestamp ? ' (Terminating)' : !podReady(p.pod) ? ' (not Ready)' : ''}`).join(', ')}${on.length > 5 ? ', …' : ''}`,
          citation: objectCitation('Pod', first.metadata?.namespace, first.metadata?.name ?? '?', 'spec.nodeName'),
          detail: { pods: on.map((p) => `${p.pod.metadata?.namespace}/${p.pod.metadata?.name}`), notReady: notReady.length, terminating: terminating.length },
        });
      }
      const podEvents = events
        .filter((e) => e.involvedObject?.kind === 'Pod' && (e.reason === 'NodeNotReady' || e.reason === 'TaintManagerEviction') && onNames.has(`${e.involvedObject?.namespace ?? e.metadata?.namespace}/${e.involvedObject?.name}`))
        .sort((a, b) => (eventTime(b)?.getTime() ?? 0) - (eventTime(a)?.getTime() ?? 0))
        .slice(0, 2);
      supporting.push(...podEvents.map(eventEvidenceOf));
      if (cordonPending.pods.length) {
        supporting.push(...cordonPending.events.slice(0, 2).map(eventEvidenceOf));
      }
      if (healthy.length && s.condition !== 'Unschedulable') {
        supporting.push({ kind: 'object', summary: `other nodes Ready: ${healthy.slice(0, 6).join(', ')}${healthy.length > 6 ? ', …' : ''}`, citation: objectCitation('Node', undefined, healthy[0]!, 'status.conditions[type=Ready]') });
      }
      if (delta !== undefined && !near) {
        refuting.push({ kind: 'note', summary: `${s.name} ${what} since ${humanDuration(Math.abs(delta))} ${delta >= 0 ? 'before' : 'after'} the alert, not at its onset`, citation: nodeCitation });
      }
      const clusterWide = badNow.length > 1 && badNow.length === nodes.length && s.condition !== 'Unschedulable';
      if (clusterWide) refuting.push({ kind: 'note', summary: `every node (${nodes.length}) is not Ready: more likely the control plane or the network between it and the nodes than one node`, citation: nodeCitation });

      let status: Finding['status'];
      let confidence: number;
      if (s.condition === 'Unschedulable') {
        // A cordon only hurts when pods it sent away cannot land anywhere else.
        status = cordonPending.pods.length && (near || delta === undefined) ? 'supported' : 'open';
        confidence = status === 'supported' ? 0.75 : 0.3;
      } else if (s.recoveredAt) {
        status = 'open';
        confidence = 0.45;
      } else if (clusterWide) {
        status = 'open';
        confidence = 0.5;
      } else if (near) {
        status = 'supported';
        confidence = notReady.length || terminating.length || podEvents.length || nodeEvents.length ? 0.9 : 0.85;
      } else {
        status = 'inconclusive';
        confidence = delta === undefined ? 0.5 : 0.3;
      }

      const workloads = dedupeRefs([...on, ...cordonPending.pods].sort((a, b) => Number(b.analysed) - Number(a.analysed)).map((p) => p.workload));
      const affected = nodeScope(input, workloads);
      const podsOnNode = on.length;
      const facts: Record<string, string | number | boolean> = {
        node: s.name,
        condition: s.condition,
        podsOnNode,
        reason: s.reason,
        ...(s.since ? { conditionSince: s.since.toISOString() } : {}),
        ...(cordonPending.pods.length ? { pendingPods: cordonPending.pods.length } : {}),
      };
      const who = workloads.map((w) => `${w.kind.toLowerCase()}/${w.name}`).join(', ');
      out.push({
        key,
        analyzer: NAME,
        family: 'node-not-ready',
        status,
        confidence,
        title:
          s.condition === 'Unschedulable'
            ? `node ${s.name} is cordoned: ${cordonPending.pods.length ? `${cordonPending.pods.length} pod(s) of ${who} cannot be placed` : `${podsOnNode} pod(s) of ${who} keep running on it`}`
            : `node ${s.name} ${what}: ${podsOnNode} pod(s) of ${who} on it`,
        component,
        mechanism:
          `Node ${s.name} ${what}` +
          (s.since ? ` since ${clockTime(s.since)} (${relativeToOnset(s.since, onset)})` : '') +
          (s.condition !== 'Unschedulable' ? `, reason ${s.reason}${s.message ? `: "${clip(s.message, 160)}"` : ''}` : '') +
          (podsOnNode ? `; ${podsOnNode} pod(s) of ${who} are bound to it${notReady.length ? `, ${notReady.length} not Ready` : ''}${terminating.length ? `, ${terminating.length} Terminating (evicted, waiting for the kubelet)` : ''}` : '') +
          (cordonPending.pods.length ? `; ${cordonPending.pods.length} pod(s) of ${who} are Pending because the scheduler may not use it` : '') +
          (s.condition === 'Unknown' ? '. The kubelet stopped posting status (node down, kubelet crashed, or the network to the control plane is cut); after the toleration (300 s by default) its pods are evicted' : '') +
          (s.condition === 'NotReady' && !s.recoveredAt ? '. The kubelet reports itself not ready (container runtime, CNI or PLEG trouble): its pods stop receiving traffic' : '') +
          (healthy.length && s.condition !== 'Unschedulable' ? `. Other nodes (${healthy.slice(0, 4).join(', ')}${healthy.length > 4 ? ', …' : ''}) are Ready, so it is this node` : '') +
          '. Cordoning, draining or repairing the node is a human decision.',
        scope: `${who || 'workloads'} lose the capacity of ${s.name}${affected.some((a) => a.kind === 'Service') ? `; ${affected.filter((a) => a.kind === 'Service').map((a) => `service/${a.name}`).join(', ')} route to fewer endpoints` : ''}`,
        affected,
        facts,
        supporting,
        refuting,
        ...(status === 'supported' && s.condition !== 'Unschedulable' && !s.recoveredAt && healthy.length > 0 && workloads[0]?.namespace
          ? {
              mitigation: {
                action: 'cordon_node',
                // A Node has no namespace: the proposal carries the one of the workloads it hurts, which the policy judges it by.
                target: { kind: 'Node', namespace: workloads[0].namespace, name: s.name },
                params: {},
                command: `kubectl cordon ${s.name}`,
                rationale: `keep new pods of ${who || 'the workloads'} off ${s.name} (${what}), also when it flaps back to Ready; nothing is evicted, draining stays a human call`,
              },
            }
          : {}),
      });
    }
    return out;
  },
};

/**
 * `load-spike`: the candidate receives far more requests than usual (request rate ×3 or more over its
 * baseline, rising near the onset) and its latency or errors followed, with no deploy of its own to
 * blame. Who sends the extra traffic: a workload that calls it and was itself changed just before (a
 * load generator's users raised, a client's concurrency or retry settings edited), else nobody named.
 * Localised to that client when found, else to the saturated workload. Facts: `metric` (`request_rate`),
 * `before`, `after` (the peak), `ratio`, `client`, `changedAt`. A client changed by a rollout gets
 * `rollout_undo` to its previous revision; otherwise no mitigation (rate-limit or scale by hand).
 */
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import { nodeId, refOfId } from '../../topology/graph.js';
import type { Analyzer, TriageInput } from '../analyzer.js';
import { clockTime, humanDuration } from '../time.js';
import type { Finding } from '../types.js';
import { deploysOf, metricLabel, metricSymptoms, targetSymptoms } from './deploy-regression.js';
import { managedFieldChanges } from '../../changes/kubernetes.js';
import { objectCitation } from '../citations.js';
import { revisions, undoProposal } from './crash-loop.js';
import { emptyKubeEvidence, type KubeEvidence } from '../../evidence/kubernetes/gather.js';

const WINDOW_MS = 60 * 60_000;

export const loadSpike: Analyzer = {
  name: 'load-spike',
  analyze(input: TriageInput): Finding[] {
    const t = input.kube.target;
    if (!t || !input.kube.workload) return [];
    const rate = input.metrics?.summaries.find((s) => s.id === 'request_rate' && s.status === 'success');
    // The level the rise reached: a rollout of the client raises it in steps, so its peak, not the first step.
    const rises = metricSymptoms(rate, 'up')
      .filter((m) => m.before && m.after && input.onset.getTime() - m.start.getTime() <= WINDOW_MS)
      .map((m) => ({ ...m, after: Math.max(m.after!, m.series.max ?? 0) }));
    const symptoms = targetSymptoms(input);
    const followedBy = (start: Date) => symptoms.metrics.filter((m) => m.start.getTime() >= start.getTime() - 60_000);
    // ×3 alone; ×2.5 when latency or errors followed the rise (a retry storm triples attempts, not always requests).
    const up = rises.find((m) => m.after / m.before! >= 3 || (m.after / m.before! >= 2.5 && followedBy(m.start).length > 0));
    if (!up || !rate) return [];
    const followed = followedBy(up.start);
    // A deploy of its own right before the rise is the likelier story (a client retrying on new errors).
    const ownDeploy = deploysOf(input).find((d) => d.at.getTime() <= up.start.getTime() + 60_000 && up.start.getTime() - d.at.getTime() <= 10 * 60_000);
    if (ownDeploy) return [];
    const ratio = Math.round((up.after / up.before!) * 10) / 10;
    up.after = Math.round(up.after * 100) / 100;
    const client = changedClient(input, up.start);
    const component: ComponentRef = client?.ref ?? { kind: t.kind, namespace: t.namespace, name: t.name };
    const supporting: Evidence[] = [up.evidence, ...followed.slice(0, 2).map((m) => m.evidence)];
    if (client) supporting.push({ kind: 'change', summary: `${client.summary} at ${clockTime(client.at)}, ${humanDuration(up.start.getTime() - client.at.getTime())} before the traffic rose`, citation: client.citation, observedAt: client.at });
    // The client's rollout is what to undo when its previous revision is known (a timeout or retry setting shipped with it).
    // Its revisions from its own evidence when it is a candidate, else from the cluster's ReplicaSets.
    const clientKube = client ? input.cluster?.inputs?.find((i) => i.kube.target?.namespace === client.ref.namespace && i.kube.target?.name === client.ref.name)?.kube ?? clientEvidence(input, client.ref) : undefined;
    const clientRevs = clientKube ? revisions(clientKube) : undefined;
    const undo = client?.rollout && clientKube && clientRevs?.previous ? undoProposal(clientKube, clientRevs.previous, `${client.ref.name}'s rollout ${humanDuration(up.start.getTime() - client.at.getTime())} before ${t.name}'s traffic rose ×${ratio}: revision ${clientRevs.previous.revision} sent the usual load`) : undefined;
    // The extra load flows on through the target into what it calls, and their autoscalers react.
    const downstream = calleesOf(input);
    return [
      {
        key: `load-spike:${component.namespace}/${component.kind}/${component.name}`,
        analyzer: 'load-spike',
        family: 'load-spike',
        status: followed.length || client ? 'supported' : 'open',
        confidence: client ? 0.86 : followed.length ? 0.72 : 0.5,
        title: `${t.name} gets ${ratio}× its usual traffic${client ? ` from ${client.ref.name} since its change` : ''}`,
        component,
        mechanism: `${t.name}'s request rate rose from ${up.before} to ${up.after} req/s (×${ratio}) at ${clockTime(up.start)}${followed.length ? `; its ${followed.map((m) => metricLabel(m.metric)).join(' and ')} followed` : ''}${client ? `; ${client.ref.name} was changed just before (${client.summary})` : '; no deploy of its own explains it'}.`,
        scope: `${t.name} and everything that calls it`,
        affected: [{ kind: t.kind, namespace: t.namespace, name: t.name }, ...input.kube.services.map((s) => ({ kind: 'Service', namespace: t.namespace, name: s.service.metadata?.name ?? '?' })), ...input.kube.dependents.map((d) => ({ kind: d.kind, namespace: t.namespace, name: d.name })), ...downstream],
        facts: { metric: 'request_rate', before: up.before!, after: up.after, ratio, since: up.start.toISOString(), ...(client ? { client: client.ref.name, changedAt: client.at.toISOString(), overloads: t.name } : {}) },
        supporting,
        refuting: [],
        ...(undo ? { mitigation: undo } : {}),
      },
    ];
  },
};

/** The Services the target calls, the workloads behind them and their HPAs: one hop down. */
function calleesOf(input: TriageInput): ComponentRef[] {
  const c = input.cluster;
  const t = input.kube.target!;
  if (!c) return [];
  const out: ComponentRef[] = [];
  for (const e of c.topology.outgoing(nodeId({ kind: t.kind, namespace: t.namespace, name: t.name }))) {
    if (e.kind !== 'calls' || !e.to.startsWith('Service/')) continue;
    out.push(refOfId(e.to));
    for (const w of c.topology.outgoing(e.to).filter((x) => x.kind === 'selects')) {
      out.push(refOfId(w.to));
      for (const h of c.topology.outgoing(w.to).filter((x) => x.kind === 'scaled-by')) out.push(refOfId(h.to));
    }
  }
  return out.slice(0, 12);
}

/** A client's rollout history from the cluster's ReplicaSets, shaped as evidence for `revisions`. */
function clientEvidence(input: TriageInput, ref: ComponentRef): KubeEvidence | undefined {
  const s = input.cluster?.snapshot;
  const w = s?.deployments.find((d) => d.metadata?.namespace === ref.namespace && d.metadata?.name === ref.name);
  if (!s || !w) return undefined;
  const replicaSets = s.replicaSets.filter((r) => r.metadata?.namespace === ref.namespace && (r.metadata?.ownerReferences ?? []).some((o) => o.kind === 'Deployment' && o.name === ref.name));
  return { ...emptyKubeEvidence(input.onset, input.kube.server), target: { kind: 'Deployment', namespace: ref.namespace ?? '', name: ref.name }, workload: w, replicaSets };
}

/** A workload that calls the target and was edited (env, args, replicas) shortly before the traffic rose. */
function changedClient(input: TriageInput, start: Date): { ref: ComponentRef; summary: string; at: Date; citation: Evidence['citation']; rollout?: boolean } | undefined {
  const c = input.cluster;
  const t = input.kube.target!;
  if (!c) return undefined;
  const services = c.topology.incoming(nodeId({ kind: t.kind, namespace: t.namespace, name: t.name })).filter((e) => e.kind === 'selects').map((e) => e.from);
  const callers = new Set([...services, nodeId({ kind: t.kind, namespace: t.namespace, name: t.name })].flatMap((id) => c.topology.incoming(id).filter((e) => e.kind === 'calls').map((e) => e.from)));
  const self = nodeId({ kind: t.kind, namespace: t.namespace, name: t.name });
  for (const id of callers) {
    if (id === self) continue;
    const ref = refOfId(id);
    const w = [...c.snapshot.deployments, ...c.snapshot.statefulSets].find((d) => d.metadata?.namespace === ref.namespace && d.metadata?.name === ref.name);
    const near = (at: Date) => at.getTime() <= start.getTime() + 60_000 && start.getTime() - at.getTime() <= WINDOW_MS;
    const change = managedFieldChanges(ref.kind, ref.namespace, ref.name, w?.metadata?.managedFields)
      .filter((x) => near(x.at))
      .sort((a, b) => b.at.getTime() - a.at.getTime())[0];
    // A rollout (Helm or GitOps change to its settings) shows as a new ReplicaSet; Helm's own writes are not hand edits.
    const rs = c.snapshot.replicaSets
      .filter((r) => r.metadata?.namespace === ref.namespace && (r.metadata?.ownerReferences ?? []).some((o) => o.kind === ref.kind && o.name === ref.name) && r.metadata?.creationTimestamp && near(new Date(r.metadata.creationTimestamp)))
      .sort((a, b) => new Date(b.metadata!.creationTimestamp!).getTime() - new Date(a.metadata!.creationTimestamp!).getTime())[0];
    const rolledAt = rs?.metadata?.creationTimestamp ? new Date(rs.metadata.creationTimestamp) : undefined;
    if (rolledAt && (!change || rolledAt.getTime() >= change.at.getTime() - 60_000)) {
      const revision = rs!.metadata?.annotations?.['deployment.kubernetes.io/revision'];
      return { ref, summary: `${ref.kind.toLowerCase()}/${ref.name} rolled out${revision ? ` revision ${revision}` : ''} (ReplicaSet ${rs!.metadata?.name})`, at: rolledAt, citation: objectCitation('ReplicaSet', ref.namespace, rs!.metadata?.name ?? '?', 'metadata'), rollout: true };
    }
    if (change) return { ref, summary: change.summary, at: change.at, citation: change.citation ?? objectCitation(ref.kind, ref.namespace, ref.name) };
  }
  return undefined;
}

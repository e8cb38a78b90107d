/**
 * `load-spike`: the candidate receives far more requests than usual (request rate ×3 or more over its
 * baseline, rising near the onset) and its latency or errors followed, with no deploy of its own to
 * blame. Who sends the extra traffic: a workload that calls it and was itself changed just before (a
 * load generator's users raised, a client's concurrency or retry settings edited), else nobody named.
 * Localised to that client when found, else to the saturated workload. Facts: `metric` (`request_rate`),
 * `before`, `after`, `ratio`, `client`. No mitigation (rate-limit or scale by hand).
 */
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import { nodeId, refOfId } from '../../topology/graph.js';
import type { Analyzer, TriageInput } from '../analyzer.js';
import { clockTime, humanDuration } from '../time.js';
import type { Finding } from '../types.js';
import { deploysOf, metricLabel, metricSymptoms, targetSymptoms } from './deploy-regression.js';
import { managedFieldChanges } from '../../changes/kubernetes.js';
import { objectCitation } from '../citations.js';

const WINDOW_MS = 60 * 60_000;

export const loadSpike: Analyzer = {
  name: 'load-spike',
  analyze(input: TriageInput): Finding[] {
    const t = input.kube.target;
    if (!t || !input.kube.workload) return [];
    const rate = input.metrics?.summaries.find((s) => s.id === 'request_rate' && s.status === 'success');
    const up = metricSymptoms(rate, 'up').find((m) => m.before && m.after && m.after / m.before >= 3 && input.onset.getTime() - m.start.getTime() <= WINDOW_MS);
    if (!up || !rate) return [];
    const symptoms = targetSymptoms(input);
    const followed = symptoms.metrics.filter((m) => m.start.getTime() >= up.start.getTime() - 60_000);
    // A deploy of its own right before the rise is the likelier story (a client retrying on new errors).
    const ownDeploy = deploysOf(input).find((d) => d.at.getTime() <= up.start.getTime() + 60_000 && up.start.getTime() - d.at.getTime() <= 10 * 60_000);
    if (ownDeploy) return [];
    const ratio = Math.round((up.after! / up.before!) * 10) / 10;
    const client = changedClient(input, up.start);
    const component: ComponentRef = client?.ref ?? { kind: t.kind, namespace: t.namespace, name: t.name };
    const supporting: Evidence[] = [up.evidence, ...followed.slice(0, 2).map((m) => m.evidence)];
    if (client) supporting.push({ kind: 'change', summary: `${client.summary} at ${clockTime(client.at)}, ${humanDuration(up.start.getTime() - client.at.getTime())} before the traffic rose`, citation: client.citation, observedAt: client.at });
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
        affected: [{ kind: t.kind, namespace: t.namespace, name: t.name }, ...input.kube.services.map((s) => ({ kind: 'Service', namespace: t.namespace, name: s.service.metadata?.name ?? '?' }))],
        facts: { metric: 'request_rate', before: up.before!, after: up.after!, ratio, since: up.start.toISOString(), ...(client ? { client: client.ref.name } : {}) },
        supporting,
        refuting: [],
      },
    ];
  },
};

/** A workload that calls the target and was edited (env, args, replicas) shortly before the traffic rose. */
function changedClient(input: TriageInput, start: Date): { ref: ComponentRef; summary: string; at: Date; citation: Evidence['citation'] } | undefined {
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
    const change = managedFieldChanges(ref.kind, ref.namespace, ref.name, w?.metadata?.managedFields)
      .filter((x) => x.at.getTime() <= start.getTime() + 60_000 && start.getTime() - x.at.getTime() <= WINDOW_MS)
      .sort((a, b) => b.at.getTime() - a.at.getTime())[0];
    if (change) return { ref, summary: change.summary, at: change.at, citation: change.citation ?? objectCitation(ref.kind, ref.namespace, ref.name) };
  }
  return undefined;
}

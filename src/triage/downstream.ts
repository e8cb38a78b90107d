/**
 * The symptoms of the workloads that depend on a candidate: a fault in a cache, a flag service or a
 * config often shows nowhere on the faulty workload itself, only on its callers (the frontend's errors
 * after the cache's config edit). An analyzer whose own target shows nothing reads these instead, with
 * each piece of evidence naming whose symptom it is.
 */
import { nodeId } from '../topology/graph.js';
import { dependsOn } from '../topology/walk.js';
import { targetSymptoms, type Symptoms } from './analyzers/deploy-regression.js';
import type { TriageInput } from './analyzer.js';

export function dependentSymptoms(input: TriageInput): Symptoms & { from: string[] } {
  const out: Symptoms & { from: string[] } = { metrics: [], logs: [], metricsKnown: false, from: [] };
  const c = input.cluster;
  const t = input.kube.target;
  if (!c?.inputs || !t) return out;
  const me = { kind: t.kind, namespace: t.namespace, name: t.name };
  for (const other of c.inputs) {
    const o = other.kube.target;
    if (!o || nodeId(o) === nodeId(me) || !dependsOn(c.topology, o, me)) continue;
    const s = targetSymptoms(other);
    if (!s.metrics.length && !s.logs.length) continue;
    out.from.push(o.name);
    out.metricsKnown ||= s.metricsKnown;
    out.metrics.push(...s.metrics.map((m) => ({ ...m, evidence: { ...m.evidence, summary: `${o.name} (depends on ${t.name}): ${m.evidence.summary}` } })));
    out.logs.push(...s.logs.map((l) => ({ ...l, evidence: { ...l.evidence, summary: `${o.name} (depends on ${t.name}): ${l.evidence.summary}` } })));
  }
  const starts = [...out.metrics.map((m) => m.start), ...out.logs.map((l) => l.first).filter((d): d is Date => !!d)];
  if (starts.length) out.start = new Date(Math.min(...starts.map((d) => d.getTime())));
  return out;
}

/**
 * Other alerts that fired near the onset are the first look-alikes a responder checks ("memcached is
 * evicting, is that it?"). Each one whose component Vigil can place in the cluster is raised and, once the
 * origin is found elsewhere, cleared with what clears it: nothing links it to the alerted component, or the
 * origin does not depend on it. An alert on something the origin depends on is left alone (it may be the
 * real cause); one on a victim of the origin is not a separate problem and is not raised. Pure.
 */
import type { Alert } from '../alerts/types.js';
import type { ComponentRef, Evidence } from '../evidence/types.js';
import { nodeId, type Topology } from '../topology/graph.js';
import { resolveSubjects } from '../topology/subjects.js';
import { dependsOn } from '../topology/walk.js';
import type { ReconcileContext } from './reconcile.js';
import { clockTime, humanDuration } from './time.js';
import type { Finding } from './types.js';

/** An alert of another incident, as stored when it arrived. */
export interface OtherAlert {
  alert: Alert;
  firedAt: Date;
  /** The incident's resolved target when its own investigation found one. */
  target?: { namespace?: string; name: string };
  /** Where a person can see it (the alert post). */
  citation: { source: string; ref: string; url?: string };
}

/** How far before the onset another alert counts as a look-alike (the store query uses it too). */
export const OTHER_ALERTS_LOOKBACK_MS = 3 * 3600_000;
const AFTER_MS = 5 * 60_000;
const MAX_RAISED = 6;
const WORKLOADS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'CronJob', 'Job', 'Rollout']);

export function clearConcurrentAlerts(others: OtherAlert[], origins: Finding[], existing: Finding[], ctx: ReconcileContext): Finding[] {
  const t = ctx.topology;
  const originRefs = origins.map((o) => o.component).filter((c): c is ComponentRef => !!c);
  // Without an origin nothing is cleared: the other alert may be the cause.
  if (!originRefs.length) return [];
  const onset = ctx.onset.getTime();
  const victims = new Set(origins.flatMap((o) => (o.affected ?? []).map(nodeId)));
  const out: Finding[] = [];
  const seen = new Set<string>();
  for (const o of [...others].sort((a, b) => Math.abs(onset - a.firedAt.getTime()) - Math.abs(onset - b.firedAt.getTime()))) {
    if (out.length >= MAX_RAISED) break;
    const at = o.firedAt.getTime();
    if (at < onset - OTHER_ALERTS_LOOKBACK_MS || at > onset + AFTER_MS) continue;
    const component = placeOf(o, t);
    if (!component) continue;
    const id = nodeId(component);
    if (seen.has(id) || victims.has(id) || originRefs.some((r) => nodeId(r) === id)) continue;
    seen.add(id);
    if (existing.some((f) => f.component && nodeId(f.component) === id && f.status !== 'open')) continue;
    if (originRefs.some((r) => dependsOn(t, r, component))) continue; // the origin needs it: not ours to clear
    const reached = ctx.walk.reached.has(id) || ctx.subjects.some((s) => dependsOn(t, s.ref, component));
    const origin = originRefs[0]!;
    const when = `${humanDuration(Math.abs(onset - at))} ${at <= onset ? 'before' : 'after'} this alert`;
    const why = reached
      ? `${origin.kind.toLowerCase()}/${origin.name} (the origin) does not depend on ${component.kind.toLowerCase()}/${component.name}; its alert is a separate problem`
      : `no path from ${ctx.subjects.map((s) => s.ref.name).slice(0, 2).join(', ') || 'the alerted component'} to ${component.kind.toLowerCase()}/${component.name}`;
    const evidence: Evidence = { kind: 'note', summary: `${o.alert.alertName || o.alert.title} fired at ${clockTime(o.firedAt)} (${when})`, citation: o.citation, observedAt: o.firedAt };
    out.push({
      key: `cleared:alert:${id}`,
      analyzer: 'alert-review',
      status: reached ? 'ruled_out' : 'unrelated',
      confidence: 0.05,
      title: `${o.alert.alertName || o.alert.title} on ${component.name}, ${when}`,
      component,
      mechanism: `Another alert fired near the onset on ${component.kind.toLowerCase()}/${component.name} (${o.alert.alertName}); it looks like a cause and is not: ${why}.`,
      reason: why,
      facts: { alertName: o.alert.alertName, firedAt: o.firedAt.toISOString() },
      supporting: [],
      refuting: [evidence, ...(origins[0]?.supporting[0] ? [{ ...origins[0].supporting[0], summary: `the origin: ${origins[0].supporting[0].summary}` }] : [])],
    });
  }
  return out;
}

/** The workload an alert is about: its incident's resolved target, else what its labels and text name. */
function placeOf(o: OtherAlert, t: Topology): ComponentRef | undefined {
  if (o.target?.namespace) {
    for (const kind of WORKLOADS) {
      const ref = { kind, namespace: o.target.namespace, name: o.target.name };
      if (t.has(ref)) return ref;
    }
  }
  const subjects = resolveSubjects(o.alert, t);
  const direct = subjects.find((s) => WORKLOADS.has(s.ref.kind));
  if (direct) return direct.ref;
  const svc = subjects.find((s) => s.ref.kind === 'Service');
  if (!svc) return undefined;
  const selected = t.outgoing(nodeId(svc.ref)).find((e) => e.kind === 'selects');
  return selected ? t.nodes.get(selected.to)?.ref : svc.ref;
}

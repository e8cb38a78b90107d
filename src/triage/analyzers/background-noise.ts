import type { CoreV1Event, V1Pod } from '@kubernetes/client-node';
import type { Analyzer, TriageInput } from '../analyzer.js';
import { CHANGE_WINDOW_MS } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime, humanDuration } from '../time.js';
import type { Finding } from '../types.js';

const MAX_NOISE = 12;

function podProblem(p: V1Pod): { reason: string; since?: Date } {
  for (const c of p.status?.containerStatuses ?? []) {
    const waiting = c.state?.waiting?.reason;
    const last = c.lastState?.terminated;
    if (waiting) return { reason: `${waiting} (${c.restartCount ?? 0} restarts${last?.exitCode !== undefined ? `, last exit ${last.exitCode}` : ''})`, since: p.status?.startTime ? new Date(p.status.startTime) : undefined };
  }
  return { reason: p.status?.phase ?? 'unhealthy', since: p.status?.startTime ? new Date(p.status.startTime) : undefined };
}

/** The earliest sign of trouble we can date: the oldest matching warning event, else the pod's start. */
function troubleSince(p: V1Pod, events: CoreV1Event[]): Date | undefined {
  const times = events
    .filter((e) => e.involvedObject?.name === p.metadata?.name && e.involvedObject?.namespace === p.metadata?.namespace)
    .map((e) => e.firstTimestamp ?? e.eventTime ?? e.lastTimestamp)
    .filter((t): t is Date => !!t)
    .map((t) => new Date(t));
  if (times.length) return new Date(Math.min(...times.map((t) => t.getTime())));
  return p.status?.startTime ? new Date(p.status.startTime) : undefined;
}

/**
 * Real incidents come with background noise. Problems that are not this incident's cause — another
 * namespace with no path to the target, or trouble that started long before the onset — are listed as
 * unrelated with the reason, so nobody has to wonder whether Vigil saw them.
 */
/**
 * Without the cluster snapshot (a target-only investigation), another namespace than the target's stands
 * for "no path". With it, the cluster-level pass (triage/cluster/background.ts) decides on the graph.
 */
export const backgroundNoise: Analyzer = {
  name: 'background-noise',
  analyze({ kube, onset, cluster }: TriageInput): Finding[] {
    // With the cluster snapshot the cluster-level pass (triage/cluster/background.ts) sees everything once.
    if (cluster) return [];
    const t = kube.target;
    const out: Finding[] = [];
    const subjectText = t ? `${t.namespace}/${t.name}` : 'the alerted component';
    for (const p of kube.unhealthyPods) {
      const ns = p.metadata?.namespace ?? '';
      const name = p.metadata?.name ?? '';
      const since = troubleSince(p, kube.warningEvents);
      const longBefore = since && onset.getTime() - since.getTime() > CHANGE_WINDOW_MS;
      const isTargetPod = t && ns === t.namespace && kube.pods.some((tp) => tp.metadata?.name === name);
      const noPath = !!t && ns !== t.namespace;
      if (isTargetPod || !(noPath || longBefore)) continue;
      const problem = podProblem(p);
      const why = [
        noPath ? `no path from ${subjectText} to it${ns !== t?.namespace ? ` (namespace ${ns})` : ''}` : undefined,
        since ? `failing since ${clockTime(since)}, ${humanDuration(onset.getTime() - since.getTime())} before the alert` : undefined,
      ].filter(Boolean);
      out.push({
        key: `noise:pod:${ns}/${name}`,
        analyzer: 'background-noise',
        status: 'unrelated',
        confidence: 0.02,
        title: `${name} ${problem.reason.split(' (')[0]}`,
        component: { kind: 'Pod', namespace: ns, name },
        mechanism: `Pod ${ns}/${name} is ${problem.reason}.`,
        reason: why.join('; '),
        supporting: [],
        refuting: [
          {
            kind: 'object',
            summary: `pod ${ns}/${name}: ${problem.reason}`,
            citation: objectCitation('Pod', ns, name, 'status.containerStatuses'),
            observedAt: since,
          },
        ],
      });
    }

    // Old warnings still listed in the target namespace (events live for an hour by default, longer on some clusters).
    const seen = new Set<string>();
    for (const e of kube.events.filter((e) => e.type === 'Warning')) {
      const last = e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp;
      if (!last) continue;
      const at = new Date(last);
      if (onset.getTime() - at.getTime() <= CHANGE_WINDOW_MS) continue;
      const id = `${e.reason}:${e.involvedObject?.name}`;
      if (seen.has(id)) continue;
      seen.add(id);
      out.push({
        key: `noise:event:${e.metadata?.namespace}/${id}`,
        analyzer: 'background-noise',
        status: 'unrelated',
        confidence: 0.02,
        title: `old ${e.reason} warning on ${e.involvedObject?.kind?.toLowerCase()}/${e.involvedObject?.name}`,
        component: e.involvedObject?.name ? { kind: e.involvedObject.kind ?? 'Object', namespace: e.involvedObject.namespace, name: e.involvedObject.name } : undefined,
        mechanism: `Warning event ${e.reason}: ${e.message ?? ''}`.trim(),
        reason: `last seen ${humanDuration(onset.getTime() - at.getTime())} before the alert (${at.toISOString().slice(0, 16).replace('T', ' ')}), before the onset`,
        supporting: [],
        refuting: [
          {
            kind: 'event',
            summary: `event ${e.reason} ×${e.count ?? 1}, last ${at.toISOString().slice(0, 16).replace('T', ' ')}`,
            citation: objectCitation('Event', e.metadata?.namespace, e.metadata?.name ?? '?'),
            observedAt: at,
          },
        ],
      });
    }
    return out.slice(0, MAX_NOISE);
  },
};

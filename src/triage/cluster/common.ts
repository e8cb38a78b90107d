/**
 * What cluster-level analyzers share: log lines across every candidate (Kubernetes and Loki), events
 * by reason, an object's own changes from its managedFields, the alert's symptom start, and the
 * components an analyzer names in scope.
 */
import type { CoreV1Event, V1ObjectMeta } from '@kubernetes/client-node';
import { managedFieldChanges } from '../../changes/kubernetes.js';
import type { ChangeEvent } from '../../changes/types.js';
import type { Citation, ComponentRef, Evidence } from '../../evidence/types.js';
import type { ClusterTriageInput, TriageInput } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime } from '../time.js';
import { targetSymptoms } from '../analyzers/deploy-regression.js';

export interface LogHit {
  /** The workload whose logs it is. */
  workload: ComponentRef;
  pod?: string;
  container?: string;
  template: string;
  example: string;
  count: number;
  /** The line's level, when the miner read one. */
  level?: string;
  first?: Date;
  last?: Date;
  citation: Citation;
}

/** Log templates of every candidate (containers read through the API, and Loki) matching `re`, most frequent first. */
export function logHits(inputs: TriageInput[], re: RegExp): LogHit[] {
  const out: LogHit[] = [];
  for (const input of inputs) {
    const t = input.kube.target;
    if (!t) continue;
    const workload = { kind: t.kind, namespace: t.namespace, name: t.name };
    for (const c of input.kube.containerLogs) {
      for (const p of c.patterns) {
        if (!re.test(p.template) && !re.test(p.example)) continue;
        out.push({
          workload,
          pod: c.pod,
          container: c.container,
          template: p.template,
          example: p.example,
          count: p.count,
          ...(p.level ? { level: p.level } : {}),
          ...(p.first ? { first: p.first } : {}),
          ...(p.last ? { last: p.last } : {}),
          citation: { source: 'kubernetes', ref: `api/v1/namespaces/${t.namespace}/pods/${c.pod}/log?container=${c.container}${c.previous ? '&previous=true' : ''}` },
        });
      }
    }
    for (const s of input.logs?.summaries ?? []) {
      if (s.status !== 'success') continue;
      for (const p of [...s.errorPatterns, ...s.patterns]) {
        if (!re.test(p.template) && !re.test(p.example)) continue;
        if (out.some((h) => h.workload.name === t.name && h.template === p.template)) continue;
        out.push({ workload, template: p.template, example: p.example, count: p.count, ...(p.level ? { level: p.level } : {}), ...(p.first ? { first: p.first } : {}), ...(p.last ? { last: p.last } : {}), citation: s.citation });
      }
    }
  }
  return out.sort((a, b) => b.count - a.count);
}

export function logEvidence(h: LogHit, what = ''): Evidence {
  return {
    kind: 'log',
    summary: `${what}${what ? ': ' : ''}"${clip(h.example || h.template, 200)}" ×${h.count} in ${h.pod ? `${h.pod}/${h.container}` : h.workload.name}${h.first ? ` since ${clockTime(h.first)}` : ''}`,
    citation: h.citation,
    ...(h.first ? { observedAt: h.first } : {}),
    detail: { template: h.template, count: h.count, workload: `${h.workload.namespace}/${h.workload.name}` },
  };
}

/** Every event the investigation read (warnings cluster-wide, all events of the candidates' namespaces), deduplicated. */
export function allEvents(input: ClusterTriageInput): CoreV1Event[] {
  const seen = new Set<string>();
  const out: CoreV1Event[] = [];
  for (const e of [...input.cluster.snapshot.warningEvents, ...input.inputs.flatMap((i) => i.kube.events)]) {
    const k = `${e.metadata?.namespace}/${e.metadata?.name}`;
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(e);
  }
  return out;
}

export function eventTime(e: CoreV1Event): Date | undefined {
  const t = e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata?.creationTimestamp;
  return t ? new Date(t) : undefined;
}

export function eventFirstTime(e: CoreV1Event): Date | undefined {
  const t = e.firstTimestamp ?? e.eventTime ?? e.lastTimestamp ?? e.metadata?.creationTimestamp;
  return t ? new Date(t) : undefined;
}

export function eventEvidenceOf(e: CoreV1Event): Evidence {
  const at = eventTime(e);
  return {
    kind: 'event',
    summary: `event ${e.reason} ×${e.count ?? 1} on ${e.involvedObject?.kind?.toLowerCase()}/${e.involvedObject?.name}: "${clip(e.message ?? '', 220)}"${at ? ` (last ${clockTime(at)})` : ''}`,
    citation: objectCitation('Event', e.metadata?.namespace ?? e.involvedObject?.namespace, e.metadata?.name ?? '?'),
    ...(at ? { observedAt: at } : {}),
    detail: { reason: e.reason, count: e.count ?? 1, involved: `${e.involvedObject?.kind}/${e.involvedObject?.name}` },
  };
}

/** The hand-made changes of one object, newest first (managedFields). */
export function objectChanges(kind: string, meta: V1ObjectMeta | undefined): ChangeEvent[] {
  if (!meta?.name) return [];
  return managedFieldChanges(kind, meta.namespace, meta.name, meta.managedFields).sort((a, b) => b.at.getTime() - a.at.getTime());
}

/** The latest hand-made change of an object before `until` (plus skew), if any. */
export function lastChangeBefore(kind: string, meta: V1ObjectMeta | undefined, until: Date, skewMs = 120_000): ChangeEvent | undefined {
  return objectChanges(kind, meta).find((c) => c.at.getTime() <= until.getTime() + skewMs);
}

/** When the alerted components' symptoms began: the earliest deviation of a subject candidate's metrics, else the onset. */
export function symptomStart(input: ClusterTriageInput): Date {
  const starts = input.inputs
    .filter((i) => i.cluster?.candidate && input.cluster.walk.starts.some((s) => s.id === i.cluster!.candidate!.id))
    .map((i) => targetSymptoms(i).start)
    .filter((d): d is Date => !!d);
  return starts.length ? new Date(Math.min(...starts.map((d) => d.getTime()))) : input.onset;
}

/** Workload refs of the candidates (by id) that a predicate selects. */
export function candidateWorkloads(input: ClusterTriageInput, pick: (i: TriageInput) => boolean = () => true): ComponentRef[] {
  return input.inputs.filter(pick).map((i) => i.kube.target).filter((t): t is NonNullable<typeof t> => !!t).map((t) => ({ kind: t.kind, namespace: t.namespace, name: t.name }));
}

export function clip(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

export function changeEvidence(c: ChangeEvent, onset: Date): Evidence {
  const mins = Math.round((onset.getTime() - c.at.getTime()) / 60_000);
  return { kind: 'change', summary: `${c.summary} at ${clockTime(c.at)} (${mins >= 0 ? `${mins} min before` : `${-mins} min after`} the alert)`, citation: c.citation, observedAt: c.at };
}

import { readContext } from '../incidents/context.js';
import { actionsTaken, verifiedAt } from './actions.js';
import { deriveFollowUps } from './followups.js';
import { parseStored } from './json.js';
import { knownPeople } from './people.js';
import type { PostmortemRecord } from './record.js';
import { buildTimeline } from './timeline.js';
import type { EvidenceLine, Postmortem, RootCause, RuledOut, Source } from './types.js';

export { renderPostmortemMarkdown } from './markdown.js';
export { formatDuration } from './format.js';
export type * from './types.js';

/** The steering service prefixes a responder's reason; the postmortem names the responder itself. */
const STEERED_PREFIX = /^(?:ruled out|confirmed|marked unrelated) by a responder:\s*/i;

type Hyp = PostmortemRecord['incident']['investigations'][number]['hypotheses'][number];

function evidenceLines(h: Hyp): EvidenceLine[] {
  return h.evidence.map((e) => ({
    summary: e.summary,
    stance: e.stance === 'supports' || e.stance === 'refutes' ? e.stance : 'context',
    kind: e.kind,
    citation: { source: e.citationSource, ref: e.citationRef, ...(e.citationUrl ? { url: e.citationUrl } : {}) },
    ...(e.observedAt ? { observedAt: e.observedAt } : {}),
    source: { table: 'Evidence', id: e.id },
  }));
}

const componentOf = (h: Hyp): string | undefined =>
  h.componentKind && h.componentName ? `${h.componentKind} ${h.componentNs ? `${h.componentNs}/` : ''}${h.componentName}` : undefined;

/** The cause in one sentence: the mechanism when it is one short sentence, else the title. */
function oneSentence(h: Hyp): string {
  const m = h.mechanism.trim();
  const sentence = m.length <= 320 && !/\.\s+\S/.test(m) ? m : h.title;
  return /[.!?]$/.test(sentence) ? sentence : `${sentence}.`;
}

/**
 * The postmortem draft, from the stored record only (pure: the record's `loadedAt` stands in for "now").
 * The leading cause is the supported hypothesis with the highest confidence.
 */
export function draftPostmortem(record: PostmortemRecord): Postmortem {
  const inc = record.incident;
  const inv = inc.investigations[0];
  const ctx = inv ? readContext(inv.context) : {};
  const people = knownPeople(record);
  const hyps = inv?.hypotheses ?? [];
  const leading = hyps.filter((h) => h.status === 'supported').sort((a, b) => b.confidence - a.confidence || a.ordinal - b.ordinal)[0];

  const rootCause: RootCause | undefined = leading && {
    label: leading.label,
    title: leading.title,
    ...(componentOf(leading) ? { component: componentOf(leading) } : {}),
    mechanism: leading.mechanism,
    facts: parseStored<Record<string, unknown>>(leading.facts) ?? {},
    confidence: leading.confidence,
    ...(leading.steeredBy ? { steeredBy: leading.steeredBy } : {}),
    evidence: evidenceLines(leading),
    source: { table: 'Hypothesis', id: leading.id },
  };

  const ruledOut: RuledOut[] = hyps
    .filter((h) => h.status === 'ruled_out' || h.status === 'unrelated')
    .map((h) => ({
      label: h.label,
      title: h.title,
      status: h.status as 'ruled_out' | 'unrelated',
      ...(h.reason ? { reason: h.steeredBy ? h.reason.replace(STEERED_PREFIX, '') : h.reason } : {}),
      ...(h.steeredBy ? { steeredBy: h.steeredBy } : {}),
      evidence: evidenceLines(h),
      source: { table: 'Hypothesis', id: h.id },
    }));

  const actions = actionsTaken(record);
  const verified = actions.find((a) => a.status === 'executed' && a.verification?.ok);
  const mitigatedAt = verified ? verifiedAt(record, verified.requestId) : undefined;
  const firstAlert = inc.alerts.find((a) => a.status === 'firing');
  const startedAt = firstAlert?.receivedAt ?? inc.openedAt;
  const resolved = inc.status === 'resolved' && inc.resolvedAt ? inc.resolvedAt : undefined;
  const endedAt = resolved ?? record.loadedAt;
  const durationMs = Math.max(0, endedAt.getTime() - startedAt.getTime());
  const startSource: Source = firstAlert ? { table: 'Alert', id: firstAlert.id } : { table: 'Incident', id: inc.id, field: 'openedAt' };

  const target = ctx.target ? `${ctx.target.namespace}/${ctx.target.name}` : inc.namespace && inc.service ? `${inc.namespace}/${inc.service}` : undefined;
  const what = rootCause?.component ?? (ctx.target ? `${ctx.target.kind} ${target}` : target ?? 'an unidentified component');
  const escalation = ctx.escalation?.reason;
  const cause = leading
    ? oneSentence(leading)
    : `No cause was confirmed${escalation ? `: ${escalation}` : ''}.`;

  const affected = (parseStored<{ kind?: string; namespace?: string; name?: string }[]>(leading?.affected) ?? [])
    .filter((c) => c.name)
    .map((c) => `${c.kind ?? 'component'} ${c.namespace ? `${c.namespace}/` : ''}${c.name}`);
  const alertCount = inc.alerts.filter((a) => a.status === 'firing').length || inc.alertCount;

  return {
    incidentId: inc.id,
    title: inc.title,
    alertName: inc.alertName,
    ...(inc.severity ? { severity: inc.severity } : {}),
    ...(target ? { target } : {}),
    ...(ctx.owner ? { owner: ctx.owner } : {}),
    generatedAt: record.loadedAt,
    summary: {
      whatBroke: `${what}: ${inc.alertName}${inc.severity ? ` (${inc.severity})` : ''}`,
      cause,
      status: resolved ? 'resolved' : mitigatedAt ? 'mitigated' : 'open',
      startedAt,
      endedAt,
      ongoing: !resolved,
      durationMs,
      ...(mitigatedAt ? { mitigatedAt } : {}),
      sources: [{ table: 'Incident', id: inc.id }, startSource, ...(leading ? [{ table: 'Hypothesis' as const, id: leading.id }] : []), ...(verified ? [{ table: 'ApprovalRequest' as const, id: verified.requestId }] : [])],
    },
    impact: {
      ...(leading?.scope ? { scope: leading.scope } : {}),
      affected,
      alertCount,
      durationMs,
      sources: [...(leading ? [{ table: 'Hypothesis' as const, id: leading.id, field: 'scope' }] : []), ...inc.alerts.map((a) => ({ table: 'Alert' as const, id: a.id }))],
    },
    timeline: buildTimeline(record, people),
    ...(rootCause ? { rootCause } : {}),
    ruledOut,
    actions,
    followUps: deriveFollowUps(record, leading, rootCause, actions),
    gaps: ctx.gaps ?? [],
    people,
    ...(record.integrity && !record.integrity.ok ? { integrity: { ok: false as const, problems: record.integrity.problems } } : {}),
  };
}

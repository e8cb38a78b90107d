import type { Alert } from '../alerts/types.js';
import type { Db } from '../store/db.js';
import { proposedTarget } from '../approvals/policy-input.js';
import type { AnswerHypothesis, BoardFix, BoardHypothesis, BoardModel, BoardProcedure, IncidentAnswer, IncidentCardModel, InvestigationPhase, NextStep } from '../slack/blocks/models.js';
import type { PageStatus } from '../paging/index.js';
import { citedSkill, fillPlaceholders, skillSituation, type SkillLibrary } from '../knowledge/skills.js';
import type { HypothesisStatus, MitigationProposal } from '../triage/types.js';
import { readContext } from './context.js';
import { RULED_OUT_BY_RESPONDER, ruledOutByResponder } from './service.js';
import { linkCitation, type LinkSettings } from '../slack/blocks/links.js';

const STATUS_ORDER: Record<HypothesisStatus, number> = { supported: 0, open: 1, inconclusive: 2, ruled_out: 3, unrelated: 4 };

/** Everything the thread shows for one incident, read in one go. */
export async function loadIncidentRecord(db: Db, incidentId: string) {
  const incident = await db.incident.findUniqueOrThrow({
    where: { id: incidentId },
    include: {
      alerts: { orderBy: { receivedAt: 'asc' } },
      steering: { orderBy: { receivedAt: 'asc' } },
      posts: true,
      // Newest first: the board shows what became of the leading fix (planned, refused, withdrawn…).
      approvals: {
        orderBy: { createdAt: 'desc' },
        take: 50,
        select: { hypothesisKey: true, action: true, targetKind: true, targetNs: true, targetName: true, status: true, statusReason: true, decision: true, plan: true, handoff: true },
      },
      investigations: {
        orderBy: { startedAt: 'desc' },
        take: 1,
        include: { hypotheses: { include: { evidence: { orderBy: { createdAt: 'asc' } } }, orderBy: { ordinal: 'asc' } } },
      },
    },
  });
  return incident;
}

export type IncidentRecord = Awaited<ReturnType<typeof loadIncidentRecord>>;

/** Triage has produced its findings (the model step, if any, may still be running). */
const triaged = (step: string) => step === 'triaged' || step === 'deepened' || step === 'reported';

/**
 * Investigating → Triaged → Mitigating → Mitigated → Resolved, or Needs a human (nothing supported, or
 * handed over) and Investigation failed. Mitigating/Mitigated follow the newest fix request of the incident
 * (follow-up cards aside): approved or executing, then executed (and verified); a rollback undoes that.
 */
export function phaseOf(r: IncidentRecord): InvestigationPhase {
  if (r.status === 'resolved') return 'resolved';
  const inv = r.investigations[0];
  if (!inv) return 'investigating';
  if (inv.state === 'failed') return 'failed';
  // Held back by the throttle: nobody looked yet, a person decides (the card says why and how to start it).
  if (inv.state === 'skipped') return 'needs_human';
  const fix = r.approvals.find((q) => !q.hypothesisKey.startsWith('followup:'));
  if (fix && !fix.hypothesisKey.startsWith('rollback:')) {
    if (fix.status === 'approved' || fix.status === 'executing') return 'mitigating';
    if (fix.status === 'executed') return 'mitigated';
  }
  if (triaged(inv.step)) {
    const supported = inv.hypotheses.some((h) => h.status === 'supported');
    return supported && !escalationModel(r) ? 'triaged' : 'needs_human';
  }
  return 'investigating';
}

type HypothesisRow = IncidentRecord['investigations'][number]['hypotheses'][number];

/** Supported with cited supporting evidence: what the board shows as supported (see displayStatus). */
const standsBehind = (h: HypothesisRow): boolean => h.status === 'supported' && h.evidence.some((e) => e.stance === 'supports' && e.citationSource.trim() !== '' && e.citationRef.trim() !== '');

const byConfidence = (a: HypothesisRow, b: HypothesisRow) => b.confidence - a.confidence || a.ordinal - b.ordinal;

const named = (h: HypothesisRow): AnswerHypothesis => ({ label: h.label, title: h.title, confidence: h.confidence, ...(h.analyzer === 'model' ? { byModel: true } : {}) });

/**
 * The summary card's answer: what is wrong (the leading hypothesis Vigil stands behind, or "not sure yet"
 * with the best lead), what is affected, and what to do next (the fix as far as it went, or who to page).
 */
function answerOf(r: IncidentRecord, opts: CardOptions): IncidentAnswer {
  const inv = r.investigations[0];
  if (!inv) return { next: { kind: 'wait' } };
  const hs = inv.hypotheses;
  const leading = hs.filter(standsBehind).sort(byConfidence)[0];
  const lead = leading ? undefined : hs.filter((h) => h.status === 'open' || h.status === 'inconclusive' || h.status === 'supported').sort(byConfidence)[0];
  const settled = hs.filter((h) => h.status === 'ruled_out' || h.status === 'unrelated').length;
  const escalation = escalationModel(r);
  const phase = phaseOf(r);
  let next: NextStep;
  if (phase === 'resolved') next = { kind: 'done' };
  else if (phase === 'failed' || inv.state === 'skipped') next = { kind: 'retry' };
  else if (leading?.mitigation && (phase !== 'needs_human' || !escalation)) {
    const fix = boardFix(r, { analyzer: leading.analyzer, mitigation: leading.mitigation }, opts);
    const proposal = JSON.parse(leading.mitigation) as MitigationProposal;
    next = { kind: 'fix', fix, action: proposal.action, ...(fix.risk !== undefined ? { risk: fix.risk } : {}), ...(fix.state === 'suggested' ? { suggested: proposal.command } : {}) };
  } else if (escalation) {
    const ctx = readContext(inv.context);
    const paged = (opts.pages ?? []).filter((p) => p.state === 'paged').map((p) => p.label);
    next = { kind: 'page', ...(ctx.owner ? { owner: ctx.owner } : {}), reason: escalation.reason, ...(paged.length ? { paged } : {}) };
  } else if (leading && triaged(inv.step)) next = { kind: 'no_fix' };
  else next = { kind: 'wait' };
  return {
    ...(leading ? { leading: named(leading) } : {}),
    ...(lead ? { lead: named(lead) } : {}),
    ...(hs.length ? { counts: { active: hs.length - settled, settled } } : {}),
    ...(leading?.scope ? { affected: leading.scope } : {}),
    next,
  };
}

/** The summary card also needs the board's options (how far a fix went) and who was paged. */
export interface CardOptions extends BoardOptions {
  pages?: PageStatus[];
}

export function incidentCard(r: IncidentRecord, opts: CardOptions = {}): IncidentCardModel {
  const inv = r.investigations[0];
  const ctx = inv ? readContext(inv.context) : {};
  const first = r.alerts[0];
  const alert = first ? (JSON.parse(first.payload) as Alert) : undefined;
  const target = ctx.target ? `${ctx.target.namespace}/${ctx.target.name}` : r.namespace ?? undefined;
  return {
    incidentId: r.id,
    title: r.title,
    alertName: r.alertName,
    status: r.status === 'resolved' ? 'resolved' : 'open',
    phase: phaseOf(r),
    severity: r.severity ?? undefined,
    target,
    source: r.source,
    ...(ctx.owner ? { owner: ctx.owner } : {}),
    ...(ctx.traceId ? { traceId: ctx.traceId } : {}),
    openedAt: r.openedAt,
    firstCardAfterSec: ctx.firstCardMs !== undefined ? Math.round(ctx.firstCardMs / 100) / 10 : undefined,
    alertCount: r.alerts.filter((a) => a.status === 'firing').length || r.alertCount,
    lastAlertAt: r.lastAlertAt,
    resolvedAt: r.resolvedAt ?? undefined,
    alertLink: alert?.link,
    notice: inv?.state === 'failed' ? failedNotice(inv.lastError) : ctx.notice,
    ...(ctx.model?.spend
      ? { modelTokens: { incident: ctx.model.spend.incidentTokens, incidentCap: ctx.model.spend.incidentCap, day: ctx.model.spend.dayTokens, dayCap: ctx.model.spend.dayCap, ...(ctx.model.spend.exhausted ? { exhausted: ctx.model.spend.exhausted } : {}) } }
      : {}),
    answer: answerOf(r, opts),
  };
}

/** A stopped investigation says what stopped it and what a responder can do next. */
function failedNotice(lastError: string | null): string {
  return `Investigation stopped: ${lastError ?? 'unknown error'}. To try again, reply in this thread or run \`/sre investigate <link to the alert post>\` (the alert firing again retries too); if it stops again, investigate by hand and ask whoever runs Vigil to check its logs.`;
}

/** Board options: with a write policy every fix goes through the planner and the policy before any command shows. */
export interface BoardOptions {
  fixesNeedApproval?: boolean;
  /** Where citations link to (a graph, a commit, a console page) or the command that shows them. */
  links?: LinkSettings;
  /** The team's skills: the one that applies to the leading hypothesis is cited, with its follow-up checks. */
  skills?: SkillLibrary;
}

/** Follow-up steps of a cited skill shown on the board (the rest are in its file). */
const PROCEDURE_STEPS = 4;

/**
 * The skill the board cites, recomputed from the stored record (the alert, the target, the hypotheses):
 * selection is deterministic, so the board names the procedure the model was given for the same findings,
 * and follows the board when a responder rules the leading hypothesis out.
 */
function boardProcedure(r: IncidentRecord, skills: SkillLibrary): BoardProcedure | undefined {
  const inv = r.investigations[0];
  if (!inv) return undefined;
  const ctx = readContext(inv.context);
  let alert: Partial<Alert> = {};
  try {
    alert = r.alerts[0] ? (JSON.parse(r.alerts[0].payload) as Alert) : {};
  } catch {
    alert = {};
  }
  const component = (h: (typeof inv.hypotheses)[number]) => (h.componentKind && h.componentName ? { kind: h.componentKind, ...(h.componentNs ? { namespace: h.componentNs } : {}), name: h.componentName } : undefined);
  const findings = inv.hypotheses.map((h) => ({ key: h.key, family: h.family, analyzer: h.analyzer, status: h.status, confidence: h.confidence, component: component(h) }));
  const situation = skillSituation({ alert: { ...alert, alertName: alert.alertName ?? r.alertName }, target: ctx.target, findings, services: [r.service] });
  const m = citedSkill(skills.select(situation), situation);
  if (!m) return undefined;
  const leading = m.leading ? inv.hypotheses.filter((h) => h.status === 'supported').sort((a, b) => b.confidence - a.confidence)[0] : undefined;
  const where = (leading && component(leading)) ?? ctx.target;
  return {
    title: m.skill.title,
    file: m.skill.file,
    ...(leading ? { hypothesis: leading.label } : {}),
    steps: m.skill.followUps.slice(0, PROCEDURE_STEPS).map((s) => fillPlaceholders(s, where)),
  };
}

const OVER: Record<string, string> = { withdrawn: 'withdrawn', closed: 'closed', expired: 'expired', cancelled: 'cancelled', rejected: 'rejected' };

/**
 * What became of the leading fix, from its latest approval request for the same change. Only a plan the
 * policy accepted carries a command; a refusal carries its rule and reason, nothing the proposal wrote.
 */
function boardFix(r: IncidentRecord, leading: { analyzer: string; mitigation: string }, opts: BoardOptions): BoardFix {
  const m = JSON.parse(leading.mitigation) as MitigationProposal;
  const author = leading.analyzer === 'model' ? 'model' : 'vigil';
  const t = proposedTarget(m);
  const req = r.approvals.find(
    (q) => q.action === m.action && q.targetKind === t.kind && q.targetNs === t.namespace && q.targetName === t.name && !q.hypothesisKey.startsWith('rollback:') && !q.hypothesisKey.startsWith('followup:'),
  );
  if (!req && opts.fixesNeedApproval && r.status === 'resolved') return { author, state: 'over', status: 'not proposed: the incident resolved' };
  if (!req) return { author, state: opts.fixesNeedApproval ? 'checking' : 'suggested' };
  const reason = (req.statusReason ?? '').replace(/^(refused|cannot run|withdrawn|closed|expired):\s*/i, '');
  if (req.status === 'refused') {
    const d = JSON.parse(req.decision) as { kind?: string; code?: string; rule?: string; reason?: string };
    if (d.kind === 'deny' && d.code !== 'invalid_proposal') {
      return { author, state: 'refused', status: `refused by policy: ${(d.reason ?? reason).replace(/^refused:\s*/i, '')}${d.rule ? ` (rule ${d.rule})` : ''}` };
    }
    return { author, state: 'refused', status: `refused by the planner: ${reason || 'the plan is not executable'}` };
  }
  const over = OVER[req.status];
  // Vigil does not propose that change again on its own after a responder's rule-out: say how to get it back.
  const hint = req.status === 'withdrawn' && reason.includes(RULED_OUT_BY_RESPONDER) ? '. Confirm a hypothesis that proposes it to get a fresh card' : '';
  if (over) return { author, state: 'over', status: `${over}${reason ? `: ${reason}` : ''}${hint}` };
  const plan = req.plan ? (JSON.parse(req.plan) as { command?: string; risk?: { score?: number } }) : undefined;
  const command = plan?.command;
  const risk = typeof plan?.risk?.score === 'number' ? plan.risk.score : undefined;
  const status =
    req.status === 'pending' && req.handoff === 'plan' ? 'awaiting the executor (split mode): it plans the change as itself and posts the approval card'
    : req.status === 'pending' ? 'waiting for approval on its card in this thread'
    : req.status === 'executed' ? 'executed and verified'
    : req.status === 'failed' ? `failed${reason ? `: ${reason}` : ''}`
    : 'approved, executing';
  return { author, state: 'planned', ...(command ? { command } : {}), ...(risk !== undefined ? { risk } : {}), request: req.status, status };
}

export function boardModel(r: IncidentRecord, opts: BoardOptions = {}): BoardModel | undefined {
  const inv = r.investigations[0];
  if (!inv || (inv.hypotheses.length === 0 && !triaged(inv.step))) return undefined;
  const ctx = readContext(inv.context);
  const hypotheses: BoardHypothesis[] = [...inv.hypotheses]
    .sort((a, b) => STATUS_ORDER[a.status as HypothesisStatus] - STATUS_ORDER[b.status as HypothesisStatus] || b.confidence - a.confidence || a.ordinal - b.ordinal)
    .map((h) => ({
      id: h.id,
      label: h.label,
      status: h.status as HypothesisStatus,
      confidence: h.confidence,
      title: h.title,
      component: h.componentKind && h.componentName ? { kind: h.componentKind, namespace: h.componentNs ?? undefined, name: h.componentName } : undefined,
      mechanism: h.mechanism,
      scope: h.scope ?? undefined,
      reason: h.reason ?? undefined,
      steeredBy: h.steeredBy ?? undefined,
      ...(h.analyzer === 'model' ? { byModel: true } : {}),
      evidence: h.evidence.map((e) => ({
        summary: e.summary,
        stance: e.stance as 'supports' | 'refutes' | 'context',
        citation: linkCitation(
          {
            source: e.citationSource,
            ref: e.citationRef,
            url: e.citationUrl ?? undefined,
            range: e.rangeFrom && e.rangeTo ? { from: e.rangeFrom, to: e.rangeTo } : undefined,
          },
          opts.links,
        ),
      })),
    }));
  const leading = inv.hypotheses.filter((h) => h.status === 'supported').sort((a, b) => b.confidence - a.confidence)[0];
  return {
    incidentId: r.id,
    hypotheses,
    scope: leading?.scope ?? undefined,
    mitigation: leading?.mitigation ? (JSON.parse(leading.mitigation) as MitigationProposal) : undefined,
    ...(leading?.mitigation ? { fix: boardFix(r, { analyzer: leading.analyzer, mitigation: leading.mitigation }, opts) } : {}),
    updatedAt: inv.updatedAt,
    steering: r.steering.map((s) => ({ userId: s.userId, text: s.text, at: s.receivedAt })),
    gaps: ctx.gaps ?? [],
    changes: (ctx.changes ?? []).filter((c) => c.score >= 0.05).map((c) => ({ at: new Date(c.at), summary: c.summary, why: c.why })),
    ...withProcedure(r, opts),
  };
}

function withProcedure(r: IncidentRecord, opts: BoardOptions): { procedure?: BoardProcedure } {
  const procedure = opts.skills ? boardProcedure(r, opts.skills) : undefined;
  return procedure ? { procedure } : {};
}

/** The handover card's content, when the investigation decided to escalate. */
export function escalationModel(r: IncidentRecord) {
  const inv = r.investigations[0];
  if (!inv || r.status === 'resolved') return undefined;
  const ctx = readContext(inv.context);
  const escalation = ctx.escalation ?? ruledOutEscalation(inv);
  if (!escalation) return undefined;
  const toolsUsed = ctx.model ? [`model ${ctx.model.name}: ${ctx.model.steps} steps, ${ctx.model.toolCalls} tool calls`] : [];
  return {
    ...(ctx.owner ? { owner: ctx.owner } : {}),
    ...(ctx.traceId ? { traceId: ctx.traceId } : {}),
    reason: escalation.reason,
    checked: [
      ...(ctx.target ? [`Kubernetes: ${ctx.target.kind.toLowerCase()}/${ctx.target.name} in ${ctx.target.namespace}, its pods, events, services, config and changes`] : ['Kubernetes: the alert matched no workload']),
      ...inv.hypotheses.filter((h) => h.status !== 'ruled_out' && h.status !== 'unrelated').map((h) => `${h.label} ${h.title} (${h.status})`),
      ...toolsUsed,
    ],
    ruledOut: inv.hypotheses.filter((h) => h.status === 'ruled_out').map((h) => `${h.label} ${h.title}${h.reason ? ` — ${h.reason}` : ''}`),
    couldNotAccess: [...new Set([...escalation.couldNotAccess, ...(ctx.gaps ?? [])])],
  };
}

/**
 * A responder ruled out every hypothesis that was supported (the only one, typically) and nothing else is: Vigil
 * has no explanation left, so the thread is handed over (and paged, src/paging) as when nothing was supported.
 */
function ruledOutEscalation(inv: IncidentRecord['investigations'][number]): { reason: string; couldNotAccess: string[] } | undefined {
  if (!triaged(inv.step) || inv.hypotheses.some((h) => h.status === 'supported')) return undefined;
  const out = inv.hypotheses.filter((h) => ruledOutByResponder(h));
  if (out.length === 0) return undefined;
  const names = out.map((h) => h.label).join(', ');
  return { reason: `a responder ruled out ${out.length === 1 ? `the only supported hypothesis (${names})` : `the supported hypotheses (${names})`} and nothing else is supported`, couldNotAccess: [] };
}

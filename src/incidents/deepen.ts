import type { Logger } from 'pino';
import { z } from 'zod';
import { runAgent, type AgentEvent, type AgentResult } from '../agent/loop.js';
import { agentNotice } from '../agent/notice.js';
import type { BudgetLimits } from '../agent/budget.js';
import { parseSteering, type SteeringMessage } from '../agent/steering.js';
import { boardVerdicts } from './verdicts.js';
import type { ModelProvider } from '../agent/types.js';
import type { EvidenceTool } from '../evidence/tool.js';
import { SKILLS_BRIEF_CHARS, skillsBrief, skillSituation, type SkillLibrary } from '../knowledge/skills.js';
import type { Redactor } from '../redact/index.js';
import type { Finding } from '../triage/types.js';
import type { Db, SteeringMessage as SteeringRow } from '../store/db.js';
import type { DbTx } from '../store/tx.js';
import { recordAudit } from './audit.js';
import { readContext, type InvestigationContext } from './context.js';
import { storeFindings } from './findings.js';
import type { InvestigationOutcome } from './investigate.js';
import { readSpend, tokenAllowance, type TokenCaps } from './spend.js';

/** A gap that says Vigil was not allowed to read something (RBAC 403, GitHub 403/404 for a private repo…). */
const FORBIDDEN = /\b(403|forbidden|cannot (get|list|watch)|lacks permission|not allowed)\b/i;

/**
 * Hand over to people when no supported hypothesis reaches the threshold, or when a read Vigil needed
 * was forbidden (it may be exactly where the cause is).
 */
/** Reads whose refusal leaves the diagnosis standing: Helm release Secrets (history and previous values). */
const OPTIONAL_READ = /resource "secrets"|helm release|sh\.helm\.release/i;

export function escalationFor(findings: Finding[], threshold: number, gaps: string[] = []): { reason: string; couldNotAccess: string[] } | undefined {
  const supported = findings.filter((f) => f.status === 'supported');
  const best = Math.max(0, ...supported.map((f) => f.confidence));
  const forbidden = gaps.filter((g) => FORBIDDEN.test(g));
  // Helm release history (Secrets) is context, not evidence a diagnosis needs: a confident diagnosis is not
  // handed over because it was refused; anything else forbidden is (it may hide the cause).
  const needed = forbidden.filter((g) => !OPTIONAL_READ.test(g));
  if (best >= threshold && needed.length === 0) return undefined;
  const reasons = [
    ...(best < threshold ? [supported.length ? `the best hypothesis has confidence ${best.toFixed(2)}, below ${threshold}` : 'no hypothesis is supported by evidence'] : []),
    ...(forbidden.length ? [`Vigil was not allowed to read ${forbidden.length === 1 ? 'something it needed' : `${forbidden.length} things it needed`}`] : []),
  ];
  return { reason: reasons.join('; '), couldNotAccess: forbidden };
}

/**
 * What skills are matched against for a triaged investigation: the alert, the resolved target, the
 * deterministic findings and the catalog service. The board builds the same situation from the stored
 * record (views.ts), so it cites the skill the model was given.
 */
export function investigationSkillSituation(outcome: Pick<InvestigationOutcome, 'input' | 'findings' | 'target'>) {
  const { input } = outcome;
  return skillSituation({ alert: input.alert, target: outcome.target ?? input.kube.target, findings: outcome.findings, services: [input.service?.name] });
}

/** What the model step needs beyond the investigation's own record. */
export interface ModelStepDeps {
  db: Db;
  provider: ModelProvider;
  tools: EvidenceTool[];
  budget: Partial<BudgetLimits>;
  /** Below this confidence (and no supported hypothesis), hand over to the owners. */
  escalationConfidence: number;
  redactor: Redactor;
  log: Logger;
  now: () => Date;
  /** Each tool and model call, for the traces. */
  trace?: (e: AgentEvent) => void;
  /** Aborts the model loop (the runner lost its lease); nothing is stored then. */
  signal?: AbortSignal;
  /** Called first in the transaction that stores the result; throws when this worker may no longer write. */
  hold?: (tx: DbTx) => Promise<void>;
  /** The team's skills: those that apply to the investigation go into the model's brief. */
  skills?: SkillLibrary;
  /** Token caps per incident and per day, shared through the store (spend.ts); absent: this run's budget only. */
  caps?: TokenCaps;
}

/**
 * `Investigation.context.steeringSeen`: ids of the steering messages the model step has read (in its
 * brief or between steps). A reply not among them arrived too late for the run that just reported.
 */
const steeringSeenSchema = z.array(z.string());

const toSteering = (s: SteeringRow): SteeringMessage => ({ userId: s.userId, ...(s.userName ? { userName: s.userName } : {}), text: s.text, at: s.receivedAt });

/** Board commands ("rule out H2", "confirm H1", "pin H1") are applied at once and need no new model run. */
const BOARD_COMMANDS = new Set(['rule_out', 'confirm', 'pin']);

/**
 * Replies for the model that the last model step did not read: the steering that calls for another run.
 * 0 when no model step recorded what it read (nothing to compare against).
 */
export async function unreadSteering(db: Db, investigationId: string, incidentId: string): Promise<number> {
  const inv = await db.investigation.findUniqueOrThrow({ where: { id: investigationId }, select: { context: true } });
  const seen = steeringSeenSchema.safeParse(readContext(inv.context).steeringSeen);
  if (!seen.success) return 0;
  const unread = await db.steeringMessage.findMany({ where: { incidentId, id: { notIn: seen.data } }, select: { text: true } });
  return unread.filter((s) => !BOARD_COMMANDS.has(parseSteering(s.text).kind)).length;
}

/**
 * Deepen deterministic triage with the model loop: same read-only tools, within budgets, steered by
 * every responder's replies. The model's hypotheses join the board beside the analyzers'; when the
 * model is unavailable the investigation stays on deterministic triage and the thread says so.
 */
export async function deepenWithModel(deps: ModelStepDeps, investigationId: string, incidentId: string, outcome: InvestigationOutcome): Promise<AgentResult> {
  const { db, redactor } = deps;
  const [hyps, steering] = await Promise.all([
    db.hypothesis.findMany({ where: { investigationId }, select: { key: true, label: true } }),
    db.steeringMessage.findMany({ where: { incidentId }, orderBy: { receivedAt: 'asc' } }),
  ]);
  const seen = new Set(steering.map((s) => s.id));
  const replies = steering.map(toSteering);
  // Verdicts given with the board's buttons reach the model as the replies they stand for.
  let verdicts = await boardVerdicts(db, incidentId, replies);
  // Replies and clicks that arrive while the model works reach it before its next request.
  const pollSteering = async (): Promise<SteeringMessage[]> => {
    try {
      const rows = await db.steeringMessage.findMany({ where: { incidentId, id: { notIn: [...seen] } }, orderBy: { receivedAt: 'asc' } });
      for (const r of rows) seen.add(r.id);
      const fresh = rows.map(toSteering);
      replies.push(...fresh);
      verdicts = await boardVerdicts(db, incidentId, replies, verdicts.lastId);
      return [...fresh, ...verdicts.messages].sort((a, b) => a.at.getTime() - b.at.getTime());
    } catch (err) {
      // Unread replies are not lost: the runner investigates again with them after the report.
      deps.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not read new steering');
      return [];
    }
  };
  const audit = (e: AgentEvent) => {
    deps.trace?.(e);
    const data = redactor.redactValue(e as unknown as Record<string, unknown>);
    void recordAudit(db, { incidentId, actor: 'vigil', kind: `agent.${e.type}`, data }).catch((err: unknown) => deps.log.warn({ err: String(err) }, 'audit write failed'));
  };
  const skills = deps.skills ? skillsBrief(deps.skills.select(investigationSkillSituation(outcome)), SKILLS_BRIEF_CHARS, { bestOnly: true }) : '';
  const result = await runAgent({
    provider: deps.provider,
    tools: deps.tools,
    input: outcome.input,
    findings: outcome.findings,
    labels: Object.fromEntries(hyps.map((h) => [h.key, h.label])),
    gaps: outcome.gaps,
    steering: [...replies, ...verdicts.messages].sort((a, b) => a.at.getTime() - b.at.getTime()),
    pollSteering,
    budget: deps.budget,
    redactor,
    onEvent: audit,
    now: deps.now,
    ...(skills ? { skills } : {}),
    ...(deps.signal ? { signal: deps.signal } : {}),
    ...(deps.caps ? { allowance: tokenAllowance(db, incidentId, deps.caps, deps.now) } : {}),
  });
  if (result.status === 'stopped' && deps.signal?.aborted) throw deps.signal.reason;

  const escalate = result.escalate ?? escalationFor([...outcome.findings, ...result.findings], deps.escalationConfidence, outcome.gaps);

  // What the card's budget line shows: the shared totals as this run left them.
  const spent = deps.caps ? await readSpend(db, incidentId, deps.caps, deps.now()) : undefined;
  const exhausted = result.sharedCap?.scope;
  const redactNotice = (n: string | undefined) => (n === undefined ? undefined : redactor.redactText(n));
  await db.$transaction(async (tx) => {
    await deps.hold?.(tx);
    if (result.findings.length) await storeFindings(tx, investigationId, result.findings, redactor);
    const inv = await tx.investigation.findUniqueOrThrow({ where: { id: investigationId } });
    const ctx = readContext(inv.context);
    const model: NonNullable<InvestigationContext['model']> = {
      provider: deps.provider.name,
      name: deps.provider.model,
      status: result.status,
      steps: result.steps,
      toolCalls: result.toolCalls,
      inputTokens: result.usage.inputTokens,
      outputTokens: result.usage.outputTokens,
      costUsd: result.usage.costUsd,
      ...(result.summary ? { summary: redactor.redactText(result.summary) } : {}),
      ...(spent
        ? {
            spend: {
              incidentTokens: spent[0]!.used,
              incidentCap: spent[0]!.cap,
              dayTokens: spent[1]!.used,
              dayCap: spent[1]!.cap,
              ...(exhausted ? { exhausted } : {}),
            },
          }
        : {}),
    };
    const next: InvestigationContext = {
      ...ctx,
      model,
      steeringSeen: [...seen],
      // What went wrong with the model, or what was cut from its diagnosis (agent/notice.ts).
      notice: redactNotice(agentNotice(result)) ?? ctx.notice,
      ...(escalate ? { escalation: { reason: redactor.redactText(escalate.reason), couldNotAccess: escalate.couldNotAccess.map((g) => redactor.redactText(g)) } } : {}),
    };
    await tx.investigation.update({ where: { id: investigationId }, data: { context: JSON.stringify(next) } });
    await recordAudit(tx, {
      incidentId,
      actor: 'vigil',
      kind: 'agent.completed',
      data: { status: result.status, steps: result.steps, toolCalls: result.toolCalls, usage: result.usage, findings: result.findings.map((f) => ({ key: f.key, status: f.status, confidence: f.confidence })) },
    });
  });
  return result;
}

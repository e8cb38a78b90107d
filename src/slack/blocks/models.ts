import type { Citation, ComponentRef } from '../../evidence/types.js';
import type { HypothesisStatus, MitigationProposal } from '../../triage/types.js';

/**
 * View models the Block Kit builders render. They are plain data built by the incident service from
 * the store, so the builders stay pure and know nothing about Prisma or Slack clients.
 */

export type IncidentStatus = 'open' | 'resolved';

/**
 * Where the incident is, in words a responder understands: Investigating → Triaged → Mitigating (an approved
 * fix is running) → Mitigated (it ran and was verified, the alert has not cleared yet) → Resolved; or Needs a
 * human (nothing supported, or handed over) and Investigation failed.
 */
export type InvestigationPhase = 'investigating' | 'triaged' | 'mitigating' | 'mitigated' | 'needs_human' | 'failed' | 'resolved';

export interface IncidentCardModel {
  incidentId: string;
  title: string;
  alertName: string;
  status: IncidentStatus;
  phase: InvestigationPhase;
  severity?: string;
  /** e.g. `shop/checkout`. */
  target?: string;
  owner?: string;
  source: string;
  openedAt: Date;
  /** Seconds from the alert post to this card, shown as `(+3 s)`. */
  firstCardAfterSec?: number;
  alertCount: number;
  lastAlertAt: Date;
  resolvedAt?: Date;
  alertLink?: string;
  /** The investigation's OpenTelemetry trace id, so a reviewer can jump from Slack to the trace. */
  traceId?: string;
  /** One-line note when something went wrong (e.g. "Kubernetes API unreachable: …; retrying"). */
  notice?: string;
  /** The answer the summary card leads with: what is wrong, what is affected, what to do next. */
  answer?: IncidentAnswer;
  /** Model tokens against the shared caps (per incident, per UTC day), when a model ran; `exhausted`: which cap stopped it. */
  modelTokens?: { incident: number; incidentCap: number; day: number; dayCap: number; exhausted?: 'incident' | 'day' };
}

/** A hypothesis as the summary card names it. */
export interface AnswerHypothesis {
  label: string;
  title: string;
  confidence: number;
  /** Written by the model: quoted and attributed. */
  byModel?: boolean;
}

/**
 * The summary card's first three lines, as data. `leading` is the supported hypothesis Vigil stands behind;
 * without one the card says "not sure yet" and names the best open lead, if any.
 */
export interface IncidentAnswer {
  leading?: AnswerHypothesis;
  /** The best open (or not sure) lead when nothing is supported. */
  lead?: AnswerHypothesis;
  /** Hypotheses on the board, by how they stand (the card's pointer to the board). */
  counts?: { active: number; settled: number };
  /** What is affected, from the leading hypothesis' scope (the target is shown beside it). */
  affected?: string;
  next: NextStep;
}

/**
 * What a responder should do next. fix-*: the leading fix as the planner, the policy and the approvers took it
 * (the command only when Vigil stands behind it, see BoardFix); page: Vigil handed over (who was paged).
 */
export type NextStep =
  | { kind: 'wait' }
  /** `suggested`: the proposal's own command, shown only when nothing plans fixes (read-only Vigil). */
  | { kind: 'fix'; fix: BoardFix; action: string; risk?: number; suggested?: string }
  | { kind: 'no_fix' }
  | { kind: 'page'; owner?: string; reason: string; paged?: string[] }
  | { kind: 'retry' }
  | { kind: 'done' };

export interface EvidenceLine {
  summary: string;
  citation: Citation;
  stance: 'supports' | 'refutes' | 'context';
}

export interface BoardHypothesis {
  /** The stored hypothesis id: carried by its Confirm / Refute / Pin / Add evidence buttons. */
  id?: string;
  /** H1, H2, … */
  label: string;
  status: HypothesisStatus;
  confidence: number;
  title: string;
  component?: ComponentRef;
  mechanism: string;
  scope?: string;
  /** Why ruled out / unrelated. */
  reason?: string;
  evidence: EvidenceLine[];
  /** Slack user id of the last human who steered it. */
  steeredBy?: string;
  /** Written by the model: its title and mechanism are shown as quoted model text, not as Vigil's words. */
  byModel?: boolean;
}

export interface BoardModel {
  incidentId: string;
  /** Ordered for display: supported first, then open/inconclusive, then ruled out, then unrelated. */
  hypotheses: BoardHypothesis[];
  /** Scope of impact as a sentence, from the leading hypothesis. */
  scope?: string;
  /** Suggested mitigation from the leading hypothesis; shown as a suggestion, never executed from here. */
  mitigation?: MitigationProposal;
  /**
   * What became of that mitigation (absent: read-only Vigil, or an older caller). With it, the board shows a
   * command only when the planner built it and the policy accepted it.
   */
  fix?: BoardFix;
  updatedAt: Date;
  /** Steering received, newest last: who said what. */
  steering: { userId: string; text: string; at: Date }[];
  /** Checks that could not run (e.g. forbidden reads), shown so nobody assumes they passed. */
  gaps: string[];
  /** The change timeline's most related entries (already ranked), shown as "what changed". */
  changes?: { at: Date; summary: string; why: string[] }[];
  /** The team skill (skills/<name>.md) that applies to the leading hypothesis, cited with its follow-up checks. */
  procedure?: BoardProcedure;
}

/** A skill the board cites as the procedure followed, with its "find who did it" / follow-up steps filled in. */
export interface BoardProcedure {
  title: string;
  /** Where it lives, as people cite it: `skills/crash-loop.md`. */
  file: string;
  /** The hypothesis it is about (H1), when one is supported. */
  hypothesis?: string;
  /** Its follow-up steps (Markdown, placeholders filled from the hypothesis's component). */
  steps: string[];
}

/** The leading fix as far as the planner, the policy and the approvers took it. */
export interface BoardFix {
  /** Who wrote the proposal: Vigil's analyzers, or the model (whose words are quoted and attributed). */
  author: 'vigil' | 'model';
  /**
   * suggested: no write policy, so never planned or executed; checking: with a write policy, not planned yet;
   * planned: the planner built it and the policy accepted it (its card is in the thread);
   * refused: the planner or the policy refused it; over: withdrawn, closed, expired, cancelled or rejected.
   */
  state: 'suggested' | 'checking' | 'planned' | 'refused' | 'over';
  /** The planner's command (state planned only). */
  command?: string;
  /** The plan's risk score, 0–100 (state planned only, when the plan is stored). */
  risk?: number;
  /** The approval request's status (pending, approved, executing, executed, failed…), state planned only. */
  request?: string;
  /** The card's status in words (planned, over), or the refusal with its rule (refused). */
  status?: string;
}

export interface StatusModel {
  open: { incidentId: string; title: string; target?: string; phase: InvestigationPhase; openedAt: Date; permalink?: string; leading?: string; pendingApprovals?: number }[];
  resolvedRecently: number;
  /** The skills directory as last loaded (App Home only; absent when Vigil has no skill library). */
  skills?: { count: number; loadedAt: Date; dir?: string; errors: { file: string; field?: string; message: string }[] };
  /** App Home: pending fixes the viewer's user groups may approve (and the viewer has not decided yet). */
  awaitingYou?: AwaitingApproval[];
  /** App Home: how Vigil is set up and whether each part works. */
  setup?: SetupModel;
}

export interface AwaitingApproval {
  requestId: string;
  incidentTitle: string;
  /** What the fix changes, in Vigil's words (the planner's title). */
  change: string;
  risk?: number;
  /** The approval card in its thread. */
  permalink?: string;
  since: Date;
}

/** App Home's setup panel: what Vigil watches, reads, may do, and whether each part is working. */
export interface SetupModel {
  channels: { id: string; name?: string; state: 'member' | 'not_member' | 'unknown'; error?: string }[];
  /** Evidence sources: configured and not failing in the last investigation, failing (its gap), or not configured. */
  sources: { name: string; state: 'connected' | 'failing' | 'not_configured'; detail?: string; at?: Date }[];
  /** No file: read-only. */
  policy: { file?: string; rules: number };
  model?: { provider: string; name?: string };
  /** The Slack token check at start (src/slack/preflight.ts). */
  preflight?: { at: Date; ok: boolean; detail?: string };
  /** The newest `vigil doctor` run recorded on this database (src/cli/doctor-record.ts); null: never. */
  doctor?: { at: Date; ok: boolean; passed: number; failed: number; failedChecks: string[]; mode?: string; ranBy?: string } | null;
}

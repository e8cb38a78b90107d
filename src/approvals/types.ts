/**
 * The approval flow's shapes: a request's life (status), what a click may answer, and the stored plan
 * (a Plan without its writes — writes can hold secrets, e.g. a rollout_undo's pod template, so they
 * are rebuilt by re-planning right before execution and never stored or shown).
 */
import type { DiagnosisSnapshot, ExecutionResult, Plan, VerificationResult } from '../actions/index.js';
import type { PolicyDecision } from '../policy/index.js';
import type { ComponentRef } from '../evidence/types.js';
import type { HypothesisStatus, MitigationProposal } from '../triage/types.js';

/**
 * `withdrawn`: the hypothesis behind the fix was ruled out (by a responder or a new triage) before it ran;
 * `closed`: the incident resolved while the card was open. Both are final: a click on the card is refused.
 */
export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'executing', 'executed', 'failed', 'cancelled', 'expired', 'refused', 'withdrawn', 'closed'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/**
 * A Plan as stored and shown: everything but the writes, plus the diagnosis it was checked against
 * (re-planning at execution compares the live object with the same diagnosis, so a change made
 * since then fails the pre-checks instead of being overwritten).
 */
export type StoredPlan = Omit<Plan, 'writes'> & { diagnosis?: DiagnosisSnapshot };

/** What `propose` needs from a finding; a triage `Finding` fits as is. */
export interface ProposalSource {
  key: string;
  status: HypothesisStatus;
  component?: ComponentRef;
  facts?: Record<string, string | number | boolean>;
  mitigation?: MitigationProposal;
  /** A responder stands behind this hypothesis (confirmed, pinned or added evidence): their word lifts a veto. */
  confirmedBy?: string;
}

export interface ApprovalDecisionView {
  userId: string;
  userName?: string;
  decision: 'approve' | 'reject';
  reason?: string;
  at: Date;
}

/** What execution and verification produced, stored (redacted) with the request and shown on the card. */
export interface ApprovalOutcome {
  execution?: Exclude<ExecutionResult, { status: 'refused' }> | { status: 'refused'; message: string };
  verification?: Omit<VerificationResult, 'rollback'>;
  /** The request proposed to undo this one after a failed verification. */
  rollbackRequestId?: string;
}

/** Everything the card renders, read from one request row and its decisions. */
export interface ApprovalView {
  id: string;
  incidentId: string;
  status: ApprovalStatus;
  statusReason?: string;
  proposal: MitigationProposal;
  plan?: StoredPlan;
  decision: PolicyDecision;
  requestedBy: string;
  parentId?: string;
  decisions: ApprovalDecisionView[];
  outcome?: ApprovalOutcome;
  /**
   * The model wrote this proposal (its command and rationale): the card quotes and attributes its words
   * instead of presenting them as Vigil's own.
   */
  modelWritten?: boolean;
  updatedAt: Date;
}

export type ProposeResult =
  | { kind: 'proposed'; requestId: string }
  | { kind: 'refused'; requestId: string; reason: string }
  /** Already proposed (this hypothesis, or a live card for the same action and target): nothing new posted. */
  | { kind: 'existing'; requestId: string; status: ApprovalStatus }
  | { kind: 'nothing_to_propose'; reason: string; /** A model-written fix the planner or policy refused: no card, the next fix is tried. */ dropped?: true };

export type ClickResult =
  /** The same delivery (Slack retry) was already handled. */
  | { kind: 'duplicate' }
  /** Not allowed: the clicker got an ephemeral message saying why; nothing changed. */
  | { kind: 'refused'; reason: string }
  | { kind: 'recorded'; remaining: number }
  | { kind: 'rejected' }
  /** Enough approvals: execution started (see `ApprovalService.idle()`). */
  | { kind: 'executing' };

export interface ClickInput {
  requestId: string;
  /** `body.user.id` of the block_actions payload: Slack asserts it, the request signature covers it. */
  userId: string;
  userName?: string;
  decision: 'approve' | 'reject';
  reason?: string;
  /** Identity of this delivery (`action_ts`, else message ts + action id + user), so a retry is handled once. */
  deliveryKey: string;
  /** Where the card is, for the ephemeral answer. */
  channelId?: string;
  threadTs?: string;
}

/** `global`, or one incident's id. */
export type StopScope = 'global' | { incidentId: string };

export type StopResult =
  | { kind: 'stopped'; scope: string; cancelled: number }
  /** `reproposed`: requests the stop had cancelled, planned again as new attempts. */
  | { kind: 'resumed'; scope: string; reproposed: number }
  | { kind: 'refused'; reason: string };

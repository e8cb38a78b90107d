/**
 * The approval flow: proposal → card → click → authorise → execute as the executor → verify. An
 * approval is a paused run: the request (proposal, plan without writes, policy decision) and every
 * decision are stored, and a click — in any replica, after any restart — resumes it from the DB.
 *
 * Authorisation happens here, on the server, never in the card: the clicker's user groups (Slack),
 * the policy's four-eyes and duplicate rules, the request's status and the stop switches. Unauthorised
 * clicks get an ephemeral answer and change nothing.
 */
import type { Logger } from 'pino';
import type { ExecutorCredentials, ExternalProviders, MetricProbe, Plan, TargetReader } from '../actions/index.js';
import { sealedWrite, setApprovalCard, setHandoff, touchApproval, updateApproval, type SealedWriter } from '../audit/records.js';
import { recordAudit } from '../incidents/audit.js';
import { chatErrorCode, type ChatPort } from '../incidents/chat.js';
import type { Clock } from '../incidents/clock.js';
import { readContext } from '../incidents/context.js';
import { ruledOutByResponder } from '../incidents/service.js';
import type { ServiceCatalog } from '../knowledge/catalog.js';
import { evaluateApproval, evaluateProposal, isPolicyAdmin, type DenyCode, type Policy, type PolicyDecision, type Requester } from '../policy/index.js';
import type { Redactor } from '../redact/index.js';
import { changeTitle, renderApprovalCard, renderApprovalNote, whoCanApprove } from '../slack/blocks/approval.js';
import type { AwaitingApproval } from '../slack/blocks/models.js';
import { isUniqueViolation, type Db } from '../store/db.js';
import type { MitigationProposal } from '../triage/types.js';
import { ApprovalExecution, INTERRUPTED_AFTER_MS, INTERRUPTED_REASON } from './execution.js';
import { INVESTIGATOR_REFUSES_CLICKS, type VigilRole } from './mode.js';
import { awaitsExecutor, notExecutableReason, planProposal, storablePlan } from './planner.js';
import { incidentScope, plannedProposal, preliminaryProposal, proposedTarget } from './policy-input.js';
import { executionsOn, GLOBAL_SCOPE, isModelKey, LIVE_STATUSES, mutationsOf, readApproval, setStop, stopsFor, transition } from './store.js';
import type { ApprovalStatus, ClickInput, ClickResult, ProposalSource, ProposeResult, StopResult, StopScope } from './types.js';
import { groupsOf, type UserGroups } from './usergroups.js';

export interface ApprovalSettings {
  /** How long verification may take; default: the plan's criteria (5 minutes). Tests use short windows. */
  verifyWindowMs?: number;
  verifyIntervalMs?: number;
  /** Mention approver groups on the card (notifies them once). Default true. */
  pingApprovers?: boolean;
  /** Pauses before trying again a card Slack would not post or edit (default 2 s, 10 s, 60 s). */
  cardRetryMs?: number[];
  /** The deployment mode, named on every card (src/approvals/mode.ts). */
  mode?: string;
}

export interface ApprovalDeps {
  db: Db;
  chat: ChatPort;
  userGroups: UserGroups;
  /** Reads with the reader identity (plans, verification). */
  reader: TargetReader;
  /** How to become the executor (dry runs before approval, writes after). */
  executor: ExecutorCredentials;
  policy: Policy;
  catalog?: ServiceCatalog;
  metrics?: MetricProbe;
  /** Writers outside Kubernetes (flag tool, GitHub), each with its own writer token. */
  providers?: ExternalProviders;
  clock: Clock;
  redactor: Redactor;
  log: Logger;
  settings?: ApprovalSettings;
  /** `single` (default): propose, post, receive clicks and write. Split mode: `investigator` proposes only; `executor` does the rest. */
  role?: VigilRole;
}

const STOP_CANCELLED = 'cancelled: Vigil was stopped by';
/** How long a proposal may wait for its approvals. */
const PENDING_TTL_MS = 6 * 3_600_000;

/** A card Slack would not take is tried again after these pauses, so it never stays behind its request. */
const CARD_RETRY_MS = [2_000, 10_000, 60_000];

/** Why a click on a card that is over gets refused, by its final status. */
const FINAL_WORDS: Partial<Record<ApprovalStatus, string>> = { withdrawn: 'this fix was withdrawn', closed: 'this card was closed' };

/** Refusals found before planning: the target is never read or dry-run (a prompt-injected target stops here). */
const BEFORE_PLANNING: ReadonlySet<DenyCode> = new Set(['stopped', 'invalid_proposal', 'never_write', 'out_of_scope', 'no_rule', 'rule_forbids', 'no_owner']);

export class ApprovalService {
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly execution: ApprovalExecution;
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Per request, the last card refresh in line: refreshes never overlap, so an older state never lands last. */
  private readonly cardChains = new Map<string, Promise<void>>();
  /** Requests with a card retry scheduled (one timer each). */
  private readonly cardRetries = new Set<string>();
  /** Called after any request's card changed (App Home shows pending approvals; the board shows the leading fix's state). */
  onChanged: ((incidentId: string) => void) | undefined;

  private readonly role: VigilRole;

  constructor(private readonly deps: ApprovalDeps) {
    this.role = deps.role ?? 'single';
    // The investigator must not even hold a way to write: refused here, not only by RBAC.
    if (this.role === 'investigator' && deps.executor.mode !== 'none') throw new Error('split mode: the investigator must be given no executor credential');
    this.execution = new ApprovalExecution(deps, {
      refreshCard: (id) => this.refreshCard(id),
      propose: (incidentId, source, opts) => this.propose(incidentId, source, opts),
      unbacked: (row) => this.unbacked(row),
    });
  }

  /** Runs an approved request; never in split mode's investigator, which has nothing to write with. */
  private runApproved(id: string, approval: { userId: string; userName?: string; at: Date }): Promise<void> {
    if (this.role === 'investigator') return Promise.resolve();
    return this.execution.run(id, approval);
  }

  /** Resolves when no execution or verification started by a click is running (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Shutdown: no more scheduled re-checks, then wait for what is running. */
  async stopAll(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await this.idle();
  }

  private track(p: Promise<unknown>): void {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p)).catch((err: unknown) => this.deps.log.error({ err: String(err) }, 'approval execution failed'));
  }

  /** Proposes the fix of the latest investigation's leading supported hypothesis, if it has one. */
  async proposeLeading(incidentId: string, opts: { requestedBy?: Requester } = {}): Promise<ProposeResult> {
    // The board may have moved since the last card (a re-run, a responder): what no longer stands goes first.
    await this.withdrawUnbacked(incidentId);
    const candidates = await this.deps.db.hypothesis.findMany({
      where: { investigation: { incidentId }, status: 'supported', mitigation: { not: null } },
      orderBy: [{ investigation: { startedAt: 'desc' } }, { confidence: 'desc' }, { ordinal: 'asc' }],
      take: 10,
    });
    if (!candidates.length) return { kind: 'nothing_to_propose', reason: 'no supported hypothesis with a mitigation' };
    // The leading fix first. A model-written fix the planner or policy refuses gets no card at all (a card
    // must only ever show what was accepted): it is dropped with an audit record, and the next supported
    // fix (often the deterministic one) is proposed instead.
    let last: ProposeResult = { kind: 'nothing_to_propose', reason: 'no supported hypothesis with a mitigation' };
    for (const h of candidates) {
      last = await this.propose(incidentId, {
        key: h.key,
        status: 'supported',
        ...(h.steeredBy ? { confirmedBy: h.steeredBy } : {}),
        ...(h.componentKind && h.componentName ? { component: { kind: h.componentKind, name: h.componentName, ...(h.componentNs ? { namespace: h.componentNs } : {}) } } : {}),
        ...(h.facts ? { facts: JSON.parse(h.facts) as Record<string, string | number | boolean> } : {}),
        mitigation: JSON.parse(h.mitigation!) as MitigationProposal,
      }, { ...(opts.requestedBy ? { requestedBy: opts.requestedBy } : {}), dropIfRefused: isModelKey(h.key) });
      if (!(last.kind === 'nothing_to_propose' && last.dropped)) return last;
    }
    return last;
  }

  /**
   * Plans the finding's mitigation, asks the policy, stores the request and posts its card in the
   * incident thread (a refusal card when policy says no). One request per incident, hypothesis,
   * action and target: calling again returns the existing one. And one live card per incident, action and
   * target, whichever hypothesis asks: the model restating a cause under a new name reuses the live card.
   * A change whose cause a responder ruled out is not proposed again under another hypothesis's name.
   */
  async propose(incidentId: string, source: ProposalSource, opts: { requestedBy?: Requester; parentId?: string; dropIfRefused?: boolean } = {}): Promise<ProposeResult> {
    const { db, policy, clock, redactor } = this.deps;
    const m = source.mitigation;
    if (!m) return { kind: 'nothing_to_propose', reason: 'the finding has no mitigation' };
    if (source.status !== 'supported') return { kind: 'nothing_to_propose', reason: `the finding is ${source.status}, not supported` };
    const incident = await db.incident.findUnique({ where: { id: incidentId }, include: { investigations: { orderBy: { startedAt: 'desc' }, take: 1 } } });
    if (!incident) return { kind: 'nothing_to_propose', reason: `no incident ${incidentId}` };
    if (!incident.threadTs) return { kind: 'nothing_to_propose', reason: 'the incident has no thread yet' };
    // A late report (or a re-proposal) after the incident resolved must not open a card nobody needs.
    if (incident.status !== 'open') return { kind: 'nothing_to_propose', reason: 'the incident is no longer open' };
    // Keyed on what the write lands on (for a flag: the flag, not its service), as the history and limits are.
    const written = proposedTarget(m);
    const identity = { incidentId, hypothesisKey: source.key, action: m.action, targetKind: written.kind, targetNs: written.namespace, targetName: written.name };
    const existing = await db.approvalRequest.findFirst({ where: identity, orderBy: { attempt: 'desc' } });
    const stops = await stopsFor(db, incidentId);
    // A request a stop cancelled (or refused) is proposed afresh once Vigil runs again, and an expired one
    // whenever asked again: new plan, new attempt, new approvals.
    // A withdrawn card (its hypothesis stands again) or one closed by a resolve (the incident reopened) too.
    const again = existing && (['expired', 'withdrawn', 'closed'].includes(existing.status) || (stoppedOut(existing) && !stops.global && !stops.incident));
    if (existing && !again) return { kind: 'existing', requestId: existing.id, status: existing.status as ApprovalStatus };
    const change = { incidentId, action: m.action, targetKind: written.kind, targetNs: written.namespace, targetName: written.name };
    const live = await db.approvalRequest.findFirst({ where: { ...change, status: { in: LIVE_STATUSES } }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
    if (live) {
      if (live.hypothesisKey !== source.key) {
        await recordAudit(db, { incidentId, actor: opts.requestedBy ?? 'vigil', kind: 'approval.reused', data: { requestId: live.id, hypothesisKey: source.key, action: m.action, target: change }, at: clock.now() });
      }
      return { kind: 'existing', requestId: live.id, status: live.status as ApprovalStatus };
    }
    const vetoed = isDerived(source.key) || source.confirmedBy ? undefined : await this.vetoedByResponder(change);
    if (vetoed) return { kind: 'nothing_to_propose', reason: vetoed };
    const attempt = (existing?.attempt ?? 0) + 1;

    const requestedBy = opts.requestedBy ?? 'vigil';
    const now = clock.now();
    const diagnosis = { ...(source.component ? { component: source.component } : {}), ...(source.facts ? { facts: source.facts } : {}) };
    const { decision, planJson, risk, refusedBecause } = await this.decide(incident, { key: source.key, proposal: m, diagnosis, requestedBy }, stops, now);

    if (refusedBecause && opts.dropIfRefused) {
      await recordAudit(db, { incidentId, actor: 'vigil', kind: 'approval.model_fix_dropped', data: { hypothesisKey: source.key, action: m.action, target: change, reason: redactor.redactText(refusedBecause) }, at: now });
      return { kind: 'nothing_to_propose', reason: `the model's fix was refused: ${redactor.redactText(refusedBecause)}`, dropped: true };
    }
    const status: ApprovalStatus = refusedBecause ? 'refused' : 'pending';
    let id: string;
    try {
      const row = await sealedWrite(db, (w) =>
        w.createApproval({
          ...identity,
          attempt,
          proposal: JSON.stringify(redactor.redactValue(m)),
          plan: planJson,
          // Kept even without a plan (refused before planning): a re-proposal after /sre resume needs it.
          diagnosis: JSON.stringify(redactor.redactValue(diagnosis)),
          risk,
          decision: JSON.stringify(decision),
          status,
          statusReason: refusedBecause ? redactor.redactText(refusedBecause) : null,
          // Split mode: the executor process plans it again as itself and posts the card (a refusal card too).
          ...(this.role === 'investigator' ? { handoff: status === 'pending' ? 'plan' : 'card', handoffAt: now } : {}),
          requestedBy,
          parentId: opts.parentId ?? null,
          channelId: incident.channelId,
          threadTs: incident.threadTs,
          createdAt: now,
        }),
      );
      id = row.id;
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      // Either this hypothesis' request already exists, or (the one-live-card index) another live card
      // for the same change was inserted between the check above and this insert.
      const raced =
        (await db.approvalRequest.findUnique({ where: { incidentId_hypothesisKey_action_targetKind_targetNs_targetName_attempt: { ...identity, attempt } } })) ??
        (await db.approvalRequest.findFirstOrThrow({ where: { ...change, status: { in: LIVE_STATUSES } }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] }));
      return { kind: 'existing', requestId: raced.id, status: raced.status as ApprovalStatus };
    }
    await recordAudit(db, {
      incidentId,
      actor: requestedBy,
      kind: status === 'refused' ? 'approval.refused' : 'approval.proposed',
      data: { requestId: id, action: m.action, target: identity, ...(attempt > 1 ? { attempt, supersedes: existing?.id } : {}), risk, decision: redactor.redactValue(decision), ...(refusedBecause ? { reason: redactor.redactText(refusedBecause) } : {}) },
      at: now,
    });
    await this.refreshCard(id);
    return status === 'refused' ? { kind: 'refused', requestId: id, reason: refusedBecause! } : { kind: 'proposed', requestId: id };
  }

  /**
   * Plans the proposal and asks the policy: the refusals found before planning first (nothing is read or
   * dry-run for them), then the plan, the dry run as the executor (none in split mode's investigator: the
   * executor plans again as itself, `adopt`) and the policy on the planned change.
   */
  private async decide(
    incident: { id: string; service: string | null; namespace: string | null; investigations: { context: string }[] } & Parameters<typeof incidentScope>[0],
    p: { key: string; proposal: MitigationProposal; diagnosis: { component?: ProposalSource['component']; facts?: ProposalSource['facts'] }; requestedBy: Requester },
    stops: { global: boolean; incident: boolean },
    now: Date,
  ): Promise<{ decision: PolicyDecision; planJson: string | null; risk: number | null; refusedBecause: string | undefined }> {
    const { db, policy, redactor } = this.deps;
    const m = p.proposal;
    const written = proposedTarget(m);
    const scope = incidentScope(incident, this.deps.catalog);
    const owner = (incident.service ? this.deps.catalog?.find(incident.namespace ?? undefined, incident.service)?.owner : undefined) ?? readContext(incident.investigations[0]?.context ?? '{}').owner;
    const base = { incidentScope: scope, ...(owner ? { serviceOwner: owner } : {}), stopped: stops, now };
    const input = { proposal: m, incidentId: incident.id, requestedBy: p.requestedBy, ...(p.diagnosis.component ? { diagnosedService: p.diagnosis.component.name } : {}) };
    let decision: PolicyDecision = evaluateProposal(policy, preliminaryProposal(input), { ...base, history: [], incidentMutations: 0 });
    let planJson: string | null = null;
    let risk: number | null = null;
    let refusedBecause: string | undefined = decision.kind === 'deny' ? decision.reason : undefined;
    if (decision.kind !== 'deny' || !BEFORE_PLANNING.has(decision.code)) {
      const history = await executionsOn(db, written, now, p.diagnosis.component?.name);
      const planned = await planProposal(this.planner(), incident.id, m, p.diagnosis, history.risk);
      if (planned.kind === 'invalid') {
        decision = { kind: 'deny', code: 'invalid_proposal', reason: `refused: ${planned.reason}` };
        refusedBecause = decision.reason;
      } else {
        const plan = isModelKey(p.key) ? unquoted(planned.plan, m.command) : planned.plan;
        planJson = JSON.stringify(storablePlan(plan, p.diagnosis, redactor));
        risk = plan.risk.score;
        decision = evaluateProposal(policy, plannedProposal(input, plan), { ...base, history: history.policy, incidentMutations: await mutationsOf(db, incident.id) });
        const deferred = this.role === 'investigator' && awaitsExecutor(plan);
        refusedBecause = decision.kind === 'deny' ? decision.reason : plan.executable || deferred ? undefined : notExecutableReason(plan);
      }
    }
    return { decision, planJson, risk, refusedBecause };
  }

  /**
   * Split mode, in the executor: a proposal the investigator stored (planned without any write credential)
   * is planned again as the executor — access checks and the server-side dry run with its own identity —
   * and judged again by the policy; then its card is posted, by the executor's own Slack app. A request no
   * longer pending (withdrawn, stopped, expired meanwhile) only gets its card once one was ever posted.
   */
  async adopt(id: string): Promise<void> {
    const { db, clock, redactor } = this.deps;
    const row = await db.approvalRequest.findUnique({ where: { id }, include: { incident: { include: { investigations: { orderBy: { startedAt: 'desc' }, take: 1 } } } } });
    if (!row) return;
    if (row.status !== 'pending') {
      if (row.cardTs) await this.refreshCard(id);
      return;
    }
    const now = clock.now();
    const diagnosis = JSON.parse(row.diagnosis ?? '{}') as { component?: ProposalSource['component']; facts?: ProposalSource['facts'] };
    const proposal = JSON.parse(row.proposal) as MitigationProposal;
    const d = await this.decide(row.incident, { key: row.hypothesisKey, proposal, diagnosis, requestedBy: row.requestedBy }, await stopsFor(db, row.incidentId), now);
    const status: ApprovalStatus = d.refusedBecause ? 'refused' : 'pending';
    const changed = await updateApproval(
      db,
      id,
      { plan: d.planJson, risk: d.risk, decision: JSON.stringify(d.decision), status, statusReason: d.refusedBecause ? redactor.redactText(d.refusedBecause) : null },
      { status: 'pending' },
    );
    if (changed) {
      await recordAudit(db, {
        incidentId: row.incidentId,
        actor: 'vigil-executor',
        kind: status === 'refused' ? 'approval.refused' : 'approval.adopted',
        data: { requestId: id, risk: d.risk, decision: redactor.redactValue(d.decision), ...(d.refusedBecause ? { reason: redactor.redactText(d.refusedBecause) } : {}) },
        at: now,
      });
    }
    await this.refreshCard(id);
  }

  /** The core of the Approve/Reject click handler. */
  async click(c: ClickInput): Promise<ClickResult> {
    const { db, clock, redactor } = this.deps;
    // Split mode: the investigator's Slack app is not where approvals are made, whatever the payload says.
    if (this.role === 'investigator') return this.refuse(c, { channel: c.channelId ?? '', threadTs: c.threadTs }, INVESTIGATOR_REFUSES_CLICKS);
    const key = `approval-click:${c.deliveryKey}`;
    if (await db.processedDelivery.findUnique({ where: { key } })) return { kind: 'duplicate' };
    const v = await readApproval(db, c.requestId);
    const where = { channel: c.channelId ?? '', threadTs: c.threadTs };
    if (!v) return this.refuse(c, where, 'this approval request does not exist (any more)');
    const row = await db.approvalRequest.findUniqueOrThrow({ where: { id: v.id } });
    where.channel ||= row.channelId;
    where.threadTs ??= row.threadTs ?? undefined;
    const final = FINAL_WORDS[v.status];
    if (final) return this.refuse(c, where, `${final} (${(v.statusReason ?? v.status).replace(/^(withdrawn|closed):\s*/, '')}); nothing changed and nothing will run from it`, v.incidentId);
    if (v.status !== 'pending') return this.refuse(c, where, `this request is already ${v.status}; nothing changed`, v.incidentId);
    // A card outlives its moment: an approval is for the incident as it was, not weeks later.
    const incident = await db.incident.findUnique({ where: { id: v.incidentId }, select: { status: true } });
    const stale = incident?.status !== 'open' ? 'the incident is no longer open' : clock.now().getTime() - row.createdAt.getTime() > PENDING_TTL_MS ? `it was proposed more than ${PENDING_TTL_MS / 3_600_000} hours ago` : undefined;
    if (stale) {
      if (await transition(db, v.id, ['pending'], 'expired', { statusReason: `expired: ${stale}` })) await this.refreshCard(v.id);
      return this.refuse(c, where, `this request expired (${stale}); nothing changed. If the fix is still needed, reply in the thread so Vigil investigates again and proposes a fresh plan`, v.incidentId);
    }
    // The board decides, not the card: a fix whose hypothesis was ruled out since it was posted cannot be approved.
    const gone = await this.unbacked(row);
    if (gone) {
      await this.withdraw(row, gone);
      return this.refuse(c, where, `this fix was withdrawn (${gone.reason.replace(/^withdrawn:\s*/, '')}); nothing changed and nothing will run from it`, v.incidentId);
    }
    const stops = await stopsFor(db, v.incidentId);
    if (stops.global || stops.incident) return this.refuse(c, where, `Vigil is stopped ${stops.global ? 'for all incidents' : 'for this incident'}; nothing can be approved until it is resumed`, v.incidentId);
    if (v.decision.kind === 'deny') return this.refuse(c, where, `policy refused this proposal: ${v.decision.reason}`, v.incidentId);
    if (v.decisions.some((d) => d.userId === c.userId)) return this.refuse(c, where, `you already ${v.decisions.find((d) => d.userId === c.userId)!.decision === 'approve' ? 'approved' : 'rejected'} this request`, v.incidentId);

    let groups: string[];
    try {
      groups = await groupsOf(this.deps.userGroups, c.userId, v.decision.approverGroups);
    } catch (err) {
      this.deps.log.warn({ err: String(err), user: c.userId }, 'could not read user groups');
      return this.refuse(c, where, 'Vigil could not check your user groups with Slack, so it cannot accept this click; try again in a minute', v.incidentId);
    }
    const userName = c.userName ?? (await this.deps.chat.userName(c.userId));
    const now = clock.now();
    const reason = c.reason ? redactor.redactText(c.reason).slice(0, 500) : undefined;
    const decisionRow = { requestId: v.id, userId: c.userId, userName: userName ?? null, decision: c.decision, reason: reason ?? null, at: now };

    if (c.decision === 'reject') {
      if (groups.length === 0 && c.userId !== v.requestedBy) {
        return this.refuse(c, where, 'you are not in a user group that may approve or reject this action', v.incidentId, v.decision.approverGroups);
      }
      const outcome = await this.record(key, decisionRow, v.incidentId, async (w) => transition(w, v.id, ['pending'], 'rejected', { statusReason: `rejected by ${userName ?? c.userId}${reason ? `: ${reason}` : ''}` }));
      if (outcome !== 'ok') return outcome === 'duplicate' ? { kind: 'duplicate' } : this.refuse(c, where, 'this request changed meanwhile; nothing changed', v.incidentId);
      await this.refreshCard(v.id);
      return { kind: 'rejected' };
    }

    const verdict = evaluateApproval(v.decision, { userId: c.userId, userGroups: groups, requestedBy: v.requestedBy, risk: v.plan?.risk.score ?? 100 }, v.decisions.filter((d) => d.decision === 'approve').map((d) => d.userId));
    if (verdict.kind === 'rejected') return this.refuse(c, where, verdict.reason, v.incidentId, verdict.approverGroups ?? (v.decision.kind === 'require_approval' ? v.decision.approverGroups : undefined));
    // The count is taken inside the transaction, after locking the row: two approvers clicking at the
    // same moment must not both see "one more needed" and leave the request pending for ever.
    let remaining = verdict.remaining;
    const needed = v.decision.kind === 'require_approval' ? v.decision.approvals : 1;
    const outcome = await this.record(key, decisionRow, v.incidentId, async (w) => {
      if ((await touchApproval(w, v.id, { status: 'pending' }, now)) === 0) return false;
      const given = await w.tx.approvalDecision.count({ where: { requestId: v.id, decision: 'approve' } });
      remaining = Math.max(0, needed - given);
      return remaining === 0 ? transition(w, v.id, ['pending'], 'approved') : true;
    });
    if (outcome !== 'ok') return outcome === 'duplicate' ? { kind: 'duplicate' } : this.refuse(c, where, 'this request changed meanwhile; nothing changed', v.incidentId);
    await this.refreshCard(v.id);
    if (remaining > 0) return { kind: 'recorded', remaining };
    this.track(this.runApproved(v.id, { userId: c.userId, ...(userName ? { userName } : {}), at: now }));
    return { kind: 'executing' };
  }

  /**
   * Stores the click's decision, its delivery key and the status change together: a Slack retry of
   * the same delivery, or a concurrent change of the request, leaves nothing half-written. The decision
   * and the request's new state are sealed in the audit chain once both are written (src/audit/records.ts).
   */
  private async record(
    key: string,
    d: { requestId: string; userId: string; userName: string | null; decision: string; reason: string | null; at: Date },
    incidentId: string,
    change: (w: SealedWriter) => Promise<boolean>,
  ): Promise<'ok' | 'duplicate' | 'conflict'> {
    try {
      return await this.deps.db.$transaction(async (tx) => {
        await tx.processedDelivery.create({ data: { key } });
        const changed = await sealedWrite(tx, async (w) => {
          await w.createDecision(d);
          return change(w);
        });
        if (!changed) throw new StatusConflict();
        await recordAudit(tx, { incidentId, actor: d.userId, kind: `approval.${d.decision}`, data: { requestId: d.requestId, userName: d.userName, reason: d.reason }, at: d.at });
        return 'ok' as const;
      });
    } catch (err) {
      if (err instanceof StatusConflict) return 'conflict';
      if (isUniqueViolation(err)) return 'duplicate';
      throw err;
    }
  }

  private async refuse(c: ClickInput, where: { channel: string; threadTs: string | undefined }, reason: string, incidentId?: string, groups?: string[]): Promise<ClickResult> {
    // Groups as mentions (`<!subteam^…>` shows the group's name; an ephemeral notifies nobody), never raw ids.
    const who = groups?.length ? whoCanApprove(groups) : undefined;
    if (where.channel) {
      await this.deps.chat
        .ephemeral(where.channel, c.userId, renderApprovalNote('⛔', `Not accepted: ${reason}.`, undefined, who), where.threadTs)
        .catch((err: unknown) => this.deps.log.warn({ err: String(err) }, 'could not send the ephemeral refusal'));
    }
    await recordAudit(this.deps.db, { incidentId: incidentId ?? null, actor: c.userId, kind: 'approval.click_refused', data: { requestId: c.requestId, decision: c.decision, reason }, at: this.deps.clock.now() });
    return { kind: 'refused', reason };
  }

  /** A refused stop or resume, on the audit trail like a refused click. */
  private async refuseStop(kind: 'vigil.stop_refused' | 'vigil.resume_refused', scope: StopScope, userId: string, reason: string): Promise<StopResult> {
    await recordAudit(this.deps.db, { incidentId: scope === 'global' ? null : scope.incidentId, actor: userId, kind, data: { scope: scope === 'global' ? GLOBAL_SCOPE : scope.incidentId, reason }, at: this.deps.clock.now() });
    return { kind: 'refused', reason };
  }

  /** Kill switch: cancels pending requests in scope; while stopped, nothing is proposed or executed. */
  async stop(scope: StopScope, userId: string): Promise<StopResult> {
    const { db, clock, policy } = this.deps;
    const key = scope === 'global' ? GLOBAL_SCOPE : scope.incidentId;
    if (scope === 'global' && !isPolicyAdmin(policy, userId)) return this.refuseStop('vigil.stop_refused', scope, userId, 'only a policy admin may stop Vigil for all incidents; use `/sre stop <incident id>` for one incident');
    const now = clock.now();
    await setStop(db, key, true, userId, now);
    const pending = await db.approvalRequest.findMany({ where: { status: { in: ['pending', 'approved'] }, ...(scope === 'global' ? {} : { incidentId: scope.incidentId }) } });
    let cancelled = 0;
    for (const r of pending) {
      if (await transition(db, r.id, ['pending', 'approved'], 'cancelled', { statusReason: `${STOP_CANCELLED} ${userId}` })) {
        cancelled++;
        await this.refreshCard(r.id);
      }
    }
    await recordAudit(db, { incidentId: scope === 'global' ? null : scope.incidentId, actor: userId, kind: 'vigil.stopped', data: { scope: key, cancelled }, at: now });
    if (scope !== 'global') await this.note(scope.incidentId, `stop:${now.getTime()}`, '⏹', `Vigil is stopped for this incident: ${cancelled} pending approval${cancelled === 1 ? '' : 's'} cancelled; nothing will be proposed or executed until /sre resume`, userId);
    return { kind: 'stopped', scope: key, cancelled };
  }

  async resume(scope: StopScope, userId: string): Promise<StopResult> {
    const { db, clock, policy } = this.deps;
    const key = scope === 'global' ? GLOBAL_SCOPE : scope.incidentId;
    if (scope === 'global' && !isPolicyAdmin(policy, userId)) return this.refuseStop('vigil.resume_refused', scope, userId, 'only a policy admin may resume Vigil for all incidents');
    if (scope !== 'global') {
      // A stop is someone's decision that Vigil must not act here: only who stopped it, or a policy admin (who
      // may also stop everything), may lift it. Otherwise anyone could undo a responder's kill switch.
      const row = await db.stopSwitch.findUnique({ where: { scope: key } });
      if (row?.stopped && row.by !== userId && !isPolicyAdmin(policy, userId)) {
        return this.refuseStop('vigil.resume_refused', scope, userId, `only <@${row.by}>, who stopped it, or a policy admin may resume Vigil for this incident`);
      }
    }
    const now = clock.now();
    await setStop(db, key, false, userId, now);
    await recordAudit(db, { incidentId: scope === 'global' ? null : scope.incidentId, actor: userId, kind: 'vigil.resumed', data: { scope: key }, at: now });
    const reproposed = await this.reproposeStopped(scope);
    if (scope !== 'global') {
      const again = reproposed ? `; ${reproposed} proposal${reproposed === 1 ? '' : 's'} the stop cancelled ${reproposed === 1 ? 'is' : 'are'} proposed again below and need${reproposed === 1 ? 's' : ''} fresh approval` : '';
      await this.note(scope.incidentId, `resume:${now.getTime()}`, '▶️', `Vigil resumed for this incident${again}`, userId);
    }
    return { kind: 'resumed', scope: key, reproposed };
  }

  /**
   * After a resume: each request the stop cancelled (or refused) is planned again as a new attempt,
   * unless it is no longer the latest for its hypothesis. Approvals given before the stop do not carry over.
   */
  private async reproposeStopped(scope: StopScope): Promise<number> {
    const { db, log } = this.deps;
    const rows = await db.approvalRequest.findMany({
      where: { status: { in: ['cancelled', 'refused'] }, ...(scope === 'global' ? { incident: { status: 'open' } } : { incidentId: scope.incidentId }) },
      orderBy: { createdAt: 'asc' },
      take: 200,
    });
    let n = 0;
    for (const row of rows.filter(stoppedOut)) {
      if (!(await this.stillSupported(row.incidentId, row.hypothesisKey))) continue;
      const diagnosis = JSON.parse(row.diagnosis ?? '{}') as { component?: ProposalSource['component']; facts?: ProposalSource['facts'] };
      const source: ProposalSource = {
        key: row.hypothesisKey,
        status: 'supported',
        ...(diagnosis.component ? { component: diagnosis.component } : {}),
        ...(diagnosis.facts ? { facts: diagnosis.facts } : {}),
        mitigation: JSON.parse(row.proposal) as MitigationProposal,
      };
      try {
        const r = await this.propose(row.incidentId, source, { requestedBy: row.requestedBy, ...(row.parentId ? { parentId: row.parentId } : {}) });
        if (r.kind === 'proposed' || r.kind === 'refused') n++;
      } catch (err) {
        log.warn({ err: String(err), requestId: row.id }, 'could not propose a cancelled request again');
      }
    }
    return n;
  }

  /**
   * Proposals follow the board. Every live card whose hypothesis no longer stands (a responder ruled it out,
   * or a new triage no longer supports it) is withdrawn: its status and the audit trail say why, and the
   * card is re-rendered without buttons. Then, with `propose` and no investigation under way (its report
   * proposes), the leading fix is proposed — e.g. the one a responder just confirmed.
   */
  /** `requestedBy`: the responder whose verdict or click led to the proposal (four-eyes binds them). */
  async followBoard(incidentId: string, opts: { propose?: boolean; requestedBy?: Requester } = {}): Promise<{ withdrawn: number; proposed?: ProposeResult }> {
    const withdrawn = await this.withdrawUnbacked(incidentId);
    if (!opts.propose) return { withdrawn };
    const latest = await this.deps.db.investigation.findFirst({ where: { incidentId }, orderBy: { startedAt: 'desc' }, select: { state: true } });
    if (latest && (latest.state === 'queued' || latest.state === 'running')) return { withdrawn };
    return { withdrawn, proposed: await this.proposeLeading(incidentId, opts.requestedBy ? { requestedBy: opts.requestedBy } : {}) };
  }

  /**
   * The incident resolved: its open cards are closed (no buttons, "closed: incident resolved"), so nobody
   * approves a change for a problem that is gone. A change already executing finishes and reports.
   */
  async closeForResolved(incidentId: string): Promise<number> {
    const { db, clock } = this.deps;
    const open = await db.approvalRequest.findMany({ where: { incidentId, status: { in: ['pending', 'approved'] } }, select: { id: true } });
    let closed = 0;
    for (const r of open) {
      if (!(await transition(db, r.id, ['pending', 'approved'], 'closed', { statusReason: 'closed: incident resolved' }))) continue;
      closed++;
      await recordAudit(db, { incidentId, actor: 'vigil', kind: 'approval.closed', data: { requestId: r.id, reason: 'incident resolved' }, at: clock.now() });
      await this.refreshCard(r.id);
    }
    return closed;
  }

  /**
   * Pending cards past their time (PENDING_TTL_MS), or of an incident no longer open, expire on their own:
   * the card is re-rendered without buttons and says why and when, instead of waiting for a click to find out.
   */
  async expireStale(): Promise<number> {
    const { db, clock } = this.deps;
    const now = clock.now();
    const rows = await db.approvalRequest.findMany({
      where: { status: 'pending', OR: [{ createdAt: { lt: new Date(now.getTime() - PENDING_TTL_MS) } }, { incident: { status: { not: 'open' } } }] },
      select: { id: true, incidentId: true, incident: { select: { status: true } } },
      take: 200,
    });
    let expired = 0;
    for (const r of rows) {
      const why = r.incident.status !== 'open' ? 'the incident is no longer open' : `nobody approved it within ${PENDING_TTL_MS / 3_600_000} hours`;
      if (!(await transition(db, r.id, ['pending'], 'expired', { statusReason: `expired: ${why}` }))) continue;
      expired++;
      await recordAudit(db, { incidentId: r.incidentId, actor: 'vigil', kind: 'approval.expired', data: { requestId: r.id, reason: why }, at: now });
      await this.refreshCard(r.id);
    }
    return expired;
  }

  /** Look for stale cards every `intervalMs` (until stopAll); a failed sweep is logged and tried at the next. */
  startExpiring(intervalMs = 5 * 60_000): void {
    const t = setInterval(() => this.track(this.expireStale().catch((err: unknown) => this.deps.log.warn({ err: String(err) }, 'could not expire stale approval cards'))), intervalMs);
    t.unref();
    this.timers.add(t);
  }

  private async withdrawUnbacked(incidentId: string): Promise<number> {
    const rows = await this.deps.db.approvalRequest.findMany({ where: { incidentId, status: { in: ['pending', 'approved'] } } });
    let n = 0;
    for (const row of rows) {
      const gone = await this.unbacked(row);
      if (gone && (await this.withdraw(row, gone))) n++;
    }
    return n;
  }

  /** Withdraws one request (pending or approved, not yet executing), records who and why, and re-renders its card. */
  private async withdraw(row: { id: string; incidentId: string; hypothesisKey: string }, gone: { reason: string; by: string }): Promise<boolean> {
    const { db, clock, redactor } = this.deps;
    const reason = redactor.redactText(gone.reason).slice(0, 600);
    if (!(await transition(db, row.id, ['pending', 'approved'], 'withdrawn', { statusReason: reason }))) return false;
    await recordAudit(db, { incidentId: row.incidentId, actor: gone.by, kind: 'approval.withdrawn', data: { requestId: row.id, hypothesisKey: row.hypothesisKey, reason }, at: clock.now() });
    await this.refreshCard(row.id);
    return true;
  }

  /**
   * Why a request's hypothesis no longer backs it, or undefined while it does. A responder's rule-out always
   * wins; after a re-triage, another supported hypothesis proposing the same change still backs it. A
   * rollback or follow-up belongs to a change already made, and a request made outside an investigation
   * has nothing to follow: both stand.
   */
  private async unbacked(row: { incidentId: string; hypothesisKey: string; action: string; targetKind: string; targetNs: string; targetName: string }): Promise<{ reason: string; by: string } | undefined> {
    if (isDerived(row.hypothesisKey)) return undefined;
    const latest = await this.deps.db.investigation.findFirst({
      where: { incidentId: row.incidentId },
      orderBy: { startedAt: 'desc' },
      select: { hypotheses: { select: { key: true, label: true, title: true, status: true, steeredBy: true, reason: true, mitigation: true } } },
    });
    if (!latest) return undefined;
    const own = latest.hypotheses.find((h) => h.key === row.hypothesisKey);
    if (own && ruledOutByResponder(own)) return { reason: `withdrawn: ${own.label} (${own.title}) was ${own.reason}`, by: own.steeredBy! };
    if (own?.status === 'supported') return undefined;
    const same = latest.hypotheses.some((h) => h.status === 'supported' && h.mitigation && sameChange(JSON.parse(h.mitigation) as MitigationProposal, row));
    if (same) return undefined;
    return {
      reason: own ? `withdrawn: the investigation no longer supports ${own.label} (${own.title}): it is now ${own.status.replace(/_/g, ' ')}` : 'withdrawn: its hypothesis is no longer on the board',
      by: 'vigil',
    };
  }

  /**
   * A responder ruled out the hypothesis an earlier card for this very change was for: the same change is not
   * proposed again under another name (the model restating the cause) unless a responder backs the new one.
   */
  private async vetoedByResponder(change: { incidentId: string; action: string; targetKind: string; targetNs: string; targetName: string }): Promise<string | undefined> {
    const { db } = this.deps;
    const earlier = await db.approvalRequest.findMany({ where: { ...change, status: 'withdrawn' }, select: { hypothesisKey: true } });
    if (earlier.length === 0) return undefined;
    const latest = await db.investigation.findFirst({ where: { incidentId: change.incidentId }, orderBy: { startedAt: 'desc' }, select: { id: true } });
    if (!latest) return undefined;
    const ruled = await db.hypothesis.findMany({ where: { investigationId: latest.id, key: { in: [...new Set(earlier.map((r) => r.hypothesisKey))] }, status: 'ruled_out' } });
    const h = ruled.find(ruledOutByResponder);
    return h ? `a responder ruled out ${h.label} (${h.title}), the cause this change was proposed for; confirm a hypothesis to have it proposed again` : undefined;
  }

  /**
   * Whether the hypothesis behind a request is still supported in the latest investigation (responders
   * may have ruled it out while Vigil was stopped, or a re-run no longer found it). A rollback or a
   * follow-up has no hypothesis of its own: it stands.
   */
  private async stillSupported(incidentId: string, key: string): Promise<boolean> {
    if (isDerived(key)) return true;
    const latest = await this.deps.db.investigation.findFirst({ where: { incidentId }, orderBy: { startedAt: 'desc' }, select: { id: true } });
    if (!latest) return true; // proposed outside an investigation (by hand): nothing says otherwise
    const h = await this.deps.db.hypothesis.findFirst({ where: { investigationId: latest.id, key }, select: { status: true } });
    return h?.status === 'supported';
  }

  /**
   * App Home: the pending fixes of these incidents that `userId` may approve — in one of their approver
   * groups, not yet decided by them, and not their own request under four-eyes — oldest first, with a link
   * to each card. A group Slack cannot list right now is left out (the card itself still decides).
   */
  async pendingFor(userId: string, incidentIds: string[]): Promise<AwaitingApproval[]> {
    const { db, chat, log } = this.deps;
    if (incidentIds.length === 0) return [];
    const rows = await db.approvalRequest.findMany({
      where: { status: 'pending', incidentId: { in: incidentIds } },
      orderBy: { createdAt: 'asc' },
      take: 50,
      select: { id: true, channelId: true, cardTs: true, createdAt: true, incident: { select: { title: true } } },
    });
    const out: AwaitingApproval[] = [];
    for (const row of rows) {
      const v = await readApproval(db, row.id);
      if (!v || v.decision.kind !== 'require_approval' || v.decisions.some((d) => d.userId === userId)) continue;
      if (v.requestedBy === userId && !v.decision.selfApprove) continue;
      const groups = await groupsOf(this.deps.userGroups, userId, v.decision.approverGroups).catch((err: unknown) => (log.warn({ err: String(err), user: userId }, 'could not read user groups for App Home'), []));
      if (groups.length === 0) continue;
      const permalink = row.cardTs ? await chat.permalink(row.channelId, row.cardTs) : undefined;
      out.push({ requestId: v.id, incidentTitle: row.incident.title, change: changeTitle(v), ...(v.plan ? { risk: v.plan.risk.score } : {}), ...(permalink ? { permalink } : {}), since: row.createdAt });
    }
    return out;
  }

  /** Open incidents posted in a channel, newest first (for `/sre stop` without an id). */
  async openIncidentsIn(channelId: string): Promise<{ id: string; title: string }[]> {
    return this.deps.db.incident.findMany({ where: { channelId, status: 'open' }, orderBy: { openedAt: 'desc' }, select: { id: true, title: true }, take: 10 });
  }

  /** The alert channel of an incident, or undefined when there is no such incident. */
  async incidentChannel(id: string): Promise<string | undefined> {
    return (await this.deps.db.incident.findUnique({ where: { id }, select: { channelId: true } }))?.channelId;
  }

  /**
   * At start: approvals granted before a restart are executed now (the approval is durable); runs
   * interrupted mid-execution are marked failed, since what reached the API server is unknown.
   */
  async resumeInterrupted(): Promise<{ resumed: number; interrupted: number }> {
    const { db } = this.deps;
    // Split mode: executions are the executor process's to resume (it alone can write).
    if (this.role === 'investigator') return { resumed: 0, interrupted: 0 };
    const rows = await db.approvalRequest.findMany({ where: { status: { in: ['approved', 'executing'] } }, include: { decisions: { where: { decision: 'approve' }, orderBy: { at: 'desc' }, take: 1 } } });
    let resumed = 0;
    let interrupted = 0;
    for (const r of rows) {
      const last = r.decisions[0];
      if (r.status === 'approved' && last) {
        resumed++;
        this.track(this.runApproved(r.id, { userId: last.userId, ...(last.userName ? { userName: last.userName } : {}), at: last.at }));
      } else if (r.status === 'executing') {
        // Another replica may be running it right now (its heartbeat is recent): look again later.
        const quietFor = this.deps.clock.now().getTime() - r.updatedAt.getTime();
        if (quietFor < INTERRUPTED_AFTER_MS) this.recheckLater(r.id, INTERRUPTED_AFTER_MS - quietFor + 1000);
        else if (await this.markInterrupted(r.id)) interrupted++;
      }
    }
    return { resumed, interrupted };
  }

  /** An `executing` row whose heartbeat stopped: what reached the target is unknown. */
  private async markInterrupted(id: string): Promise<boolean> {
    const quietSince = new Date(this.deps.clock.now().getTime() - INTERRUPTED_AFTER_MS);
    const marked = await updateApproval(this.deps.db, id, { status: 'failed', statusReason: INTERRUPTED_REASON }, { status: 'executing', updatedAt: { lt: quietSince } });
    if (marked) await this.refreshCard(id);
    return marked;
  }

  private recheckLater(id: string, ms: number): void {
    const t = setTimeout(() => {
      this.track(
        (async () => {
          const row = await this.deps.db.approvalRequest.findUnique({ where: { id }, select: { status: true, updatedAt: true } });
          if (row?.status !== 'executing') return;
          const quietFor = this.deps.clock.now().getTime() - row.updatedAt.getTime();
          if (quietFor < INTERRUPTED_AFTER_MS) this.recheckLater(id, INTERRUPTED_AFTER_MS - quietFor + 1000);
          else await this.markInterrupted(id);
        })(),
      );
      this.timers.delete(t);
    }, ms);
    t.unref();
    this.timers.add(t);
  }

  /**
   * Posts the request's card, or edits it in place once it exists. The card shows what the store holds:
   * Slack refusing it must not stop what follows (an approved change, its outcome note, a stop's other
   * cancellations), so that is logged and the card is tried again a little later (retryCard). Refreshes of
   * one request run one after another, each reading the request anew, so the last one shows the last state.
   */
  async refreshCard(id: string): Promise<void> {
    // Split mode: the card is the executor app's message; the investigator can only ask for it to be re-rendered.
    if (this.role === 'investigator') {
      await setHandoff(this.deps.db, id, 'card', this.deps.clock.now());
      const row = await this.deps.db.approvalRequest.findUnique({ where: { id }, select: { incidentId: true } });
      if (row) this.onChanged?.(row.incidentId);
      return;
    }
    const prev = this.cardChains.get(id) ?? Promise.resolve();
    const next = prev.catch(() => undefined).then(() => this.renderCard(id));
    this.cardChains.set(id, next);
    try {
      await next;
    } finally {
      if (this.cardChains.get(id) === next) this.cardChains.delete(id);
    }
  }

  /** Reads the request as it is now and makes the card say so; one at a time per request (refreshCard). */
  private async renderCard(id: string, attempt = 0): Promise<void> {
    const { db, chat } = this.deps;
    const v = await readApproval(db, id);
    const row = await db.approvalRequest.findUnique({ where: { id } });
    if (!v || !row) return;
    const card = renderApprovalCard(v, { pingApprovers: this.deps.settings?.pingApprovers ?? true, ...(this.deps.settings?.mode ? { mode: this.deps.settings.mode } : {}) });
    try {
      // A card someone deleted is posted again rather than failing every later refresh.
      const updated = row.cardTs ? await chat.update(row.channelId, row.cardTs, card).then(() => true, (err: unknown) => (chatErrorCode(err) === 'message_not_found' ? false : Promise.reject(err))) : false;
      if (!updated) {
        const tag = { incidentId: row.incidentId, purpose: `approval:${id}` };
        const found = row.cardTs ? undefined : await chat.findTagged(row.channelId, row.threadTs ?? undefined, tag).catch(() => undefined);
        const ts = found ?? (await chat.post(row.channelId, row.threadTs ?? undefined, card, tag)).ts;
        if (found) await chat.update(row.channelId, found, card);
        await setApprovalCard(db, id, ts);
      }
    } catch (err) {
      this.deps.log.warn({ err: String(err), requestId: id }, 'could not post or update the approval card; carrying on');
      this.retryCard(id, attempt);
    } finally {
      // The status changed in the store whether or not Slack took the card.
      this.onChanged?.(row.incidentId);
    }
  }

  /**
   * Tries a card Slack refused again later: without it, a card whose last edit failed would say "Waiting
   * for approval" after its change executed. Each retry reads the request anew.
   */
  private retryCard(id: string, attempt: number): void {
    const pauses = this.deps.settings?.cardRetryMs ?? CARD_RETRY_MS;
    if (attempt >= pauses.length || this.cardRetries.has(id)) return;
    this.cardRetries.add(id);
    const t = setTimeout(() => {
      this.timers.delete(t);
      this.cardRetries.delete(id);
      const prev = this.cardChains.get(id) ?? Promise.resolve();
      const next = prev.catch(() => undefined).then(() => this.renderCard(id, attempt + 1));
      this.cardChains.set(id, next);
      this.track(next.finally(() => this.cardChains.get(id) === next && this.cardChains.delete(id)));
    }, pauses[attempt]);
    t.unref();
    this.timers.add(t);
  }

  private async note(incidentId: string, purpose: string, icon: string, text: string, by: string): Promise<void> {
    const incident = await this.deps.db.incident.findUnique({ where: { id: incidentId } });
    if (!incident?.threadTs) return;
    await this.deps.chat.post(incident.channelId, incident.threadTs, renderApprovalNote(icon, text, by), { incidentId, purpose });
  }

  private planner() {
    const { reader, executor, policy, clock, redactor, log, providers } = this.deps;
    return { reader, executor, policy, clock, redactor, log, ...(providers ? { providers } : {}) };
  }
}

class StatusConflict extends Error {}

/**
 * The planner may quote the proposal's command in a hand-off hint (a flag or revert with no provider: "do
 * it by hand (…)"). A command the model wrote is not Vigil's to repeat on the card or the board.
 */
function unquoted(plan: Plan, command: string): Plan {
  if (!command.trim()) return plan;
  const hide = (text: string) => text.split(command).join('(the model’s command, not shown)');
  return { ...plan, preChecks: plan.preChecks.map((c) => ({ ...c, detail: hide(c.detail) })) };
}

/** A rollback or follow-up: proposed for a change Vigil made, not for a hypothesis on the board. */
function isDerived(key: string): boolean {
  return key.startsWith('rollback:') || key.startsWith('followup:');
}

/** Whether a hypothesis's fix is the same change (action and what it writes) as a request's. */
function sameChange(m: MitigationProposal, row: { action: string; targetKind: string; targetNs: string; targetName: string }): boolean {
  const t = proposedTarget(m);
  return m.action === row.action && t.kind === row.targetKind && t.namespace === row.targetNs && t.name === row.targetName;
}


/** Cancelled by `/sre stop`, or refused because Vigil was stopped: proposed again after a resume. */
function stoppedOut(r: { status: string; statusReason: string | null; decision: string }): boolean {
  if (r.status === 'cancelled') return (r.statusReason ?? '').startsWith(STOP_CANCELLED);
  if (r.status !== 'refused') return false;
  const d = JSON.parse(r.decision) as { kind?: string; code?: string };
  return d.kind === 'deny' && d.code === 'stopped';
}

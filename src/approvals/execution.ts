/**
 * One approved request, run to its end: claim it, re-plan against fresh state, ask the policy again
 * (runtime limits: stops, loop, rate, budget, blast radius — approval does not freeze them), write
 * through the approved executor identity, verify, report in the thread, and on a failed verification
 * propose the rollback as a new request that needs its own approval.
 */
import { executeExternalMitigation, executeMitigation, isExternalAction, openApprovedExecutor, verifyMitigation, type Approval, type ExecutionResult, type Plan } from '../actions/index.js';
import { touchApproval, updateApproval } from '../audit/records.js';
import { recordAudit } from '../incidents/audit.js';
import { readContext } from '../incidents/context.js';
import { evaluateProposal, type PolicyDecision, type Requester } from '../policy/index.js';
import { renderExecutionNote } from '../slack/blocks/approval.js';
import { driftSinceApproval } from './drift.js';
import { notExecutableReason, planProposal, storablePlan } from './planner.js';
import { incidentScope, plannedProposal, proposedTarget } from './policy-input.js';
import type { ApprovalDeps } from './service.js';
import { executionsOn, mutationsOf, readApproval, stopsFor, transition } from './store.js';
import type { MitigationProposal } from '../triage/types.js';
import type { ApprovalOutcome, ApprovalView, ProposalSource, ProposeResult } from './types.js';

/** How often a running execution touches its row; a row quiet for three beats is taken as interrupted. */
const EXECUTION_HEARTBEAT_MS = 20_000;
export const INTERRUPTED_AFTER_MS = 3 * EXECUTION_HEARTBEAT_MS;
export const INTERRUPTED_REASON = 'Vigil restarted during execution: check the target before proposing again';

export interface ExecutionHooks {
  refreshCard(id: string): Promise<void>;
  propose(incidentId: string, source: ProposalSource, opts: { requestedBy?: Requester; parentId?: string }): Promise<ProposeResult>;
  /** Why the request's hypothesis no longer backs it (ruled out since the approval), if so. */
  unbacked(row: { incidentId: string; hypothesisKey: string; action: string; targetKind: string; targetNs: string; targetName: string }): Promise<{ reason: string; by: string } | undefined>;
}

type Finish = {
  status: 'executed' | 'failed' | 'refused' | 'withdrawn';
  reason?: string;
  outcome?: ApprovalOutcome;
  decision?: PolicyDecision;
  plan?: Plan;
  /** After a failed verification: the plan's undo step, proposed once the failure is reported. */
  rollback?: MitigationProposal;
};

export class ApprovalExecution {
  constructor(
    private readonly deps: ApprovalDeps,
    private readonly hooks: ExecutionHooks,
  ) {}

  async run(id: string, approval: Approval): Promise<void> {
    const { db, log, clock } = this.deps;
    if (!(await transition(db, id, ['approved'], 'executing'))) return; // another worker has it, or it was cancelled
    // A heartbeat on the row while executing and verifying (minutes): a replica starting meanwhile sees a
    // live execution, not one interrupted by a restart (resumeInterrupted).
    const beat = setInterval(() => {
      void touchApproval(db, id, { status: 'executing' }, clock.now()).catch((err: unknown) => log.warn({ err: String(err), requestId: id }, 'execution heartbeat failed'));
    }, EXECUTION_HEARTBEAT_MS);
    beat.unref();
    try {
      await this.hooks.refreshCard(id);
      const v = (await readApproval(db, id))!;
      let finish: Finish;
      try {
        finish = await this.execute(v, approval);
      } catch (err) {
        log.error({ err: String(err), requestId: id }, 'approved action failed');
        finish = { status: 'failed', reason: `error while executing: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}` };
      }
      await this.finish(v, finish);
    } finally {
      clearInterval(beat);
    }
  }

  private async execute(v: ApprovalView, approval: Approval): Promise<Finish> {
    const { db, clock, policy, redactor } = this.deps;
    // Ruled out between the click and now: the approval was for a cause the board no longer holds.
    const row = await db.approvalRequest.findUniqueOrThrow({ where: { id: v.id } });
    const gone = await this.hooks.unbacked(row);
    if (gone) return { status: 'withdrawn', reason: `${gone.reason}; nothing was executed` };
    const incident = await db.incident.findUniqueOrThrow({ where: { id: v.incidentId }, include: { investigations: { orderBy: { startedAt: 'desc' }, take: 1 } } });
    const now = clock.now();
    const target = proposedTarget(v.proposal);
    const history = await executionsOn(db, target, now, v.plan?.diagnosis?.component?.name);
    const planned = await planProposal(this.deps, v.incidentId, v.proposal, v.plan?.diagnosis, history.risk);
    if (planned.kind === 'invalid') return { status: 'failed', reason: planned.reason };
    const plan = planned.plan;
    if (!plan.executable) return { status: 'failed', reason: notExecutableReason(plan), plan };
    const drift = driftSinceApproval(v.plan, plan, redactor);
    if (drift) return { status: 'refused', reason: `refused: ${drift}. The approval was for the change on the card; propose again to plan against the current state`, plan };

    const owner = (incident.service ? this.deps.catalog?.find(incident.namespace ?? undefined, incident.service)?.owner : undefined) ?? readContext(incident.investigations[0]?.context ?? '{}').owner;
    const decision = evaluateProposal(
      policy,
      plannedProposal({ proposal: v.proposal, incidentId: v.incidentId, requestedBy: v.requestedBy, ...(v.plan?.diagnosis?.component ? { diagnosedService: v.plan.diagnosis.component.name } : {}) }, plan),
      {
        incidentScope: incidentScope(incident, this.deps.catalog),
        ...(owner ? { serviceOwner: owner } : {}),
        history: history.policy,
        incidentMutations: await mutationsOf(db, v.incidentId),
        stopped: await stopsFor(db, v.incidentId),
        now,
      },
    );
    if (decision.kind === 'deny') return { status: 'refused', reason: decision.reason, decision, plan };
    const approvers = v.decisions.filter((d) => d.decision === 'approve').length;
    if (decision.approvals > approvers) return { status: 'refused', reason: `refused: the policy now needs ${decision.approvals} approvals (risk ${plan.risk.score}/100), ${approvers} given; propose again`, decision, plan };

    const execution = await this.write(v.incidentId, plan, approval);
    // A write without a clear answer may have landed: the limits count it, and verification decides.
    const uncertain = execution.status === 'rejected' && execution.writes.some((w) => w.uncertain);
    const sent = execution.status !== 'refused' && (uncertain || execution.writes.some((w) => w.status === 'ok' && !w.dryRun));
    // Recorded before verifying: the rate, loop and budget limits count what reached the API server.
    await updateApproval(db, v.id, { ...(sent ? { executedAt: clock.now() } : {}), plan: JSON.stringify(storablePlan(plan, v.plan?.diagnosis, redactor)), risk: plan.risk.score, result: JSON.stringify(redactor.redactValue({ execution })) });
    await recordAudit(db, {
      incidentId: v.incidentId,
      actor: execution.status === 'refused' ? 'vigil' : execution.identity.user,
      kind: 'approval.executed',
      data: redactor.redactValue({ requestId: v.id, approvedBy: approval.userId, status: execution.status, ...(execution.status !== 'refused' ? { identity: execution.identity, annotation: execution.annotation, writes: execution.writes } : { message: execution.message }) }),
    });
    if (execution.status !== 'applied' && !uncertain) return { status: 'failed', reason: `not applied: ${execution.message}`, outcome: { execution }, plan };

    const s = this.deps.settings ?? {};
    const { rollback, ...verification } = await verifyMitigation(this.deps.reader, plan, {
      ...(s.verifyWindowMs !== undefined ? { windowMs: s.verifyWindowMs } : {}),
      ...(s.verifyIntervalMs !== undefined ? { intervalMs: s.verifyIntervalMs } : {}),
      ...(this.deps.metrics ? { metrics: this.deps.metrics } : {}),
      ...(this.deps.providers ? { providers: this.deps.providers } : {}),
    });
    const failedChecks = verification.checks.filter((c) => !c.ok).map((c) => `${c.description} (${c.observed})`).join('; ');
    if (uncertain) {
      // Whether the write landed is unknown; a rollback of something that may not have happened is not proposed.
      return verification.ok
        ? { status: 'executed', reason: `the provider gave no clear answer (${execution.message}), but verification shows the change in place`, outcome: { execution, verification }, plan }
        : { status: 'failed', reason: `outcome unknown: ${execution.message}; verification failed: ${failedChecks}. Check ${plan.target.kind.toLowerCase()}/${plan.target.name} before acting again`, outcome: { execution, verification }, plan };
    }
    if (verification.ok) return { status: 'executed', outcome: { execution, verification }, plan };
    const reason = `verification failed: ${failedChecks}`;
    return { status: 'failed', reason, outcome: { execution, verification }, plan, ...(rollback ? { rollback } : {}) };
  }

  /** Kubernetes writes go through the executor identity; flag and revert writes through their provider's writer token. */
  private async write(incidentId: string, plan: Plan, approval: Approval): Promise<ExecutionResult> {
    // Last look at the kill switch, right before the first real write: /sre stop may have come while the
    // plan was re-made, the executor identity opened and the final dry run sent.
    const guard = async (): Promise<string | undefined> => {
      const stops = await stopsFor(this.deps.db, incidentId);
      return stops.global || stops.incident ? `Vigil was stopped ${stops.global ? 'for all incidents' : 'for this incident'} before the write` : undefined;
    };
    if (isExternalAction(plan.action)) return executeExternalMitigation(this.deps.providers ?? {}, plan, approval, guard);
    return executeMitigation(await openApprovedExecutor(this.deps.executor, incidentId, approval), plan, guard);
  }

  private async finish(v: ApprovalView, f: Finish): Promise<void> {
    const { db, redactor, clock } = this.deps;
    const data = {
      statusReason: f.reason ? redactor.redactText(f.reason) : null,
      ...(f.outcome ? { result: JSON.stringify(redactor.redactValue(f.outcome)) } : {}),
      ...(f.plan ? { plan: JSON.stringify(storablePlan(f.plan, v.plan?.diagnosis, redactor)) } : {}),
    };
    if (!(await transition(db, v.id, ['executing'], f.status, data))) {
      // Taken for an interrupted run while this one was alive (heartbeat missed): the real outcome wins.
      await updateApproval(db, v.id, { status: f.status, ...data }, { status: 'failed', statusReason: INTERRUPTED_REASON });
    }
    if (f.decision) await updateApproval(db, v.id, { decision: JSON.stringify(f.decision) });
    await recordAudit(db, { incidentId: v.incidentId, actor: 'vigil', kind: `approval.${f.status}`, data: { requestId: v.id, ...(f.reason ? { reason: redactor.redactText(f.reason) } : {}) }, at: clock.now() });
    await this.hooks.refreshCard(v.id);
    const done = (await readApproval(db, v.id))!;
    const row = await db.approvalRequest.findUniqueOrThrow({ where: { id: v.id } });
    await this.deps.chat.post(row.channelId, row.threadTs ?? undefined, renderExecutionNote(done), { incidentId: v.incidentId, purpose: `approval:${v.id}:outcome` });
    if (f.rollback && f.plan) await this.proposeRollback(v, f.plan, f.rollback, f.outcome ?? {});
    if (f.status === 'executed' && f.plan?.followUps?.length) await this.proposeFollowUps(v, f.plan.followUps);
  }

  /** The steps a verified change calls for, each a new request of its own (never executed from here). */
  private async proposeFollowUps(v: ApprovalView, followUps: MitigationProposal[]): Promise<void> {
    for (const m of followUps) {
      const t = m.target;
      try {
        await this.hooks.propose(v.incidentId, { key: `followup:${v.id}:${t.kind.toLowerCase()}/${t.name}`, status: 'supported', component: t, mitigation: { ...m, rationale: `follow-up of the executed ${v.plan?.title ?? v.proposal.action}: ${m.rationale}` } }, {});
      } catch (err) {
        this.deps.log.warn({ err: String(err), requestId: v.id, followUp: m.action }, 'could not propose a follow-up');
      }
    }
  }

  /** The undo step as a new request: its own card, its own approval, never executed from here. */
  private async proposeRollback(v: ApprovalView, plan: Plan, rollback: MitigationProposal, outcome: ApprovalOutcome): Promise<void> {
    const proposed = await this.hooks.propose(
      v.incidentId,
      { key: `rollback:${v.id}`, status: 'supported', component: { kind: plan.target.kind, namespace: plan.target.namespace, name: plan.target.name }, mitigation: { ...rollback, rationale: `verification failed; ${rollback.rationale}` } },
      { parentId: v.id },
    );
    if (proposed.kind === 'nothing_to_propose') return;
    await updateApproval(this.deps.db, v.id, { result: JSON.stringify(this.deps.redactor.redactValue({ ...outcome, rollbackRequestId: proposed.requestId })) });
    await this.hooks.refreshCard(v.id);
  }
}

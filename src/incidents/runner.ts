import { randomUUID } from 'node:crypto';
import PQueue from 'p-queue';
import type { Logger } from 'pino';
import type { Alert } from '../alerts/types.js';
import type { Redactor } from '../redact/index.js';
import type { Db } from '../store/db.js';
import { recordAudit } from './audit.js';
import type { Clock } from './clock.js';
import { readContext, type InvestigationContext } from './context.js';
import { storeFindings } from './findings.js';
import type { Context, Tracer } from '@opentelemetry/api';
import { inSpan, recordAgentEvent, rootContext } from '../audit/tracing.js';
import { deepenWithModel, escalationFor, type ModelStepDeps } from './deepen.js';
import { investigateDeterministically, type EvidenceSources, type InvestigationOutcome } from './investigate.js';
import type { ThreadSync } from './thread.js';

/**
 * The investigation's durable steps, in order. `step` in the DB is the last one completed, so a
 * restarted process resumes after it; every step is idempotent (posts go through ThreadSync's outbox,
 * findings are upserted by key).
 */
export const STEPS = ['created', 'announced', 'triaged', 'deepened', 'reported'] as const;
export type Step = (typeof STEPS)[number];

export interface RunnerSettings {
  concurrency: number;
  leaseMs: number;
  /** Hand over to people when no supported hypothesis reaches this confidence. */
  escalationConfidence?: number;
  maxAttempts?: number;
}

export class InvestigationRunner {
  readonly owner = `vigil-${randomUUID().slice(0, 8)}`;
  private readonly queue: PQueue;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly queued = new Set<string>();
  /** Traces of each run, step, tool call and model call (set when tracing is configured). */
  tracer?: Tracer;
  /** Called after an investigation reports (e.g. to propose its fix for approval); failures are logged, not fatal. */
  afterReport?: (incidentId: string) => Promise<void>;
  /** The last deterministic outcome per investigation, for the model step (recomputed after a restart). */
  private readonly outcomes = new Map<string, InvestigationOutcome>();
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly thread: ThreadSync,
    private readonly sources: EvidenceSources,
    private readonly redactor: Redactor,
    private readonly clock: Clock,
    private readonly settings: RunnerSettings,
    private readonly log: Logger,
    /** The model step; absent when no model is configured (deterministic triage only). */
    private readonly model?: Omit<ModelStepDeps, 'db' | 'redactor' | 'log' | 'now'>,
  ) {
    this.queue = new PQueue({ concurrency: settings.concurrency });
  }

  /** Queue an investigation; a second call while it is queued is a no-op. */
  enqueue(investigationId: string): void {
    if (this.stopped || this.queued.has(investigationId)) return;
    this.queued.add(investigationId);
    void this.queue.add(async () => {
      this.queued.delete(investigationId);
      await this.run(investigationId);
    });
  }

  /** At start: pick up every investigation a previous process left unfinished. */
  async resumePending(): Promise<number> {
    const pending = await this.db.investigation.findMany({ where: { state: { in: ['queued', 'running'] } }, select: { id: true, leaseUntil: true, leaseOwner: true } });
    const now = this.clock.now().getTime();
    for (const inv of pending) {
      const wait = inv.leaseUntil && inv.leaseOwner !== this.owner ? inv.leaseUntil.getTime() - now : 0;
      if (wait > 0) this.later(inv.id, wait + 50);
      else this.enqueue(inv.id);
    }
    if (pending.length) this.log.info({ count: pending.length }, 'resuming unfinished investigations');
    return pending.length;
  }

  /** Wait until nothing is queued or running (tests, demo, shutdown). */
  async idle(): Promise<void> {
    while (this.queue.size > 0 || this.queue.pending > 0 || this.timers.size > 0) {
      await this.queue.onIdle();
      if (this.timers.size > 0) await new Promise((r) => setTimeout(r, 20));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.queue.clear();
    await this.queue.onIdle();
  }

  private later(id: string, ms: number): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      this.enqueue(id);
    }, ms);
    this.timers.add(t);
  }

  /** Claim the lease in the DB: only one worker (in any replica) runs an investigation at a time. */
  private async claim(id: string): Promise<boolean> {
    const now = this.clock.now();
    const { count } = await this.db.investigation.updateMany({
      where: { id, state: { in: ['queued', 'running'] }, OR: [{ leaseUntil: null }, { leaseUntil: { lt: now } }, { leaseOwner: this.owner }] },
      data: { leaseOwner: this.owner, leaseUntil: new Date(now.getTime() + this.settings.leaseMs), state: 'running', attempts: { increment: 1 } },
    });
    return count === 1;
  }

  private async run(id: string): Promise<void> {
    if (!(await this.claim(id))) return;
    const inv = await this.db.investigation.findUniqueOrThrow({ where: { id }, include: { incident: { include: { alerts: { orderBy: { receivedAt: 'asc' }, take: 1 } } } } });
    // One trace per run: a span per step beneath it, and per tool/model call beneath the model step.
    await inSpan(this.tracer, 'vigil.investigation', rootContext(), { 'vigil.incident.id': inv.incidentId, 'vigil.investigation.id': id, 'vigil.resumed_from': inv.step }, async (span, runCtx) => {
      if (span) await this.patchContext(id, { traceId: span.spanContext().traceId });
      await this.runSteps(id, inv.incidentId, inv.step as Step, inv.incident.alerts[0], runCtx);
    });
  }

  private async runSteps(id: string, incidentId: string, from: Step, firstAlert: { payload: string; receivedAt: Date } | undefined, runCtx: Context): Promise<void> {
    const log = this.log.child({ incidentId, investigationId: id });
    let step = from;
    try {
      while (step !== 'reported') {
        const current = step;
        step = await inSpan(this.tracer, `vigil.step ${current}`, runCtx, { 'vigil.step': current }, (_s, stepCtx) => this.advance(id, incidentId, current, firstAlert, stepCtx));
        await this.db.investigation.update({
          where: { id },
          data: { step, leaseUntil: new Date(this.clock.now().getTime() + this.settings.leaseMs) },
        });
        log.debug({ step }, 'investigation step done');
      }
      await this.db.investigation.update({ where: { id }, data: { state: 'waiting', leaseOwner: null, leaseUntil: null, lastError: null } });
      await this.thread.sync(incidentId);
      await this.afterReport?.(incidentId).catch((err: unknown) => log.error({ err: err instanceof Error ? err.message : String(err) }, 'after-report hook failed'));
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const fresh = await this.db.investigation.findUniqueOrThrow({ where: { id } });
      const max = this.settings.maxAttempts ?? 5;
      if (fresh.attempts >= max) {
        log.error({ err: message, step }, 'investigation failed');
        await this.db.investigation.update({ where: { id }, data: { state: 'failed', lastError: this.redactor.redactText(message).slice(0, 500), leaseOwner: null, leaseUntil: null, finishedAt: this.clock.now() } });
        await recordAudit(this.db, { incidentId, actor: 'vigil', kind: 'investigation.failed', data: { step, error: this.redactor.redactText(message) } });
        await this.thread.sync(incidentId).catch((e) => log.error({ err: String(e) }, 'could not show the failure in the thread'));
      } else {
        const backoff = Math.min(30_000, 500 * 2 ** (fresh.attempts - 1));
        log.warn({ err: message, step, attempt: fresh.attempts, retryInMs: backoff }, 'investigation step failed; will retry');
        await this.db.investigation.update({ where: { id }, data: { lastError: this.redactor.redactText(message).slice(0, 500), leaseOwner: null, leaseUntil: null } });
        this.later(id, backoff);
      }
    }
  }

  private async advance(id: string, incidentId: string, step: Step, firstAlert: { payload: string; receivedAt: Date } | undefined, stepCtx: Context): Promise<Step> {
    switch (step) {
      case 'created': {
        await this.thread.sync(incidentId);
        if (firstAlert) await this.patchContext(id, { firstCardMs: this.clock.now().getTime() - firstAlert.receivedAt.getTime() });
        return 'announced';
      }
      case 'announced': {
        const outcome = await this.triage(firstAlert);
        this.outcomes.set(id, outcome);
        await this.db.$transaction(async (tx) => {
          await storeFindings(tx, id, outcome.findings, this.redactor);
          const inv = await tx.investigation.findUniqueOrThrow({ where: { id } });
          const ctx: InvestigationContext = {
            ...readContext(inv.context),
            target: outcome.target,
            gaps: outcome.gaps.map((g) => this.redactor.redactText(g)),
            triagedAt: this.clock.now().toISOString(),
            ...(outcome.input.service?.owner ? { owner: outcome.input.service.owner } : {}),
            changes: outcome.changes.slice(0, 10).map((c) => ({ at: c.at.toISOString(), summary: this.redactor.redactText(c.summary), score: c.score, why: c.why })),
          };
          // Without a model, deterministic triage decides alone whether people must take over.
          const escalation = this.model ? undefined : escalationFor(outcome.findings, this.settings.escalationConfidence ?? 0.7, outcome.gaps);
          if (escalation) ctx.escalation = escalation;
          await tx.investigation.update({ where: { id }, data: { context: JSON.stringify(ctx) } });
          if (outcome.target) await tx.incident.update({ where: { id: incidentId }, data: { namespace: outcome.target.namespace, service: outcome.target.name } });
          await recordAudit(tx, {
            incidentId,
            actor: 'vigil',
            kind: 'triage.completed',
            data: { target: outcome.target ?? null, findings: outcome.findings.map((f) => ({ key: f.key, status: f.status, confidence: f.confidence })), gaps: ctx.gaps },
          });
        });
        return 'triaged';
      }
      case 'triaged': {
        // The first board goes out before the model is asked: deterministic findings land in seconds.
        await this.thread.sync(incidentId);
        if (this.model) {
          const outcome = this.outcomes.get(id) ?? (await this.triage(firstAlert));
          this.outcomes.delete(id);
          await deepenWithModel(
            { ...this.model, db: this.db, redactor: this.redactor, log: this.log, now: () => this.clock.now(), trace: (e) => recordAgentEvent(this.tracer, stepCtx, e) },
            id,
            incidentId,
            outcome,
          );
        }
        return 'deepened';
      }
      case 'deepened': {
        await this.thread.sync(incidentId);
        return 'reported';
      }
      case 'reported':
        return 'reported';
    }
  }

  private async triage(firstAlert: { payload: string; receivedAt: Date } | undefined): Promise<InvestigationOutcome> {
    const alert = firstAlert ? (JSON.parse(firstAlert.payload) as Alert) : undefined;
    if (!alert) throw new Error('incident has no alert to investigate');
    const onset = alert.startsAt ? new Date(alert.startsAt) : firstAlert!.receivedAt;
    return investigateDeterministically(alert, onset, this.sources);
  }

  /**
   * Run the investigation again from its last deterministic step (new steering for the model, or a
   * responder's request): the board keeps its labels, new findings are merged in by key.
   */
  async reinvestigate(investigationId: string): Promise<void> {
    const { count } = await this.db.investigation.updateMany({
      where: { id: investigationId, state: { in: ['waiting', 'failed'] } },
      data: { state: 'queued', step: 'announced', attempts: 0, lastError: null },
    });
    if (count) this.enqueue(investigationId);
  }

  get hasModel(): boolean {
    return this.model !== undefined;
  }

  private async patchContext(id: string, patch: Partial<InvestigationContext>): Promise<void> {
    const inv = await this.db.investigation.findUniqueOrThrow({ where: { id } });
    const ctx = readContext(inv.context);
    if (patch.firstCardMs !== undefined && ctx.firstCardMs !== undefined) return; // keep the first measurement across resumes
    if (patch.traceId !== undefined && ctx.traceId !== undefined) return; // the thread links the first trace
    await this.db.investigation.update({ where: { id }, data: { context: JSON.stringify({ ...ctx, ...patch }) } });
  }
}

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
import { deepenWithModel, escalationFor, unreadSteering, type ModelStepDeps } from './deepen.js';
import { InvestigationLease, InvestigationStoppedError, LeaseLostError } from './lease.js';
import { TransientSourceError } from '../evidence/transient.js';
import { investigateDeterministically, type EvidenceSources, type InvestigationOutcome } from './investigate.js';
import { ThreadSyncError, type ThreadSync } from './thread.js';
import type { AgentEvent } from '../agent/loop.js';
import { PRIORITY, priorityOf, type Priority } from './priority.js';

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
  /** Running in this process now; the lease accepts its own owner (for retries), so it cannot tell. */
  private readonly running = new Set<string>();
  /** Asked for while running here: queued again when the current run ends. */
  private readonly again = new Set<string>();
  /** The priority each investigation was queued with, kept for its retries and re-runs. */
  private readonly priorities = new Map<string, Priority>();
  /** Runs in progress here, by investigation id, so `/sre stop` can abort them at once. */
  private readonly leases = new Map<string, { incidentId: string; lease: InvestigationLease }>();
  /** Traces of each run, step, tool call and model call (set when tracing is configured). */
  tracer?: Tracer;
  /** Called after an investigation reports (e.g. to propose its fix for approval); failures are logged, not fatal. */
  afterReport?: (incidentId: string) => Promise<void>;
  /** Metrics hooks (src/http/metrics.ts, wired in vigil.ts); observers only, never part of a run. */
  metrics?: RunnerMetrics;
  /** The last deterministic outcome per investigation, for the model step (recomputed after a restart). */
  private readonly outcomes = new Map<string, InvestigationOutcome>();
  private stopped = false;
  private sweeper?: NodeJS.Timeout;

  constructor(
    private readonly db: Db,
    private readonly thread: ThreadSync,
    private readonly sources: EvidenceSources,
    private readonly redactor: Redactor,
    private readonly clock: Clock,
    private readonly settings: RunnerSettings,
    private readonly log: Logger,
    /** The model step; absent when no model is configured (deterministic triage only). */
    private readonly model?: Omit<ModelStepDeps, 'db' | 'redactor' | 'log' | 'now' | 'signal' | 'hold'>,
  ) {
    this.queue = new PQueue({ concurrency: settings.concurrency });
  }

  /**
   * Queue an investigation; a second call while it is queued is a no-op, while it runs here it runs once more after.
   * At most `concurrency` run at once; the next to start is the highest `priority` (severity, see priority.ts),
   * first come first served among equals. Without one, the priority it was last queued with (else a warning's).
   */
  enqueue(investigationId: string, priority?: Priority): void {
    if (this.stopped || this.queued.has(investigationId)) return;
    const p = priority ?? this.priorities.get(investigationId) ?? PRIORITY.warning;
    this.priorities.set(investigationId, p);
    this.queued.add(investigationId);
    this.queue
      .add(
        async () => {
          this.queued.delete(investigationId);
          await this.run(investigationId);
        },
        { priority: p },
      )
      .catch((err: unknown) => {
        // stop() clears the queue, which rejects what was waiting in it: nothing failed, it stays queued in the store.
        if (this.stopped) return;
        // Only a failing DB gets here (claiming, or recording a failure). The investigation stays
        // queued or leased; once the lease expires this process or another replica claims it again.
        this.log.error({ investigationId, err: errorText(err) }, 'investigation run failed; retrying after the lease expires');
        this.later(investigationId, this.settings.leaseMs, p);
      });
  }

  /** At start: pick up every investigation a previous process left unfinished. */
  async resumePending(): Promise<number> {
    const pending = await this.db.investigation.findMany({ where: { state: { in: ['queued', 'running'] } }, select: { id: true, leaseUntil: true, leaseOwner: true, incident: { select: { severity: true } } } });
    const now = this.clock.now().getTime();
    for (const inv of pending) {
      this.priorities.set(inv.id, this.priorities.get(inv.id) ?? priorityOf(inv.incident.severity));
      const wait = inv.leaseUntil && inv.leaseOwner !== this.owner ? inv.leaseUntil.getTime() - now : 0;
      if (wait > 0) this.later(inv.id, wait + 50);
      else this.enqueue(inv.id);
    }
    if (pending.length) this.log.info({ count: pending.length }, 'resuming unfinished investigations');
    return pending.length;
  }

  /**
   * Take over what no live worker holds, every half lease: investigations whose lease (or stored retry
   * time) has passed, and queued ones nobody claimed for a whole lease (their replica died before its queue
   * reached them, or it is backed up). Claiming is one conditional UPDATE, so two replicas sweeping at once
   * still run each investigation once; posts go through the thread's outbox, so a takeover never posts twice.
   */
  startSweeping(): void {
    if (this.sweeper || this.stopped) return;
    this.sweeper = setInterval(() => {
      this.sweep().catch((err: unknown) => this.log.warn({ err: errorText(err) }, 'could not sweep for orphaned investigations; next sweep retries'));
    }, Math.max(200, Math.floor(this.settings.leaseMs / 2)));
    this.sweeper.unref();
  }

  /** One sweep (see startSweeping); returns how many investigations it queued here. */
  async sweep(): Promise<number> {
    if (this.stopped) return 0;
    const now = this.clock.now();
    const orphans = await this.db.investigation.findMany({
      where: {
        state: { in: ['queued', 'running'] },
        OR: [{ leaseUntil: { lt: now } }, { leaseUntil: null, updatedAt: { lt: new Date(now.getTime() - this.settings.leaseMs) } }],
      },
      select: { id: true, leaseOwner: true, incidentId: true, step: true, attempts: true, incident: { select: { severity: true } } },
      orderBy: { updatedAt: 'asc' },
      take: 100,
    });
    let n = 0;
    for (const o of orphans) {
      if (this.queued.has(o.id) || this.running.has(o.id)) continue;
      if (o.leaseOwner && o.leaseOwner !== this.owner) this.log.info({ investigationId: o.id, incidentId: o.incidentId, from: o.leaseOwner, step: o.step, attempts: o.attempts }, 'taking over an investigation whose worker stopped renewing its lease');
      this.enqueue(o.id, this.priorities.get(o.id) ?? priorityOf(o.incident.severity));
      n++;
    }
    return n;
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
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.queue.clear();
    await this.queue.onIdle();
  }

  /** Queue again after `ms`, keeping its place in the order (the map entry goes when the run ends). */
  private later(id: string, ms: number, priority: Priority | undefined = this.priorities.get(id)): void {
    if (this.stopped) return;
    const t = setTimeout(() => {
      this.timers.delete(t);
      this.enqueue(id, priority);
    }, ms);
    this.timers.add(t);
  }

  private async run(id: string): Promise<void> {
    if (this.running.has(id)) {
      this.again.add(id);
      return;
    }
    this.running.add(id);
    try {
      const lease = await InvestigationLease.claim(this.db, id, this.owner, this.settings.leaseMs, this.clock, this.log);
      if (!lease) return;
      try {
        await this.runClaimed(lease);
      } finally {
        lease.stop();
      }
    } finally {
      this.running.delete(id);
      if (this.again.delete(id)) this.enqueue(id);
      else if (!this.queued.has(id)) this.priorities.delete(id);
    }
  }

  /**
   * `/sre stop` on this replica: abort the model call or evidence read in flight now (other replicas see the
   * stop in the DB at their next lease renewal, see `stoppedBy`).
   */
  stopRuns(scope: 'global' | { incidentId: string }, by: string): number {
    let n = 0;
    for (const { incidentId, lease } of this.leases.values()) {
      if (scope === 'global' || scope.incidentId === incidentId) {
        lease.abortStopped(by);
        n++;
      }
    }
    return n;
  }

  /** Who stopped this incident (or everything), from the stop switch in the DB; undefined when not stopped. */
  private async stoppedBy(incidentId: string): Promise<string | undefined> {
    // 'global' is approvals' GLOBAL_SCOPE (the stop switch of `/sre stop all`); read here without importing approvals.
    const rows = await this.db.stopSwitch.findMany({ where: { scope: { in: ['global', incidentId] }, stopped: true } });
    return rows[0]?.by;
  }

  private async runClaimed(lease: InvestigationLease): Promise<void> {
    const id = lease.investigationId;
    let log = this.log.child({ investigationId: id });
    let incidentId = '';
    let step: Step = 'created';
    const began = performance.now();
    try {
      const inv = await this.db.investigation.findUniqueOrThrow({ where: { id }, include: { incident: { include: { alerts: { orderBy: { receivedAt: 'asc' }, take: 1 } } } } });
      incidentId = inv.incidentId;
      this.leases.set(id, { incidentId, lease });
      lease.watchStop(() => this.stoppedBy(inv.incidentId));
      step = inv.step as Step;
      log = log.child({ incidentId });
      const firstAlert = inv.incident.alerts[0];
      // One trace per run: a span per step beneath it, and per tool/model call beneath the model step.
      await inSpan(this.tracer, 'vigil.investigation', rootContext(), { 'vigil.incident.id': inv.incidentId, 'vigil.investigation.id': id, 'vigil.resumed_from': inv.step }, async (span, runCtx) => {
        if (span) await this.patchContext(lease, { traceId: span.spanContext().traceId });
        while (step !== 'reported') {
          // Stopped (here or on another replica): no further evidence read or model call starts.
          const by = await this.stoppedBy(inv.incidentId);
          if (by) lease.abortStopped(by);
          lease.check();
          const current = step;
          const next = await inSpan(this.tracer, `vigil.step ${current}`, runCtx, { 'vigil.step': current }, (_s, stepCtx) => this.advance(lease, inv.incidentId, current, firstAlert, stepCtx));
          // Only the lease holder records progress: a worker that lost it mid-step drops the step.
          await lease.update({ step: next });
          step = next;
          log.debug({ step }, 'investigation step done');
        }
      });
      await lease.release({ state: 'waiting', lastError: null });
      this.metrics?.investigationRun('reported', (performance.now() - began) / 1000);
    } catch (err) {
      if (!(err instanceof LeaseLostError)) this.metrics?.investigationRun('failed', (performance.now() - began) / 1000);
      await this.failed(lease, step, err, log);
      return;
    } finally {
      this.leases.delete(id);
    }
    await this.reported(id, incidentId, log);
  }

  /** After a report: show it, then investigate again if steering arrived too late for the model, else hand on. */
  private async reported(id: string, incidentId: string, log: Logger): Promise<void> {
    await this.thread.sync(incidentId).catch((err: unknown) => log.error({ err: errorText(err) }, 'could not show the report in the thread'));
    const again = await this.rerunForUnreadSteering(id, incidentId).catch((err: unknown) => {
      log.error({ err: errorText(err) }, 'could not check for unread steering');
      return false;
    });
    if (again) {
      log.info('steering arrived after the model read its input: investigating again');
      return; // the re-run reports, and hands on, again
    }
    await Promise.resolve()
      .then(() => this.afterReport?.(incidentId))
      .catch((err: unknown) => log.error({ err: errorText(err) }, 'after-report hook failed'));
  }

  /**
   * A step failed: retry with backoff, or give up after `maxAttempts`. When even that cannot be
   * recorded (the DB is failing too), the lease is left to expire so the investigation is claimed again.
   */
  private async failed(lease: InvestigationLease, step: Step, err: unknown, log: Logger): Promise<void> {
    lease.stop();
    if (err instanceof LeaseLostError) {
      log.warn({ step }, 'lost the investigation lease mid-step; the worker that holds it carries on');
      return;
    }
    const reason = lease.signal.aborted ? lease.signal.reason : undefined;
    if (err instanceof InvestigationStoppedError || reason instanceof InvestigationStoppedError) {
      await this.recordStopped(lease, step, (reason instanceof InvestigationStoppedError ? reason : (err as InvestigationStoppedError)).by, log).catch((e: unknown) => {
        if (!(e instanceof LeaseLostError)) log.error({ err: errorText(e) }, 'could not record the stopped investigation; it is claimed again after the lease expires');
      });
      return;
    }
    const message = errorText(err);
    try {
      await this.recordFailure(lease, step, message, log, err instanceof TransientSourceError ? err.retryAfterMs : undefined);
    } catch (e) {
      if (e instanceof LeaseLostError) return log.warn({ step, err: message }, 'step failed after the lease was lost; the worker that holds it carries on');
      log.error({ step, err: message, recordErr: errorText(e) }, 'could not record the investigation failure; retrying after the lease expires');
      this.later(lease.investigationId, this.settings.leaseMs);
    }
  }

  /** Stopped by a responder: no retry. It ends as failed (so a reply or `/sre investigate` can run it again after /sre resume). */
  private async recordStopped(lease: InvestigationLease, step: Step, by: string, log: Logger): Promise<void> {
    const fresh = await this.db.investigation.findUniqueOrThrow({ where: { id: lease.investigationId } });
    await this.db.$transaction(async (tx) => {
      await lease.release({ state: 'failed', lastError: `stopped by ${by} (/sre stop)`, finishedAt: this.clock.now() }, tx);
      await recordAudit(tx, { incidentId: fresh.incidentId, actor: by, kind: 'investigation.stopped', data: { step } });
    });
    log.info({ step, by }, 'investigation stopped');
    await this.thread.sync(fresh.incidentId).catch((e: unknown) => log.error({ err: errorText(e) }, 'could not show the stop in the thread'));
  }

  private async recordFailure(lease: InvestigationLease, step: Step, message: string, log: Logger, retryAfter?: number): Promise<void> {
    const id = lease.investigationId;
    const fresh = await this.db.investigation.findUniqueOrThrow({ where: { id } });
    const max = this.settings.maxAttempts ?? 5;
    const lastError = this.redactor.redactText(message).slice(0, 500);
    if (fresh.attempts >= max) {
      await this.db.$transaction(async (tx) => {
        await lease.release({ state: 'failed', lastError, finishedAt: this.clock.now() }, tx);
        await recordAudit(tx, { incidentId: fresh.incidentId, actor: 'vigil', kind: 'investigation.failed', data: { step, error: this.redactor.redactText(message) } });
      });
      log.error({ err: message, step }, 'investigation failed');
      await this.thread.sync(fresh.incidentId).catch((e: unknown) => log.error({ err: errorText(e) }, 'could not show the failure in the thread'));
    } else {
      const backoff = retryDelayMs(fresh.attempts, retryAfter);
      // The retry time is stored with the row, so a replica that outlives this one honours the backoff too.
      await lease.defer(backoff, { lastError });
      log.warn({ err: message, step, attempt: fresh.attempts, retryInMs: backoff }, 'investigation step failed; will retry');
      this.later(id, backoff);
    }
  }

  private async advance(lease: InvestigationLease, incidentId: string, step: Step, firstAlert: { payload: string; receivedAt: Date } | undefined, stepCtx: Context): Promise<Step> {
    const id = lease.investigationId;
    switch (step) {
      case 'created': {
        await this.showProgress(incidentId);
        const firstCardMs = firstAlert ? this.clock.now().getTime() - firstAlert.receivedAt.getTime() : undefined;
        if (firstCardMs !== undefined && (await this.patchContext(lease, { firstCardMs }))) this.metrics?.firstCard(firstCardMs / 1000);
        return 'announced';
      }
      case 'announced': {
        const outcome = await this.triage(firstAlert);
        this.outcomes.set(id, outcome);
        await this.db.$transaction(async (tx) => {
          await lease.update({}, tx);
          await storeFindings(tx, id, outcome.findings, this.redactor);
          const inv = await tx.investigation.findUniqueOrThrow({ where: { id } });
          const ctx: InvestigationContext = {
            ...readContext(inv.context),
            target: outcome.target,
            subjects: outcome.subjects.map((s) => this.redactor.redactText(`${s.ref.kind}/${s.ref.namespace ? `${s.ref.namespace}/` : ''}${s.ref.name} (${s.how})`)),
            candidates: (outcome.walk?.candidates ?? []).map((c) => this.redactor.redactText(`${c.id} (${c.hops} hops)`)),
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
        await this.showProgress(incidentId);
        if (this.model) {
          const outcome = this.outcomes.get(id) ?? (await this.triage(firstAlert));
          this.outcomes.delete(id);
          await deepenWithModel(
            {
              ...this.model,
              db: this.db,
              redactor: this.redactor,
              log: this.log,
              now: () => this.clock.now(),
              trace: (e) => (recordAgentEvent(this.tracer, stepCtx, e), this.metrics?.agentEvent(e)),
              signal: lease.signal,
              hold: (tx) => lease.update({}, tx),
            },
            id,
            incidentId,
            outcome,
          );
        }
        return 'deepened';
      }
      case 'deepened': {
        await this.showProgress(incidentId);
        return 'reported';
      }
      case 'reported':
        return 'reported';
    }
  }

  /** The thread shows progress: a post Slack refused is logged (the next sync retries it), never a failed step. */
  private async showProgress(incidentId: string): Promise<void> {
    await this.thread.sync(incidentId).catch((err: unknown) => {
      if (!(err instanceof ThreadSyncError)) throw err;
      this.log.warn({ incidentId, err: errorText(err) }, 'could not bring the thread up to date; the investigation goes on');
    });
  }

  private async triage(firstAlert: { payload: string; receivedAt: Date } | undefined): Promise<InvestigationOutcome> {
    const alert = firstAlert ? (JSON.parse(firstAlert.payload) as Alert) : undefined;
    if (!alert) throw new Error('incident has no alert to investigate');
    const onset = alert.startsAt ? new Date(alert.startsAt) : firstAlert!.receivedAt;
    return investigateDeterministically(alert, onset, this.sources);
  }

  /**
   * Run the investigation again from its last deterministic step (new steering for the model, or a
   * responder's request): the board keeps its labels, new findings are merged in by key. A running
   * investigation is left alone: the model reads new steering between steps, and a reply it did not
   * read triggers this once the run reports. Says whether a run was queued.
   */
  async reinvestigate(investigationId: string, askedBy?: string): Promise<boolean> {
    // Who asked is kept with the run: the proposal it leads to is theirs (four-eyes), see InvestigationContext.askedBy.
    const row = await this.db.investigation.findUnique({ where: { id: investigationId }, select: { context: true, incident: { select: { severity: true } } } });
    const ctx = row ? readContext(row.context) : {};
    // A run that goes ahead is no longer throttled: the card's throttle line goes with it.
    const { throttled, notice, ...rest } = ctx;
    const next = throttled ? rest : { ...rest, ...(notice !== undefined ? { notice } : {}) };
    const { count } = await this.db.investigation.updateMany({
      // `skipped`: held back by the throttle (incidents/throttle.ts); a person's request or an admitted reopen runs it.
      where: { id: investigationId, state: { in: ['waiting', 'failed', 'skipped'] } },
      data: { state: 'queued', step: 'announced', attempts: 0, lastError: null, ...(askedBy || throttled ? { context: JSON.stringify({ ...next, ...(askedBy ? { askedBy } : {}) }) } : {}) },
    });
    // A person waiting for it goes first; otherwise the incident's severity decides.
    if (count) this.enqueue(investigationId, askedBy ? PRIORITY.person : priorityOf(row?.incident.severity));
    return count > 0;
  }

  /** Steering (beyond board commands) stored after the model read its last input: investigate again with it. */
  private async rerunForUnreadSteering(id: string, incidentId: string): Promise<boolean> {
    if (!this.model || (await unreadSteering(this.db, id, incidentId)) === 0) return false;
    return this.reinvestigate(id);
  }

  get hasModel(): boolean {
    return this.model !== undefined;
  }

  /** Says whether the patch was written (false: the first measurement / trace is kept). */
  private async patchContext(lease: InvestigationLease, patch: Partial<InvestigationContext>): Promise<boolean> {
    const inv = await this.db.investigation.findUniqueOrThrow({ where: { id: lease.investigationId } });
    const ctx = readContext(inv.context);
    if (patch.firstCardMs !== undefined && ctx.firstCardMs !== undefined) return false; // keep the first measurement across resumes
    if (patch.traceId !== undefined && ctx.traceId !== undefined) return false; // the thread links the first trace
    await lease.update({ context: JSON.stringify({ ...ctx, ...patch }) });
    return true;
  }
}

/** What the runner reports to metrics (implemented by VigilMetrics; declared here so incidents/ does not import http/). */
export interface RunnerMetrics {
  investigationRun(outcome: 'reported' | 'failed', seconds: number): void;
  firstCard(seconds: number): void;
  agentEvent(e: AgentEvent): void;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Backoff before retry `attempt` (1-based): exponential from 500 ms, at most 30 s, and never shorter than
 * what the failing service asked for (Retry-After, see evidence/transient.ts), capped at five minutes so a
 * bogus header cannot park an investigation.
 */
export function retryDelayMs(attempt: number, retryAfterMs?: number): number {
  const exp = Math.min(30_000, 500 * 2 ** Math.max(0, attempt - 1));
  return retryAfterMs === undefined ? exp : Math.min(300_000, Math.max(exp, retryAfterMs));
}

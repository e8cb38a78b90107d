import type { Logger } from 'pino';
import type { Db, Prisma } from '../store/db.js';
import type { DbTx } from '../store/tx.js';
import type { Clock } from './clock.js';

/** This worker no longer holds the investigation's lease: another worker (or replica) owns it now. */
export class LeaseLostError extends Error {
  constructor(investigationId: string) {
    super(`lost the lease on investigation ${investigationId}: another worker carries it on`);
    this.name = 'LeaseLostError';
  }
}

/**
 * `/sre stop` for this incident (or for all): the signal aborts with this, so the model call or evidence read
 * in flight ends now, and the run records that it was stopped instead of retrying.
 */
export class InvestigationStoppedError extends Error {
  constructor(readonly by: string) {
    super(`stopped by ${by} (/sre stop)`);
    this.name = 'InvestigationStoppedError';
  }
}

/**
 * One worker's hold on one investigation, in the DB: only the holder writes. The lease is renewed every
 * third of its length while steps run (a model step may outlast it), and every write checks
 * `leaseOwner` in its own `where`, so a worker that lost the lease (a pause, a partition) stops writing
 * instead of racing the worker that took over. `signal` aborts when a renewal finds the lease gone.
 */
export class InvestigationLease {
  private readonly controller = new AbortController();
  private timer?: NodeJS.Timeout;
  private renewing = false;
  private released = false;
  /** Asked at every renewal: who stopped this incident (in the DB, so a stop on another replica reaches here). */
  private stopCheck?: () => Promise<string | undefined>;

  private constructor(
    private readonly db: Db,
    readonly investigationId: string,
    readonly owner: string,
    private readonly leaseMs: number,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  /**
   * Take the lease when it is free, expired, or already this owner's (a retry by the same process),
   * and count the attempt. Undefined when another worker holds it or the investigation is not runnable.
   */
  static async claim(db: Db, id: string, owner: string, leaseMs: number, clock: Clock, log: Logger): Promise<InvestigationLease | undefined> {
    const now = clock.now();
    const { count } = await db.investigation.updateMany({
      where: { id, state: { in: ['queued', 'running'] }, OR: [{ leaseUntil: null }, { leaseUntil: { lt: now } }, { leaseOwner: owner }] },
      data: { leaseOwner: owner, leaseUntil: new Date(now.getTime() + leaseMs), state: 'running', attempts: { increment: 1 } },
    });
    if (count !== 1) return undefined;
    const lease = new InvestigationLease(db, id, owner, leaseMs, clock, log);
    lease.startRenewing();
    return lease;
  }

  /** Aborted (with a LeaseLostError) once the lease is known to be someone else's. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Abort what runs under this lease (the signal) because someone stopped the incident. */
  abortStopped(by: string): void {
    if (!this.controller.signal.aborted) this.controller.abort(new InvestigationStoppedError(by));
  }

  /** Checked at each renewal, so a stop recorded by any replica aborts this run within a third of the lease. */
  watchStop(check: () => Promise<string | undefined>): void {
    this.stopCheck = check;
  }

  /** Throw if the lease was lost (or given up) since the last check. */
  check(): void {
    if (this.controller.signal.aborted) throw this.controller.signal.reason;
    if (this.released) throw new LeaseLostError(this.investigationId);
  }

  /**
   * Write to the investigation only while holding the lease (and extend it). Inside a transaction,
   * call it first: the row lock it takes keeps another worker's claim out until the commit.
   */
  async update(data: Prisma.InvestigationUpdateManyMutationInput = {}, db: Db | DbTx = this.db): Promise<void> {
    this.check();
    const { count } = await db.investigation.updateMany({
      where: { id: this.investigationId, leaseOwner: this.owner },
      data: { leaseUntil: new Date(this.clock.now().getTime() + this.leaseMs), ...data },
    });
    if (count !== 1) throw this.lost();
  }

  /** Give the lease up (the update clears or moves it); writes after this throw. */
  async release(data: Prisma.InvestigationUpdateManyMutationInput, db: Db | DbTx = this.db): Promise<void> {
    this.stop();
    // A stopped run still gives its lease up (recording that it was stopped); a lost one does not.
    if (!(this.controller.signal.reason instanceof InvestigationStoppedError)) this.check();
    else if (this.released) throw new LeaseLostError(this.investigationId);
    const { count } = await db.investigation.updateMany({ where: { id: this.investigationId, leaseOwner: this.owner }, data: { leaseOwner: null, leaseUntil: null, ...data } });
    if (count !== 1) throw this.lost();
    this.released = true;
  }

  /**
   * Give the lease up until `ms` from now, for a retry with backoff that survives this process: the row
   * keeps this owner and the retry time, so this worker claims it again when its timer fires, and if the
   * process died meanwhile any replica's sweep claims it once that time has passed (see the runner's sweep).
   */
  async defer(ms: number, data: Prisma.InvestigationUpdateManyMutationInput = {}, db: Db | DbTx = this.db): Promise<void> {
    this.stop();
    this.check();
    const { count } = await db.investigation.updateMany({
      where: { id: this.investigationId, leaseOwner: this.owner },
      data: { leaseUntil: new Date(this.clock.now().getTime() + ms), state: 'queued', ...data },
    });
    if (count !== 1) throw this.lost();
    this.released = true;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private lost(): LeaseLostError {
    const err = new LeaseLostError(this.investigationId);
    this.stop();
    if (!this.controller.signal.aborted) this.controller.abort(err);
    return err;
  }

  private startRenewing(): void {
    this.timer = setInterval(() => void this.renew(), Math.max(50, Math.floor(this.leaseMs / 3)));
    this.timer.unref();
  }

  private async renew(): Promise<void> {
    if (this.renewing || this.controller.signal.aborted) return;
    this.renewing = true;
    try {
      await this.update();
      const by = await this.stopCheck?.();
      if (by) this.abortStopped(by);
    } catch (err) {
      // A DB hiccup is not a lost lease: the next renewal (or the step's own write) decides.
      if (!(err instanceof LeaseLostError)) this.log.warn({ err: err instanceof Error ? err.message : String(err), investigationId: this.investigationId }, 'could not renew the investigation lease');
    } finally {
      this.renewing = false;
    }
  }
}

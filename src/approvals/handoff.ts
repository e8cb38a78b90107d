/**
 * Split mode, in the executor process: the investigator's proposals and card refreshes, taken from the
 * shared database. Each one is claimed with a lease (a conditional update: one executor wins, the others
 * skip it), done, and cleared; an executor that dies holding a claim loses it when the lease ends, and the
 * next one does the work again. Doing it again posts nothing twice: a card is posted once per request
 * (its ts is stored, and a post whose answer was lost is found by its tag in the thread, SlackChat).
 */
import type { Logger } from 'pino';
import { claimHandoff, finishHandoff } from '../audit/records.js';
import type { Clock } from '../incidents/clock.js';
import type { Db } from '../store/db.js';
import type { ApprovalService } from './service.js';

export interface HandoffSettings {
  /** Who claims (host and process), as stored in `handoffOwner`. */
  owner: string;
  /** How long a claim holds before another executor may take it over. */
  leaseMs: number;
  /** Pause between sweeps of the table. */
  pollMs: number;
  /** Rows taken per sweep. */
  batch?: number;
}

export class ExecutorHandoff {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly approvals: Pick<ApprovalService, 'adopt' | 'refreshCard'>,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly settings: HandoffSettings,
  ) {}

  /** One pass: every unclaimed (or expired) handoff, oldest first. Returns how many were handled. */
  async sweep(): Promise<number> {
    const now = this.clock.now();
    const rows = await this.db.approvalRequest.findMany({
      where: { handoff: { not: null }, OR: [{ handoffUntil: null }, { handoffUntil: { lt: now } }] },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      take: this.settings.batch ?? 20,
      select: { id: true, handoff: true, handoffAt: true },
    });
    let done = 0;
    for (const row of rows) {
      if (this.stopped) break;
      if (!(await claimHandoff(this.db, { id: row.id, handoff: row.handoff!, handoffAt: row.handoffAt }, this.settings.owner, now, this.settings.leaseMs))) continue;
      try {
        if (row.handoff === 'plan') await this.approvals.adopt(row.id);
        else await this.approvals.refreshCard(row.id);
        await finishHandoff(this.db, row, this.settings.owner);
        done++;
      } catch (err) {
        // The claim stays until its lease ends: the next sweep (here or in another executor) tries again.
        this.log.warn({ err: String(err), requestId: row.id, handoff: row.handoff }, 'could not take over an approval request from the investigator; retrying after the lease');
      }
    }
    return done;
  }

  /** Sweeps now, then every `pollMs` until stop(); a failed sweep is logged and the next one tries again. */
  start(): void {
    const tick = () => {
      this.running = this.sweep()
        .catch((err: unknown) => this.log.warn({ err: String(err) }, 'executor handoff sweep failed'))
        .finally(() => {
          if (!this.stopped) {
            this.timer = setTimeout(tick, this.settings.pollMs);
            this.timer.unref();
          }
        });
    };
    tick();
  }

  /** Resolves once the sweep under way (if any) is over. */
  idle(): Promise<unknown> {
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}

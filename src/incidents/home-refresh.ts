import type { Logger } from 'pino';

/**
 * Keeps App Home current for the users who opened it. `views.publish` is rate limited per user, so
 * changes are coalesced: a refresh waits `delayMs` for more changes, only one refresh runs at a time, and
 * any number of changes made while one runs earn exactly one follow-up (which reads the newest state).
 */
export class HomeRefresher {
  /** Users who opened App Home (bounded: the oldest is forgotten first). */
  private readonly viewers = new Set<string>();
  private timer?: NodeJS.Timeout;
  private busy = false;
  private changedMeanwhile = false;

  constructor(
    private readonly publish: (users: string[]) => Promise<void>,
    /** Registers the refresh as in-flight work (drained on shutdown, awaited by tests). */
    private readonly track: (p: Promise<void>) => Promise<void>,
    private readonly log: Logger,
    private readonly maxViewers = 500,
  ) {}

  /** A user opened App Home: publish for them now and keep them in the refresh list. */
  opened(userId: string): Promise<void> {
    this.viewers.delete(userId);
    if (this.viewers.size >= this.maxViewers) this.viewers.delete(this.viewers.values().next().value!);
    this.viewers.add(userId);
    return this.publish([userId]);
  }

  /** Something changed: republish for every viewer, coalesced. */
  schedule(delayMs = 2000): void {
    if (this.viewers.size === 0) return;
    if (this.busy) {
      this.changedMeanwhile = true;
      return;
    }
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.track(this.refresh(delayMs));
    }, delayMs);
    this.timer.unref();
  }

  private async refresh(delayMs: number): Promise<void> {
    this.busy = true;
    try {
      await this.publish([...this.viewers]);
    } catch (err) {
      this.log.warn({ err: String(err) }, 'App Home refresh failed');
    } finally {
      this.busy = false;
      if (this.changedMeanwhile) {
        this.changedMeanwhile = false;
        this.schedule(delayMs);
      }
    }
  }
}

import type { DeploymentInfo, TimeWindow } from './types.js';

/**
 * Walks GitHub's deployment listing (newest first, no time filter), keeping the deployments created
 * inside the window and giving each the sha of the deployment before it in the same environment (what
 * ran before it). Past the window, it asks to stop as soon as no in-window deployment still waits for
 * its predecessor.
 */
export class DeploymentScan<D extends { environment: string; sha: string; created_at: string }> {
  readonly items: DeploymentInfo[] = [];
  /** True once a deployment older than the window was seen: the window is complete. */
  reachedWindowStart = false;
  /** environment → its oldest in-window deployment so far, still without a predecessor. */
  private readonly waiting = new Map<string, DeploymentInfo>();

  constructor(
    private readonly window: TimeWindow,
    private readonly toInfo: (d: D, createdAt: Date) => DeploymentInfo,
  ) {}

  add(d: D): 'continue' | 'stop' {
    const newer = this.waiting.get(d.environment);
    if (newer) {
      newer.previousSha = d.sha;
      this.waiting.delete(d.environment);
    }
    const createdAt = new Date(d.created_at);
    if (createdAt > this.window.until) return 'continue';
    if (createdAt < this.window.since) {
      this.reachedWindowStart = true;
      return this.waiting.size === 0 ? 'stop' : 'continue';
    }
    const info = this.toInfo(d, createdAt);
    this.items.push(info);
    this.waiting.set(d.environment, info);
    return 'continue';
  }
}

/** The latest status by time (then id); GitHub lists newest first, but the order is not relied on. */
export function latestStatus<S extends { id: number; created_at: string }>(statuses: readonly S[]): S | undefined {
  return statuses.reduce<S | undefined>((best, s) => {
    if (!best) return s;
    const d = new Date(s.created_at).getTime() - new Date(best.created_at).getTime();
    return d > 0 || (d === 0 && s.id > best.id) ? s : best;
  }, undefined);
}

/**
 * Budgets of one agent run: model calls (steps), tokens, wall time and cost. Checked before every model
 * call. The loop always tries to keep room for ONE last call in which the model must submit its
 * diagnosis; `next()` says whether the coming call may still explore, must be that final call, or cannot
 * happen at all.
 *
 * Tokens count everything a call processed: input (uncached), cache reads, cache writes and output.
 * The size of the next call is estimated from the last call's prompt plus what was appended since
 * (≈ 4 characters per token), so a budget is never knowingly overrun by the final call.
 */
import type { ModelProvider, ModelUsage } from './types.js';

export interface BudgetLimits {
  /** Model calls. */
  maxSteps: number;
  /** Input (incl. cache reads/writes) + output tokens over the whole run. */
  maxTokens: number;
  /** Wall time of the whole run, model calls and tool calls included. */
  maxWallMs: number;
  /** USD at list price (ignored for a model without a known price: the run reports `priced: false`). */
  maxCostUsd: number;
}

export const DEFAULT_BUDGET: BudgetLimits = { maxSteps: 12, maxTokens: 200_000, maxWallMs: 120_000, maxCostUsd: 0.5 };

export interface AgentUsage extends ModelUsage {
  costUsd: number;
  /** False when the model has no list price: `costUsd` is then 0 and unknown. */
  priced: boolean;
}

export type BudgetMode = 'explore' | 'final' | 'none';

/**
 * Which budget ran out (for the thread: "stopped after 12 model calls"). `incident_tokens` and `day_tokens` are
 * the caps shared beyond this run ({@link SharedCap}).
 */
export type BudgetKind = 'steps' | 'tokens' | 'wall_time' | 'cost' | 'incident_tokens' | 'day_tokens';

/**
 * A token cap shared beyond this run — all investigations of the incident, everything today — as it stands now
 * (kept in the store by the caller; this run's charged calls are in `used`).
 */
export interface SharedCap {
  scope: 'incident' | 'day';
  used: number;
  cap: number;
}

/** Share of the wall-time budget held back for the final submission (at most {@link MAX_FINAL_RESERVE_MS}). */
const FINAL_RESERVE_SHARE = 0.25;
const MAX_FINAL_RESERVE_MS = 30_000;

export class Budget {
  readonly limits: BudgetLimits;
  readonly usage: AgentUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0, priced: true };
  steps = 0;
  /** The first budget found exhausted, if any. */
  exhausted?: BudgetKind;
  readonly #startedAt: number;
  readonly #now: () => number;
  #lastCallTokens = 0;
  #lastCallCost = 0;
  #appendedChars = 0;
  #shared: SharedCap[] = [];

  constructor(
    limits: Partial<BudgetLimits> = {},
    private readonly provider: Pick<ModelProvider, 'cost'>,
    now: () => number = Date.now,
  ) {
    this.limits = { ...DEFAULT_BUDGET, ...definedOnly(limits) };
    this.#now = now;
    this.#startedAt = now();
  }

  get elapsedMs(): number {
    return this.#now() - this.#startedAt;
  }

  /** Held back from exploration so the final call has time to answer. */
  get finalReserveMs(): number {
    return Math.min(MAX_FINAL_RESERVE_MS, Math.floor(this.limits.maxWallMs * FINAL_RESERVE_SHARE));
  }

  /** When an exploring call must be cut off (ms since the epoch of `now`). */
  get exploreDeadline(): number {
    return this.#startedAt + this.limits.maxWallMs - this.finalReserveMs;
  }

  get hardDeadline(): number {
    return this.#startedAt + this.limits.maxWallMs;
  }

  get totalTokens(): number {
    const u = this.usage;
    return u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens + u.outputTokens;
  }

  /** Content added to the conversation since the last call (tool results, notes), for the estimate. */
  appended(chars: number): void {
    this.#appendedChars += chars;
  }

  /** Estimated tokens of the next call: the last call's size plus what was appended since. */
  nextCallTokens(): number {
    return this.#lastCallTokens + Math.ceil(this.#appendedChars / 4);
  }

  #firstCallTokens = 0;

  /**
   * The shared caps as just read (before each call): they bound the coming calls like `maxTokens` does. Before the
   * first call there is no last call to go by, so the caller estimates it (`firstCallTokens`): a re-run with less
   * left than one call does not start.
   */
  share(caps: SharedCap[], firstCallTokens = 0): void {
    this.#shared = caps;
    this.#firstCallTokens = firstCallTokens;
  }

  /** The shared cap that ran out, when one did. */
  get exhaustedCap(): SharedCap | undefined {
    const scope = this.exhausted === 'incident_tokens' ? 'incident' : this.exhausted === 'day_tokens' ? 'day' : undefined;
    return scope ? this.#shared.find((c) => c.scope === scope) : undefined;
  }

  /** What the next model call may be. Records which budget ran out. */
  next(): BudgetMode {
    const calls = this.#callsLeft();
    if (calls.n >= 2) return 'explore';
    this.exhausted ??= calls.kind;
    return calls.n === 1 ? 'final' : 'none';
  }

  /** How many more calls each budget allows (capped at 2: only "explore", "final" or "none" matters). */
  #callsLeft(): { n: number; kind: BudgetKind } {
    const { maxSteps, maxTokens, maxCostUsd } = this.limits;
    const est = this.nextCallTokens();
    const estCost = this.#lastCallCost * (est / Math.max(1, this.#lastCallTokens));
    const now = this.#now();
    const candidates: { n: number; kind: BudgetKind }[] = [
      { n: maxSteps - this.steps, kind: 'steps' },
      { n: fits(this.totalTokens, est, maxTokens), kind: 'tokens' },
      { n: now >= this.hardDeadline ? 0 : now >= this.exploreDeadline ? 1 : 2, kind: 'wall_time' },
      { n: this.usage.priced ? fits(this.usage.costUsd, estCost, maxCostUsd) : 2, kind: 'cost' },
      ...this.#shared.map((c) => ({ n: fits(c.used, this.steps === 0 ? Math.max(est, this.#firstCallTokens) : est, c.cap), kind: (c.scope === 'incident' ? 'incident_tokens' : 'day_tokens') as BudgetKind })),
    ];
    return candidates.reduce((min, c) => (c.n < min.n ? c : min), { n: 2, kind: 'steps' as BudgetKind });
  }

  /** Wall time running out while a call or tool was in flight. */
  markWallTimeExhausted(): void {
    this.exhausted ??= 'wall_time';
  }

  record(usage: ModelUsage): void {
    this.steps += 1;
    const u = this.usage;
    u.inputTokens += usage.inputTokens;
    u.outputTokens += usage.outputTokens;
    u.cacheReadTokens += usage.cacheReadTokens;
    u.cacheWriteTokens += usage.cacheWriteTokens;
    const cost = this.provider.cost(usage);
    u.costUsd += cost.usd;
    if (!cost.priced) u.priced = false;
    this.#lastCallTokens = usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens + usage.outputTokens;
    this.#lastCallCost = cost.usd;
    this.#appendedChars = 0;
  }

  /** A call that failed or was cut off still counts as a step (it may have been billed). */
  recordFailedCall(): void {
    this.steps += 1;
  }
}

/** 2 when two more calls of size `next` fit under `max`, 1 when one does, else 0. With no estimate yet, 2 while under. */
function fits(used: number, next: number, max: number): number {
  if (used >= max) return 0;
  if (next <= 0) return 2;
  if (used + 2 * next <= max) return 2;
  return used + next <= max ? 1 : 0;
}

function definedOnly(o: Partial<BudgetLimits>): Partial<BudgetLimits> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<BudgetLimits>;
}

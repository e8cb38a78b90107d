/**
 * Slack allows about one chat.postMessage per second per channel, with short bursts (PLATFORM-FACTS A4).
 * Pacing our own posts keeps an alert storm from tripping `ratelimited` at all; the WebClient's
 * Retry-After handling stays as the safety net. A token bucket per channel: `burst` posts at once,
 * then one every `intervalMs`.
 */
export class ChannelPacer {
  private readonly buckets = new Map<string, { tokens: number; updated: number; chain: Promise<void> }>();

  constructor(
    private readonly burst = 3,
    private readonly intervalMs = 1100,
    private readonly now: () => number = Date.now,
  ) {}

  /** Resolves when a post to `channel` may go out; callers queue in order per channel. */
  take(channel: string): Promise<void> {
    const b = this.buckets.get(channel) ?? { tokens: this.burst, updated: this.now(), chain: Promise.resolve() };
    this.buckets.set(channel, b);
    const turn = b.chain.then(async () => {
      const t = this.now();
      b.tokens = Math.min(this.burst, b.tokens + (t - b.updated) / this.intervalMs);
      b.updated = t;
      if (b.tokens < 1) {
        const wait = (1 - b.tokens) * this.intervalMs;
        await new Promise((r) => setTimeout(r, wait));
        b.tokens = 1;
        b.updated = this.now();
      }
      b.tokens -= 1;
    });
    b.chain = turn;
    return turn;
  }
}

/**
 * Waiting for a condition: every state change of the fake (call answered, message stored, delivery settled) re-runs
 * the pending probes at once; a light poll also re-runs them, for probes that read state outside the fake
 * (e.g. what a Bolt listener recorded after acking).
 */

const POLL_MS = 20;

export interface WaitOptions {
  /** Default 5000 ms. */
  timeoutMs?: number;
  /** Named in the timeout error. */
  label?: string;
}

/** A probe returns the awaited value, or undefined/null/false while it is not there yet. */
export type Probe<T> = () => T | undefined | null | false;

export class Waiters {
  private readonly pending = new Set<() => void>();

  notify(): void {
    for (const check of [...this.pending]) check();
  }

  /** Resolves with the probe's first truthy value; on timeout rejects with `describe()` (recent activity) appended. */
  waitFor<T>(probe: Probe<T>, opts: WaitOptions, describe: () => string): Promise<T> {
    const timeoutMs = opts.timeoutMs ?? 5000;
    return new Promise<T>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      let poll: NodeJS.Timeout | undefined;
      const stop = (): void => {
        this.pending.delete(check);
        clearTimeout(timer);
        clearInterval(poll);
      };
      const check = (): void => {
        let value: T | undefined | null | false;
        try {
          value = probe();
        } catch (error) {
          stop();
          reject(error instanceof Error ? error : new Error(String(error)));
          return;
        }
        if (value === undefined || value === null || value === false) return;
        if (value instanceof Promise) {
          // An async probe is always "truthy": it would pass at once whatever it checks.
          stop();
          reject(new Error('fake Slack: waitFor needs a synchronous probe; poll async state in the test instead'));
          return;
        }
        stop();
        resolve(value);
      };
      this.pending.add(check);
      timer = setTimeout(() => {
        stop();
        reject(new Error(`fake Slack: waitFor(${opts.label ?? 'condition'}) timed out after ${timeoutMs} ms.\n${describe()}`));
      }, timeoutMs);
      poll = setInterval(check, POLL_MS);
      check();
    });
  }
}

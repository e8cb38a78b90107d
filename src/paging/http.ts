/**
 * One JSON POST to a paging API, retried the way PagerDuty and Opsgenie ask: a 429 (rate limited) or a 5xx is
 * tried again after `Retry-After` when the answer gives one, else after a doubling pause; anything else is the
 * answer. The pause is bounded so a page never holds a thread sync for long.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export interface PagingHttpOptions {
  fetch?: typeof fetch;
  /** Attempts in all (default 4: pauses of 0.5 s, 1 s, 2 s without Retry-After). */
  attempts?: number;
  firstDelayMs?: number;
  /** The longest pause taken for a `Retry-After` (default 10 s). */
  maxDelayMs?: number;
  timeoutMs?: number;
  /** Test seam: how a pause is taken. */
  sleep?: (ms: number) => Promise<unknown>;
}

export class PagingError extends Error {
  override readonly name = 'PagingError';
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

export async function postJson(url: string, body: unknown, headers: Record<string, string>, o: PagingHttpOptions = {}): Promise<{ status: number; json: unknown }> {
  const attempts = o.attempts ?? 4;
  const pause = o.sleep ?? ((ms: number) => sleep(ms));
  for (let attempt = 1; ; attempt++) {
    let res: Response;
    try {
      res = await (o.fetch ?? fetch)(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(o.timeoutMs ?? 10_000),
      });
    } catch (err) {
      if (attempt >= attempts) throw new PagingError(`could not reach ${new URL(url).host}: ${String(err)}`);
      await pause(backoff(o, attempt));
      continue;
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? (JSON.parse(text) as unknown) : undefined;
    } catch {
      json = undefined;
    }
    if ((res.status === 429 || res.status >= 500) && attempt < attempts) {
      const after = Number(res.headers.get('retry-after'));
      await pause(Number.isFinite(after) && after >= 0 && res.headers.has('retry-after') ? Math.min(after * 1000, o.maxDelayMs ?? 10_000) : backoff(o, attempt));
      continue;
    }
    return { status: res.status, json };
  }
}

function backoff(o: PagingHttpOptions, attempt: number): number {
  return (o.firstDelayMs ?? 500) * 2 ** (attempt - 1);
}

/** What an error answer says, short (its message and errors), for the log and the audit record. */
export function answerText(status: number, json: unknown): string {
  const j = (json ?? {}) as { message?: unknown; errors?: unknown; status?: unknown };
  const parts = [typeof j.status === 'string' ? j.status : '', typeof j.message === 'string' ? j.message : '', Array.isArray(j.errors) ? j.errors.map(String).join('; ') : ''].filter(Boolean);
  return `HTTP ${status}${parts.length ? `: ${parts.join(' — ')}` : ''}`.slice(0, 500);
}

/**
 * vigil_slack_api_calls_total: every Slack Web API request's outcome, counted at the HTTP layer. The
 * WebClient binds its methods to `apiCall` when it is built, so the calls cannot be wrapped afterwards;
 * it does take a `fetch` (web-api 8), which sees every request, retries included, of every client Vigil
 * builds (Bolt's, the post client, Socket Mode's). Slack reports most failures as HTTP 200 with
 * `ok: false`, so the body is read from a clone; the client reads the original.
 */
import type { WebClientOptions } from '@slack/web-api';

type Fetch = NonNullable<WebClientOptions['fetch']>;
type Counter = { inc(labels: { method: string; outcome: string }): void };

/** Slack's error codes are lower_snake_case words; anything else (or unbounded) is `other`, so labels stay few. */
const ERROR_CODE = /^[a-z][a-z0-9_]{0,48}$/;

export function slackMethodOf(url: string): string {
  const path = new URL(url).pathname;
  const method = path.slice(path.lastIndexOf('/') + 1);
  return /^[a-zA-Z.]{1,64}$/.test(method) ? method : 'unknown';
}

export function countingFetch(counter: Counter, inner: Fetch = fetch as Fetch): Fetch {
  return (async (input: Parameters<Fetch>[0], init?: Parameters<Fetch>[1]) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : (input as Request).url;
    const method = slackMethodOf(url);
    let res: Response;
    try {
      res = (await inner(input, init)) as Response;
    } catch (err) {
      counter.inc({ method, outcome: 'transport' });
      throw err;
    }
    void outcomeOf(res).then((outcome) => counter.inc({ method, outcome }));
    return res;
  }) as Fetch;
}

async function outcomeOf(res: Response): Promise<string> {
  if (!res.ok) return `http_${res.status}`;
  try {
    const body = (await res.clone().json()) as { ok?: boolean; error?: unknown };
    if (body.ok !== false) return 'ok';
    return typeof body.error === 'string' && ERROR_CODE.test(body.error) ? body.error : 'other';
  } catch {
    return 'unreadable';
  }
}

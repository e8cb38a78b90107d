/**
 * Octokit failures as one typed error. Octokit throws `RequestError` (name `HttpError`) with `.status`
 * and `.response.{headers,data}`; `@octokit/request-error` is not a direct dependency, so it is
 * recognised by shape rather than `instanceof`.
 */

export class GitHubReadError extends Error {
  constructor(
    /** The call, e.g. `GET /repos/acme/shop/pulls`. */
    readonly what: string,
    /** HTTP status; undefined when no response arrived (connection refused, DNS, abort). */
    readonly status: number | undefined,
    /** GitHub's own `message` (`Not Found`, `Bad credentials`), or the transport error. */
    readonly githubMessage: string,
    /** Set when GitHub refused for rate limiting: when the quota resets (primary) or when to retry (secondary). */
    readonly rateLimitedUntil?: Date,
  ) {
    super(`${what}: ${describe(status, githubMessage, rateLimitedUntil)}`);
    this.name = 'GitHubReadError';
  }

  /** The reason alone, without the call: `HTTP 404 Not Found`, `rate limited until 2025-…Z`. */
  get reason(): string {
    return describe(this.status, this.githubMessage, this.rateLimitedUntil);
  }
}

/** GitHub's rate-limit message is long and adds nothing to the reset time, so it is left out. */
function describe(status: number | undefined, message: string, until: Date | undefined): string {
  if (until) return `rate limited until ${until.toISOString()} (HTTP ${status ?? 403})`;
  return status ? `HTTP ${status} ${message}` : message;
}

interface HttpErrorShape {
  name: string;
  status: number;
  message: string;
  response?: { headers?: Record<string, string | number | undefined>; data?: unknown };
}

function isHttpError(err: unknown): err is HttpErrorShape {
  return err instanceof Error && err.name === 'HttpError' && typeof (err as { status?: unknown }).status === 'number';
}

export function toGitHubReadError(what: string, err: unknown, now: () => Date = () => new Date()): GitHubReadError {
  if (err instanceof GitHubReadError) return err;
  // Octokit reports a transport failure (refused, DNS, TLS) as an HttpError with status 500 and no
  // response; it is not GitHub answering 500, so the status is dropped.
  if (!isHttpError(err) || !err.response) {
    const message = err instanceof Error ? err.message : String(err);
    return new GitHubReadError(what, undefined, `no response from GitHub (${message.slice(0, 200)})`);
  }
  const data = err.response?.data;
  const message =
    data && typeof data === 'object' && typeof (data as { message?: unknown }).message === 'string'
      ? (data as { message: string }).message
      : err.message.split(' - ')[0] || 'error';
  return new GitHubReadError(what, err.status || undefined, message.slice(0, 300), rateLimitedUntil(err, now));
}

/**
 * GitHub's documented rate-limit answers: 403 or 429 with `x-ratelimit-remaining: 0` (primary quota,
 * resets at `x-ratelimit-reset`, epoch seconds), or with `retry-after` (secondary limit, seconds).
 */
function rateLimitedUntil(err: HttpErrorShape, now: () => Date): Date | undefined {
  if (err.status !== 403 && err.status !== 429) return undefined;
  const headers = err.response?.headers ?? {};
  const retryAfter = Number(headers['retry-after']);
  if (Number.isFinite(retryAfter) && retryAfter > 0) return new Date(now().getTime() + retryAfter * 1000);
  if (String(headers['x-ratelimit-remaining']) === '0') {
    const reset = Number(headers['x-ratelimit-reset']);
    return Number.isFinite(reset) && reset > 0 ? new Date(reset * 1000) : now();
  }
  return undefined;
}

/**
 * A failed read as one sentence for an investigation's "could not check" list, with the likely cause
 * for the statuses GitHub uses ambiguously (404 also means "private and the token cannot see it").
 */
export function describeGitHubFailure(subject: string, err: unknown): string {
  const e = err instanceof GitHubReadError ? err : toGitHubReadError('GitHub request', err);
  const hint = e.rateLimitedUntil
    ? ''
    : e.status === 404
      ? ' (the repository or object does not exist, or the token cannot see it)'
      : e.status === 401
        ? ' (the GitHub token was rejected)'
        : e.status === 403
          ? ' (the token lacks permission)'
          : '';
  return `Could not read ${subject}: ${e.reason}${hint} — ${e.what}.`;
}

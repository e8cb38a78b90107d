import { Octokit } from '@octokit/rest';
import type { Logger } from 'pino';
import { DeploymentScan, latestStatus } from './deployments.js';
import { toGitHubReadError } from './errors.js';
import type {
  CommitInfo,
  DeploymentInfo,
  DeploymentState,
  Listing,
  MergedPullRequest,
  PullRequestDetail,
  PullRequestFile,
  TimeWindow,
} from './types.js';

export { GitHubReadError } from './errors.js';
export type * from './types.js';

export interface GitHubSettings {
  /** A token with read access to contents, pull requests and deployments; absent = anonymous (public repos, 60 req/h). */
  token?: string;
  /** API base; default `https://api.github.com` (GitHub Enterprise: `https://ghe.example.com/api/v3`). */
  baseUrl?: string;
  logger: Logger;
  /** Page cap per listing (100 items a page); a listing that hits it is marked `truncated`. Default 10. */
  maxPages?: number;
  /** Clock for rate-limit arithmetic (`retry-after`). */
  now?: () => Date;
  /** Per request, headers and body, in ms (default 15 s). Octokit sets no timeout of its own. */
  timeoutMs?: number;
}

/** `owner/repo` → its parts; throws on anything else so a typo cannot become a query for another repository. */
export function parseRepo(repo: string): { owner: string; repo: string } {
  const m = /^([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))\/([A-Za-z0-9._-]{1,100})$/.exec(repo.trim());
  if (!m?.[1] || !m[2]) throw new Error(`not an owner/repo name: ${JSON.stringify(repo)}`);
  return { owner: m[1], repo: m[2] };
}

const PER_PAGE = 100;
/** PR merger lookups (`GET /pulls/{n}`) per listing: the list endpoint has no `merged_by`. */
const MAX_MERGER_LOOKUPS = 25;
/** Status reads per deployment listing. */
const MAX_STATUS_LOOKUPS = 50;
const MAX_PR_FILES = 300;

const firstLine = (s: string | null | undefined): string => (s ?? '').split('\n')[0]?.trim() ?? '';
const query = (params: Record<string, string | number | undefined>): string =>
  new URLSearchParams(Object.entries(params).flatMap(([k, v]): [string, string][] => (v === undefined ? [] : [[k, String(v)]]))).toString();

/**
 * `fetch` with a deadline over the whole exchange. The body is read here, inside the deadline: Octokit
 * reads it later and turns a failed read into an empty body, which would pass for an empty page.
 */
export function timedFetch(timeoutMs: number): typeof fetch {
  return async (input, init) => {
    const reason = new Error(`GitHub did not answer within ${timeoutMs} ms`);
    reason.name = 'TimeoutError';
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(reason), timeoutMs);
    try {
      const signal = init?.signal ? AbortSignal.any([init.signal, controller.signal]) : controller.signal;
      const res = await fetch(input, { ...init, signal });
      const body = NULL_BODY_STATUSES.has(res.status) ? null : await res.arrayBuffer();
      const read = new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
      // Pagination of compare results reads the page number from the final URL.
      Object.defineProperty(read, 'url', { value: res.url });
      return read;
    } finally {
      clearTimeout(timer);
    }
  };
}

/** Statuses a `Response` may not carry a body with. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * The read-only GitHub adapter: commits, merged pull requests and deployments in a time window, and one
 * pull request in detail. Every method is a GET through the real Octokit; failures are thrown as
 * `GitHubReadError` naming the call, so callers record a gap instead of failing the investigation.
 */
export class GitHubReader {
  readonly octokit: Octokit;
  private readonly maxPages: number;
  private readonly now: () => Date;

  constructor(settings: GitHubSettings) {
    const { logger } = settings;
    this.octokit = new Octokit({
      ...(settings.token ? { auth: settings.token } : {}),
      ...(settings.baseUrl ? { baseUrl: settings.baseUrl.replace(/\/+$/, '') } : {}),
      userAgent: 'vigil-sre-agent',
      request: { fetch: timedFetch(settings.timeoutMs ?? 15_000) },
      // Octokit's default logger prints every failed request to the console; debug would include the
      // request options (headers), so it stays silent.
      log: {
        debug() {},
        info() {},
        warn: (message: string) => logger.warn({ source: 'github' }, message),
        error: (message: string) => logger.error({ source: 'github' }, message),
      },
    });
    this.maxPages = settings.maxPages ?? 10;
    this.now = settings.now ?? (() => new Date());
  }

  /**
   * Repositories the token can read whose default branch moved since `since`, most recent first: the
   * GitOps and platform repositories no workload names (route, policy and chart changes land there).
   * A user token lists `GET /user/repos?sort=pushed` (one page, stops at the first older push); a GitHub
   * App installation token, which `/user/repos` refuses, lists `GET /installation/repositories`.
   */
  async recentlyPushedRepos(since: Date, limit = 8): Promise<string[]> {
    type Repo = { full_name: string; pushed_at?: string | null };
    const fresh = (r: Repo) => !!r.pushed_at && new Date(r.pushed_at) >= since;
    let repos: Repo[];
    try {
      const { data } = await this.octokit.request('GET /user/repos', { sort: 'pushed', direction: 'desc', per_page: 100 });
      repos = data as Repo[];
    } catch (err) {
      if ((err as { status?: number }).status !== 403) throw toGitHubReadError('GET /user/repos', err);
      try {
        const { data } = await this.octokit.request('GET /installation/repositories', { per_page: 100 });
        repos = (data.repositories as Repo[]).sort((a, b) => String(b.pushed_at ?? '').localeCompare(String(a.pushed_at ?? '')));
      } catch (err2) {
        throw toGitHubReadError('GET /installation/repositories', err2);
      }
    }
    return repos.filter(fresh).slice(0, limit).map((r) => r.full_name);
  }

  /** Commits reachable from `ref` (default branch when absent) committed inside the window, newest first. */
  async listCommits(repoName: string, window: TimeWindow, opts: { ref?: string } = {}): Promise<Listing<CommitInfo>> {
    const { owner, repo } = parseRepo(repoName);
    const params = { since: window.since.toISOString(), until: window.until.toISOString(), ...(opts.ref ? { sha: opts.ref } : {}) };
    const path = `/repos/${owner}/${repo}/commits`;
    const ref = `GET ${path}?${query(params)}`;
    const items: CommitInfo[] = [];
    const truncated = await this.pages(ref, this.octokit.paginate.iterator(this.octokit.rest.repos.listCommits, { owner, repo, ...params, per_page: PER_PAGE }), (page) => {
      for (const c of page) {
        const date = c.commit.committer?.date ?? c.commit.author?.date;
        items.push({
          sha: c.sha,
          message: firstLine(c.commit.message),
          ...(c.author?.login ? { authorLogin: c.author.login } : {}),
          ...(c.commit.author?.name ? { authorName: c.commit.author.name } : {}),
          committedAt: date ? new Date(date) : window.until,
          url: c.html_url,
          apiPath: `${path}/${c.sha}`,
        });
      }
      return 'continue';
    });
    return { items, ref, truncated, gaps: [] };
  }

  /**
   * Pull requests merged inside the window, newest update first. Pages through closed PRs sorted by
   * `updated_at` descending and stops at the first one updated before the window (a merge updates the PR,
   * so nothing older can have been merged inside it). `merged_at: null` means closed without merging.
   */
  async listMergedPullRequests(repoName: string, window: TimeWindow): Promise<Listing<MergedPullRequest>> {
    const { owner, repo } = parseRepo(repoName);
    const params = { state: 'closed', sort: 'updated', direction: 'desc' } as const;
    const path = `/repos/${owner}/${repo}/pulls`;
    const ref = `GET ${path}?${query(params)}`;
    const items: MergedPullRequest[] = [];
    const truncated = await this.pages(ref, this.octokit.paginate.iterator(this.octokit.rest.pulls.list, { owner, repo, ...params, per_page: PER_PAGE }), (page) => {
      for (const p of page) {
        if (new Date(p.updated_at) < window.since) return 'stop';
        if (!p.merged_at) continue;
        const mergedAt = new Date(p.merged_at);
        if (mergedAt < window.since || mergedAt > window.until) continue;
        items.push({
          number: p.number,
          title: p.title,
          mergedAt,
          ...(p.user?.login ? { author: p.user.login } : {}),
          baseRef: p.base.ref,
          headSha: p.head.sha,
          ...(p.merge_commit_sha ? { mergeCommitSha: p.merge_commit_sha } : {}),
          url: p.html_url,
          labels: p.labels.map((l) => l.name),
          apiPath: `${path}/${p.number}`,
        });
      }
      return 'continue';
    });
    await this.addMergers(owner, repo, items);
    return { items, ref, truncated, gaps: [] };
  }

  /** `merged_by` is only on `GET /pulls/{n}`; a failed lookup leaves it absent (the author stands in). */
  private async addMergers(owner: string, repo: string, prs: MergedPullRequest[]): Promise<void> {
    await Promise.all(
      prs.slice(0, MAX_MERGER_LOOKUPS).map(async (pr) => {
        try {
          const { data } = await this.octokit.rest.pulls.get({ owner, repo, pull_number: pr.number });
          if (data.merged_by?.login) pr.mergedBy = data.merged_by.login;
        } catch {
          // Best effort: the merge itself is known from the listing.
        }
      }),
    );
  }

  /**
   * Deployments created inside the window (newest first), each with its latest status and the sha of the
   * previous deployment to the same environment. GitHub lists deployments newest first and has no time
   * filter, so paging stops once every environment seen in the window has its predecessor.
   */
  async listDeployments(repoName: string, window: TimeWindow, opts: { environment?: string } = {}): Promise<Listing<DeploymentInfo>> {
    const { owner, repo } = parseRepo(repoName);
    const params = opts.environment ? { environment: opts.environment } : {};
    const path = `/repos/${owner}/${repo}/deployments`;
    const ref = `GET ${path}${opts.environment ? `?${query(params)}` : ''}`;
    const scan = new DeploymentScan<{ id: number; sha: string; ref: string; environment: string; created_at: string; creator: { login: string } | null }>(
      window,
      (d, createdAt) => ({
        id: d.id,
        sha: d.sha,
        ref: d.ref,
        environment: d.environment,
        ...(d.creator?.login ? { creator: d.creator.login } : {}),
        createdAt,
        apiPath: `${path}/${d.id}`,
      }),
    );
    const capped = await this.pages(ref, this.octokit.paginate.iterator(this.octokit.rest.repos.listDeployments, { owner, repo, ...params, per_page: PER_PAGE }), (page) =>
      page.some((d) => scan.add(d) === 'stop') ? 'stop' : 'continue',
    );
    const items = scan.items;
    const gaps: string[] = [];
    await Promise.all(
      items.slice(0, MAX_STATUS_LOOKUPS).map((d) =>
        this.addLatestStatus(owner, repo, d).catch((err: unknown) => {
          gaps.push(`status of deployment ${d.id} could not be read: ${toGitHubReadError(`GET ${d.apiPath}/statuses`, err, this.now).message}`);
        }),
      ),
    );
    if (items.length > MAX_STATUS_LOOKUPS) gaps.push(`statuses read for the newest ${MAX_STATUS_LOOKUPS} of ${items.length} deployments only`);
    return { items, ref, truncated: capped && !scan.reachedWindowStart, gaps };
  }

  private async addLatestStatus(owner: string, repo: string, d: DeploymentInfo): Promise<void> {
    const { data } = await this.call(`GET ${d.apiPath}/statuses`, () =>
      this.octokit.rest.repos.listDeploymentStatuses({ owner, repo, deployment_id: d.id, per_page: PER_PAGE }),
    );
    const latest = latestStatus(data);
    if (!latest) return;
    d.state = latest.state as DeploymentState;
    d.statusAt = new Date(latest.created_at);
    if (latest.description) d.statusDescription = latest.description;
    const url = latest.log_url || latest.target_url || latest.environment_url;
    if (url) d.url = url;
  }

  /** One pull request with its changed files (names and line counts, capped at 300 files). */
  async getPullRequest(repoName: string, number: number): Promise<PullRequestDetail> {
    const { owner, repo } = parseRepo(repoName);
    const apiPath = `/repos/${owner}/${repo}/pulls/${number}`;
    const { data: p } = await this.call(`GET ${apiPath}`, () => this.octokit.rest.pulls.get({ owner, repo, pull_number: number }));
    const files: PullRequestFile[] = [];
    const filesRef = `GET ${apiPath}/files`;
    const it = this.octokit.paginate.iterator(this.octokit.rest.pulls.listFiles, { owner, repo, pull_number: number, per_page: PER_PAGE });
    const filesTruncated = await this.pages(filesRef, it, (page) => {
      for (const f of page) {
        if (files.length >= MAX_PR_FILES) return 'stop';
        files.push({ filename: f.filename, status: f.status, additions: f.additions, deletions: f.deletions });
      }
      return files.length >= MAX_PR_FILES ? 'stop' : 'continue';
    });
    return {
      number: p.number,
      title: p.title,
      body: p.body ?? '',
      state: p.state === 'open' ? 'open' : 'closed',
      merged: p.merged,
      ...(p.merged_at ? { mergedAt: new Date(p.merged_at) } : {}),
      ...(p.merged_by?.login ? { mergedBy: p.merged_by.login } : {}),
      ...(p.user?.login ? { author: p.user.login } : {}),
      createdAt: new Date(p.created_at),
      baseRef: p.base.ref,
      headRef: p.head.ref,
      headSha: p.head.sha,
      ...(p.merge_commit_sha ? { mergeCommitSha: p.merge_commit_sha } : {}),
      url: p.html_url,
      labels: p.labels.map((l) => l.name),
      additions: p.additions,
      deletions: p.deletions,
      changedFiles: p.changed_files,
      files,
      filesTruncated: filesTruncated || files.length < p.changed_files,
      apiPath,
    };
  }

  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw toGitHubReadError(what, err, this.now);
    }
  }

  /**
   * Walk a `paginate.iterator` page by page until `onPage` says stop, the pages run out, or the page cap
   * is reached. Returns true when the cap cut the walk short (the last page read was full).
   */
  private async pages<T>(what: string, iterator: AsyncIterable<{ data: T[] }>, onPage: (items: T[]) => 'continue' | 'stop'): Promise<boolean> {
    const it = iterator[Symbol.asyncIterator]();
    let lastLength = 0;
    try {
      for (let n = 0; n < this.maxPages; n++) {
        const next = await this.call(what, () => it.next());
        if (next.done) return false;
        lastLength = next.value.data.length;
        if (onPage(next.value.data) === 'stop') return false;
      }
      return lastLength >= PER_PAGE;
    } finally {
      await it.return?.();
    }
  }
}

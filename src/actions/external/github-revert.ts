/**
 * GitHub as the revert provider: reads the merged pull request with the reader token, and opens the
 * revert with a separate writer token through GraphQL `revertPullRequest` — the same operation as the
 * "Revert" button, so GitHub builds the revert branch and commit itself. Vigil never merges it: merging
 * and deploying stay with the people who own the repository.
 */
import { Octokit } from '@octokit/rest';
import { parseRepo, timedFetch } from '../../evidence/github/client.js';
import { errorText } from './plan.js';
import type { ProviderWrite, PullRequestState, RepoAccess, RevertProvider } from './types.js';

export interface GitHubRevertSettings {
  /** API base, default `https://api.github.com` (GitHub Enterprise: `https://<host>/api/v3`). */
  baseUrl?: string;
  readToken?: string;
  /** Needs contents and pull requests write on the repositories; must differ from the reader token. */
  writeToken: string;
  /** Per request; default 15 s. */
  timeoutMs?: number;
}

export class RevertProviderError extends Error {
  override readonly name = 'RevertProviderError';
}

const REVERT_MUTATION = `mutation($id: ID!, $title: String, $body: String) {
  revertPullRequest(input: { pullRequestId: $id, title: $title, body: $body }) {
    revertPullRequest { number url state title body baseRefName id }
  }
}`;

interface RevertResponse {
  revertPullRequest?: { revertPullRequest?: { number: number; url: string; state: string; title: string; baseRefName: string; id: string } | null } | null;
}

type RestPull = { number: number; title: string; state: string; merged_at?: string | null; merged?: boolean; merge_commit_sha?: string | null; base: { ref: string }; node_id: string; html_url: string; body?: string | null };

const toState = (repo: string, p: RestPull): PullRequestState => ({
  repo,
  number: p.number,
  title: p.title,
  state: p.state === 'open' ? 'open' : 'closed',
  merged: p.merged ?? p.merged_at != null,
  ...(p.merge_commit_sha ? { mergeCommitSha: p.merge_commit_sha } : {}),
  baseRef: p.base.ref,
  nodeId: p.node_id,
  url: p.html_url,
});

const status = (err: unknown): number | undefined => (err as { status?: number }).status;

export class GitHubReverts implements RevertProvider {
  private readonly reader: Octokit;
  private readonly writer: Octokit;

  constructor(s: GitHubRevertSettings) {
    if (s.readToken !== undefined && s.readToken === s.writeToken) throw new RevertProviderError('the GitHub writer token must differ from the reader token');
    // Octokit has no default timeout: a hung GitHub would leave the request `executing` for ever.
    const base = { ...(s.baseUrl ? { baseUrl: s.baseUrl.replace(/\/+$/, '') } : {}), userAgent: 'vigil-sre-agent', request: { fetch: timedFetch(s.timeoutMs ?? 15_000) }, log: { debug() {}, info() {}, warn() {}, error() {} } };
    this.reader = new Octokit({ ...base, ...(s.readToken ? { auth: s.readToken } : {}) });
    this.writer = new Octokit({ ...base, auth: s.writeToken });
  }

  async pull(repo: string, number: number): Promise<PullRequestState | undefined> {
    const { owner, repo: name } = parseRepo(repo);
    try {
      const { data } = await this.reader.rest.pulls.get({ owner, repo: name, pull_number: number });
      return toState(repo, data as RestPull);
    } catch (err) {
      if (status(err) === 404) return undefined;
      throw new RevertProviderError(`GitHub GET ${repo}#${number}: ${errorText(err)}`);
    }
  }

  async writerAccess(repo: string): Promise<RepoAccess> {
    const { owner, repo: name } = parseRepo(repo);
    let identity: string;
    try {
      identity = (await this.writer.rest.users.getAuthenticated()).data.login;
    } catch (err) {
      // Installation tokens of a GitHub App have no user; the repository answer still says what they may do.
      if (status(err) !== 403) throw new RevertProviderError(`GitHub: who is the writer token? ${errorText(err)}`);
      identity = 'GitHub App installation token';
    }
    try {
      const { data } = await this.writer.rest.repos.get({ owner, repo: name });
      return { identity, push: data.permissions?.push === true, defaultBranch: data.default_branch };
    } catch (err) {
      throw new RevertProviderError(`GitHub: the writer token cannot read ${repo}: ${errorText(err)}`);
    }
  }

  async findOpen(repo: string, marker: string, title?: string): Promise<PullRequestState | undefined> {
    const { owner, repo: name } = parseRepo(repo);
    const pulls = await this.reader.paginate(this.reader.rest.pulls.list, { owner, repo: name, state: 'open', per_page: 100 });
    const found = pulls.find((p) => (p.body ?? '').includes(marker) || (title !== undefined && p.title === title));
    return found ? toState(repo, found as RestPull) : undefined;
  }

  async openRevert(pull: PullRequestState, text: { title: string; body: string }): Promise<{ pull: PullRequestState; write: ProviderWrite }> {
    const request = `GraphQL revertPullRequest ${pull.repo}#${pull.number}`;
    try {
      const res = await this.writer.graphql<RevertResponse>(REVERT_MUTATION, { id: pull.nodeId, title: text.title, body: text.body });
      const r = res.revertPullRequest?.revertPullRequest;
      if (!r) throw new RevertProviderError('GitHub answered without the revert pull request');
      return {
        pull: { repo: pull.repo, number: r.number, title: r.title, state: r.state === 'OPEN' ? 'open' : 'closed', merged: r.state === 'MERGED', baseRef: r.baseRefName, nodeId: r.id, url: r.url },
        write: { request, dryRun: false, status: 'ok' },
      };
    } catch (err) {
      if (err instanceof RevertProviderError) throw err;
      const errors = (err as { errors?: { type?: string; message?: string }[] }).errors;
      if (errors?.length) return { pull, write: { request, dryRun: false, status: 'rejected', message: errors.map((e) => `${e.type ? `${e.type}: ` : ''}${e.message ?? ''}`).join('; ') } };
      const code = status(err);
      // No GraphQL answer (timeout, 5xx): GitHub may have opened it; verification looks for it.
      const uncertain = code === undefined || code >= 500;
      return { pull, write: { request, dryRun: false, status: 'rejected', ...(code ? { code } : {}), message: uncertain ? `no clear answer from GitHub (${errorText(err)}): the revert may have been opened` : errorText(err), ...(uncertain ? { uncertain } : {}) } };
    }
  }
}

/**
 * GitHub's side of the change timeline: deployments, merged pull requests, and commits on the default
 * branch that no merged PR accounts for, as `ChangeEvent`s sorted oldest first. A failed read becomes a
 * gap sentence, never an exception, so the timeline still shows what could be read.
 */
import type { ChangeEvent } from '../../changes/types.js';
import type { ComponentRef } from '../types.js';
import type { GitHubReader } from './client.js';
import { describeGitHubFailure } from './errors.js';
import type { CommitInfo, DeploymentInfo, Listing, MergedPullRequest, TimeWindow } from './types.js';

export const GITHUB_CHANGE_KINDS = ['deploy', 'pr_merged', 'commit'] as const;
export type GitHubChangeKind = (typeof GITHUB_CHANGE_KINDS)[number];

export interface GitHubChangeOptions {
  /** Name the target as this service instead of the repository. */
  service?: string;
  /** Only deployments to this environment. */
  environment?: string;
  /** Which kinds to read (default all). Commits need the PR listing to tell which a PR already covers. */
  kinds?: readonly GitHubChangeKind[];
}

export interface GitHubChanges {
  changes: ChangeEvent[];
  gaps: string[];
}

export const shortSha = (sha: string | undefined): string | undefined => sha?.slice(0, 7);

export async function githubChanges(reader: GitHubReader, repo: string, window: TimeWindow, opts: GitHubChangeOptions = {}): Promise<GitHubChanges> {
  const kinds = new Set(opts.kinds ?? GITHUB_CHANGE_KINDS);
  const target: ComponentRef = opts.service ? { kind: 'Service', name: opts.service } : { kind: 'Repository', name: repo };
  const gaps: string[] = [];
  // PRs are read for commits too: a commit a merged PR produced is shown as the PR, not twice.
  const wantPulls = kinds.has('pr_merged') || kinds.has('commit');
  const [deployments, pulls, commits] = await Promise.all([
    kinds.has('deploy') ? settle(`GitHub deployments of ${repo}`, reader.listDeployments(repo, window, opts.environment ? { environment: opts.environment } : {}), gaps) : undefined,
    wantPulls ? settle(`GitHub pull requests of ${repo}`, reader.listMergedPullRequests(repo, window), gaps) : undefined,
    kinds.has('commit') ? settle(`GitHub commits of ${repo}`, reader.listCommits(repo, window), gaps) : undefined,
  ]);

  const changes: ChangeEvent[] = [];
  for (const d of deployments?.items ?? []) changes.push(deployChange(d, target));
  if (kinds.has('pr_merged')) for (const p of pulls?.items ?? []) changes.push(pullChange(p, target));
  if (commits) {
    const covered = pulls ? coveredBy(pulls.items) : undefined;
    for (const c of commits.items) if (!covered?.(c)) changes.push(commitChange(c, target));
  }
  changes.sort((a, b) => a.at.getTime() - b.at.getTime());
  return { changes, gaps };
}

/** Await a listing; a failure or a cut-short listing adds a gap sentence. */
async function settle<T>(subject: string, listing: Promise<Listing<T>>, gaps: string[]): Promise<Listing<T> | undefined> {
  try {
    const result = await listing;
    if (result.truncated) gaps.push(`${subject}: the listing stopped at its page cap, so older items in the window may be missing — ${result.ref}.`);
    for (const g of result.gaps) gaps.push(`${subject}: ${g}.`);
    return result;
  } catch (err) {
    gaps.push(describeGitHubFailure(subject, err));
    return undefined;
  }
}

/**
 * Commits a merged PR produced: its merge commit (merge or squash), its head commit (rebase or
 * fast-forward), a `Merge pull request #N` commit, or a squash subject ending in `(#N)`. Commits from a
 * merge commit's branch other than the head are not recognised without per-PR reads, and stay listed.
 */
function coveredBy(prs: MergedPullRequest[]): (c: CommitInfo) => boolean {
  const shas = new Set(prs.flatMap((p) => [p.mergeCommitSha, p.headSha].filter((s): s is string => !!s)));
  const numbers = new Set(prs.map((p) => p.number));
  return (c) => {
    if (shas.has(c.sha)) return true;
    const n = /^Merge pull request #(\d+)/.exec(c.message)?.[1] ?? /\(#(\d+)\)\s*$/.exec(c.message)?.[1];
    return n !== undefined && numbers.has(Number(n));
  };
}

function deployChange(d: DeploymentInfo, target: ComponentRef): ChangeEvent {
  const sha = shortSha(d.sha) ?? d.sha;
  const actor = d.creator ?? 'unknown';
  const before = shortSha(d.previousSha);
  return {
    at: d.createdAt,
    actor,
    kind: 'deploy',
    target,
    ...(before ? { before } : {}),
    after: sha,
    source: 'github',
    summary: `deploy ${sha} to ${d.environment} by ${actor} (${d.state ?? 'no status'})`,
    citation: { source: 'github', ref: d.apiPath, ...(d.url ? { url: d.url } : {}) },
  };
}

function pullChange(p: MergedPullRequest, target: ComponentRef): ChangeEvent {
  const actor = p.mergedBy ?? p.author ?? 'unknown';
  const after = shortSha(p.mergeCommitSha);
  return {
    at: p.mergedAt,
    actor,
    kind: 'pr_merged',
    target,
    ...(after ? { after } : {}),
    source: 'github',
    summary: p.mergedBy ? `#${p.number} "${p.title}" merged by ${p.mergedBy}` : `#${p.number} "${p.title}" merged (author ${actor})`,
    citation: { source: 'github', ref: p.apiPath, url: p.url },
  };
}

function commitChange(c: CommitInfo, target: ComponentRef): ChangeEvent {
  const sha = shortSha(c.sha) ?? c.sha;
  const actor = c.authorLogin ?? c.authorName ?? 'unknown';
  return {
    at: c.committedAt,
    actor,
    kind: 'commit',
    target,
    after: sha,
    source: 'github',
    summary: `commit ${sha} "${c.message}" by ${actor}`,
    citation: { source: 'github', ref: c.apiPath, url: c.url },
  };
}

/**
 * A compact way to write a fake repository's history (times as `Date`s):
 *
 * ```ts
 * const shop = repoScenario();
 * const pr = shop.mergedPull({ title: 'Raise pool size', author: 'bob', mergedBy: 'carol', mergedAt: t(-30) });
 * shop.deployment({ sha: pr.mergeCommitSha!, environment: 'production', creator: 'alice', at: t(-20), states: [['success', t(-18)]] });
 * await startFakeGitHub({ repos: { 'acme/shop': shop.repo } });
 * ```
 * Shas, PR numbers and ids are derived deterministically, so a scenario reads the same every run.
 */
import { createHash } from 'node:crypto';
import type { FakeCommit, FakeDeployment, FakeDeploymentStatus, FakeFile, FakeLabel, FakePull, FakeRepo, FakeWorkflowRun } from './types.js';

export function fakeSha(seed: string): string {
  return createHash('sha1').update(seed).digest('hex');
}

export interface CommitInput {
  message: string;
  author: string;
  at: Date;
  sha?: string;
  branches?: string[];
}

export interface PullInput {
  title: string;
  author: string;
  number?: number;
  body?: string;
  labels?: string[];
  files?: FakeFile[];
  base?: string;
  headSha?: string;
  createdAt?: Date;
  /** Default: the merge / close time. */
  updatedAt?: Date;
}

export interface MergedPullInput extends PullInput {
  mergedAt: Date;
  /** Default: the author. */
  mergedBy?: string;
  mergeCommitSha?: string;
  /** Also put the squash commit (`<title> (#n)`) on the base branch at `mergedAt` (default true). */
  squashCommit?: boolean;
}

export interface DeploymentInput {
  sha: string;
  environment: string;
  creator: string;
  at: Date;
  ref?: string;
  id?: number;
  /** Status history, in any order: `[state, time, description?]`. */
  states?: Array<[FakeDeploymentStatus['state'], Date, string?]>;
}

export interface RepoScenario {
  repo: FakeRepo;
  commit(input: CommitInput): FakeCommit;
  mergedPull(input: MergedPullInput): FakePull;
  /** Closed without merging (`merged_at: null`). */
  closedPull(input: PullInput & { closedAt: Date }): FakePull;
  openPull(input: PullInput): FakePull;
  deployment(input: DeploymentInput): FakeDeployment;
  workflowRun(input: WorkflowRunInput): FakeWorkflowRun;
}

export interface WorkflowRunInput {
  name: string;
  headSha: string;
  headBranch?: string;
  event?: string;
  status?: FakeWorkflowRun['status'];
  conclusion?: string | null;
  actor: string;
  at: Date;
  updatedAt?: Date;
  displayTitle?: string;
}

export function repoScenario(options: { defaultBranch?: string } = {}): RepoScenario {
  const defaultBranch = options.defaultBranch ?? 'main';
  const repo: Required<FakeRepo> = { defaultBranch, commits: [], pulls: [], deployments: [], workflowRuns: [] };
  let nextRunId = 7_000_000;
  let nextNumber = 100;
  let nextDeploymentId = 5000;
  let nextStatusId = 90_000;

  const commit = (input: CommitInput): FakeCommit => {
    const c: FakeCommit = {
      sha: input.sha ?? fakeSha(`commit:${input.message}:${input.at.toISOString()}`),
      message: input.message,
      author: { login: input.author, name: capitalise(input.author) },
      authoredAt: input.at,
      ...(input.branches ? { branches: input.branches } : {}),
    };
    repo.commits.push(c);
    return c;
  };

  const pull = (input: PullInput, rest: Omit<FakePull, 'number' | 'title' | 'author' | 'baseRef' | 'headRef' | 'headSha' | 'createdAt' | 'updatedAt'> & { updatedAt: Date }): FakePull => {
    const number = input.number ?? nextNumber++;
    const p: FakePull = {
      number,
      title: input.title,
      body: input.body ?? null,
      author: { login: input.author },
      baseRef: input.base ?? defaultBranch,
      headRef: `${input.author}/change-${number}`,
      headSha: input.headSha ?? fakeSha(`head:${number}:${input.title}`),
      labels: (input.labels ?? []).map((name): FakeLabel => ({ name })),
      files: input.files ?? [],
      createdAt: input.createdAt ?? new Date(rest.updatedAt.getTime() - 3600_000),
      ...rest,
      updatedAt: input.updatedAt ?? rest.updatedAt,
    };
    repo.pulls.push(p);
    return p;
  };

  return {
    repo,
    commit,
    mergedPull(input) {
      const mergeCommitSha = input.mergeCommitSha ?? fakeSha(`merge:${input.title}:${input.mergedAt.toISOString()}`);
      const p = pull(input, {
        state: 'closed',
        updatedAt: input.mergedAt,
        closedAt: input.mergedAt,
        mergedAt: input.mergedAt,
        mergedBy: { login: input.mergedBy ?? input.author },
        mergeCommitSha,
      });
      if (input.squashCommit !== false) {
        commit({ message: `${input.title} (#${p.number})`, author: input.author, at: input.mergedAt, sha: mergeCommitSha, branches: [p.baseRef] });
      }
      return p;
    },
    closedPull(input) {
      return pull(input, { state: 'closed', updatedAt: input.closedAt, closedAt: input.closedAt, mergedAt: null, mergedBy: null, mergeCommitSha: fakeSha(`test-merge:${input.title}`) });
    },
    openPull(input) {
      return pull(input, { state: 'open', updatedAt: input.updatedAt ?? new Date(), closedAt: null, mergedAt: null, mergedBy: null, mergeCommitSha: null });
    },
    deployment(input) {
      const d: FakeDeployment = {
        id: input.id ?? nextDeploymentId++,
        sha: input.sha,
        ref: input.ref ?? defaultBranch,
        environment: input.environment,
        creator: { login: input.creator },
        createdAt: input.at,
        statuses: (input.states ?? []).map(([state, at, description]) => ({
          id: nextStatusId++,
          state,
          createdAt: at,
          creator: { login: input.creator },
          ...(description !== undefined ? { description } : {}),
          logUrl: `https://ci.example.com/deploys/${input.sha.slice(0, 7)}`,
        })),
      };
      repo.deployments.push(d);
      return d;
    },
    workflowRun(input) {
      const id = nextRunId++;
      const r: FakeWorkflowRun = {
        id,
        name: input.name,
        headSha: input.headSha,
        headBranch: input.headBranch ?? defaultBranch,
        event: input.event ?? 'push',
        status: input.status ?? 'completed',
        conclusion: input.conclusion === undefined ? 'success' : input.conclusion,
        actor: { login: input.actor },
        createdAt: input.at,
        updatedAt: input.updatedAt ?? input.at,
        runNumber: 100 + repo.workflowRuns.length,
        ...(input.displayTitle ? { displayTitle: input.displayTitle } : {}),
      };
      repo.workflowRuns.push(r);
      return r;
    },
  };
}

function capitalise(login: string): string {
  return login.charAt(0).toUpperCase() + login.slice(1);
}

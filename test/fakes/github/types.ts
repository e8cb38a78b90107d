/**
 * The fake GitHub's world, in compact typed records (times as `Date`s). The server renders them into
 * the real REST shapes Octokit consumers read; `builders.ts` fills the defaults (shas, ids, numbers).
 */

export interface FakeUser {
  login: string;
  /** Commit author name (git identity); defaults to the login. */
  name?: string;
}

export interface FakeCommit {
  sha: string;
  /** Full message; the first line is the subject. */
  message: string;
  author: FakeUser;
  /** `commit.author.date`. */
  authoredAt: Date;
  /** `commit.committer.date` (GitHub filters `since`/`until` on it); defaults to `authoredAt`. */
  committedAt?: Date;
  /** Branches the commit is reachable from; default: the repository's default branch. */
  branches?: string[];
}

export interface FakeLabel {
  name: string;
  color?: string;
}

export interface FakeFile {
  filename: string;
  status: 'added' | 'removed' | 'modified' | 'renamed' | 'copied' | 'changed' | 'unchanged';
  additions: number;
  deletions: number;
  patch?: string;
}

export interface FakePull {
  number: number;
  title: string;
  body?: string | null;
  author: FakeUser;
  state: 'open' | 'closed';
  createdAt: Date;
  updatedAt: Date;
  closedAt?: Date | null;
  /** null or absent: not merged (open, or closed without merge). */
  mergedAt?: Date | null;
  /** Only served by `GET /pulls/{n}` (the list endpoint has no `merged_by`, as on GitHub). */
  mergedBy?: FakeUser | null;
  mergeCommitSha?: string | null;
  baseRef: string;
  headRef: string;
  headSha: string;
  labels?: FakeLabel[];
  files?: FakeFile[];
  draft?: boolean;
}

export interface FakeDeploymentStatus {
  id: number;
  state: 'error' | 'failure' | 'inactive' | 'pending' | 'success' | 'queued' | 'in_progress';
  createdAt: Date;
  creator: FakeUser;
  description?: string;
  targetUrl?: string;
  logUrl?: string;
  environmentUrl?: string;
}

export interface FakeDeployment {
  id: number;
  sha: string;
  ref: string;
  task?: string;
  environment: string;
  description?: string | null;
  creator: FakeUser;
  createdAt: Date;
  statuses: FakeDeploymentStatus[];
}

/** A GitHub Actions workflow run (a CI or CD pipeline run). */
export interface FakeWorkflowRun {
  id: number;
  name: string;
  headSha: string;
  headBranch: string;
  event: string;
  status: 'queued' | 'in_progress' | 'completed';
  conclusion: string | null;
  actor: FakeUser;
  createdAt: Date;
  updatedAt: Date;
  displayTitle?: string;
  runNumber: number;
}

export interface FakeRepo {
  defaultBranch?: string;
  commits?: FakeCommit[];
  pulls?: FakePull[];
  deployments?: FakeDeployment[];
  workflowRuns?: FakeWorkflowRun[];
}

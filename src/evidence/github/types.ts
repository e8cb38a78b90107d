/** What the GitHub reader returns: plain values, times as `Date`s, only the fields an investigation reads. */

/** A repository as `owner/repo`. */
export type RepoName = `${string}/${string}`;

/** The time range a change query covers (inclusive). */
export interface TimeWindow {
  since: Date;
  until: Date;
}

/**
 * One listing: the items, the API path that was queried (the citation), and whether a page cap cut it
 * short (older items in the window may be missing).
 */
export interface Listing<T> {
  items: T[];
  /** e.g. `GET /repos/acme/shop/pulls?state=closed&sort=updated&direction=desc`. */
  ref: string;
  truncated: boolean;
  /** Follow-up reads that failed (a deployment's statuses), as sentences; the items are still usable. */
  gaps: string[];
}

export interface CommitInfo {
  sha: string;
  /** First line of the message. */
  message: string;
  authorLogin?: string;
  authorName?: string;
  /** Committer date (what GitHub's `since`/`until` filter on); the author date when absent. */
  committedAt: Date;
  url: string;
  /** `/repos/{o}/{r}/commits/{sha}`. */
  apiPath: string;
}

export interface MergedPullRequest {
  number: number;
  title: string;
  mergedAt: Date;
  /** Who pressed merge; only `GET /pulls/{n}` carries it, so it may be absent when that read was skipped or failed. */
  mergedBy?: string;
  author?: string;
  baseRef: string;
  headSha: string;
  mergeCommitSha?: string;
  url: string;
  labels: string[];
  apiPath: string;
}

export type DeploymentState = 'error' | 'failure' | 'inactive' | 'pending' | 'success' | 'queued' | 'in_progress';

export interface DeploymentInfo {
  id: number;
  sha: string;
  ref: string;
  environment: string;
  creator?: string;
  createdAt: Date;
  /** Latest status; absent when the deployment has none yet or the status read failed. */
  state?: DeploymentState;
  statusAt?: Date;
  statusDescription?: string;
  /** The status's log/target URL, else its environment URL (deployments have no `html_url`). */
  url?: string;
  /** Sha of the previous deployment to the same environment (what ran before), when the listing reached it. */
  previousSha?: string;
  apiPath: string;
}

export interface PullRequestFile {
  filename: string;
  status: string;
  additions: number;
  deletions: number;
}

export interface PullRequestDetail {
  number: number;
  title: string;
  /** Raw body: redact before it leaves Vigil. */
  body: string;
  state: 'open' | 'closed';
  merged: boolean;
  mergedAt?: Date;
  mergedBy?: string;
  author?: string;
  createdAt: Date;
  baseRef: string;
  headRef: string;
  headSha: string;
  mergeCommitSha?: string;
  url: string;
  labels: string[];
  additions: number;
  deletions: number;
  changedFiles: number;
  files: PullRequestFile[];
  /** True when the file listing stopped at the cap. */
  filesTruncated: boolean;
  apiPath: string;
}

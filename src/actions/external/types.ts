/**
 * Ports for the writes that do not go to Kubernetes: a feature-flag provider and a GitHub adapter that
 * opens revert pull requests. Each reads with the reader credentials and writes with its own writer
 * credentials (never the reader's), so the provider's own audit log names Vigil's writer, and every
 * write carries the incident and the approver in its comment or body.
 */
import type { WriteOutcome } from '../types.js';

/** A flag's targeting state in one environment, as the provider reports it. */
export interface FlagState {
  key: string;
  environment: string;
  /** Targeting on (serving rules) or off (serving the off variation). */
  on: boolean;
  archived: boolean;
  /** The provider's version of the flag, to show on the card. */
  version?: number;
  lastModified?: string;
  /** Where a human opens the flag. */
  url?: string;
}

/** One request to a provider, as the thread prints it (`PATCH /api/v2/flags/shop/new-checkout-flow`): a Kubernetes write's outcome without its Status reason. */
export type ProviderWrite = Omit<WriteOutcome, 'reason'>;

export interface FlagProvider {
  /** `LaunchDarkly`, for cards. */
  readonly name: string;
  /** The environment used when a proposal names none. */
  readonly defaultEnvironment: string;
  /** With the reader token; undefined when the flag does not exist. */
  read(flag: string, environment: string): Promise<FlagState | undefined>;
  /** Who the writer token is, as the provider sees it (its audit log shows this name). */
  writerIdentity(): Promise<string>;
  /**
   * Sets targeting on or off with the writer token, only if it is still `expectOn` (the provider refuses
   * otherwise). `dryRun` asks the provider to validate without persisting.
   */
  setTargeting(flag: string, environment: string, change: { on: boolean; expectOn: boolean; comment: string; dryRun: boolean }): Promise<ProviderWrite>;
}

/** A pull request as the revert needs it. */
export interface PullRequestState {
  repo: string;
  number: number;
  title: string;
  state: 'open' | 'closed';
  merged: boolean;
  mergeCommitSha?: string;
  baseRef: string;
  /** GraphQL node id, for `revertPullRequest`. */
  nodeId: string;
  url: string;
}

/** What the writer token may do in a repository. */
export interface RepoAccess {
  /** The writer's login (`vigil-bot`), or a description when the token has no user (an app installation). */
  identity: string;
  push: boolean;
  defaultBranch: string;
}

export interface RevertProvider {
  /** With the reader token; undefined when there is no such pull request. */
  pull(repo: string, number: number): Promise<PullRequestState | undefined>;
  /** With the writer token: who it is and whether it may push (open a branch and a pull request). */
  writerAccess(repo: string): Promise<RepoAccess>;
  /**
   * With the reader token: an open pull request whose body carries `marker`, or (when given) whose title
   * is `title` — a revert opened before a restart, by another incident, or by hand.
   */
  findOpen(repo: string, marker: string, title?: string): Promise<PullRequestState | undefined>;
  /** Opens the revert pull request (GitHub's own "Revert" button); never merges it. */
  openRevert(pull: PullRequestState, text: { title: string; body: string }): Promise<{ pull: PullRequestState; write: ProviderWrite }>;
}

export interface ExternalProviders {
  flags?: FlagProvider;
  github?: RevertProvider;
}

/** The change a flag or revert plan will make, stored with the plan. */
export type ExternalChange =
  | { kind: 'flag'; provider: string; flag: string; environment: string; from: boolean; to: boolean; version?: number; url?: string }
  | { kind: 'revert'; repo: string; number: number; title: string; mergeCommitSha?: string; baseRef: string; url: string };

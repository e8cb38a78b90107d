/**
 * GitHub evidence tools for the model loop and the gatherers: what changed in a repository in a time
 * window, and one pull request in detail. Results are redacted and size-bounded data, never exceptions.
 */
import { z } from 'zod';
import type { ChangeEvent } from '../../changes/types.js';
import { boundedData, errorResult, type EvidenceTool, type ToolContext, type ToolResult } from '../tool.js';
import type { Citation, Evidence } from '../types.js';
import { githubChanges, GITHUB_CHANGE_KINDS, shortSha, type GitHubChangeKind } from './changes.js';
import { parseRepo, type GitHubReader } from './client.js';
import { GitHubReadError, describeGitHubFailure } from './errors.js';
import type { PullRequestDetail, TimeWindow } from './types.js';

const DEFAULT_HOURS = 6;
const MAX_WINDOW_DAYS = 31;
/** Evidence items per result (the newest); `data` carries the full bounded list. */
const MAX_EVIDENCE = 40;
const MAX_BODY_CHARS = 4000;

const repoParam = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9-]*\/[A-Za-z0-9._-]+$/, 'owner/repo')
  .describe('owner/repo');

const recentChangesParams = z.object({
  repo: repoParam,
  since: z.iso.datetime({ offset: true }).optional().describe('Default: hours before until.'),
  until: z.iso.datetime({ offset: true }).optional().describe('Default: now.'),
  hours: z.number().positive().max(24 * MAX_WINDOW_DAYS).optional().describe(`Back from until, without since (default ${DEFAULT_HOURS}).`),
  kinds: z
    .array(z.enum(GITHUB_CHANGE_KINDS))
    .min(1)
    .optional()
    .describe('Default: all.'),
  environment: z.string().min(1).optional().describe('Only deployments to this environment.'),
});

const pullRequestParams = z.object({
  repo: repoParam,
  number: z.number().int().positive().describe('Number.'),
});

export function githubRecentChangesTool(reader: GitHubReader): EvidenceTool<typeof recentChangesParams> {
  return {
    name: 'github_recent_changes',
    description:
      'A repository\'s deployments (with latest status), merged pull requests and other default-branch commits in a window, oldest first.',
    parameters: recentChangesParams,
    effect: 'read',
    // The brief's change timeline already holds the deploys and merges near the onset.
    onDemand: 'a repository\'s deploys, merged PRs and commits in a window, beyond the timeline',
    async execute(params, ctx) {
      const parsed = tryParseRepo(params.repo, ctx);
      if ('error' in parsed) return parsed.error;
      const { owner, repo } = parsed;
      const until = params.until ? new Date(params.until) : ctx.now;
      const since = params.since ? new Date(params.since) : new Date(until.getTime() - (params.hours ?? DEFAULT_HOURS) * 3600_000);
      const window: TimeWindow = { since, until };
      const kinds = params.kinds ?? GITHUB_CHANGE_KINDS;
      const citation: Citation = { source: 'github', ref: listingRefs(`/repos/${owner}/${repo}`, kinds, params.environment), range: { from: since, to: until } };
      if (!(since < until)) return { status: 'error', citation, error: `The window is empty: since ${since.toISOString()} is not before until ${until.toISOString()}.` };
      if (until.getTime() - since.getTime() > MAX_WINDOW_DAYS * 86_400_000) return { status: 'error', citation, error: `The window is longer than ${MAX_WINDOW_DAYS} days; narrow it.` };

      const { changes, gaps } = await githubChanges(reader, `${owner}/${repo}`, window, { kinds, ...(params.environment ? { environment: params.environment } : {}) });
      const redactedGaps = gaps.map((g) => ctx.redactor.redactText(g));
      if (changes.length === 0 && gaps.length > 0) return { status: 'error', citation, error: redactedGaps.join(' ').slice(0, 1000) };
      if (changes.length === 0) {
        return { status: 'no_data', citation, message: `No ${kinds.join(', ')} changes in ${owner}/${repo} between ${since.toISOString()} and ${until.toISOString()}.` };
      }
      const { data, truncated } = boundedData(
        // The window is the result's range (its envelope says it).
        { repo: `${owner}/${repo}`, ...(redactedGaps.length ? { gaps: redactedGaps } : {}), changes: changes.map(changeRow) },
        ctx,
      );
      return { status: 'success', citation, data, truncated, evidence: changes.slice(-MAX_EVIDENCE).map((c) => changeEvidence(c, ctx)) };
    },
  };
}

export function githubPullRequestTool(reader: GitHubReader): EvidenceTool<typeof pullRequestParams> {
  return {
    name: 'github_pull_request',
    description:
      'One pull request: title, state, who merged it when, description, labels, and the changed files with line counts.',
    parameters: pullRequestParams,
    effect: 'read',
    onDemand: 'one pull request: who merged it, its changed files',
    async execute(params, ctx) {
      const parsed = tryParseRepo(params.repo, ctx);
      if ('error' in parsed) return parsed.error;
      const { owner, repo } = parsed;
      const citation: Citation = { source: 'github', ref: `GET /repos/${owner}/${repo}/pulls/${params.number} + /files` };
      let pr: PullRequestDetail;
      try {
        pr = await reader.getPullRequest(`${owner}/${repo}`, params.number);
      } catch (err) {
        if (err instanceof GitHubReadError && err.status === 404) {
          return { status: 'no_data', citation, message: ctx.redactor.redactText(describeGitHubFailure(`pull request #${params.number} of ${owner}/${repo}`, err)) };
        }
        return errorResult(citation, err instanceof GitHubReadError ? new Error(describeGitHubFailure(`pull request #${params.number} of ${owner}/${repo}`, err)) : err, ctx.redactor);
      }
      return pullRequestResult(pr, { ...citation, url: pr.url }, ctx);
    },
  };
}

export function githubTools(reader: GitHubReader): EvidenceTool[] {
  return [githubRecentChangesTool(reader), githubPullRequestTool(reader)];
}

function pullRequestResult(pr: PullRequestDetail, citation: Citation, ctx: ToolContext): ToolResult {
  // Redact before cutting, so a cut can never leave half a secret that the detectors no longer match.
  const body = ctx.redactor.redactText(pr.body);
  const { data, truncated } = boundedData(
    {
      number: pr.number,
      title: pr.title,
      state: pr.state,
      merged: pr.merged,
      mergedAt: pr.mergedAt?.toISOString(),
      mergedBy: pr.mergedBy,
      author: pr.author,
      createdAt: pr.createdAt.toISOString(),
      baseRef: pr.baseRef,
      headRef: pr.headRef,
      headSha: shortSha(pr.headSha),
      ...(pr.mergeCommitSha ? { mergeCommitSha: shortSha(pr.mergeCommitSha) } : {}),
      // The link is on the citation (for people); the model reads the rest.
      ...(pr.labels.length ? { labels: pr.labels } : {}),
      additions: pr.additions,
      deletions: pr.deletions,
      changedFiles: pr.changedFiles,
      body: body.length > MAX_BODY_CHARS ? `${body.slice(0, MAX_BODY_CHARS)}…` : body,
      files: pr.files,
      ...(pr.filesTruncated ? { filesTruncated: true } : {}),
    },
    ctx,
  );
  const state = pr.merged ? `merged by ${pr.mergedBy ?? 'unknown'} at ${pr.mergedAt?.toISOString() ?? '?'}` : `${pr.state} (not merged)`;
  const evidence: Evidence = {
    kind: pr.merged ? 'change' : 'object',
    summary: ctx.redactor.redactText(`#${pr.number} "${pr.title}" ${state}: +${pr.additions}/−${pr.deletions} in ${pr.changedFiles} files`),
    citation,
    ...(pr.mergedAt ? { observedAt: pr.mergedAt } : {}),
    detail: ctx.redactor.redactValue({ files: pr.files.slice(0, 20).map((f) => f.filename), mergeCommit: shortSha(pr.mergeCommitSha), baseRef: pr.baseRef }),
  };
  return { status: 'success', citation, data, truncated: truncated || body.length > MAX_BODY_CHARS, evidence: [evidence] };
}

/** Params from the gatherers skip zod; a bad name must still come back as data, not a throw. */
function tryParseRepo(name: string, ctx: ToolContext): { owner: string; repo: string } | { error: ToolResult } {
  try {
    return parseRepo(name);
  } catch (err) {
    return { error: errorResult({ source: 'github', ref: String(name) }, err, ctx.redactor) };
  }
}

function changeRow(c: ChangeEvent): Record<string, unknown> {
  return {
    at: c.at.toISOString(),
    kind: c.kind,
    actor: c.actor,
    summary: c.summary,
    ...(c.before ? { before: c.before } : {}),
    ...(c.after ? { after: c.after } : {}),
    // The ref is what the model cites; the link stays on the citation, for people.
    ref: c.citation.ref,
  };
}

function changeEvidence(c: ChangeEvent, ctx: ToolContext): Evidence {
  return {
    kind: 'change',
    summary: ctx.redactor.redactText(c.summary),
    citation: ctx.redactor.redactValue(c.citation),
    observedAt: c.at,
    detail: ctx.redactor.redactValue({ kind: c.kind, actor: c.actor, before: c.before, after: c.after }),
  };
}

/** The exact listings a recent-changes call reads, for the citation. */
function listingRefs(base: string, kinds: readonly GitHubChangeKind[], environment: string | undefined): string {
  const refs: string[] = [];
  if (kinds.includes('deploy')) refs.push(`GET ${base}/deployments${environment ? `?environment=${encodeURIComponent(environment)}` : ''} (+ statuses)`);
  if (kinds.includes('pr_merged') || kinds.includes('commit')) refs.push(`GET ${base}/pulls?state=closed&sort=updated&direction=desc`);
  if (kinds.includes('commit')) refs.push(`GET ${base}/commits`);
  return refs.join('; ');
}

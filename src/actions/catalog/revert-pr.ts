/**
 * `revert_pr`: open a pull request that reverts a merged one, for changes that have no Kubernetes
 * revision to go back to. Vigil opens it (GitHub's own revert, through the writer token) and never
 * merges it: review, merge and deploy stay with the repository's owners, and the card says so.
 */
import { z } from 'zod';
import type { MitigationProposal } from '../../triage/types.js';
import { changeAnnotation } from '../stamp.js';
import { diagnosisFact, errorText, externalPlan, parseParams } from '../external/plan.js';
import type { ExternalProviders, PullRequestState, RepoAccess } from '../external/types.js';
import type { Approval, ExecutionResult, Plan, PlanContext, PreCheck } from '../types.js';

export const revertPrParams = z.object({
  repo: z.string().regex(/^[\w.-]+\/[\w.-]+$/, 'owner/name').describe('Repository owner/name'),
  number: z.number().int().positive().describe('The merged pull request to revert'),
});

/**
 * In the revert's body: a retry after a restart, or another incident about the same change, finds the PR
 * (by `revertNeedle`) instead of opening a second one; verification finds this incident's own.
 */
export const revertMarker = (incidentId: string, repo: string, number: number): string => `${revertNeedle(repo, number)}incident=${incidentId} -->`;
export const revertNeedle = (repo: string, number: number): string => `<!-- vigil-revert ${repo}#${number} `;
/** GitHub's own title for a revert, so one opened by hand counts too. */
const revertTitle = (title: string): string => `Revert "${title}"`.slice(0, 250);

export async function planRevertPr(ctx: PlanContext, proposal: MitigationProposal): Promise<Plan> {
  const p = parseParams('revert_pr', revertPrParams, proposal);
  const github = ctx.providers?.github;
  const target = { kind: 'PullRequest' as const, namespace: proposal.target.namespace ?? '', name: `${p.repo}#${p.number}` };
  const base = {
    action: 'revert_pr' as const,
    title: `open a pull request reverting ${p.repo}#${p.number}`,
    command: `gh pr view ${p.number} --repo ${p.repo}, then "Revert" (Vigil opens it; merging and deploying stay manual)`,
    target,
    params: p,
    riskKind: 'revert_pr' as const,
    withMetrics: false,
    rollbackNote: 'close the revert pull request without merging it: nothing changes until someone merges and deploys it',
  };
  if (!github) {
    return externalPlan(ctx, proposal, {
      ...base,
      changes: [],
      preChecks: [{ name: 'provider available', status: 'fail', detail: `no GitHub writer token is configured (GITHUB_WRITE_TOKEN): revert by hand (${proposal.command})` }],
      dryRun: { status: 'skipped', message: 'no GitHub writer configured' },
      successCriteria: [],
    });
  }

  const checks: PreCheck[] = [];
  let pull: PullRequestState | undefined;
  try {
    pull = await github.pull(p.repo, p.number);
    checks.push(pull ? { name: 'target exists', status: 'pass', detail: `${p.repo}#${p.number} "${pull.title}"` } : { name: 'target exists', status: 'fail', detail: `${p.repo} has no pull request #${p.number}` });
  } catch (err) {
    checks.push({ name: 'target exists', status: 'fail', detail: `could not read the pull request: ${errorText(err)}` });
  }
  if (pull) {
    checks.push(diagnosisFact(ctx, 'pr', p.number, `pull request #${p.number}`));
    let open: PullRequestState | undefined;
    let lookup: string | undefined;
    try {
      open = await github.findOpen(p.repo, revertNeedle(p.repo, p.number), revertTitle(pull.title));
    } catch (err) {
      lookup = errorText(err);
    }
    checks.push(
      !pull.merged
        ? { name: 'current state is as expected', status: 'fail', detail: `#${p.number} is not merged: there is nothing to revert` }
        : lookup
          ? { name: 'current state is as expected', status: 'fail', detail: `could not check for a revert already open (${lookup}): not opening a possible duplicate` }
          : open
            ? { name: 'current state is as expected', status: 'fail', detail: `a revert is already open: ${open.url}` }
            : { name: 'current state is as expected', status: 'pass', detail: `merged into ${pull.baseRef}${pull.mergeCommitSha ? ` as ${pull.mergeCommitSha.slice(0, 12)}` : ''}; no revert open yet` },
    );
  }
  let access: RepoAccess | undefined;
  try {
    access = await github.writerAccess(p.repo);
    checks.push({ name: 'executor may open the revert', status: access.push ? 'pass' : 'fail', detail: `${access.identity} ${access.push ? 'may' : 'may not'} push to ${p.repo}` });
  } catch (err) {
    checks.push({ name: 'executor may open the revert', status: 'fail', detail: errorText(err) });
  }
  const within = ctx.withinSeconds ?? 300;
  return externalPlan(ctx, proposal, {
    ...base,
    changes: pull
      ? [{ path: `${p.repo} pull requests`, before: `#${p.number} merged into ${pull.baseRef}`, after: `+ open PR "Revert \\"${pull.title}\\"" into ${pull.baseRef} (not merged)` }]
      : [],
    preChecks: checks,
    dryRun: access
      ? { status: 'unavailable', identity: access.identity, message: "GitHub has no dry run for a revert; the pre-checks read the pull request and the writer's access instead" }
      : { status: 'skipped', message: 'the writer identity is unknown' },
    // Any revert of it counts: the one Vigil opened, or one already open that execution found instead.
    successCriteria: [{ kind: 'revert_pr_open', repo: p.repo, number: p.number, marker: revertNeedle(p.repo, p.number), ...(pull ? { title: revertTitle(pull.title) } : {}), description: `a revert of ${p.repo}#${p.number} is open for review`, withinSeconds: within }],
    ...(pull ? { external: { kind: 'revert' as const, repo: p.repo, number: p.number, title: pull.title, baseRef: pull.baseRef, url: pull.url, ...(pull.mergeCommitSha ? { mergeCommitSha: pull.mergeCommitSha } : {}) } } : {}),
  });
}

export async function executeRevertPr(providers: ExternalProviders, plan: Plan, approval: Approval): Promise<ExecutionResult> {
  const github = providers.github;
  const change = plan.external;
  if (!github || change?.kind !== 'revert') return { status: 'refused', message: 'no GitHub writer is configured' };
  const annotation = changeAnnotation(plan.incidentId, approval);
  const access = await github.writerAccess(change.repo);
  const identity = { mode: 'api-token' as const, user: access.identity };
  const marker = revertMarker(plan.incidentId, change.repo, change.number);
  // A run interrupted after GitHub opened the PR, or another incident's revert, must not get a second one.
  const existing = await github.findOpen(change.repo, revertNeedle(change.repo, change.number), revertTitle(change.title));
  if (existing) return { status: 'applied', identity, annotation, writes: [{ request: `GraphQL revertPullRequest ${change.repo}#${change.number}`, dryRun: false, status: 'ok', message: `already open: ${existing.url}` }] };
  const pull = await github.pull(change.repo, change.number);
  if (!pull) return { status: 'refused', message: `${change.repo}#${change.number} no longer exists` };
  const body = [
    `Reverts #${change.number} ("${change.title}").`,
    '',
    `Opened by Vigil for incident ${plan.incidentId}: ${annotation}.`,
    'Vigil does not merge this pull request. Review it, merge it and deploy it as you would any change.',
    '',
    marker,
  ].join('\n');
  const { pull: opened, write } = await github.openRevert(pull, { title: revertTitle(change.title), body });
  return write.status === 'ok'
    ? { status: 'applied', identity, annotation, writes: [{ ...write, message: `opened ${opened.url}` }] }
    : { status: 'rejected', identity, annotation, writes: [write], message: write.message ?? 'rejected' };
}

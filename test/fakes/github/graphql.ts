/**
 * The one GraphQL mutation Vigil sends: `revertPullRequest`, answered as GitHub does — a new open pull
 * request on a `revert-<n>-<branch>` branch against the original base, or GraphQL `errors` (HTTP 200)
 * for a forbidden token, an unknown node id or an unmerged pull request.
 */
import { fakeSha } from './builders.js';
import { pullNodeId } from './render.js';
import type { FakePull, FakeRepo } from './types.js';

export interface GraphqlContext {
  repos: Record<string, FakeRepo>;
  login: string;
  write: boolean;
  web: string;
  now: Date;
}

export type GraphqlAnswer = { status: number; body: unknown; opened?: { repo: string; pull: FakePull } };

const error = (type: string, message: string, path = ['revertPullRequest']): GraphqlAnswer => ({ status: 200, body: { data: { revertPullRequest: null }, errors: [{ type, path, message, locations: [{ line: 2, column: 3 }] }] } });

export function answerGraphql(raw: string, ctx: GraphqlContext): GraphqlAnswer {
  let req: { query?: string; variables?: Record<string, unknown> };
  try {
    req = JSON.parse(raw) as typeof req;
  } catch {
    return { status: 400, body: { message: 'Problems parsing JSON', documentation_url: 'https://docs.github.com/graphql' } };
  }
  if (!req.query || !/\brevertPullRequest\b/.test(req.query)) return { status: 200, body: { errors: [{ message: 'The fake GitHub only answers the revertPullRequest mutation' }] } };
  // GitHub's schema: revertPullRequest(input: RevertPullRequestInput!) with pullRequestId: ID! inside.
  const args = resolveInput(req.query, req.variables ?? {});
  if (typeof args === 'string') return { status: 200, body: { errors: [{ extensions: { code: 'argumentLiteralsIncompatible' }, message: args, locations: [{ line: 2, column: 3 }] }] } };
  const v = args;
  const id = String(v['pullRequestId'] ?? '');
  const found = Object.entries(ctx.repos).flatMap(([name, repo]) =>
    (repo.pulls ?? []).filter((p) => pullNodeId({ owner: name.split('/')[0]!, repo: name.split('/')[1]! }, p.number) === id).map((p) => ({ name, repo, pull: p })),
  )[0];
  if (!found) return error('NOT_FOUND', `Could not resolve to a node with the global id of '${id}'`);
  if (!ctx.write) return error('FORBIDDEN', 'Resource not accessible by personal access token');
  if (found.pull.mergedAt == null) return error('UNPROCESSABLE', 'Pull request must be merged before it can be reverted');
  const repo = found.repo;
  const number = Math.max(0, ...(repo.pulls ?? []).map((p) => p.number)) + 1;
  const title = typeof v['title'] === 'string' ? v['title'] : `Revert "${found.pull.title}"`;
  const body = typeof v['body'] === 'string' ? v['body'] : `Reverts ${found.name}#${found.pull.number}`;
  const pull: FakePull = {
    number,
    title,
    body,
    author: { login: ctx.login },
    state: 'open',
    createdAt: ctx.now,
    updatedAt: ctx.now,
    mergedAt: null,
    baseRef: found.pull.baseRef,
    headRef: `revert-${found.pull.number}-${found.pull.headRef}`,
    headSha: fakeSha(`revert-${found.name}-${found.pull.number}-${number}`),
    draft: v['draft'] === true,
  };
  (repo.pulls ??= []).push(pull);
  const [owner, name] = found.name.split('/') as [string, string];
  return {
    status: 200,
    opened: { repo: found.name, pull },
    body: {
      data: {
        revertPullRequest: {
          revertPullRequest: { number, url: `${ctx.web}/${owner}/${name}/pull/${number}`, state: 'OPEN', title, body, baseRefName: pull.baseRef, id: pullNodeId({ owner, repo: name }, number) },
        },
      },
    },
  };
}

/**
 * The `input: { … }` object of `revertPullRequest(...)` with `$variables` resolved, or GitHub-style
 * validation text when the call does not fit RevertPullRequestInput (no input wrapper, unknown field,
 * missing pullRequestId).
 */
function resolveInput(query: string, variables: Record<string, unknown>): Record<string, unknown> | string {
  const call = /revertPullRequest\s*\(\s*input\s*:\s*\{([^}]*)\}\s*\)/.exec(query);
  if (!call) return "Field 'revertPullRequest' is missing required arguments: input";
  const known = new Set(['pullRequestId', 'title', 'body', 'draft', 'clientMutationId']);
  const out: Record<string, unknown> = {};
  for (const part of call[1]!.split(',').map((p) => p.trim()).filter(Boolean)) {
    const m = /^(\w+)\s*:\s*(\$\w+|"[^"]*"|true|false)$/.exec(part);
    if (!m) return `Argument 'input' on Field 'revertPullRequest' has an invalid value (${part})`;
    if (!known.has(m[1]!)) return `InputObject 'RevertPullRequestInput' doesn't accept argument '${m[1]}'`;
    const raw = m[2]!;
    out[m[1]!] = raw.startsWith('$') ? variables[raw.slice(1)] : raw.startsWith('"') ? raw.slice(1, -1) : raw === 'true';
  }
  if (out['pullRequestId'] === undefined) return "Argument 'pullRequestId' on InputObject 'RevertPullRequestInput' is required";
  return out;
}

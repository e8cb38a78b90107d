/**
 * The read endpoints of the fake GitHub: filtering and ordering as GitHub documents them, then
 * page slicing. Each handler returns the full (unpaginated) list or one object, or undefined for 404.
 */
import type { RenderBase } from './render.js';
import {
  renderCommit,
  renderDeployment,
  renderDeploymentStatus,
  renderFile,
  renderPull,
  renderPullSimple,
  renderWorkflowRun,
} from './render.js';
import type { FakeCommit, FakePull, FakeRepo } from './types.js';

export type RouteResult =
  | { kind: 'list'; items: unknown[] }
  /** A list GitHub wraps in an object with a total count (`{ total_count, workflow_runs: [...] }`). */
  | { kind: 'wrapped'; key: string; items: unknown[] }
  | { kind: 'object'; body: unknown }
  | { kind: 'not_found' };

const NOT_FOUND: RouteResult = { kind: 'not_found' };

/** Dispatch `/repos/{o}/{r}/<rest>` for one repository. */
export function routeRepo(repo: FakeRepo, rest: string[], url: URL, base: RenderBase): RouteResult {
  const q = url.searchParams;
  const [head, id, sub, ...more] = rest;
  if (more.length > 0) return NOT_FOUND;
  if (head === 'commits' && id === undefined) return { kind: 'list', items: listCommits(repo, q).map((c) => renderCommit(c, base)) };
  if (head === 'pulls' && id === undefined) return { kind: 'list', items: listPulls(repo, q).map((p) => renderPullSimple(p, base)) };
  if (head === 'pulls' && id !== undefined) {
    const pull = (repo.pulls ?? []).find((p) => String(p.number) === id);
    if (!pull) return NOT_FOUND;
    if (sub === undefined) return { kind: 'object', body: renderPull(pull, base) };
    if (sub === 'files') return { kind: 'list', items: (pull.files ?? []).map((f) => renderFile(f, pull, base)) };
    return NOT_FOUND;
  }
  if (head === 'actions' && id === 'runs' && sub === undefined) {
    // GitHub filters on actor, branch, event, status (a status or a conclusion), head_sha and created (a range).
    const created = q.get('created');
    const range = created ? /^(?:>=)?([^.]+)?(?:\.\.(.+))?$/.exec(created) : null;
    const items = (repo.workflowRuns ?? [])
      .filter((r) => (q.get('actor') === null || r.actor.login === q.get('actor')) && (q.get('branch') === null || r.headBranch === q.get('branch')))
      .filter((r) => (q.get('event') === null || r.event === q.get('event')) && (q.get('head_sha') === null || r.headSha === q.get('head_sha')))
      .filter((r) => q.get('status') === null || r.status === q.get('status') || r.conclusion === q.get('status'))
      .filter((r) => !range || ((!range[1] || r.createdAt >= new Date(range[1])) && (!range[2] || r.createdAt <= new Date(range[2]))))
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || b.id - a.id);
    return { kind: 'wrapped', key: 'workflow_runs', items: items.map((r) => renderWorkflowRun(r, base)) };
  }
  if (head === 'deployments' && id === undefined) {
    const env = q.get('environment');
    const sha = q.get('sha');
    const ref = q.get('ref');
    const task = q.get('task');
    const items = (repo.deployments ?? [])
      .filter((d) => (env === null || d.environment === env) && (sha === null || d.sha === sha) && (ref === null || d.ref === ref))
      .filter((d) => task === null || (d.task ?? 'deploy') === task)
      // GitHub lists deployments newest first.
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || b.id - a.id);
    return { kind: 'list', items: items.map((d) => renderDeployment(d, base)) };
  }
  if (head === 'deployments' && id !== undefined) {
    const dep = (repo.deployments ?? []).find((d) => String(d.id) === id);
    if (!dep) return NOT_FOUND;
    if (sub === undefined) return { kind: 'object', body: renderDeployment(dep, base) };
    if (sub === 'statuses') {
      const statuses = [...dep.statuses].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || b.id - a.id);
      return { kind: 'list', items: statuses.map((s) => renderDeploymentStatus(s, dep, base)) };
    }
  }
  return NOT_FOUND;
}

/** `sha` is a branch name or a commit sha (history up to it); newest first by committer date. */
function listCommits(repo: FakeRepo, q: URLSearchParams): FakeCommit[] {
  const defaultBranch = repo.defaultBranch ?? 'main';
  const all = [...(repo.commits ?? [])].sort((a, b) => committed(b).getTime() - committed(a).getTime());
  const shaParam = q.get('sha');
  let reachable = all;
  if (shaParam) {
    const tip = all.findIndex((c) => c.sha.startsWith(shaParam));
    reachable = tip >= 0 ? all.slice(tip) : all.filter((c) => (c.branches ?? [defaultBranch]).includes(shaParam));
  } else {
    reachable = all.filter((c) => (c.branches ?? [defaultBranch]).includes(defaultBranch));
  }
  const since = q.get('since');
  const until = q.get('until');
  return reachable.filter(
    (c) => (since === null || committed(c) >= new Date(since)) && (until === null || committed(c) <= new Date(until)),
  );
}

function committed(c: FakeCommit): Date {
  return c.committedAt ?? c.authoredAt;
}

/** `state` (default open), `base`, `sort` (created|updated, default created), `direction` (default desc for created, else asc). */
function listPulls(repo: FakeRepo, q: URLSearchParams): FakePull[] {
  const state = q.get('state') ?? 'open';
  const baseRef = q.get('base');
  const sort = q.get('sort') ?? 'created';
  const direction = q.get('direction') ?? (sort === 'created' ? 'desc' : 'asc');
  const key = (p: FakePull): number => (sort === 'updated' ? p.updatedAt : p.createdAt).getTime();
  return (repo.pulls ?? [])
    .filter((p) => (state === 'all' || p.state === state) && (baseRef === null || p.baseRef === baseRef))
    .sort((a, b) => (direction === 'asc' ? key(a) - key(b) : key(b) - key(a)) || a.number - b.number);
}

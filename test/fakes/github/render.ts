/**
 * Fake records → the REST JSON GitHub serves (the fields Octokit consumers read, with the same names and
 * nesting). `api` is the API base (`http://127.0.0.1:port`), `web` the HTML base (`https://github.com`).
 */
import type { FakeCommit, FakeDeployment, FakeDeploymentStatus, FakeFile, FakePull, FakeUser, FakeWorkflowRun } from './types.js';

export interface RenderBase {
  api: string;
  web: string;
  owner: string;
  repo: string;
}

const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString().replace(/\.\d{3}Z$/, 'Z') : null);

/** A stable numeric id for a login, so `user.id` does not change between responses. */
function userId(login: string): number {
  let h = 7;
  for (const ch of login) h = (h * 31 + ch.charCodeAt(0)) % 9_000_000;
  return 1_000_000 + h;
}

export function renderUser(u: FakeUser, b: RenderBase): Record<string, unknown> {
  return {
    login: u.login,
    id: userId(u.login),
    type: u.login.endsWith('[bot]') ? 'Bot' : 'User',
    url: `${b.api}/users/${u.login}`,
    html_url: `${b.web}/${u.login}`,
    site_admin: false,
  };
}

function repoPath(b: RenderBase): string {
  return `/repos/${b.owner}/${b.repo}`;
}

/** GraphQL node ids are global: `PR_<owner>/<repo>#<n>` (opaque to clients, as GitHub's are). */
export function pullNodeId(b: { owner: string; repo: string }, number: number): string {
  return `PR_${b.owner}/${b.repo}#${number}`;
}

export function renderRepo(b: RenderBase, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 4242,
    name: b.repo,
    full_name: `${b.owner}/${b.repo}`,
    owner: { login: b.owner },
    private: true,
    html_url: `${b.web}/${b.owner}/${b.repo}`,
    url: `${b.api}${repoPath(b)}`,
    ...extra,
  };
}

export function renderCommit(c: FakeCommit, b: RenderBase): Record<string, unknown> {
  const email = `${c.author.login}@users.noreply.github.com`;
  const authored = iso(c.authoredAt);
  return {
    sha: c.sha,
    node_id: `C_${c.sha.slice(0, 12)}`,
    url: `${b.api}${repoPath(b)}/commits/${c.sha}`,
    html_url: `${b.web}/${b.owner}/${b.repo}/commit/${c.sha}`,
    commit: {
      author: { name: c.author.name ?? c.author.login, email, date: authored },
      committer: { name: 'GitHub', email: 'noreply@github.com', date: iso(c.committedAt ?? c.authoredAt) },
      message: c.message,
      comment_count: 0,
    },
    author: renderUser(c.author, b),
    committer: { login: 'web-flow', id: 19864447, type: 'User' },
    parents: [],
  };
}

function renderLabels(p: FakePull, b: RenderBase): Record<string, unknown>[] {
  return (p.labels ?? []).map((l, i) => ({
    id: p.number * 100 + i,
    name: l.name,
    color: l.color ?? 'ededed',
    url: `${b.api}${repoPath(b)}/labels/${encodeURIComponent(l.name)}`,
    default: false,
  }));
}

/** The `pull-request-simple` shape of `GET /pulls` (no `merged`, `merged_by`, or line counts). */
export function renderPullSimple(p: FakePull, b: RenderBase): Record<string, unknown> {
  return {
    url: `${b.api}${repoPath(b)}/pulls/${p.number}`,
    id: 90_000 + p.number,
    node_id: pullNodeId(b, p.number),
    html_url: `${b.web}/${b.owner}/${b.repo}/pull/${p.number}`,
    number: p.number,
    state: p.state,
    locked: false,
    title: p.title,
    user: renderUser(p.author, b),
    body: p.body ?? null,
    labels: renderLabels(p, b),
    created_at: iso(p.createdAt),
    updated_at: iso(p.updatedAt),
    closed_at: iso(p.closedAt ?? (p.state === 'closed' ? (p.mergedAt ?? p.updatedAt) : null)),
    merged_at: iso(p.mergedAt),
    merge_commit_sha: p.mergeCommitSha ?? null,
    draft: p.draft ?? false,
    head: { label: `${b.owner}:${p.headRef}`, ref: p.headRef, sha: p.headSha, repo: renderRepo(b) },
    base: { label: `${b.owner}:${p.baseRef}`, ref: p.baseRef, sha: '0'.repeat(40), repo: renderRepo(b) },
    author_association: 'MEMBER',
  };
}

/** The full `pull-request` shape of `GET /pulls/{n}`. */
export function renderPull(p: FakePull, b: RenderBase): Record<string, unknown> {
  const files = p.files ?? [];
  return {
    ...renderPullSimple(p, b),
    merged: p.mergedAt != null,
    mergeable: null,
    merged_by: p.mergedBy ? renderUser(p.mergedBy, b) : null,
    comments: 0,
    review_comments: 0,
    commits: 1,
    additions: files.reduce((n, f) => n + f.additions, 0),
    deletions: files.reduce((n, f) => n + f.deletions, 0),
    changed_files: files.length,
  };
}

export function renderFile(f: FakeFile, p: FakePull, b: RenderBase): Record<string, unknown> {
  return {
    sha: p.headSha,
    filename: f.filename,
    status: f.status,
    additions: f.additions,
    deletions: f.deletions,
    changes: f.additions + f.deletions,
    blob_url: `${b.web}/${b.owner}/${b.repo}/blob/${p.headSha}/${f.filename}`,
    raw_url: `${b.web}/${b.owner}/${b.repo}/raw/${p.headSha}/${f.filename}`,
    contents_url: `${b.api}${repoPath(b)}/contents/${f.filename}?ref=${p.headSha}`,
    ...(f.patch !== undefined ? { patch: f.patch } : {}),
  };
}

export function renderDeployment(d: FakeDeployment, b: RenderBase): Record<string, unknown> {
  const url = `${b.api}${repoPath(b)}/deployments/${d.id}`;
  const updated = d.statuses.reduce((t, s) => (s.createdAt > t ? s.createdAt : t), d.createdAt);
  return {
    url,
    id: d.id,
    node_id: `DE_${d.id}`,
    sha: d.sha,
    ref: d.ref,
    task: d.task ?? 'deploy',
    payload: {},
    original_environment: d.environment,
    environment: d.environment,
    description: d.description ?? null,
    creator: renderUser(d.creator, b),
    created_at: iso(d.createdAt),
    updated_at: iso(updated),
    statuses_url: `${url}/statuses`,
    repository_url: `${b.api}${repoPath(b)}`,
    transient_environment: false,
    production_environment: d.environment === 'production',
  };
}

export function renderDeploymentStatus(s: FakeDeploymentStatus, d: FakeDeployment, b: RenderBase): Record<string, unknown> {
  const deploymentUrl = `${b.api}${repoPath(b)}/deployments/${d.id}`;
  return {
    url: `${deploymentUrl}/statuses/${s.id}`,
    id: s.id,
    node_id: `DES_${s.id}`,
    state: s.state,
    creator: renderUser(s.creator, b),
    description: s.description ?? '',
    environment: d.environment,
    target_url: s.targetUrl ?? s.logUrl ?? '',
    log_url: s.logUrl ?? s.targetUrl ?? '',
    environment_url: s.environmentUrl ?? '',
    created_at: iso(s.createdAt),
    updated_at: iso(s.createdAt),
    deployment_url: deploymentUrl,
    repository_url: `${b.api}${repoPath(b)}`,
  };
}

export function renderWorkflowRun(r: FakeWorkflowRun, b: RenderBase): Record<string, unknown> {
  const url = `${b.api}${repoPath(b)}/actions/runs/${r.id}`;
  return {
    id: r.id,
    name: r.name,
    node_id: `WFR_${r.id}`,
    head_branch: r.headBranch,
    head_sha: r.headSha,
    path: `.github/workflows/${r.name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}.yml`,
    display_title: r.displayTitle ?? r.name,
    run_number: r.runNumber,
    event: r.event,
    status: r.status,
    conclusion: r.conclusion,
    workflow_id: 1000 + (r.name.length % 97),
    url,
    html_url: `${b.web}/${b.owner}/${b.repo}/actions/runs/${r.id}`,
    actor: renderUser(r.actor, b),
    triggering_actor: renderUser(r.actor, b),
    run_attempt: 1,
    created_at: iso(r.createdAt),
    updated_at: iso(r.updatedAt),
    run_started_at: iso(r.createdAt),
    jobs_url: `${url}/jobs`,
    logs_url: `${url}/logs`,
  };
}

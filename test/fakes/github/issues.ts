/**
 * `POST /repos/{owner}/{repo}/issues` of the fake GitHub: validates the body like GitHub (title required,
 * labels strings, 422 `Validation Failed` otherwise), numbers issues per repository, and answers 201 with
 * the issue in GitHub's shape. Created issues are kept for tests to read.
 */
import type { IncomingMessage } from 'node:http';

export interface FakeIssue {
  repo: string;
  number: number;
  title: string;
  body: string | null;
  labels: string[];
  assignees: string[];
  createdAt: Date;
}

export type IssueCreateResult = { status: 201; body: unknown; issue: FakeIssue } | { status: 400 | 422; message: string };

/** GitHub caps an issue body at 65,536 characters. */
const MAX_BODY = 65_536;

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export function createIssue(
  issues: FakeIssue[],
  raw: string,
  at: { owner: string; repo: string; api: string; web: string; now: Date },
): IssueCreateResult {
  let input: unknown;
  try {
    input = JSON.parse(raw || '{}');
  } catch {
    return { status: 400, message: 'Problems parsing JSON' };
  }
  const o = (input ?? {}) as Record<string, unknown>;
  if (typeof o.title !== 'string' && typeof o.title !== 'number') return { status: 422, message: 'Validation Failed' };
  if (o.body !== undefined && o.body !== null && typeof o.body !== 'string') return { status: 422, message: 'Validation Failed' };
  if (typeof o.body === 'string' && o.body.length > MAX_BODY) return { status: 422, message: 'Validation Failed' };
  const labels = o.labels ?? [];
  if (!Array.isArray(labels) || labels.some((l) => typeof l !== 'string')) return { status: 422, message: 'Validation Failed' };
  const full = `${at.owner}/${at.repo}`;
  const number = issues.filter((i) => i.repo === full).length + 1;
  const issue: FakeIssue = {
    repo: full,
    number,
    title: String(o.title),
    body: typeof o.body === 'string' ? o.body : null,
    labels: labels as string[],
    assignees: Array.isArray(o.assignees) ? (o.assignees as unknown[]).map(String) : [],
    createdAt: at.now,
  };
  issues.push(issue);
  const api = `${at.api}/repos/${full}`;
  return {
    status: 201,
    issue,
    body: {
      id: 1_000_000 + issues.length,
      node_id: `I_fake${issues.length}`,
      url: `${api}/issues/${number}`,
      repository_url: api,
      labels_url: `${api}/issues/${number}/labels{/name}`,
      comments_url: `${api}/issues/${number}/comments`,
      events_url: `${api}/issues/${number}/events`,
      html_url: `${at.web}/${full}/issues/${number}`,
      number,
      state: 'open',
      state_reason: null,
      title: issue.title,
      body: issue.body,
      user: { login: 'vigil-bot', id: 1, type: 'Bot' },
      labels: issue.labels.map((name, i) => ({ id: i + 1, node_id: `LA_${i + 1}`, url: `${api}/labels/${encodeURIComponent(name)}`, name, color: 'ededed', default: false, description: null })),
      assignee: null,
      assignees: [],
      milestone: null,
      locked: false,
      comments: 0,
      pull_request: undefined,
      closed_at: null,
      created_at: at.now.toISOString(),
      updated_at: at.now.toISOString(),
      author_association: 'NONE',
    },
  };
}

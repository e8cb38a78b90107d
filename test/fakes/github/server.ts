/**
 * A fake GitHub REST API on loopback, spoken to by the real `@octokit/rest` (`baseUrl` = `url`).
 *
 * Serves commits, pull requests (list, one, files) and deployments (list, statuses) of the repositories
 * it is given, in GitHub's JSON shapes, with page-number pagination and `Link` headers, `x-ratelimit-*`
 * headers, GitHub's error bodies (`{ message, documentation_url }`), token checks (401 `Bad credentials`)
 * and one-shot fault injection. Every request is recorded.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { paginate } from './paginate.js';
import { routeRepo } from './routes.js';
import type { FakeRepo } from './types.js';
import { createIssue, readBody, type FakeIssue } from './issues.js';
import { answerGraphql } from './graphql.js';
import { renderRepo } from './render.js';
import type { FakePull } from './types.js';

export type * from './types.js';
export type { FakeIssue } from './issues.js';

export interface FakeGitHubOptions {
  /** `owner/repo` → its data. */
  repos: Record<string, FakeRepo>;
  /** When set, requests must carry `Authorization: token <token>` (or `Bearer`); it may read and write. */
  token?: string;
  /**
   * More tokens, each with its user and whether it may write (issues, pull requests). A read-only
   * token's writes answer 403 `Resource not accessible by personal access token`, as fine-grained tokens do.
   * `app: true` plays a GitHub App installation token (`GET /user` answers 403).
   */
  tokens?: Record<string, { login: string; write: boolean; app?: boolean }>;
  /** HTML base for `html_url`s (default `https://github.com`). */
  webUrl?: string;
  /** The server's clock, for `x-ratelimit-reset` (default: the real clock). */
  now?: () => Date;
}

export interface RecordedGitHubRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  status: number;
  authorized: boolean;
  /** The token's user, when the request carried a known token. */
  login?: string;
}

export interface FakeGitHub {
  /** `http://127.0.0.1:<port>`: pass as Octokit's `baseUrl`. */
  url: string;
  /** The live world; tests may add to it between requests. */
  repos: Record<string, FakeRepo>;
  requests: RecordedGitHubRequest[];
  /** Issues created with `POST /repos/{o}/{r}/issues`, in order. */
  issues: FakeIssue[];
  /** Pull requests opened through GraphQL `revertPullRequest`, with the token's user. */
  reverts: { repo: string; pull: FakePull; login: string }[];
  /** The next request whose path matches answers `status` with GitHub's error body (once per call). */
  failNext(path: RegExp, status: number, message?: string): void;
  /** The next request answers 403 `API rate limit exceeded` with `x-ratelimit-remaining: 0`. */
  rateLimitNext(resetAt?: Date): void;
  close(): Promise<void>;
}

const RATE_LIMIT = 5000;
const DOCS = 'https://docs.github.com/rest';

interface Fault {
  path: RegExp;
  status: number;
  message: string;
  rateLimitReset?: Date;
}

const STATUS_MESSAGES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Bad credentials',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  422: 'Validation Failed',
  500: 'Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

export async function startFakeGitHub(options: FakeGitHubOptions): Promise<FakeGitHub> {
  const now = options.now ?? (() => new Date());
  const web = options.webUrl ?? 'https://github.com';
  const requests: RecordedGitHubRequest[] = [];
  const faults: Fault[] = [];
  const issues: FakeIssue[] = [];
  const reverts: { repo: string; pull: FakePull; login: string }[] = [];
  let remaining = RATE_LIMIT;
  const resetAt = new Date(now().getTime() + 3600_000);

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://${req.headers.host ?? '127.0.0.1'}`);
    const caller = checkAuth(req, options);
    const authorized = caller.kind;
    const send = (status: number, body: unknown, headers: Record<string, string> = {}): void => {
      requests.push({ method: req.method ?? 'GET', path: url.pathname, query: Object.fromEntries(url.searchParams), status, authorized: authorized === 'ok', ...(caller.login ? { login: caller.login } : {}) });
      const reset = headers['x-ratelimit-reset'] ?? String(Math.floor(resetAt.getTime() / 1000));
      res.writeHead(status, {
        'content-type': 'application/json; charset=utf-8',
        'x-github-media-type': 'github.v3; format=json',
        'x-github-request-id': `FAKE:${requests.length}`,
        'x-ratelimit-limit': String(RATE_LIMIT),
        'x-ratelimit-remaining': String(remaining),
        'x-ratelimit-reset': reset,
        'x-ratelimit-used': String(RATE_LIMIT - remaining),
        'x-ratelimit-resource': 'core',
        ...headers,
      });
      res.end(JSON.stringify(body));
    };
    const fail = (status: number, message: string, headers?: Record<string, string>): void =>
      send(status, { message, documentation_url: DOCS, status: String(status) }, headers);

    if (authorized !== 'ok') return fail(401, authorized === 'missing' ? 'Requires authentication' : 'Bad credentials');
    remaining = Math.max(0, remaining - 1);

    const fault = takeFault(faults, url.pathname);
    if (fault?.rateLimitReset) {
      remaining = 0;
      return fail(403, fault.message, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.floor(fault.rateLimitReset.getTime() / 1000)) });
    }
    if (fault) return fail(fault.status, fault.message);
    if (req.method === 'POST' && url.pathname === '/graphql') {
      void readBody(req).then((raw) => {
        const answer = answerGraphql(raw, { repos: options.repos, login: caller.login ?? 'anonymous', write: caller.write, web, now: now() });
        if (answer.opened) reverts.push({ ...answer.opened, login: caller.login ?? 'anonymous' });
        send(answer.status, answer.body);
      });
      return;
    }
    if (req.method === 'GET' && url.pathname === '/user') {
      if (caller.app) return fail(403, 'Resource not accessible by integration');
      return send(200, { login: caller.login ?? 'anonymous', id: 7001, type: 'User' });
    }
    // The repositories the token can read, as GitHub lists them: a user token at /user/repos (sorted by
    // `pushed`/`updated`/`created`/`full_name`), an App installation token at /installation/repositories.
    if (req.method === 'GET' && (url.pathname === '/user/repos' || url.pathname === '/installation/repositories')) {
      const installation = url.pathname === '/installation/repositories';
      if (!installation && caller.app) return fail(403, 'Resource not accessible by integration');
      if (installation && !caller.app) return fail(403, 'You must authenticate with an installation access token in order to access this endpoint.');
      const base = { api: `http://${req.headers.host}`, web };
      let items = Object.entries(options.repos).map(([full, data]) => {
        const [owner, repo] = full.split('/') as [string, string];
        return renderRepo({ ...base, owner, repo }, { default_branch: data.defaultBranch ?? 'main', pushed_at: pushedAt(data)?.toISOString() ?? null });
      });
      const sort = url.searchParams.get('sort') ?? 'full_name';
      if (!installation && sort === 'pushed') items = items.sort((a, b) => String(b['pushed_at'] ?? '').localeCompare(String(a['pushed_at'] ?? '')));
      else items = items.sort((a, b) => String(a['full_name']).localeCompare(String(b['full_name'])));
      if (url.searchParams.get('direction') === 'asc' && sort === 'pushed') items.reverse();
      const page = paginate(items, url);
      return installation ? send(200, { total_count: items.length, repositories: page.items }, page.link ? { link: page.link } : {}) : send(200, page.items, page.link ? { link: page.link } : {});
    }
    const issuePath = /^\/repos\/([^/]+)\/([^/]+)\/issues$/.exec(url.pathname);
    if (req.method === 'POST' && issuePath?.[1] && issuePath[2]) {
      const [owner, repo] = [decodeURIComponent(issuePath[1]), decodeURIComponent(issuePath[2])];
      if (!options.repos[`${owner}/${repo}`]) return fail(404, 'Not Found');
      if (!caller.write) return fail(403, 'Resource not accessible by personal access token');
      void readBody(req).then((raw) => {
        const created = createIssue(issues, raw, { owner, repo, api: `http://${req.headers.host}`, web, now: now() });
        if (created.status === 201) send(201, created.body, { location: `http://${req.headers.host}/repos/${owner}/${repo}/issues/${created.issue.number}` });
        else fail(created.status, created.message);
      });
      return;
    }
    if (req.method !== 'GET') return fail(404, 'Not Found');

    const [, reposSeg, owner, repo, ...rest] = url.pathname.split('/');
    const data = reposSeg === 'repos' && owner && repo ? options.repos[`${owner}/${repo}`] : undefined;
    if (!data || !owner || !repo) return fail(404, 'Not Found');
    if (rest.length === 0) {
      const base = { api: `http://${req.headers.host}`, web, owner, repo };
      return send(200, renderRepo(base, { default_branch: data.defaultBranch ?? 'main', permissions: { admin: false, maintain: false, push: caller.write, triage: true, pull: true } }));
    }
    const result = routeRepo(data, rest.map(decodeURIComponent), url, { api: `http://${req.headers.host}`, web, owner, repo });
    switch (result.kind) {
      case 'not_found':
        return fail(404, 'Not Found');
      case 'object':
        return send(200, result.body);
      case 'list': {
        const page = paginate(result.items, url);
        return send(200, page.items, page.link ? { link: page.link } : {});
      }
      case 'wrapped': {
        const page = paginate(result.items, url);
        return send(200, { total_count: result.items.length, [result.key]: page.items }, page.link ? { link: page.link } : {});
      }
    }
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    repos: options.repos,
    requests,
    issues,
    reverts,
    failNext(path, status, message) {
      faults.push({ path, status, message: message ?? STATUS_MESSAGES[status] ?? 'Error' });
    },
    rateLimitNext(reset) {
      faults.push({
        path: /./,
        status: 403,
        message: 'API rate limit exceeded for user ID 1. If you reach out to GitHub Support for help, please include the request ID FAKE.',
        rateLimitReset: reset ?? new Date(now().getTime() + 15 * 60_000),
      });
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

function takeFault(faults: Fault[], path: string): Fault | undefined {
  const i = faults.findIndex((f) => f.path.test(path));
  return i >= 0 ? faults.splice(i, 1)[0] : undefined;
}

type Caller = { kind: 'ok' | 'missing' | 'bad'; login?: string; write: boolean; app?: boolean };

/** Octokit sends `token <t>` (or `bearer <t>` for JWTs). */
function checkAuth(req: IncomingMessage, o: FakeGitHubOptions): Caller {
  if (o.token === undefined && !o.tokens) return { kind: 'ok', write: true };
  const header = req.headers.authorization;
  if (!header) return { kind: 'missing', write: false };
  const t = /^(?:token|bearer)\s+(.+)$/i.exec(header)?.[1];
  if (t !== undefined && t === o.token) return { kind: 'ok', login: 'vigil-reader', write: true };
  const known = t !== undefined ? o.tokens?.[t] : undefined;
  return known ? { kind: 'ok', login: known.login, write: known.write, ...(known.app ? { app: true } : {}) } : { kind: 'bad', write: false };
}

/** When the default branch last moved: the newest commit or merge (GitHub's `pushed_at`). */
function pushedAt(data: FakeRepo): Date | undefined {
  const times = [...(data.commits ?? []).map((c) => c.committedAt ?? c.authoredAt), ...(data.pulls ?? []).map((p) => p.mergedAt).filter((d): d is Date => d instanceof Date)];
  return times.length ? new Date(Math.max(...times.map((d) => d.getTime()))) : undefined;
}

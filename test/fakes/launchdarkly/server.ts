/**
 * A fake LaunchDarkly REST API (v2) on loopback, for the real `LaunchDarklyFlags` adapter: flags per
 * project with per-environment targeting, `GET /api/v2/flags/{project}/{key}?env=`, `GET
 * /api/v2/caller-identity`, and `PATCH /api/v2/flags/{project}/{key}` with JSON patch (`[...]` or
 * `{ patch, comment }`) including `test` ops and `?dryRun=true`. Tokens carry a role: a reader's PATCH
 * is refused with 403 as LaunchDarkly's custom roles do. Every request and every applied change (with
 * its comment and token) is recorded; `failNext` injects one error.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeFlag {
  key: string;
  archived?: boolean;
  /** Environment key → targeting on/off and version. */
  environments: Record<string, { on: boolean; version?: number; lastModified?: number }>;
}

export interface FakeToken {
  name: string;
  role: 'reader' | 'writer';
}

export interface FakeLaunchDarklyOptions {
  project: string;
  flags: FakeFlag[];
  /** API token → who it is. */
  tokens: Record<string, FakeToken>;
}

export interface RecordedLdRequest {
  method: string;
  path: string;
  dryRun: boolean;
  token?: string;
  status: number;
}

export interface AppliedFlagChange {
  flag: string;
  environment: string;
  on: boolean;
  comment?: string;
  token: string;
  at: Date;
}

export interface FakeLaunchDarkly {
  url: string;
  flags: FakeFlag[];
  requests: RecordedLdRequest[];
  /** Changes that persisted (not dry runs). */
  changes: AppliedFlagChange[];
  /** Flip a flag as a human would in the UI (between plan and execution, for instance). */
  set(flag: string, environment: string, on: boolean): void;
  failNext(path: RegExp, status: number, message?: string, headers?: Record<string, string>): void;
  /** The next real PATCH is applied, then answered with `status` (a gateway timing out after the write). */
  applyThenFailNext(status: number): void;
  close(): Promise<void>;
}

type PatchOp = { op: string; path: string; value?: unknown };

export async function startFakeLaunchDarkly(o: FakeLaunchDarklyOptions): Promise<FakeLaunchDarkly> {
  const requests: RecordedLdRequest[] = [];
  const changes: AppliedFlagChange[] = [];
  const faults: { path: RegExp; status: number; message: string; headers?: Record<string, string> }[] = [];
  let failAfterApply: number | undefined;
  const find = (key: string) => o.flags.find((f) => f.key === key);

  const render = (f: FakeFlag, env: string | null) => ({
    key: f.key,
    name: f.key,
    kind: 'boolean',
    archived: f.archived ?? false,
    _version: 1,
    environments: Object.fromEntries(
      Object.entries(f.environments)
        .filter(([k]) => env === null || k === env)
        .map(([k, e]) => [k, { on: e.on, archived: false, version: e.version ?? 1, lastModified: e.lastModified ?? 1764400000000, _site: { href: `/${o.project}/${k}/features/${f.key}` } }]),
    ),
  });

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const token = req.headers.authorization;
    const dryRun = url.searchParams.get('dryRun') === 'true';
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      requests.push({ method: req.method ?? 'GET', path: url.pathname, dryRun, ...(token ? { token } : {}), status });
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(body === undefined ? '' : JSON.stringify(body));
    };
    const fail = (status: number, code: string, message: string, headers?: Record<string, string>) => send(status, { code, message }, headers);

    const who = token ? o.tokens[token] : undefined;
    if (!who) return fail(401, 'unauthorized', 'Invalid access token');
    const fi = faults.findIndex((f) => f.path.test(url.pathname));
    if (fi >= 0) {
      const f = faults.splice(fi, 1)[0]!;
      return fail(f.status, f.status === 429 ? 'rate_limited' : 'internal_server_error', f.message, f.headers);
    }
    if (req.method === 'GET' && url.pathname === '/api/v2/caller-identity') {
      return send(200, { accountId: 'acct1', tokenName: who.name, tokenKind: 'auth', tokenId: `tok-${who.name}`, serviceToken: true, authKind: 'token' });
    }
    const m = /^\/api\/v2\/flags\/([^/]+)\/([^/]+)$/.exec(url.pathname);
    if (!m || decodeURIComponent(m[1]!) !== o.project) return fail(404, 'not_found', 'Unknown resource');
    const flag = find(decodeURIComponent(m[2]!));
    if (!flag) return fail(404, 'not_found', 'Unknown feature flag');
    if (req.method === 'GET') return send(200, render(flag, url.searchParams.get('env')));
    if (req.method !== 'PATCH') return fail(405, 'method_not_allowed', 'Method not allowed');
    if (who.role !== 'writer') return fail(403, 'forbidden', 'Access to the requested resource was denied');

    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        return fail(400, 'invalid_request', 'Invalid JSON body');
      }
      const ops = (Array.isArray(body) ? body : (body as { patch?: unknown }).patch) as PatchOp[] | undefined;
      const comment = Array.isArray(body) ? undefined : (body as { comment?: string }).comment;
      if (!Array.isArray(ops) || ops.length === 0) return fail(400, 'invalid_request', 'A JSON patch is required');
      const next = structuredClone(flag.environments);
      const touched = new Set<string>();
      for (const op of ops) {
        const pm = /^\/environments\/([^/]+)\/on$/.exec(op.path);
        if (!pm) return fail(400, 'invalid_request', `Unsupported patch path ${op.path}`);
        const env = next[pm[1]!];
        if (!env) return fail(400, 'invalid_request', `Unknown environment ${pm[1]}`);
        if (op.op === 'test') {
          if (env.on !== op.value) return fail(400, 'invalid_request', `Test operation failed: ${op.path} is ${env.on}, not ${String(op.value)}`);
        } else if (op.op === 'replace' && typeof op.value === 'boolean') {
          env.on = op.value;
          env.version = (env.version ?? 1) + 1;
          touched.add(pm[1]!);
        } else return fail(400, 'invalid_request', `Unsupported operation ${op.op}`);
      }
      if (!dryRun) {
        flag.environments = next;
        for (const env of touched) changes.push({ flag: flag.key, environment: env, on: next[env]!.on, ...(comment ? { comment } : {}), token: token!, at: new Date() });
        if (failAfterApply !== undefined) {
          const status = failAfterApply;
          failAfterApply = undefined;
          return fail(status, 'internal_server_error', 'upstream timed out');
        }
      }
      send(200, render({ ...flag, environments: next }, null));
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    flags: o.flags,
    requests,
    changes,
    set(key, env, on) {
      const f = find(key);
      if (!f?.environments[env]) throw new Error(`no flag ${key} in ${env}`);
      f.environments[env]!.on = on;
      f.environments[env]!.version = (f.environments[env]!.version ?? 1) + 1;
    },
    applyThenFailNext(status) {
      failAfterApply = status;
    },
    failNext(path, status, message, headers) {
      faults.push({ path, status, message: message ?? `HTTP ${status}`, ...(headers ? { headers } : {}) });
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

/**
 * A fake Kubernetes API server on loopback, spoken to by the real `@kubernetes/client-node`.
 *
 * It serves a world of plain JSON objects over the real REST paths (lists, selectors, pagination,
 * pod logs, discovery), authenticates bearer tokens, authorises every request with RBAC rules —
 * hand-written per token, or resolved from real Role/ClusterRole/RoleBinding/ClusterRoleBinding
 * manifests (`rbac`, rbac-manifests.ts) — honouring `Impersonate-*` headers (each one authorised as
 * kube-apiserver does), accepts writes (patch, replace, create, delete, the `scale` subresource,
 * `dryRun=All`, `fieldManager` → managedFields), issues TokenRequest tokens, answers
 * SelfSubjectAccessReviews, SelfSubjectRulesReviews and SubjectAccessReviews from the same rules, and
 * keeps an audit log of what was asked and by whom. With neither `identities` nor `rbac`, every token is
 * a full admin (the fake's raw mode).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { issueToken, reviewAccess, reviewRules, reviewSelf, reviewSubjectAccess, type TokenRequestInput } from './auth-endpoints.js';
import { listObjects, watchEvents } from './lists.js';
import { readPodLog, type WorldLogs } from './logs.js';
import { APPLY_PATCH } from './patch.js';
import { IdentityBook, impersonationAttributes, isAllowed, parseServiceAccountUser, userInfoOf, type Identity, type UserInfo } from './rbac.js';
import { RbacRules } from './rbac-manifests.js';
import { ResourceRegistry, splitApiVersion } from './resources.js';
import { parseRoute, verbOf, type Route } from './routes.js';
import {
  badRequest,
  forbidden,
  genericFailure,
  KubeError,
  notFound,
  pathNotFound,
  unauthorized,
  unsupportedMediaType,
} from './status.js';
import { ObjectStore, type KubeObject } from './store.js';
import { create, patch, readScale, remove, replace, type WriteContext } from './writes.js';

export type { Identity, PolicyRule, UserInfo } from './rbac.js';
export { RbacRules } from './rbac-manifests.js';
export type { WorldLogs, ContainerLogs } from './logs.js';
export type { KubeObject } from './store.js';

export interface FakeKubeOptions {
  /** The world: plain JSON objects of any kind (each with apiVersion, kind, metadata.name). */
  objects: object[];
  /** Container logs keyed `<namespace>/<pod>/<container>`; lines may carry an RFC 3339 prefix. */
  logs?: WorldLogs;
  /** Bearer token → hand-written identity. With neither this nor `rbac`: every token is a full-access admin. */
  identities?: Record<string, Identity>;
  /**
   * RBAC objects the authoriser enforces (Role, ClusterRole, RoleBinding, ClusterRoleBinding; other kinds
   * are ignored, so whole manifest files may be passed), and the bearer tokens of the users they bind:
   * a string is a user name (`system:serviceaccount:<ns>:<name>` gets that ServiceAccount's groups), or
   * give the groups. The objects are the authoriser's, not served as API objects.
   */
  rbac?: { objects: object[]; tokens?: Record<string, string | UserInfo> };
  /** Delay before every response. */
  latencyMs?: number;
  /** The cluster's clock (token expiry, `sinceSeconds`, managedFields times). */
  now?: () => Date;
}

export interface AuditEntry {
  at: string;
  /** The acting user (the impersonated one when impersonation was used). */
  user: string;
  impersonatedBy?: string;
  /** `Impersonate-Extra-<key>` headers, keys lower-cased. */
  extra: Record<string, string[]>;
  verb: string;
  path: string;
  query: Record<string, string>;
  dryRun: boolean;
  fieldManager?: string;
  /** The request's User-Agent, as kube-apiserver's audit events record it at every level. */
  userAgent?: string;
  status: number;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  body?: string;
}

export interface FakeKube {
  /** `http://127.0.0.1:<port>` */
  url: string;
  audit: AuditEntry[];
  requests: RecordedRequest[];
  /** A KubeConfig for client-node pointed at this fake, authenticating with `token`. */
  kubeConfigFor(token: string, options?: { impersonateUser?: string; namespace?: string }): KubeConfig;
  setLatency(ms: number): void;
  /**
   * The next request (or the next `times`) whose path matches answers `status` with a Status body; with
   * `retryAfterSeconds` the answer carries `Retry-After` and `details.retryAfterSeconds`, as the API server's
   * priority-and-fairness 429s do.
   */
  failNext(pathRegex: RegExp, status: number, options?: { times?: number; retryAfterSeconds?: number }): void;
  /** Forget every failure still to be injected (the API server is healthy again). */
  clearFailures(): void;
  /** Runs `act` (e.g. someone else's write) once, just before the first request that `match`es is handled. */
  beforeNext(match: (r: RecordedRequest) => boolean, act: () => Promise<void>): void;
  /** The stored object now, or undefined. */
  getObject(apiVersion: string, kind: string, namespace: string | undefined, name: string): KubeObject | undefined;
  objects(): KubeObject[];
  addIdentity(token: string, identity: Identity, expiresAt?: Date): void;
  /** A bearer token for a user the RBAC objects bind (a name, or with groups), e.g. `system:serviceaccount:vigil:vigil`. */
  addUserToken(token: string, user: string | UserInfo, expiresAt?: Date): void;
  /** The RBAC objects the authoriser enforces (with the `rbac` option); `add` more at any time (e.g. an over-broad binding). */
  rbac?: RbacRules;
  close(): Promise<void>;
}

interface Context {
  req: IncomingMessage;
  url: URL;
  query: Record<string, string>;
  body: string;
  actor: Identity;
  impersonatedBy?: string;
  extra: Record<string, string[]>;
  verb: string;
}

/** Answers to a request: JSON, plain text, or newline-delimited watch events. */
type Reply = { json: unknown; status?: number } | { text: string } | { lines: unknown[] };

export async function startFakeKube(options: FakeKubeOptions): Promise<FakeKube> {
  const registry = new ResourceRegistry();
  const store = new ObjectStore(registry);
  for (const obj of options.objects) store.seed(obj as KubeObject);
  store.linkOwners();
  const logs: WorldLogs = { ...(options.logs ?? {}) };
  const rbac = options.rbac ? new RbacRules(options.rbac.objects) : undefined;
  const book = new IdentityBook(options.identities, rbac);
  const asUser = (u: string | UserInfo): UserInfo => (typeof u === 'string' ? userInfoOf(u) : userInfoOf(u.user, u.groups));
  for (const [token, user] of Object.entries(options.rbac?.tokens ?? {})) book.addUser(token, asUser(user));
  const now = options.now ?? (() => new Date());
  let latencyMs = options.latencyMs ?? 0;
  const failures: { regex: RegExp; status: number; left: number; retryAfterSeconds?: number }[] = [];
  const interlopers: { match: (r: RecordedRequest) => boolean; act: () => Promise<void> }[] = [];
  const audit: AuditEntry[] = [];
  const requests: RecordedRequest[] = [];

  function authenticate(req: IncomingMessage): Identity {
    const header = req.headers.authorization ?? '';
    const token = header.startsWith('Bearer ') ? header.slice(7).trim() : undefined;
    const identity = book.authenticate(token, now().getTime());
    if (!identity) throw unauthorized();
    return identity;
  }

  /** Applies `Impersonate-User/Group/Extra-*` when the caller may impersonate. */
  function impersonate(req: IncomingMessage, caller: Identity): Pick<Context, 'actor' | 'impersonatedBy' | 'extra'> {
    const extra: Record<string, string[]> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (!name.startsWith('impersonate-extra-') || value === undefined) continue;
      extra[decodeURIComponent(name.slice('impersonate-extra-'.length))] = (Array.isArray(value) ? value : [value]).flatMap((v) =>
        v.split(',').map((s) => s.trim()),
      );
    }
    const user = req.headers['impersonate-user'];
    const groupHeader = req.headers['impersonate-group'];
    if (typeof user !== 'string') {
      if (groupHeader !== undefined || Object.keys(extra).length > 0)
        throw badRequest('requested impersonation of groups or extras without impersonating a user');
      return { actor: caller, extra };
    }
    // kube-apiserver authorises every header on its own: the user, each group, each extra value.
    const denied = (attrs: ReturnType<typeof impersonationAttributes>) => forbidden({ user: caller.user, ...attrs });
    if (!book.mayImpersonate(caller, user)) throw denied(impersonationAttributes('user', user));
    const groups = groupHeader === undefined ? undefined : (Array.isArray(groupHeader) ? groupHeader : [groupHeader]).flatMap((g) => g.split(',').map((x) => x.trim()));
    for (const g of groups ?? []) if (!book.mayImpersonateAlso(caller, 'group', g)) throw denied(impersonationAttributes('group', g));
    for (const [key, values] of Object.entries(extra))
      for (const v of values) if (!book.mayImpersonateAlso(caller, { extra: key }, v)) throw denied(impersonationAttributes({ extra: key }, v));
    // Without Impersonate-Group a ServiceAccount keeps its groups (the API server adds them); every user is system:authenticated.
    const actor = groups === undefined && !parseServiceAccountUser(user) ? book.byUser(user) : book.resolve(userInfoOf(user, groups));
    return { actor, impersonatedBy: caller.user, extra };
  }

  function authorize(ctx: Context, route: Extract<Route, { kind: 'resource' }>): void {
    const resource = route.subresource ? `${route.type.plural}/${route.subresource}` : route.type.plural;
    const attrs = {
      verb: ctx.verb,
      group: route.type.group,
      resource,
      ...(route.namespace !== undefined ? { namespace: route.namespace } : {}),
      ...(route.name !== undefined ? { name: route.name } : {}),
    };
    if (!isAllowed(ctx.actor, attrs)) throw forbidden({ user: ctx.actor.user, ...attrs });
  }

  function parseBody<T>(ctx: Context): T {
    try {
      return (ctx.body ? JSON.parse(ctx.body) : {}) as T;
    } catch {
      throw badRequest('the body of the request was not valid JSON');
    }
  }

  function handleResource(ctx: Context, route: Extract<Route, { kind: 'resource' }>): Reply {
    const method = ctx.req.method ?? 'GET';
    // Every authenticated user may review its own access (the system:basic-user role).
    if (route.type.plural === 'selfsubjectaccessreviews' && method === 'POST')
      return { status: 201, json: reviewAccess(ctx.actor, parseBody(ctx)) };
    // Who am I (kubectl auth whoami): every authenticated user may ask; impersonation answers the impersonated user.
    if (route.type.plural === 'selfsubjectreviews' && method === 'POST')
      return { status: 201, json: reviewSelf(ctx.actor, ctx.extra) };
    if (route.type.plural === 'selfsubjectrulesreviews' && method === 'POST')
      return { status: 201, json: reviewRules(ctx.actor, parseBody(ctx)) };
    authorize(ctx, route);
    if (route.type.plural === 'subjectaccessreviews' && method === 'POST') return { status: 201, json: reviewSubjectAccess(book, parseBody(ctx)) };
    if (route.subresource === 'token' && route.type.plural === 'serviceaccounts' && method === 'POST') {
      if (!store.get(route.type, route.namespace, route.name!)) throw notFound('serviceaccounts', '', route.name!);
      const body = parseBody<TokenRequestInput['body']>(ctx);
      return { status: 201, json: issueToken(book, { namespace: route.namespace!, serviceAccount: route.name!, body, now: now() }) };
    }
    if (method === 'GET') {
      if (route.name === undefined) {
        return ctx.verb === 'watch'
          ? { lines: watchEvents(store, route.type, route.namespace, ctx.query) }
          : { json: listObjects(store, route.type, route.namespace, ctx.query) };
      }
      if (route.subresource === 'log' && route.type.plural === 'pods') {
        const pod = store.get(route.type, route.namespace, route.name);
        if (!pod) throw notFound('pods', '', route.name);
        const q = ctx.query;
        const num = (k: string): number | undefined => (q[k] !== undefined ? Number(q[k]) : undefined);
        return {
          text: readPodLog(
            pod,
            logs,
            {
              ...(q['container'] !== undefined ? { container: q['container'] } : {}),
              previous: q['previous'] === 'true',
              timestamps: q['timestamps'] === 'true',
              ...(num('tailLines') !== undefined ? { tailLines: num('tailLines')! } : {}),
              ...(num('sinceSeconds') !== undefined ? { sinceSeconds: num('sinceSeconds')! } : {}),
              ...(q['sinceTime'] !== undefined ? { sinceTime: q['sinceTime'] } : {}),
              ...(num('limitBytes') !== undefined ? { limitBytes: num('limitBytes')! } : {}),
            },
            now(),
          ),
        };
      }
      if (route.subresource === 'scale') return { json: readScale({ store, type: route.type, namespace: route.namespace, name: route.name }) };
      if (route.subresource !== undefined && route.subresource !== 'status') throw pathNotFound();
      const obj = store.get(route.type, route.namespace, route.name);
      if (!obj) throw notFound(route.type.plural, route.type.group, route.name);
      return { json: obj };
    }
    const contentType = String(ctx.req.headers['content-type'] ?? 'application/json');
    if (contentType.startsWith(APPLY_PATCH)) throw unsupportedMediaType(APPLY_PATCH);
    const body = ctx.body ? parseBody<unknown>(ctx) : undefined;
    if (ctx.query['dryRun'] !== undefined && ctx.query['dryRun'] !== 'All')
      throw badRequest(`dryRun: Unsupported value: "${ctx.query['dryRun']}": supported values: "All"`);
    const write: WriteContext = {
      store,
      type: route.type,
      ...(route.namespace !== undefined ? { namespace: route.namespace } : {}),
      ...(route.name !== undefined ? { name: route.name } : {}),
      ...(route.subresource !== undefined ? { subresource: route.subresource } : {}),
      dryRun: ctx.query['dryRun'] === 'All',
      fieldManager: fieldManagerOf(ctx),
      now: now(),
      contentType,
      body,
    };
    switch (method) {
      case 'POST':
        return { status: 201, json: create(write) };
      case 'PUT':
        return { json: replace(write) };
      case 'PATCH':
        return { json: patch(write) };
      case 'DELETE':
        if (route.name === undefined) throw new KubeError({ ...genericFailure(405).status, reason: 'MethodNotAllowed', message: 'deletecollection is not supported by the fake' });
        return { json: remove(write) };
      default:
        throw new KubeError({ ...genericFailure(405).status, reason: 'MethodNotAllowed', message: `the server does not allow this method on the requested resource` });
    }
  }

  /** kube-apiserver defaults the manager to the User-Agent's product name. */
  function fieldManagerOf(ctx: Context): string {
    return ctx.query['fieldManager'] ?? String(ctx.req.headers['user-agent'] ?? 'unknown').split('/')[0]!;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const query = Object.fromEntries(url.searchParams.entries());
    const recorded: RecordedRequest = { method: req.method ?? 'GET', path: url.pathname, query, headers: { ...req.headers }, ...(body ? { body } : {}) };
    requests.push(recorded);
    if (latencyMs > 0) await new Promise((r) => setTimeout(r, latencyMs));
    const interloper = interlopers.findIndex((i) => i.match(recorded));
    if (interloper >= 0) await interlopers.splice(interloper, 1)[0]!.act();

    let status = 200;
    let ctx: Context | undefined;
    const watch = query['watch'] === 'true' || query['watch'] === '1';
    try {
      const failure = failures.findIndex((f) => f.regex.test(url.pathname));
      if (failure >= 0) {
        const f = failures[failure]!;
        if (--f.left <= 0) failures.splice(failure, 1);
        throw genericFailure(f.status, f.retryAfterSeconds);
      }
      const caller = authenticate(req);
      const route = parseRoute(url.pathname, registry);
      const verb = route.kind === 'resource' ? verbOf(req.method ?? 'GET', route.name !== undefined, watch) : 'get';
      ctx = { req, url, query, body, ...impersonate(req, caller), verb };
      const reply = route.kind === 'discovery' ? { json: route.body } : handleResource(ctx, route);
      if ('text' in reply) {
        res.writeHead(200, { 'content-type': 'text/plain' }).end(reply.text);
      } else if ('lines' in reply) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(reply.lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
      } else {
        status = reply.status ?? 200;
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.json));
      }
    } catch (err) {
      const statusBody =
        err instanceof KubeError
          ? err.status
          : { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: String(err), reason: 'InternalError', code: 500 };
      status = statusBody.code;
      const retryAfter = 'details' in statusBody ? statusBody.details?.retryAfterSeconds : undefined;
      res.writeHead(status, { 'content-type': 'application/json', ...(retryAfter !== undefined ? { 'retry-after': String(retryAfter) } : {}) }).end(JSON.stringify(statusBody));
    }
    const fieldManager = query['fieldManager'];
    audit.push({
      at: now().toISOString(),
      user: ctx?.actor.user ?? 'system:anonymous',
      ...(ctx?.impersonatedBy ? { impersonatedBy: ctx.impersonatedBy } : {}),
      extra: ctx?.extra ?? {},
      verb: ctx?.verb ?? verbOf(req.method ?? 'GET', true, watch),
      path: url.pathname,
      query,
      dryRun: query['dryRun'] === 'All',
      ...(fieldManager ? { fieldManager } : {}),
      ...(req.headers['user-agent'] ? { userAgent: String(req.headers['user-agent']) } : {}),
      status,
    });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    audit,
    requests,
    kubeConfigFor(token, opts = {}) {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'fake', server: url, skipTLSVerify: true }],
        users: [{ name: 'user', token, ...(opts.impersonateUser ? { impersonateUser: opts.impersonateUser } : {}) }],
        contexts: [{ name: 'fake', cluster: 'fake', user: 'user', ...(opts.namespace ? { namespace: opts.namespace } : {}) }],
        currentContext: 'fake',
      });
      return kc;
    },
    setLatency(ms) {
      latencyMs = ms;
    },
    failNext(regex, status, options = {}) {
      failures.push({ regex, status, left: options.times ?? 1, ...(options.retryAfterSeconds !== undefined ? { retryAfterSeconds: options.retryAfterSeconds } : {}) });
    },
    clearFailures() {
      failures.length = 0;
    },
    beforeNext(match, act) {
      interlopers.push({ match, act });
    },
    getObject(apiVersion, kind, namespace, name) {
      const type = registry.byKind(splitApiVersion(apiVersion).group, kind);
      return type ? store.get(type, namespace, name) : undefined;
    },
    objects: () => store.all(),
    addIdentity(token, identity, expiresAt) {
      book.add(token, identity, expiresAt?.getTime());
    },
    addUserToken(token, user, expiresAt) {
      book.addUser(token, asUser(user), expiresAt?.getTime());
    },
    ...(rbac ? { rbac } : {}),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

/**
 * Bearer-token authentication, RBAC authorisation and user impersonation, reduced to what the code under
 * test can observe: who a token is, whether a verb on a resource (or a non-resource URL) is allowed, and
 * how `Impersonate-*` headers change the acting user.
 *
 * Rules come from two places, which may be mixed:
 * - `Identity` records given per token (hand-written rules; `canImpersonate` a shortcut);
 * - RBAC objects (Role, ClusterRole, RoleBinding, ClusterRoleBinding — rbac-manifests.ts), resolved for
 *   the request's user and groups on every request, as kube-apiserver's RBAC authoriser does.
 * Matching follows kube-apiserver's RBAC (`k8s.io/kubernetes/pkg/apis/rbac/v1/evaluation_helpers.go`):
 * '*' matches any verb, group or resource (subresources included); `*\/scale` matches any resource's
 * `scale`; `resourceNames` restrict a rule to requests that carry one of those names (so a rule with
 * names never grants `list`, `watch`, `deletecollection` or a `create` of a new object, whose requests
 * carry no name); `nonResourceURLs` match exactly or by a trailing '*' prefix, and only from cluster-wide
 * grants; a rule bound in namespaces (a RoleBinding) applies only to requests in those namespaces.
 */

export interface PolicyRule {
  verbs: string[];
  /** '' is the core group; '*' matches any. Empty for a non-resource rule. */
  apiGroups: string[];
  /** Plurals, `deployments/scale`-style subresources, `*\/scale`, or '*'. Empty for a non-resource rule. */
  resources: string[];
  /** When set and not empty: only requests for one of these object names match. */
  resourceNames?: string[];
  /** Non-resource paths (`/healthz`, `/apis/*`); honoured only in cluster-wide rules. */
  nonResourceURLs?: string[];
  /** Absent: every namespace and the cluster scope (a ClusterRoleBinding). Set: only these (a RoleBinding). */
  namespaces?: string[];
  /** Which binding granted it, as RBAC's SelfSubjectAccessReview reason names it. */
  grantedBy?: string;
}

export interface Identity {
  user: string;
  groups?: string[];
  rules: PolicyRule[];
  /**
   * Shortcut for hand-written identities: user names this identity may impersonate ('*' for any), with
   * any groups and extras. Identities resolved from RBAC objects have none: there each header is
   * authorised by the rules (`impersonate` on serviceaccounts/users/groups/userextras).
   */
  canImpersonate?: string[];
}

/** What one request asks to do, in RBAC terms. */
export interface ResourceAttributes {
  verb: string;
  group: string;
  /** Plural, with `/subresource` when there is one. */
  resource: string;
  namespace?: string;
  name?: string;
}

/** A request for a path that is not a resource (`GET /healthz`). */
export interface NonResourceAttributes {
  verb: string;
  path: string;
}

export type RequestAttributes = ResourceAttributes | NonResourceAttributes;

/** Who a request is, as the authenticator hands it to the authoriser. */
export interface UserInfo {
  user: string;
  groups: string[];
}

const AUTHENTICATED = 'system:authenticated';
const SA_PREFIX = 'system:serviceaccount:';

/** A ServiceAccount's user: `system:serviceaccount:<ns>:<name>`, in the groups its tokens carry. */
export function serviceAccountUser(namespace: string, name: string): UserInfo {
  return { user: `${SA_PREFIX}${namespace}:${name}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, AUTHENTICATED] };
}

/** `system:serviceaccount:vigil:vigil` → { namespace: 'vigil', name: 'vigil' }. */
export function parseServiceAccountUser(user: string): { namespace: string; name: string } | undefined {
  if (!user.startsWith(SA_PREFIX)) return undefined;
  const [namespace, name, ...rest] = user.slice(SA_PREFIX.length).split(':');
  return namespace && name && rest.length === 0 ? { namespace, name } : undefined;
}

/** A user name's UserInfo when nothing says its groups: a ServiceAccount's groups, else just system:authenticated. */
export function userInfoOf(user: string, groups?: string[]): UserInfo {
  const sa = parseServiceAccountUser(user);
  const base = groups ?? (sa ? serviceAccountUser(sa.namespace, sa.name).groups : []);
  return { user, groups: base.includes(AUTHENTICATED) ? base : [...base, AUTHENTICATED] };
}

const has = (list: string[] | undefined, value: string): boolean => !!list && (list.includes('*') || list.includes(value));

function resourceMatches(rule: PolicyRule, resource: string): boolean {
  const slash = resource.indexOf('/');
  const sub = slash < 0 ? '' : resource.slice(slash + 1);
  return rule.resources.some((r) => r === '*' || r === resource || (sub !== '' && r === `*/${sub}`));
}

function urlMatches(rule: PolicyRule, path: string): boolean {
  return (rule.nonResourceURLs ?? []).some((u) => u === '*' || u === path || (u.endsWith('*') && path.startsWith(u.slice(0, -1))));
}

/** The rule that allows `attrs`, if any. */
export function allowingRule(rules: PolicyRule[], attrs: RequestAttributes): PolicyRule | undefined {
  return rules.find((rule) => {
    if (!has(rule.verbs, attrs.verb)) return false;
    if ('path' in attrs) return !rule.namespaces && urlMatches(rule, attrs.path);
    if (!has(rule.apiGroups, attrs.group) || !resourceMatches(rule, attrs.resource)) return false;
    if (rule.resourceNames?.length && (attrs.name === undefined || !rule.resourceNames.includes(attrs.name))) return false;
    if (!rule.namespaces) return true;
    return attrs.namespace !== undefined && attrs.namespace !== '' && (rule.namespaces.includes('*') || rule.namespaces.includes(attrs.namespace));
  });
}

export function isAllowed(identity: Identity, attrs: RequestAttributes): boolean {
  return allowingRule(identity.rules, attrs) !== undefined;
}

export const FULL_ACCESS: PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], apiGroups: [], resources: [], nonResourceURLs: ['*'] },
];

/** Resolves RBAC objects into the rules that apply to one user (rbac-manifests.ts implements it). */
export interface RulesSource {
  rulesFor(user: UserInfo): PolicyRule[];
}

interface TokenEntry {
  user: UserInfo;
  /** A hand-written identity: its rules and impersonation shortcut, beside whatever RBAC grants its user. */
  identity?: Identity;
  /** Epoch ms after which the token no longer authenticates (TokenRequest tokens). */
  expiresAt?: number;
}

/**
 * Tokens and users. Without hand-written identities and without RBAC every token is a full-access
 * admin (`open`); otherwise an unknown token is refused (401).
 */
export class IdentityBook {
  private readonly tokens = new Map<string, TokenEntry>();
  private readonly users = new Map<string, Identity>();
  readonly open: boolean;

  constructor(
    identities: Record<string, Identity> | undefined,
    private readonly rbac?: RulesSource,
  ) {
    this.open = identities === undefined && rbac === undefined;
    for (const [token, identity] of Object.entries(identities ?? {})) this.add(token, identity);
  }

  /** A hand-written identity for `token`. */
  add(token: string, identity: Identity, expiresAt?: number): void {
    this.tokens.set(token, { user: userInfoOf(identity.user, identity.groups), identity, ...(expiresAt !== undefined ? { expiresAt } : {}) });
    if (!this.users.has(identity.user)) this.users.set(identity.user, identity);
  }

  /** A token that authenticates as `user` (e.g. a ServiceAccount's), authorised by RBAC and any hand-written identity of that user. */
  addUser(token: string, user: UserInfo, expiresAt?: number): void {
    this.tokens.set(token, { user, ...(expiresAt !== undefined ? { expiresAt } : {}) });
  }

  authenticate(token: string | undefined, nowMs: number): Identity | undefined {
    if (!token) return undefined;
    const entry = this.tokens.get(token);
    if (entry) {
      if (entry.expiresAt !== undefined && entry.expiresAt <= nowMs) return undefined;
      return entry.identity ? this.withRbac(entry.identity, entry.user) : this.resolve(entry.user);
    }
    return this.open ? { user: 'admin', groups: ['system:masters', AUTHENTICATED], rules: FULL_ACCESS, canImpersonate: ['*'] } : undefined;
  }

  /** What `user` (with these groups) may do: a hand-written identity of that user name, plus what RBAC binds to it. */
  resolve(user: UserInfo): Identity {
    const known = this.users.get(user.user);
    if (known) return this.withRbac({ ...known, groups: user.groups }, user);
    if (this.open) return { user: user.user, groups: user.groups, rules: FULL_ACCESS };
    return { user: user.user, groups: user.groups, rules: this.rbac?.rulesFor(user) ?? [] };
  }

  /** The identity an impersonated user acts as: its configured rules, or none at all (like an unbound user). */
  byUser(user: string): Identity {
    return this.resolve(userInfoOf(user, this.users.get(user)?.groups));
  }

  private withRbac(identity: Identity, user: UserInfo): Identity {
    const extra = this.rbac?.rulesFor(user) ?? [];
    return extra.length ? { ...identity, rules: [...identity.rules, ...extra] } : identity;
  }

  /** Impersonate-User: `impersonate` on `serviceaccounts` (by namespace and name) or on `users` (by name). */
  mayImpersonate(caller: Identity, user: string): boolean {
    const list = caller.canImpersonate ?? [];
    if (list.includes('*') || list.includes(user)) return true;
    return isAllowed(caller, impersonationAttributes('user', user));
  }

  /** Impersonate-Group and Impersonate-Extra-*: free with the `canImpersonate` shortcut, else by the rules. */
  mayImpersonateAlso(caller: Identity, what: 'group' | { extra: string }, value: string): boolean {
    if (caller.canImpersonate?.length) return true;
    return isAllowed(caller, impersonationAttributes(what, value));
  }
}

/** The attributes kube-apiserver authorises for one impersonation header (endpoints/filters/impersonation.go). */
export function impersonationAttributes(what: 'user' | 'group' | { extra: string }, value: string): ResourceAttributes {
  if (what === 'group') return { verb: 'impersonate', group: '', resource: 'groups', name: value };
  if (typeof what === 'object') return { verb: 'impersonate', group: 'authentication.k8s.io', resource: `userextras/${what.extra}`, name: value };
  const sa = parseServiceAccountUser(value);
  return sa
    ? { verb: 'impersonate', group: '', resource: 'serviceaccounts', namespace: sa.namespace, name: sa.name }
    : { verb: 'impersonate', group: '', resource: 'users', name: value };
}

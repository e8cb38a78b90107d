/**
 * Bearer-token authentication, RBAC-style authorisation and user impersonation, reduced to what the
 * code under test can observe: who a token is, whether a verb on a resource is allowed, and how
 * `Impersonate-*` headers change the acting user.
 */

export interface PolicyRule {
  verbs: string[];
  /** '' is the core group; '*' matches any. */
  apiGroups: string[];
  /** Plurals, `deployments/scale`-style subresources, or '*'. */
  resources: string[];
  /** Absent: every namespace and the cluster scope (a ClusterRoleBinding). */
  namespaces?: string[];
}

export interface Identity {
  user: string;
  groups?: string[];
  rules: PolicyRule[];
  /** User names this identity may impersonate ('*' for any). */
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

function anyOf(list: string[], value: string): boolean {
  return list.includes('*') || list.includes(value);
}

export function isAllowed(identity: Identity, attrs: ResourceAttributes): boolean {
  return identity.rules.some((rule) => {
    if (!anyOf(rule.verbs, attrs.verb)) return false;
    if (!anyOf(rule.apiGroups, attrs.group)) return false;
    const base = attrs.resource.split('/')[0]!;
    const resourceOk =
      anyOf(rule.resources, attrs.resource) ||
      rule.resources.includes(`${base}/*`) ||
      (attrs.resource === base && rule.resources.includes(base));
    if (!resourceOk) return false;
    if (!rule.namespaces) return true;
    return attrs.namespace !== undefined && (rule.namespaces.includes('*') || rule.namespaces.includes(attrs.namespace));
  });
}

export const FULL_ACCESS: PolicyRule[] = [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }];

interface TokenEntry {
  identity: Identity;
  /** Epoch ms after which the token no longer authenticates (TokenRequest tokens). */
  expiresAt?: number;
}

/** Tokens and users; without configured identities every token is a full-access admin. */
export class IdentityBook {
  private readonly tokens = new Map<string, TokenEntry>();
  private readonly users = new Map<string, Identity>();
  readonly open: boolean;

  constructor(identities: Record<string, Identity> | undefined) {
    this.open = identities === undefined;
    for (const [token, identity] of Object.entries(identities ?? {})) this.add(token, identity);
  }

  add(token: string, identity: Identity, expiresAt?: number): void {
    this.tokens.set(token, { identity, ...(expiresAt !== undefined ? { expiresAt } : {}) });
    if (!this.users.has(identity.user)) this.users.set(identity.user, identity);
  }

  authenticate(token: string | undefined, nowMs: number): Identity | undefined {
    if (!token) return undefined;
    const entry = this.tokens.get(token);
    if (entry) return entry.expiresAt !== undefined && entry.expiresAt <= nowMs ? undefined : entry.identity;
    return this.open ? { user: 'admin', groups: ['system:masters'], rules: FULL_ACCESS, canImpersonate: ['*'] } : undefined;
  }

  /** The identity an impersonated user acts as: its configured rules, or none at all (like an unbound user). */
  byUser(user: string): Identity {
    return this.users.get(user) ?? { user, rules: this.open ? FULL_ACCESS : [] };
  }

  mayImpersonate(caller: Identity, user: string): boolean {
    const list = caller.canImpersonate ?? [];
    if (list.includes('*') || list.includes(user)) return true;
    const resource = user.startsWith('system:serviceaccount:') ? 'serviceaccounts' : 'users';
    return isAllowed(caller, { verb: 'impersonate', group: '', resource });
  }
}

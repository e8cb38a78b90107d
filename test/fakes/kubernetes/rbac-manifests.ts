/**
 * RBAC for the fake API server from real manifests: Role, ClusterRole, RoleBinding and ClusterRoleBinding
 * objects (e.g. deploy/*.yaml), resolved for a user and its groups the way kube-apiserver's RBAC
 * authoriser does (`k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac`):
 * - a ClusterRoleBinding grants its ClusterRole's rules everywhere: every namespace, the cluster scope
 *   and (for `nonResourceURLs`) non-resource paths;
 * - a RoleBinding grants its Role's — or its ClusterRole's — rules in the binding's namespace only;
 * - subjects: `User` (by name), `Group` (by the user's groups), `ServiceAccount` (its user name
 *   `system:serviceaccount:<ns>:<name>`; a RoleBinding subject without a namespace means the binding's);
 * - a binding whose role does not exist grants nothing (the API server accepts it, the authoriser
 *   finds no rules).
 * Objects of other kinds are ignored, so a whole manifest file can be passed. Rules are checked as the
 * API server validates them on create (verbs present; resources need apiGroups; `nonResourceURLs` only
 * in ClusterRoles, never beside resources), so a broken manifest fails here rather than granting
 * something odd. ClusterRole `aggregationRule` is not evaluated: the listed `rules` are used as they are.
 * Everything is re-read on every request, so RBAC objects added later (`add`) take effect at once.
 */
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import type { PolicyRule, RulesSource, UserInfo } from './rbac.js';

interface Meta {
  name: string;
  namespace?: string;
}
interface RuleObject {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}
interface RoleObject {
  kind: 'Role' | 'ClusterRole';
  metadata: Meta;
  rules?: RuleObject[] | null;
}
export interface Subject {
  kind: 'User' | 'Group' | 'ServiceAccount';
  name: string;
  namespace?: string;
  apiGroup?: string;
}
interface BindingObject {
  kind: 'RoleBinding' | 'ClusterRoleBinding';
  metadata: Meta;
  roleRef: { apiGroup?: string; kind: 'Role' | 'ClusterRole'; name: string };
  subjects?: Subject[] | null;
}
export type RbacObject = RoleObject | BindingObject;

const RBAC_KINDS = new Set(['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding']);

export class RbacManifestError extends Error {
  override readonly name = 'RbacManifestError';
}

/** Every document of these YAML files (empty documents dropped). */
export function readManifests(...paths: string[]): object[] {
  return paths.flatMap((path) =>
    parseAllDocuments(readFileSync(path, 'utf8')).flatMap((doc) => {
      if (doc.errors.length) throw new RbacManifestError(`${path}: ${doc.errors.map((e) => e.message).join('; ')}`);
      const value = doc.toJS() as unknown;
      return value && typeof value === 'object' ? [value as object] : [];
    }),
  );
}

const label = (o: { kind: string; metadata: Meta }): string => `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;

function checkRole(o: RoleObject): void {
  (o.rules ?? []).forEach((r, i) => {
    const at = `${label(o)}: rules[${i}]`;
    if (!r.verbs?.length) throw new RbacManifestError(`${at}: verbs: Required value`);
    const urls = r.nonResourceURLs ?? [];
    if (urls.length) {
      if (o.kind === 'Role') throw new RbacManifestError(`${at}: nonResourceURLs: Invalid value: namespaced rules cannot apply to non-resource URLs`);
      if (r.resources?.length || r.apiGroups?.length) throw new RbacManifestError(`${at}: rules cannot apply to both regular resources and non-resource URLs`);
    } else {
      if (!r.resources?.length) throw new RbacManifestError(`${at}: resources: Required value: resource rules must supply at least one resource`);
      if (!r.apiGroups?.length) throw new RbacManifestError(`${at}: apiGroups: Required value: resource rules must supply at least one api group`);
    }
  });
}

function checkBinding(o: BindingObject): void {
  if (!o.roleRef?.name || (o.roleRef.kind !== 'Role' && o.roleRef.kind !== 'ClusterRole')) throw new RbacManifestError(`${label(o)}: roleRef: needs kind Role or ClusterRole and a name`);
  if (o.kind === 'ClusterRoleBinding' && o.roleRef.kind !== 'ClusterRole') throw new RbacManifestError(`${label(o)}: roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"`);
  if (o.kind === 'RoleBinding' && !o.metadata.namespace) throw new RbacManifestError(`${label(o)}: metadata.namespace: Required value`);
  (o.subjects ?? []).forEach((s, i) => {
    if (!['User', 'Group', 'ServiceAccount'].includes(s.kind)) throw new RbacManifestError(`${label(o)}: subjects[${i}].kind: Unsupported value: "${s.kind}"`);
    if (!s.name) throw new RbacManifestError(`${label(o)}: subjects[${i}].name: Required value`);
    if (s.kind === 'ServiceAccount' && o.kind === 'ClusterRoleBinding' && !s.namespace) throw new RbacManifestError(`${label(o)}: subjects[${i}].namespace: Required value`);
  });
}

/** Whether `subject` names this user (rbac.go `appliesToUser`). */
export function subjectMatches(subject: Subject, user: UserInfo, bindingNamespace: string | undefined): boolean {
  switch (subject.kind) {
    case 'User':
      return subject.name === user.user;
    case 'Group':
      return user.groups.includes(subject.name);
    case 'ServiceAccount': {
      const namespace = subject.namespace || bindingNamespace || '';
      return user.user === `system:serviceaccount:${namespace}:${subject.name}`;
    }
    default:
      return false;
  }
}

function toPolicyRule(r: RuleObject, namespace: string | undefined, grantedBy: string): PolicyRule {
  return {
    verbs: [...(r.verbs ?? [])],
    apiGroups: [...(r.apiGroups ?? [])],
    resources: [...(r.resources ?? [])],
    ...(r.resourceNames?.length ? { resourceNames: [...r.resourceNames] } : {}),
    ...(r.nonResourceURLs?.length ? { nonResourceURLs: [...r.nonResourceURLs] } : {}),
    ...(namespace !== undefined ? { namespaces: [namespace] } : {}),
    grantedBy,
  };
}

/** `ServiceAccount "vigil-executor/vigil"` (name/namespace), `User "alice"`, as RBAC's allow reasons name subjects. */
function describeSubject(s: Subject, bindingNamespace: string | undefined): string {
  return s.kind === 'ServiceAccount' ? `ServiceAccount "${s.name}/${s.namespace || bindingNamespace}"` : `${s.kind} "${s.name}"`;
}

/** Roles, ClusterRoles and their bindings; answers which rules apply to a user. */
export class RbacRules implements RulesSource {
  private readonly roles = new Map<string, RoleObject>();
  private readonly bindings = new Map<string, BindingObject>();

  constructor(objects: object[] = []) {
    this.add(...objects);
  }

  /** Adds (or replaces, by kind, namespace and name) RBAC objects; other kinds are ignored. */
  add(...objects: object[]): void {
    for (const raw of objects) {
      const o = raw as RbacObject;
      if (!RBAC_KINDS.has(o.kind)) continue;
      if (!o.metadata?.name) throw new RbacManifestError(`${o.kind} without metadata.name`);
      if (o.kind === 'Role' && !o.metadata.namespace) throw new RbacManifestError(`${label(o)}: metadata.namespace: Required value`);
      if (o.kind === 'Role' || o.kind === 'ClusterRole') {
        checkRole(o);
        this.roles.set(this.roleKey(o.kind, o.kind === 'Role' ? o.metadata.namespace : undefined, o.metadata.name), o);
      } else {
        const binding = o as BindingObject;
        checkBinding(binding);
        this.bindings.set(`${binding.kind}/${binding.kind === 'RoleBinding' ? binding.metadata.namespace : ''}/${binding.metadata.name}`, binding);
      }
    }
  }

  /** Removes an RBAC object (e.g. a binding a test added). */
  remove(kind: RbacObject['kind'], name: string, namespace?: string): boolean {
    if (kind === 'Role' || kind === 'ClusterRole') return this.roles.delete(this.roleKey(kind, kind === 'Role' ? namespace : undefined, name));
    return this.bindings.delete(`${kind}/${kind === 'RoleBinding' ? namespace : ''}/${name}`);
  }

  /** The ClusterRole (or namespace's Role) of that name, as loaded. */
  role(kind: 'Role' | 'ClusterRole', name: string, namespace?: string): { rules: PolicyRule[] } | undefined {
    const role = this.roles.get(this.roleKey(kind, kind === 'Role' ? namespace : undefined, name));
    return role ? { rules: (role.rules ?? []).map((r) => toPolicyRule(r, undefined, label(role))) } : undefined;
  }

  /** Every binding, for assertions and listings. */
  listBindings(): { kind: string; name: string; namespace?: string; roleRef: { kind: string; name: string }; subjects: Subject[] }[] {
    return [...this.bindings.values()].map((b) => ({
      kind: b.kind,
      name: b.metadata.name,
      ...(b.kind === 'RoleBinding' ? { namespace: b.metadata.namespace! } : {}),
      roleRef: { kind: b.roleRef.kind, name: b.roleRef.name },
      subjects: [...(b.subjects ?? [])],
    }));
  }

  rulesFor(user: UserInfo): PolicyRule[] {
    const out: PolicyRule[] = [];
    for (const b of this.bindings.values()) {
      const namespace = b.kind === 'RoleBinding' ? b.metadata.namespace! : undefined;
      const subject = (b.subjects ?? []).find((s) => subjectMatches(s, user, namespace));
      if (!subject) continue;
      const role = this.roles.get(this.roleKey(b.roleRef.kind, b.roleRef.kind === 'Role' ? namespace : undefined, b.roleRef.name));
      if (!role) continue;
      const by = `${b.kind} "${namespace ? `${b.metadata.name}/${namespace}` : b.metadata.name}" of ${b.roleRef.kind} "${b.roleRef.name}" to ${describeSubject(subject, namespace)}`;
      for (const r of role.rules ?? []) {
        // A RoleBinding's rules never reach non-resource URLs (they have no namespace).
        if (namespace !== undefined && r.nonResourceURLs?.length) continue;
        out.push(toPolicyRule(r, namespace, by));
      }
    }
    return out;
  }

  private roleKey(kind: string, namespace: string | undefined, name: string): string {
    return `${kind}/${namespace ?? ''}/${name}`;
  }
}

/**
 * A RoleBinding of `roleRef` to one ServiceAccount in `namespace`, as an operator writes one to grant a
 * template ClusterRole in one more namespace.
 */
export function roleBinding(input: {
  name: string;
  namespace: string;
  roleRef: { kind: 'Role' | 'ClusterRole'; name: string };
  serviceAccount: { namespace: string; name: string };
  labels?: Record<string, string>;
}): object {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: input.name, namespace: input.namespace, ...(input.labels ? { labels: input.labels } : {}) },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', ...input.roleRef },
    subjects: [{ kind: 'ServiceAccount', name: input.serviceAccount.name, namespace: input.serviceAccount.namespace }],
  };
}

/**
 * The RBAC that `kubectl apply -k deploy/` creates, for a fake cluster: deploy/'s own manifests read as
 * they are (reader-rbac.yaml, executor-rbac.yaml, and executor-access.yaml — impersonation — or
 * executor-token.yaml — TokenRequest), plus the RoleBindings an operator adds for a cluster whose
 * namespaces are not deploy/'s examples (shop, payments, …): the executor's template ClusterRole bound
 * in each namespace where Vigil is to act, and `vigil-reader-secrets` in each namespace where Helm
 * history and certificate checks are wanted. Nothing here widens a role; it only binds deploy/'s roles
 * in more namespaces, with RoleBindings, as deploy/README.md tells operators to.
 */
import { fileURLToPath } from 'node:url';
import { allowingRule, type ResourceAttributes } from './rbac.js';
import { RbacRules, readManifests, roleBinding } from './rbac-manifests.js';

export const DEPLOY_DIR = fileURLToPath(new URL('../../../deploy/', import.meta.url));
/** The bot runs as this ServiceAccount: the reader. */
export const READER_SA = { namespace: 'vigil', name: 'vigil' } as const;
/** The only identity that writes (impersonated, or through a TokenRequest token). */
export const EXECUTOR_SA = { namespace: 'vigil', name: 'vigil-executor' } as const;
export const saUser = (sa: { namespace: string; name: string }): string => `system:serviceaccount:${sa.namespace}:${sa.name}`;
export const READER_USER = saUser(READER_SA);
export const EXECUTOR_USER = saUser(EXECUTOR_SA);
/** The ClusterRole deploy/ keeps Secret reads in, bound per namespace. */
export const READER_SECRETS_ROLE = 'vigil-reader-secrets';

/** `split`: split mode — no way from the reader to the executor; `vigil executor` runs as the executor SA itself. */
export type ExecutorMode = 'impersonate' | 'token' | 'split';

const LABELS = { 'app.kubernetes.io/name': 'vigil', 'app.kubernetes.io/component': 'generated-for-this-cluster' };

/**
 * deploy/'s manifests for this executor mode, every document (ServiceAccounts, roles, bindings), with the
 * optional component that binds them in the example policy's namespaces (shop, payments, …).
 */
export function deployManifests(mode: ExecutorMode = 'impersonate'): object[] {
  const component = ['executor-bindings.yaml', 'reader-secrets-bindings.yaml'].map((f) => `components/example-namespaces/${f}`);
  const access = mode === 'token' ? ['executor-token.yaml'] : mode === 'split' ? ['components/split-executor/executor-reader-binding.yaml'] : ['executor-access.yaml'];
  const files = ['reader-rbac.yaml', 'executor-rbac.yaml', ...access, ...component];
  return readManifests(...files.map((f) => `${DEPLOY_DIR}${f}`));
}

interface Doc {
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  roleRef?: { kind?: string; name?: string };
  subjects?: { kind?: string; name?: string; namespace?: string }[];
}
const bindsTo = (d: Doc, sa: { namespace: string; name: string }): boolean =>
  (d.subjects ?? []).some((s) => s.kind === 'ServiceAccount' && s.name === sa.name && (s.namespace ?? d.metadata?.namespace) === sa.namespace);

/** Namespaces where `docs` already bind ClusterRole `role` to `sa` with a RoleBinding. */
export function boundNamespaces(docs: object[], role: string, sa: { namespace: string; name: string }): string[] {
  return (docs as Doc[]).filter((d) => d.kind === 'RoleBinding' && d.roleRef?.kind === 'ClusterRole' && d.roleRef.name === role && bindsTo(d, sa)).map((d) => d.metadata!.namespace!);
}

/** The executor's template ClusterRoles: those deploy/ binds to it with RoleBindings (per namespace). */
export function executorTemplates(docs: object[]): string[] {
  const names = (docs as Doc[]).filter((d) => d.kind === 'RoleBinding' && d.roleRef?.kind === 'ClusterRole' && bindsTo(d, EXECUTOR_SA)).map((d) => d.roleRef!.name!);
  return [...new Set(names)];
}

/**
 * The narrowest template that allows every one of `needs` (fewest rule entries wins), or, when none
 * covers them all, the one that covers most: an operator binds the template that matches the policy.
 */
export function pickTemplate(docs: object[], needs: Omit<ResourceAttributes, 'namespace' | 'name'>[]): string | undefined {
  const rbac = new RbacRules(docs);
  const scored = executorTemplates(docs).map((name) => {
    const rules = rbac.role('ClusterRole', name)?.rules ?? [];
    const size = rules.reduce((n, r) => n + r.verbs.length * r.apiGroups.length * r.resources.length, 0);
    const covered = needs.filter((a) => allowingRule(rules, { ...a, namespace: 'any' })).length;
    return { name, size, covered };
  });
  scored.sort((a, b) => b.covered - a.covered || a.size - b.size);
  return scored[0]?.name;
}

export interface ClusterRbacInput {
  mode?: ExecutorMode;
  /** Namespace → the executor template ClusterRole to bind there (where deploy/ does not already bind one). */
  executorNamespaces?: Record<string, string>;
  /** Namespaces to bind `vigil-reader-secrets` in (beside deploy/'s own). */
  readerSecretNamespaces?: string[];
}

export interface ClusterRbac {
  /** RBAC objects for the fake's authoriser: deploy/'s plus the generated RoleBindings. */
  rbac: object[];
  /** The ServiceAccount objects deploy/ creates (the TokenRequest API needs the executor's to exist). */
  serviceAccounts: object[];
  /** The RoleBindings generated for this cluster (also in `rbac`). */
  generated: object[];
}

/** deploy/'s RBAC, plus RoleBindings of deploy/'s roles in this cluster's namespaces. */
export function clusterRbac(input: ClusterRbacInput = {}): ClusterRbac {
  const docs = deployManifests(input.mode);
  const generated: object[] = [];
  for (const [namespace, role] of Object.entries(input.executorNamespaces ?? {})) {
    if (executorTemplates(docs).some((t) => boundNamespaces(docs, t, EXECUTOR_SA).includes(namespace))) continue;
    generated.push(roleBinding({ name: 'vigil-executor', namespace, roleRef: { kind: 'ClusterRole', name: role }, serviceAccount: EXECUTOR_SA, labels: LABELS }));
  }
  const secretsBound = new Set(boundNamespaces(docs, READER_SECRETS_ROLE, READER_SA));
  for (const namespace of input.readerSecretNamespaces ?? []) {
    if (secretsBound.has(namespace)) continue;
    secretsBound.add(namespace);
    generated.push(roleBinding({ name: READER_SECRETS_ROLE, namespace, roleRef: { kind: 'ClusterRole', name: READER_SECRETS_ROLE }, serviceAccount: READER_SA, labels: LABELS }));
  }
  return {
    rbac: [...docs.filter((d) => (d as Doc).kind !== 'ServiceAccount'), ...generated],
    serviceAccounts: docs.filter((d) => (d as Doc).kind === 'ServiceAccount'),
    generated,
  };
}

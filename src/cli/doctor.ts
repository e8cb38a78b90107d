/**
 * `vigil doctor`: checks, against the live API server, the two facts Vigil's safety rests on:
 *   1. the READER identity (the bot's own credentials) cannot write, and can read what the evidence
 *      tools read;
 *   2. the EXECUTOR identity (`system:serviceaccount:vigil:vigil-executor`) can do what the write policy
 *      allows, where it allows it — and nothing broader.
 * Every check is a SelfSubjectAccessReview (the API server's own RBAC answer; nothing is written).
 * The executor is checked by impersonating it (the way Vigil reaches it, src/actions/executor.ts);
 * when the reader may not impersonate, by a SubjectAccessReview for that user (needs `create
 * subjectaccessreviews`, e.g. run doctor with admin credentials), or with `--executor token` by minting
 * a 10-minute token (a TokenRequest: the one request doctor makes that creates something).
 * With LAUNCHDARKLY_* or GITHUB_WRITE_TOKEN set it also checks the writers outside Kubernetes
 * (src/cli/doctor-writers.ts): the reader tokens cannot write, and what the writer tokens may do.
 *
 * Exit codes: 0 all good (warnings may be printed); 1 the reader can write (a safety failure: RBAC, a
 * reader token that can change a flag or push, or one token as both reader and writer) or lacks a
 * required read; 2 bad settings, bad policy or catalog file, or the cluster or a provider cannot be
 * reached (or rejects a token).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as k8s from '@kubernetes/client-node';
import { DEFAULT_EXECUTOR_SA, impersonateExecutor, mintExecutorToken } from '../actions/executor.js';
import { envSchema } from '../config/schema.js';
import { SINGLE_PROCESS_MODE, splitModeLabel, type VigilRole } from '../approvals/mode.js';
import { checkWriters, hasWriters, prepareWriters, type WriterSetup } from './doctor-writers.js';
import { loadKubeConfig } from '../evidence/kubernetes/client.js';
import { loadSkillsDir } from '../knowledge/skills.js';
import { loadPolicy, type Policy } from '../policy/index.js';
import { environmentOf, globMatches, writeBan } from '../policy/match.js';
import { CUSTOM_RESOURCES } from '../topology/snapshot.js';

/** One RBAC question: may this identity `verb` this resource (in a namespace, on a name)? */
export interface Access {
  verb: string;
  /** '' is the core group. */
  group: string;
  resource: string;
  subresource?: string;
  name?: string;
}

/** `patch deployments/scale` */
export function describeAccess(a: Access): string {
  return `${a.verb} ${a.resource}${a.subresource ? `/${a.subresource}` : ''}${a.name ? ` "${a.name}"` : ''}`;
}

const acc = (verb: string, group: string, resource: string, subresource?: string): Access => ({ verb, group, resource, ...(subresource ? { subresource } : {}) });

/** The catalog actions that write to Kubernetes (flip_flag and revert_pr do not). */
export type KubeAction = 'scale' | 'rollout_restart' | 'rollout_undo' | 'set_image' | 'set_resources' | 'suspend_cronjob' | 'delete_pod' | 'restore_config' | 'restore_object' | 'delete_network_policy' | 'pause_chaos';

/**
 * What each catalog action needs, per target kind (src/actions/catalog/*.ts `access`): the action is
 * possible on a kind when all of its list is allowed. Every write also patches the object itself for
 * the `vigil.dev/change` annotation, hence `patch` next to `patch …/scale` and `delete pods`.
 */
export const CATALOG_ACCESS: Record<KubeAction, Record<string, Access[]>> = {
  scale: {
    deployments: [acc('patch', 'apps', 'deployments', 'scale'), acc('patch', 'apps', 'deployments')],
    statefulsets: [acc('patch', 'apps', 'statefulsets', 'scale'), acc('patch', 'apps', 'statefulsets')],
  },
  rollout_restart: { deployments: [acc('patch', 'apps', 'deployments')], statefulsets: [acc('patch', 'apps', 'statefulsets')] },
  rollout_undo: { deployments: [acc('patch', 'apps', 'deployments')] },
  set_image: { deployments: [acc('patch', 'apps', 'deployments')], statefulsets: [acc('patch', 'apps', 'statefulsets')] },
  set_resources: { deployments: [acc('patch', 'apps', 'deployments')], statefulsets: [acc('patch', 'apps', 'statefulsets')] },
  suspend_cronjob: { cronjobs: [acc('patch', 'batch', 'cronjobs')] },
  delete_pod: { pods: [acc('delete', '', 'pods'), acc('patch', '', 'pods')] },
  restore_config: { configmaps: [acc('patch', '', 'configmaps')] },
  restore_object: {
    services: [acc('patch', '', 'services')],
    ingresses: [acc('patch', 'networking.k8s.io', 'ingresses')],
    networkpolicies: [acc('patch', 'networking.k8s.io', 'networkpolicies')],
    horizontalpodautoscalers: [acc('patch', 'autoscaling', 'horizontalpodautoscalers')],
    virtualservices: [acc('patch', 'networking.istio.io', 'virtualservices')],
    destinationrules: [acc('patch', 'networking.istio.io', 'destinationrules')],
  },
  delete_network_policy: { networkpolicies: [acc('delete', 'networking.k8s.io', 'networkpolicies'), acc('patch', 'networking.k8s.io', 'networkpolicies'), acc('create', 'networking.k8s.io', 'networkpolicies')] },
  pause_chaos: {
    ...Object.fromEntries(['podchaos', 'networkchaos', 'stresschaos', 'iochaos', 'dnschaos', 'timechaos', 'httpchaos', 'kernelchaos', 'jvmchaos', 'awschaos', 'gcpchaos'].map((r) => [r, [acc('patch', 'chaos-mesh.org', r)]])),
    chaosengines: [acc('patch', 'litmuschaos.io', 'chaosengines')],
  },
  // cordon_node is not here: `patch nodes` is cluster-scoped (ClusterRoleBinding vigil-executor-nodes), not per namespace.
};
const KUBE_ACTIONS = Object.keys(CATALOG_ACCESS) as KubeAction[];

/**
 * Whether some proposal of `action` in `namespace` can get past the policy's rules (first match
 * wins). A rule limited to some services decides only for those, so an allowing one counts and a
 * refusing one lets later rules decide for the other services.
 */
export function policyAllows(policy: Policy, action: KubeAction, namespace: string): boolean {
  if (writeBan(policy, namespace)) return false;
  const env = environmentOf(policy, namespace);
  for (const { match: m, allowed } of policy.rules) {
    if (m.actions && !m.actions.includes(action)) continue;
    if (m.environments && (env === undefined || !m.environments.includes(env))) continue;
    if (m.namespaces && !m.namespaces.some((g) => globMatches(g, namespace))) continue;
    if (m.services) {
      if (allowed) return true;
      continue;
    }
    return allowed;
  }
  return false;
}

/** The permissions the executor needs in `namespace` for what the policy allows there. */
export function executorNeeds(policy: Policy, namespace: string): Access[] {
  const needed = new Map<string, Access>();
  for (const action of KUBE_ACTIONS) {
    if (!policyAllows(policy, action, namespace)) continue;
    for (const list of Object.values(CATALOG_ACCESS[action])) for (const a of list) needed.set(describeAccess(a), a);
  }
  return [...needed.values()];
}

/** Namespaces the policy names (environments, rule matches, neverWrite); globs cannot be probed. */
export function policyNamespaces(policy: Policy): { names: string[]; globs: string[] } {
  const all = [
    ...Object.values(policy.environments).flatMap((e) => e.namespaces),
    ...policy.rules.flatMap((r) => r.match.namespaces ?? []),
    ...policy.neverWrite.filter((n) => !(n in policy.environments)),
  ];
  const unique = [...new Set(all)];
  return { names: unique.filter((n) => !/[*?]/.test(n)), globs: unique.filter((n) => /[*?]/.test(n)) };
}

const SECRETS_TOO_BROAD = "reads Secrets beyond the apps' namespaces (Vigil's own tokens are Secrets in its namespace): bind vigil-reader-secrets with a RoleBinding per application namespace instead (deploy/reader-rbac.yaml)";

/**
 * What the evidence tools and every investigation's cluster snapshot read (src/evidence/kubernetes,
 * src/topology/snapshot.ts). Cluster-wide: they list across namespaces. `optional`: what is missing
 * without it. `perNamespace`: meant to be granted per namespace (deploy/ binds Secrets with
 * RoleBindings), so also checked in the policy's namespaces, and `tooBroad` is said when it is granted
 * cluster-wide or in Vigil's own namespace.
 */
export const READER_READS: { access: Access; optional?: string; perNamespace?: boolean; tooBroad?: string }[] = [
  { access: acc('list', '', 'pods') },
  { access: acc('get', '', 'pods', 'log') },
  { access: acc('list', '', 'events') },
  { access: acc('get', 'apps', 'deployments') },
  { access: acc('list', 'apps', 'deployments') },
  { access: acc('list', 'apps', 'replicasets') },
  { access: acc('list', 'apps', 'statefulsets') },
  { access: acc('list', 'apps', 'daemonsets') },
  { access: acc('list', 'apps', 'controllerrevisions') },
  { access: acc('list', '', 'services') },
  { access: acc('get', '', 'endpoints') },
  { access: acc('get', '', 'configmaps') },
  { access: acc('list', 'batch', 'jobs') },
  { access: acc('get', 'batch', 'cronjobs') },
  { access: acc('list', '', 'persistentvolumeclaims') },
  { access: acc('list', '', 'persistentvolumes') },
  { access: acc('list', '', 'nodes') },
  { access: acc('list', '', 'namespaces') },
  { access: acc('list', 'storage.k8s.io', 'storageclasses') },
  { access: acc('list', 'autoscaling', 'horizontalpodautoscalers') },
  { access: acc('list', 'networking.k8s.io', 'networkpolicies') },
  { access: acc('list', 'networking.k8s.io', 'ingresses') },
  { access: acc('list', 'discovery.k8s.io', 'endpointslices') },
  // The snapshot lists these on every investigation: a refused list sends every incident to a human.
  { access: acc('list', 'admissionregistration.k8s.io', 'validatingwebhookconfigurations') },
  { access: acc('list', 'admissionregistration.k8s.io', 'mutatingwebhookconfigurations') },
  ...['roles', 'rolebindings', 'clusterroles', 'clusterrolebindings'].map((r) => ({ access: acc('list', 'rbac.authorization.k8s.io', r) })),
  { access: acc('list', '', 'serviceaccounts') },
  { access: acc('list', 'apiregistration.k8s.io', 'apiservices') },
  { access: acc('list', 'apps', 'controllerrevisions') },
  // Custom resources: read only where the cluster serves the group.
  ...CUSTOM_RESOURCES.map((r) => ({ access: acc('list', r.group, r.plural), optional: `where the cluster serves ${r.group}, its ${r.kind} objects will report a gap` })),
  // Optional and per namespace by design (deploy/reader-rbac.yaml binds them with RoleBindings, never
  // cluster-wide): where they are not granted only the Helm history and TLS-certificate tools report a gap.
  { access: acc('list', '', 'secrets'), optional: 'Helm release history and TLS certificate checks will report a gap', perNamespace: true, tooBroad: SECRETS_TOO_BROAD },
  { access: acc('get', '', 'secrets'), optional: 'referenced Secrets (keys only) will report a gap', perNamespace: true, tooBroad: SECRETS_TOO_BROAD },
];

/** Writes that must be refused to the reader everywhere (a representative set, plus escalation paths). */
const WRITES: Access[] = [
  ...['create', 'update', 'patch', 'delete'].map((v) => acc(v, 'apps', 'deployments')),
  acc('patch', 'apps', 'deployments', 'scale'),
  acc('update', 'apps', 'deployments', 'scale'),
  acc('patch', 'apps', 'statefulsets'),
  acc('patch', 'apps', 'statefulsets', 'scale'),
  acc('patch', 'apps', 'daemonsets'),
  ...['create', 'patch', 'delete'].map((v) => acc(v, '', 'pods')),
  acc('create', '', 'pods', 'exec'),
  acc('create', '', 'pods', 'eviction'),
  ...['create', 'patch', 'delete'].map((v) => acc(v, '', 'configmaps')),
  ...['create', 'patch', 'delete'].map((v) => acc(v, '', 'secrets')),
  acc('patch', 'batch', 'cronjobs'),
  acc('create', 'batch', 'jobs'),
  // Any ServiceAccount's token (the executor's own is granted by name, which a nameless review does not match).
  acc('create', '', 'serviceaccounts', 'token'),
  acc('create', 'rbac.authorization.k8s.io', 'rolebindings'),
];
/** Cluster-scoped writes and escalation paths, asked without a namespace only. */
const CLUSTER_WRITES: Access[] = [
  acc('patch', '', 'nodes'),
  acc('delete', '', 'namespaces'),
  acc('create', 'rbac.authorization.k8s.io', 'clusterrolebindings'),
  acc('escalate', 'rbac.authorization.k8s.io', 'clusterroles'),
  acc('bind', 'rbac.authorization.k8s.io', 'clusterroles'),
  acc('impersonate', '', 'users'),
  acc('impersonate', '', 'groups'),
  acc('impersonate', '', 'serviceaccounts'),
];

/** Same question, same key (`describeAccess` plus the group). */
const keyOf = (a: Access): string => `${describeAccess(a)} ${a.group}`;
const dedupe = (list: Access[]): Access[] => [...new Map(list.map((a) => [keyOf(a), a])).values()];

/**
 * What the executor is asked: every catalog permission, the reader's forbidden writes, and reading
 * Secrets. Anything allowed beyond `executorNeeds` for its namespace is broader than the policy needs.
 */
const EXECUTOR_PROBES: Access[] = dedupe([...Object.values(CATALOG_ACCESS).flatMap((kinds) => Object.values(kinds).flat()), ...WRITES, acc('list', '', 'secrets')]);

const SA = DEFAULT_EXECUTOR_SA;
const EXECUTOR_USER = `system:serviceaccount:${SA.namespace}:${SA.name}`;
const CLUSTER = 'cluster-wide';
/** `in shop` or `cluster-wide`. */
const at = (scope: string): string => (scope === CLUSTER ? CLUSTER : `in ${scope}`);
const USAGE = `Usage: vigil doctor [--policy FILE] [--namespace NS]… [--executor auto|impersonate|token|sar|skip] [--timeout SECONDS]
Checks with SelfSubjectAccessReviews that Vigil's reader identity (KUBECONFIG / VIGIL_KUBE_CONTEXT /
VIGIL_KUBE_IN_CLUSTER) cannot write and can read what investigations need, and what the executor
(${EXECUTOR_USER}) may do compared with the write policy
(VIGIL_POLICY_FILE, else deploy/policy.example.yaml).
With LAUNCHDARKLY_PROJECT/_READ_TOKEN/_WRITE_TOKEN or GITHUB_WRITE_TOKEN set, also proves for the flags and
repositories of the catalog (VIGIL_CATALOG_FILE) that the reader token cannot write (a dry-run flag PATCH
that changes nothing; GitHub's permissions.push) and reports what the writer token may do.
  --policy FILE     the write policy to compare with (default: VIGIL_POLICY_FILE, else the example)
  --namespace NS    also check these namespaces (repeatable or comma-separated)
  --executor MODE   how to check the executor: auto (impersonate, else SubjectAccessReview), impersonate,
                    token (mints a 10-minute token), sar, skip. Default auto.
  --timeout SECONDS per request (default 10)
Exit codes: 0 all good, 1 the reader (RBAC or a reader token) can write or misses a read permission,
2 bad settings or the cluster or a provider unreachable.`;

type ExecutorMode = 'auto' | 'impersonate' | 'token' | 'sar' | 'skip';

interface DoctorOptions {
  help: boolean;
  policyFile?: string;
  namespaces: string[];
  executor: ExecutorMode;
  timeoutMs: number;
}

/** Bad settings or an unreachable cluster: exit 2 with this message. */
class DoctorSetupError extends Error {
  override readonly name = 'DoctorSetupError';
}

function parseArgs(argv: string[]): DoctorOptions {
  const o: DoctorOptions = { help: false, namespaces: [], executor: 'auto', timeoutMs: 10_000 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined || v.startsWith('--')) throw new DoctorSetupError(`${arg} needs a value`);
      return v;
    };
    if (arg === 'doctor') continue;
    else if (arg === '--help' || arg === '-h') o.help = true;
    else if (arg === '--policy') o.policyFile = value();
    else if (arg === '--namespace' || arg === '-n') o.namespaces.push(...value().split(',').filter(Boolean));
    else if (arg === '--executor') {
      const mode = value();
      if (!['auto', 'impersonate', 'token', 'sar', 'skip'].includes(mode)) throw new DoctorSetupError(`--executor expects auto, impersonate, token, sar or skip, not "${mode}"`);
      o.executor = mode as ExecutorMode;
    } else if (arg === '--timeout') {
      const s = Number(value());
      if (!Number.isFinite(s) || s <= 0) throw new DoctorSetupError('--timeout expects a number of seconds > 0');
      o.timeoutMs = s * 1000;
    } else throw new DoctorSetupError(`unknown argument "${arg}"`);
  }
  return o;
}

/** The settings doctor needs, parsed like the bot parses them (empty means unset), without the Slack ones. */
const doctorEnv = envSchema.pick({ KUBECONFIG: true, VIGIL_KUBE_CONTEXT: true, VIGIL_KUBE_IN_CLUSTER: true, VIGIL_POLICY_FILE: true, VIGIL_ROLE: true });
const EXAMPLE_POLICY = fileURLToPath(new URL('../../deploy/policy.example.yaml', import.meta.url));

interface Setup {
  kc: k8s.KubeConfig;
  /** VIGIL_ROLE: in split mode (investigator) the reader must have no way at all to the executor. */
  role: VigilRole;
  policy: Policy;
  policyNote: string;
  writers: WriterSetup;
}

function prepare(o: DoctorOptions, env: Record<string, string | undefined>): Setup {
  const parsed = doctorEnv.safeParse(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== '')));
  if (!parsed.success) throw new DoctorSetupError(`invalid settings: ${parsed.error.issues.map((i) => `${String(i.path[0])}: ${i.message}`).join('; ')}`);
  const s = parsed.data;
  const inCluster = s.VIGIL_KUBE_IN_CLUSTER === 'true';
  if (inCluster && !env['KUBERNETES_SERVICE_HOST'])
    throw new DoctorSetupError('VIGIL_KUBE_IN_CLUSTER=true but this is not a pod (KUBERNETES_SERVICE_HOST is unset); run doctor in the Vigil pod or set KUBECONFIG');
  if (s.KUBECONFIG && !inCluster && !existsSync(s.KUBECONFIG)) throw new DoctorSetupError(`KUBECONFIG=${s.KUBECONFIG}: no such file`);
  // With nothing to load, the client falls back to http://localhost:8080 and doctor would blame the network.
  const home = env['HOME'] ?? env['USERPROFILE'];
  if (!inCluster && !s.KUBECONFIG && !(home && existsSync(join(home, '.kube', 'config'))) && !env['KUBERNETES_SERVICE_HOST'])
    throw new DoctorSetupError('no kubeconfig found: set KUBECONFIG to one (with the reader identity), put it at ~/.kube/config, or run doctor in the Vigil pod with VIGIL_KUBE_IN_CLUSTER=true');
  let kc: k8s.KubeConfig;
  try {
    kc = loadKubeConfig({ kubeconfig: s.KUBECONFIG, context: s.VIGIL_KUBE_CONTEXT, inCluster });
  } catch (err) {
    throw new DoctorSetupError(`cannot load the Kubernetes settings: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (s.VIGIL_KUBE_CONTEXT && !kc.getContextObject(s.VIGIL_KUBE_CONTEXT)) throw new DoctorSetupError(`VIGIL_KUBE_CONTEXT=${s.VIGIL_KUBE_CONTEXT}: no such context in the kubeconfig`);
  if (!kc.getCurrentCluster() || !kc.getCurrentUser()) throw new DoctorSetupError('the kubeconfig has no current context with a cluster and a user (set KUBECONFIG / VIGIL_KUBE_CONTEXT)');

  const file = o.policyFile ?? s.VIGIL_POLICY_FILE;
  let policy: Policy;
  try {
    policy = loadPolicy(file ?? EXAMPLE_POLICY);
  } catch (err) {
    throw new DoctorSetupError(err instanceof Error ? err.message : String(err));
  }
  const policyNote = file ? `policy ${file}` : `policy ${EXAMPLE_POLICY} (VIGIL_POLICY_FILE is unset: Vigil itself runs read-only; comparing with the example)`;
  let writers: WriterSetup;
  try {
    writers = prepareWriters(env);
  } catch (err) {
    throw new DoctorSetupError(err instanceof Error ? err.message : String(err));
  }
  return { kc, role: s.VIGIL_ROLE, policy, policyNote, writers };
}

/** Answers "may I …" for one identity, in one namespace (undefined: cluster-wide). */
type Probe = (a: Access, namespace: string | undefined) => Promise<boolean>;

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000}s`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

function attributes(a: Access, namespace: string | undefined): k8s.V1ResourceAttributes {
  return { verb: a.verb, group: a.group, resource: a.resource, ...(a.subresource ? { subresource: a.subresource } : {}), ...(a.name ? { name: a.name } : {}), ...(namespace ? { namespace } : {}) };
}

/** SelfSubjectAccessReviews as whoever `kc` authenticates (or impersonates) as; answers are cached. */
function selfReview(kc: k8s.KubeConfig, timeoutMs: number): Probe {
  const api = kc.makeApiClient(k8s.AuthorizationV1Api);
  const cache = new Map<string, Promise<boolean>>();
  return (a, namespace) => {
    const key = `${describeAccess(a)} ${a.group} ${namespace ?? ''}`;
    if (!cache.has(key))
      cache.set(key, withTimeout(api.createSelfSubjectAccessReview({ body: { spec: { resourceAttributes: attributes(a, namespace) } } }), timeoutMs).then((r) => r.status?.allowed === true));
    return cache.get(key)!;
  };
}

/** SubjectAccessReviews for another user (needs `create subjectaccessreviews`). */
function subjectReview(kc: k8s.KubeConfig, user: string, groups: string[], timeoutMs: number): Probe {
  const api = kc.makeApiClient(k8s.AuthorizationV1Api);
  return async (a, namespace) => {
    const r = await withTimeout(api.createSubjectAccessReview({ body: { spec: { user, groups, resourceAttributes: attributes(a, namespace) } } }), timeoutMs);
    if (!r.status) throw new Error('the SubjectAccessReview answer has no status');
    return r.status.allowed === true;
  };
}

function explain(err: unknown): string {
  if (err instanceof k8s.ApiException) {
    const reason = err.code === 401 ? 'the credentials were rejected (HTTP 401)' : `HTTP ${err.code}`;
    let body: unknown = err.body;
    try {
      if (typeof body === 'string') body = JSON.parse(body);
    } catch {
      // not a Status body
    }
    const message = (body as { message?: unknown } | undefined)?.message;
    return typeof message === 'string' ? `${reason}: ${message}` : reason;
  }
  const e = err as Error & { cause?: { code?: string; message?: string } };
  return [e.message, e.cause?.code ?? e.cause?.message].filter(Boolean).join(': ');
}

/** Runs `fn` over `items` with at most `limit` in flight. */
async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** Scopes where each access is allowed, by `keyOf(access)`. */
async function allowedWhere(probe: Probe, checks: { access: Access; scopes: (string | undefined)[] }[]): Promise<Map<string, string[]>> {
  const pairs = checks.flatMap(({ access, scopes }) => scopes.map((ns) => ({ access, ns })));
  const answers = await mapLimit(pairs, 16, ({ access, ns }) => probe(access, ns));
  const where = new Map<string, string[]>(checks.map(({ access }) => [keyOf(access), []]));
  pairs.forEach(({ access, ns }, i) => {
    if (answers[i]) where.get(keyOf(access))!.push(ns ?? CLUSTER);
  });
  return where;
}

interface Output {
  lines: string[];
  safetyFailure: boolean;
  missingRead: boolean;
  /** How reader tokens outside Kubernetes can write, and what was not proven (doctor-writers.ts). */
  tokenLeaks: string[];
  tokenUnproven: string[];
}

async function checkReader(probe: Probe, scopes: string[], extraReadScopes: string[], out: Output): Promise<void> {
  const writeChecks = [...WRITES.map((access) => ({ access, scopes: [undefined, ...scopes] })), ...CLUSTER_WRITES.map((access) => ({ access, scopes: [undefined] }))];
  const writes = await allowedWhere(probe, writeChecks);
  out.lines.push('', `Reader must not write (checked cluster-wide and in ${scopes.join(', ')}):`);
  const leaks = writeChecks.map(({ access }) => [access, writes.get(keyOf(access))!] as const).filter(([, where]) => where.length > 0);
  for (const { access } of writeChecks) {
    const where = writes.get(keyOf(access))!;
    out.lines.push(where.length ? `  ✗ CAN ${describeAccess(access)} — ${where.join(', ')}` : `  ✓ cannot ${describeAccess(access)}`);
  }
  if (leaks.length) {
    out.safetyFailure = true;
    out.lines.push(
      '',
      '  ✗✗✗ SAFETY FAILURE: the reader identity can WRITE to the cluster. ✗✗✗',
      '  Vigil investigates with this identity; every write must go through the executor identity after a',
      '  human approval. Remove these permissions from the reader (deploy/reader-rbac.yaml grants only get/list/watch):',
      ...leaks.map(([a, where]) => `    - ${describeAccess(a)} (${a.group || 'core'}) ${where.map(at).join(', ')}`),
    );
  }

  const readScopes = [undefined, ...extraReadScopes];
  // Per-namespace reads (deploy/ binds Secrets with RoleBindings) are also asked in the policy's namespaces and Vigil's own.
  const perNamespaceScopes = [...new Set([...readScopes, ...scopes])];
  const reads = await allowedWhere(probe, READER_READS.map(({ access, perNamespace }) => ({ access, scopes: perNamespace ? perNamespaceScopes : readScopes })));
  out.lines.push('', `Reader can read what investigations need (cluster-wide${extraReadScopes.length ? ` and in ${extraReadScopes.join(', ')}` : ''}):`);
  for (const { access, optional, perNamespace, tooBroad } of READER_READS) {
    const where = reads.get(keyOf(access))!;
    const missing = readScopes.map((ns) => ns ?? CLUSTER).filter((s) => !where.includes(s));
    if (!missing.length) out.lines.push(`  ✓ ${describeAccess(access)}`);
    else if (perNamespace && where.length) out.lines.push(`  ✓ ${describeAccess(access)} ${where.map(at).join(', ')} (per namespace; elsewhere ${optional})`);
    else if (optional) out.lines.push(`  ⚠ cannot ${describeAccess(access)} ${missing.map(at).join(', ')}: ${optional}`);
    else {
      out.missingRead = true;
      out.lines.push(`  ✗ cannot ${describeAccess(access)} ${missing.map(at).join(', ')}`);
    }
    if (tooBroad && (where.includes(CLUSTER) || where.includes(SA.namespace))) out.lines.push(`  ⚠ ${describeAccess(access)} ${where.includes(CLUSTER) ? CLUSTER : `in ${SA.namespace}`}: ${tooBroad}`);
  }
}

/**
 * Whether the reader can become the executor at all (deploy/executor-access.yaml or executor-token.yaml). In
 * split mode that is the boundary: the investigator must have no way to the executor, so any is a safety failure.
 */
async function checkExecutorPath(probe: Probe, out: Output, role: VigilRole = 'single'): Promise<void> {
  const checks: [string, Access, string | undefined][] = [
    ['impersonate the executor', { ...acc('impersonate', '', 'serviceaccounts'), name: SA.name }, SA.namespace],
    ['send Impersonate-Extra-approved-by', acc('impersonate', 'authentication.k8s.io', 'userextras', 'approved-by'), undefined],
    ['send Impersonate-Extra-incident', acc('impersonate', 'authentication.k8s.io', 'userextras', 'incident'), undefined],
    ['mint executor tokens', { ...acc('create', '', 'serviceaccounts', 'token'), name: SA.name }, SA.namespace],
  ];
  const answers = await Promise.all(checks.map(([, a, ns]) => probe(a, ns)));
  out.lines.push('', `Reader → executor (${EXECUTOR_USER}):`);
  if (role === 'investigator') {
    checks.forEach(([what, a, ns], i) => out.lines.push(`  ${answers[i] ? '✗ CAN' : '✓ cannot'} ${what}: ${describeAccess(a)}${ns ? ` in ${ns}` : ''}`));
    if (answers.some(Boolean)) {
      out.safetyFailure = true;
      out.lines.push('', '  ✗✗✗ SAFETY FAILURE: split mode, yet the investigator can become the executor. ✗✗✗', '  Remove deploy/executor-access.yaml / executor-token.yaml (deploy/components/split-executor deletes them).');
    } else out.lines.push('  ✓ the investigator has no way to the executor: only `vigil executor`, with its own identity, writes');
    return;
  }
  checks.forEach(([what, a, ns], i) => out.lines.push(`  ${answers[i] ? '✓' : '·'} ${what}: ${describeAccess(a)}${ns ? ` in ${ns}` : ''}`));
  const impersonation = answers[0] && answers[1] && answers[2];
  if (impersonation) out.lines.push('  ✓ impersonation works: the audit log will name the approver and the incident');
  else if (answers[3]) out.lines.push('  ✓ TokenRequest works (short-lived tokens; the audit log shows the executor, not the approver)');
  else out.lines.push('  ⚠ the reader can reach the executor neither by impersonation nor by TokenRequest: Vigil cannot execute approved actions (apply deploy/executor-access.yaml)');
}

async function executorProbe(setup: Setup, o: DoctorOptions): Promise<{ probe: Probe; via: string } | { problem: string }> {
  const sar = { probe: subjectReview(setup.kc, EXECUTOR_USER, ['system:serviceaccounts', `system:serviceaccounts:${SA.namespace}`, 'system:authenticated'], o.timeoutMs), via: 'SubjectAccessReview' };
  const tryProbe = async (candidate: { probe: Probe; via: string }): Promise<{ probe: Probe; via: string } | { problem: string }> => {
    try {
      await candidate.probe(acc('get', '', 'pods'), SA.namespace);
      return candidate;
    } catch (err) {
      return { problem: `${candidate.via}: ${explain(err)}` };
    }
  };
  if (o.executor === 'token') {
    try {
      const { kc, expiresAt } = await mintExecutorToken(setup.kc);
      return { probe: selfReview(kc, o.timeoutMs), via: `a TokenRequest token (valid until ${expiresAt.toISOString()})` };
    } catch (err) {
      return { problem: `TokenRequest: ${explain(err)}` };
    }
  }
  if (o.executor === 'sar') return tryProbe(sar);
  let impersonated: { probe: Probe; via: string } | { problem: string };
  try {
    impersonated = await tryProbe({ probe: selfReview(impersonateExecutor(setup.kc), o.timeoutMs), via: 'impersonation' });
  } catch (err) {
    impersonated = { problem: `impersonation: ${explain(err)}` }; // e.g. the kubeconfig already impersonates someone else
  }
  if ('probe' in impersonated || o.executor === 'impersonate') return impersonated;
  const viaSar = await tryProbe(sar);
  return 'probe' in viaSar ? viaSar : { problem: `${impersonated.problem}; ${viaSar.problem}` };
}

async function checkExecutor(setup: Setup, o: DoctorOptions, out: Output): Promise<void> {
  if (o.executor === 'skip') return;
  const found = await executorProbe(setup, o);
  if ('problem' in found) {
    out.lines.push('', `Executor: ⚠ could not check what ${EXECUTOR_USER} may do (${found.problem}).`, '  Run doctor with credentials that may impersonate it or create SubjectAccessReviews, or use --executor token.');
    return;
  }
  const { policy } = setup;
  const { names, globs } = policyNamespaces(policy);
  const scopes = [...new Set([...names, ...o.namespaces, SA.namespace])];
  const where = await allowedWhere(found.probe, EXECUTOR_PROBES.map((access) => ({ access, scopes: [undefined, ...scopes] })));
  const allowed = (a: Access, ns: string): boolean => (where.get(keyOf(a)) ?? []).includes(ns);

  out.lines.push('', `Executor ${EXECUTOR_USER} (checked via ${found.via}) — catalog actions by namespace:`);
  const quiet: string[] = [];
  for (const ns of scopes) {
    const rows = KUBE_ACTIONS.map((action) => {
      const kinds = Object.entries(CATALOG_ACCESS[action]).map(([kind, list]) => ({ kind, missing: list.filter((a) => !allowed(a, ns)) }));
      return { action, policy: policyAllows(policy, action, ns), able: kinds.filter((k) => !k.missing.length).map((k) => k.kind), kinds };
    });
    if (!rows.some((r) => r.policy || r.able.length)) {
      quiet.push(ns);
      continue;
    }
    const env = environmentOf(policy, ns);
    out.lines.push(`  ${ns}${env ? ` (${env})` : ''}`);
    for (const r of rows) {
      const name = r.action.padEnd(16);
      if (r.policy && r.able.length) {
        const partial = r.kinds.filter((k) => k.missing.length).map((k) => `${k.kind}: missing ${k.missing.map(describeAccess).join(', ')}`);
        out.lines.push(`    ✓ ${name} possible on ${r.able.join(', ')}${partial.length ? ` (${partial.join('; ')})` : ''}`);
      } else if (r.policy) {
        out.lines.push(`    ⚠ ${name} the policy allows it but the executor lacks ${[...new Set(r.kinds.flatMap((k) => k.missing.map(describeAccess)))].join(', ')}`);
      } else if (r.able.length) {
        out.lines.push(`    · ${name} refused by the policy (RBAC alone would allow it on ${r.able.join(', ')})`);
      } else out.lines.push(`    · ${name} refused by the policy`);
    }
  }
  if (quiet.length) out.lines.push(`  no catalog action possible or allowed in: ${quiet.join(', ')}`);
  if (globs.length) out.lines.push(`  ⚠ the policy names namespace globs (${globs.join(', ')}): pass concrete namespaces with --namespace to check them`);

  const broader: string[] = [];
  for (const access of EXECUTOR_PROBES) {
    for (const scope of where.get(keyOf(access))!) {
      const needed = scope === CLUSTER ? [] : executorNeeds(policy, scope).map(keyOf);
      if (!needed.includes(keyOf(access))) broader.push(`${describeAccess(access)} ${at(scope)}`);
    }
  }
  if (broader.length) {
    out.lines.push('', '  ⚠ The executor may do more than the policy needs (the policy still refuses it, but RBAC should too):', ...broader.map((b) => `    - ${b}`));
  } else out.lines.push('  ✓ nothing broader than the policy needs');
}

/**
 * `vigil doctor [options]`: prints the report and returns the exit code (0 good, 1 reader can write or
 * misses a read, 2 bad settings or an unreachable cluster or provider, unless a write was found before
 * it: that stays 1). `print` receives each line (default stdout). Every run but `--help` then records
 * its result as a `doctor.completed` audit row on DATABASE_URL (./doctor-record.ts) for App Home, or
 * prints one line saying it was not recorded; that never changes the exit code.
 */
export async function runDoctor(argv: string[], env: Record<string, string | undefined>, print: (line: string) => void = (l) => console.log(l)): Promise<number> {
  const lines: string[] = [];
  const run = { help: false };
  const code = await doctorChecks(argv, env, (l) => {
    lines.push(l);
    print(l);
  }, run);
  if (run.help) return code;
  try {
    const { recordDoctorResult } = await import('./doctor-record.js');
    print(await recordDoctorResult(lines, code, env));
  } catch (err) {
    print(`Result not recorded in the audit trail: ${err instanceof Error ? err.message : String(err)}`);
  }
  return code;
}

async function doctorChecks(argv: string[], env: Record<string, string | undefined>, print: (line: string) => void, run: { help: boolean }): Promise<number> {
  let o: DoctorOptions;
  let setup: Setup;
  try {
    o = parseArgs(argv);
    if (o.help) {
      run.help = true;
      print(USAGE);
      return 0;
    }
    setup = prepare(o, env);
  } catch (err) {
    // DoctorSetupError, PolicyError (with every problem) or a kubeconfig parse error: all are settings.
    print(`vigil doctor: ${err instanceof Error ? err.message : String(err)}`);
    return 2;
  }
  const cluster = setup.kc.getCurrentCluster()!;
  print(`vigil doctor — cluster ${cluster.server} (context ${setup.kc.getCurrentContext()}, user ${setup.kc.getCurrentUser()!.name})`);
  print(`Comparing with ${setup.policyNote}`);
  print(`Mode: ${setup.role === 'investigator' ? `${splitModeLabel(EXECUTOR_USER)} (this is the investigator: it must hold no write credential)` : SINGLE_PROCESS_MODE}`);

  const reader = selfReview(setup.kc, o.timeoutMs);
  try {
    await reader(acc('list', '', 'pods'), undefined);
  } catch (err) {
    print(`✗ cannot reach the Kubernetes API at ${cluster.server}: ${explain(err)}`);
    print('  Check KUBECONFIG / VIGIL_KUBE_CONTEXT / VIGIL_KUBE_IN_CLUSTER and that the API server is reachable from here.');
    return 2;
  }

  const out: Output = { lines: [], safetyFailure: false, missingRead: false, tokenLeaks: [], tokenUnproven: [] };
  const writeScopes = [...new Set([...policyNamespaces(setup.policy).names, ...o.namespaces, SA.namespace])];
  try {
    await checkReader(reader, writeScopes, o.namespaces, out);
    await checkExecutorPath(reader, out, setup.role);
    await checkExecutor(setup, o, out);
    if (hasWriters(setup.writers)) await checkWriters(setup.writers, o.timeoutMs, out);
    else out.lines.push('', 'Writers outside Kubernetes: skipped (no LAUNCHDARKLY_* settings and no GITHUB_WRITE_TOKEN: Vigil writes only to Kubernetes)');
    out.lines.push('', ...skillsReport(env['VIGIL_SKILLS_DIR'] || 'skills'));
  } catch (err) {
    // A write found before the error is still a safety failure: it must not turn into "could not check".
    for (const l of out.lines) print(l);
    print(`✗ a permission check failed: ${explain(err)}`);
    return printSafetyFailures(out, print) ? 1 : 2;
  }
  for (const l of out.lines) print(l);
  if (printSafetyFailures(out, print)) return 1;
  print('');
  if (out.missingRead) {
    print('✗ FAILED: the reader misses read permissions investigations need (see ✗ above; deploy/reader-rbac.yaml has them all).');
    return 1;
  }
  // "Nor can its tokens" only where each configured provider was seen refusing the reader.
  const tokensProven = hasWriters(setup.writers) && !out.tokenUnproven.length;
  print(`✓ OK: the reader cannot write${tokensProven ? ' (nor can its tokens outside Kubernetes)' : ''} and can read what investigations need.`);
  if (out.tokenUnproven.length) print(`⚠ Not proven that the reader's tokens outside Kubernetes cannot write: ${out.tokenUnproven.join('; ')}.`);
  return 0;
}

/**
 * The skills directory as Vigil would load it: how many load, and each bad file with its field. Advice,
 * not safety: a bad skill is a warning (Vigil starts without it), never a failure of the doctor.
 */
export function skillsReport(dir: string): string[] {
  const { skills, errors } = loadSkillsDir(dir);
  const lines = [`Skills (VIGIL_SKILLS_DIR=${dir}): ${skills.length} load${errors.length ? `, ${errors.length} do not` : ''}`];
  for (const e of errors) lines.push(`  ⚠ ${e.file}${e.field ? ` (${e.field})` : ''}: ${e.message}`);
  if (!errors.length) lines.push(`  ✓ ${skills.length ? skills.map((s) => s.name).join(', ') : 'no skills (the board cites none, the model gets none)'}`);
  return lines;
}

/** The FAILED lines for every write the reader was found able to make; whether there was any. */
function printSafetyFailures(out: Output, print: (line: string) => void): boolean {
  if (!out.safetyFailure && !out.tokenLeaks.length) return false;
  print('');
  if (out.safetyFailure) print('✗ FAILED: the reader identity can write. Fix the RBAC above before running Vigil.');
  if (out.tokenLeaks.length) print(`✗ FAILED: a reader token can write outside Kubernetes (${out.tokenLeaks.join('; ')}). Fix the tokens above before running Vigil.`);
  return true;
}

import type { ActionProposal, ActionTarget, IncidentScope, Policy, PolicyRule } from './types.js';

/**
 * The key history records use for a target: `namespace/kind/name` with the kind lower-cased, the same
 * shape as `formatComponent` (`shop/deployment/checkout`). Rate and loop limits count by this key.
 */
export function targetKey(target: ActionTarget): string {
  return `${target.namespace}/${target.kind.toLowerCase()}/${target.name}`;
}

/**
 * The key rate and loop limits count a proposal under. A pod is counted as its workload's
 * (`shop/pods-of/checkout`): deleting one replacement pod after another is the same action repeated,
 * though each pod has a new name.
 */
export function limitKey(p: Pick<ActionProposal, 'target' | 'service'>): string {
  return p.target.kind.toLowerCase() === 'pod' && p.service ? podsOfKey(p.target.namespace, p.service) : targetKey(p.target);
}

export const podsOfKey = (namespace: string, workload: string): string => `${namespace}/pods-of/${workload}`;

/** The service (workload) a proposal affects: `service` when given, else the target itself. */
export function serviceOf(proposal: ActionProposal): string {
  return proposal.service ?? proposal.target.name;
}

/** `*` matches any run of characters, `?` one character; everything else literally. */
export function globMatches(glob: string, value: string): boolean {
  const re = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${re}$`).test(value);
}

export function environmentOf(policy: Policy, namespace: string): string | undefined {
  return Object.entries(policy.environments).find(([, env]) => env.namespaces.some((g) => globMatches(g, namespace)))?.[0];
}

/** The first rule whose every given criterion matches; an empty `match` matches everything. */
export function findRule(policy: Policy, proposal: ActionProposal): PolicyRule | undefined {
  const ns = proposal.target.namespace;
  const env = environmentOf(policy, ns);
  const service = serviceOf(proposal);
  return policy.rules.find(({ match: m }) =>
    (!m.actions || m.actions.some((a) => a === proposal.action)) &&
    (!m.environments || (env !== undefined && m.environments.includes(env))) &&
    (!m.namespaces || m.namespaces.some((g) => globMatches(g, ns))) &&
    (!m.services || m.services.some((g) => globMatches(g, service))),
  );
}

/** Why writes are never allowed in this namespace, or undefined when they may be. */
export function writeBan(policy: Policy, namespace: string): string | undefined {
  const env = environmentOf(policy, namespace);
  if (policy.neverWrite.some((g) => globMatches(g, namespace))) return `namespace ${namespace}`;
  if (env !== undefined && policy.neverWrite.includes(env)) return `environment ${env} (namespace ${namespace})`;
  if (env !== undefined && policy.environments[env]?.frozen) return `frozen environment ${env} (namespace ${namespace})`;
  return undefined;
}

/** `ns/name` for each service in scope; a bare name lives in the incident's namespace. */
export function scopeEntries(scope: { namespace: string; services: string[] }): string[] {
  return scope.services.map((s) => (s.includes('/') ? s : `${scope.namespace}/${s}`));
}

/**
 * Objects that are not workloads and are judged by the workloads behind them (`readers`, from the plan:
 * the pods a Service or NetworkPolicy selects, an Ingress or mesh object routes to, an HPA scales), like
 * a ConfigMap by its readers.
 */
const JUDGED_BY_READERS: ReadonlySet<string> = new Set(['Service', 'Ingress', 'NetworkPolicy', 'HorizontalPodAutoscaler', 'VirtualService', 'DestinationRule']);
/** In scope when their namespace is one of the scope's: a Node (cordoned for the incident's namespace) and chaos experiments. */
const NAMESPACE_SCOPED: ReadonlySet<string> = new Set(['Node', 'PodChaos', 'NetworkChaos', 'StressChaos', 'IOChaos', 'DNSChaos', 'TimeChaos', 'HTTPChaos', 'KernelChaos', 'JVMChaos', 'AWSChaos', 'GCPChaos', 'ChaosEngine']);

/**
 * Whether the proposal's namespace and service are the incident's service or one of its dependencies.
 * A ConfigMap is in scope when every workload reading it is (and one does); before planning, when its
 * readers are not known yet, when its namespace is one of the scope's. The same for the objects judged
 * by the workloads behind them; a Node or a chaos experiment by its namespace.
 */
export function inScope(proposal: ActionProposal, scope: { namespace: string; services: string[] }): boolean {
  const entries = scopeEntries(scope);
  const ns = proposal.target.namespace;
  // A Node (its ref carries the incident's namespace) or a chaos experiment: no workload of its own.
  if (NAMESPACE_SCOPED.has(proposal.target.kind)) return entries.some((e) => e.startsWith(`${ns}/`));
  if (proposal.target.kind === 'ConfigMap' || JUDGED_BY_READERS.has(proposal.target.kind)) {
    if (proposal.readers === undefined) return entries.some((e) => e.startsWith(`${ns}/`));
    return proposal.readers.length > 0 && proposal.readers.every((r) => entries.includes(`${ns}/${r}`));
  }
  return entries.includes(`${ns}/${serviceOf(proposal)}`);
}

/**
 * Why a flag flip or a revert reaches outside what its service owns, or undefined when it does not. The
 * workload is in scope already; the flag key and the repository come from the proposal's parameters
 * (a model's, perhaps a prompt-injected one) and must be the service catalog's.
 */
export function foreignResource(proposal: ActionProposal, scope: IncidentScope): string | undefined {
  if (proposal.action !== 'flip_flag' && proposal.action !== 'revert_pr') return undefined;
  const service = serviceOf(proposal);
  const owned = scope.owned?.[`${proposal.target.namespace}/${service}`];
  if (proposal.action === 'flip_flag') {
    const flag = String(proposal.params['flag'] ?? '');
    if (owned?.flags.includes(flag)) return undefined;
    return `refused: flag ${flag} is not one of ${service}'s flags in the service catalog (${owned?.flags.length ? owned.flags.join(', ') : 'none listed'}); Vigil changes only flags the catalog gives the incident's services`;
  }
  const repo = String(proposal.params['repo'] ?? '');
  if (owned?.repo !== undefined && owned.repo === repo) return undefined;
  return `refused: ${repo} is not ${service}'s repository in the service catalog (${owned?.repo ?? 'none listed'}); Vigil reverts only changes in the incident's services' repositories`;
}

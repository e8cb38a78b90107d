/**
 * Translates between the plan world (actions/) and the policy world (policy/): the incident's scope
 * from the incident row and the service catalog, and the ActionProposal a plan stands for.
 */
import type { Environment as RiskEnvironment, Plan } from '../actions/index.js';
import type { ServiceCatalog } from '../knowledge/catalog.js';
import type { ActionProposal, IncidentScope, Policy, Requester } from '../policy/index.js';
import { environmentOf } from '../policy/index.js';
import type { MitigationProposal } from '../triage/types.js';

export interface IncidentScopeInput {
  namespace: string | null;
  service: string | null;
}

/**
 * The incident's service plus its catalog dependencies (a dependency in another namespace is `ns/name`),
 * with the flags and repository the catalog gives each.
 */
export function incidentScope(incident: IncidentScopeInput, catalog?: ServiceCatalog): IncidentScope {
  const namespace = incident.namespace ?? '';
  if (!incident.service) return { namespace, services: [] };
  const entry = catalog?.find(namespace || undefined, incident.service);
  const depEntries = (entry?.dependsOn ?? []).map((name) => ({ name, dep: catalog?.find(undefined, name) }));
  const deps = depEntries.map(({ name, dep }) => (dep && dep.namespace !== namespace ? `${dep.namespace}/${dep.name}` : name));
  const owned: NonNullable<IncidentScope['owned']> = {};
  for (const e of [entry, ...depEntries.map((d) => d.dep)]) if (e) owned[`${e.namespace}/${e.name}`] = { flags: e.flags, ...(e.repo ? { repo: e.repo } : {}) };
  return { namespace, services: [incident.service, ...deps], owned };
}

/** Risk scoring's environment from the policy's environment names, when they use the usual words. */
export function riskEnvironment(policy: Policy, namespace: string): RiskEnvironment | undefined {
  const env = environmentOf(policy, namespace);
  return env === 'production' || env === 'staging' || env === 'development' ? env : undefined;
}

/** Running pods the change touches: the replicas before or after a scale, else what the risk counted. */
function podsAffected(plan: Plan | Omit<Plan, 'writes'>): number {
  const disrupted = Number(/^(\d+) running pod/.exec(plan.risk.factors.find((f) => f.name === 'blast radius')?.detail ?? '')?.[1] ?? 0);
  const replicas = plan.changes.find((c) => c.path === 'spec.replicas');
  const counts = [disrupted, ...(replicas ? [replicas.before, replicas.after].filter((v): v is number => typeof v === 'number') : [])];
  return Math.max(0, ...counts);
}

interface ProposalInput {
  proposal: MitigationProposal;
  incidentId: string;
  requestedBy: Requester;
  /** The workload the diagnosis named, when the target is one of its pods. */
  diagnosedService?: string;
}

/** What the write lands on: the workload, or for flags and reverts the flag or pull request itself (per-target limits count it). */
export function proposedTarget(m: MitigationProposal): ActionProposal['target'] {
  const namespace = m.target.namespace ?? '';
  const params = m.params as { flag?: unknown; repo?: unknown; number?: unknown };
  if (m.action === 'flip_flag' && typeof params.flag === 'string') return { kind: 'FeatureFlag', namespace, name: params.flag };
  if (m.action === 'revert_pr' && typeof params.repo === 'string' && typeof params.number === 'number') return { kind: 'PullRequest', namespace, name: `${params.repo}#${params.number}` };
  return { kind: m.target.kind, namespace, name: m.target.name };
}

/** Before planning: only what the proposal says (no risk yet), to refuse out-of-scope targets untouched. */
export function preliminaryProposal(p: ProposalInput): ActionProposal {
  return {
    action: p.proposal.action,
    target: proposedTarget(p.proposal),
    ...serviceOf(p),
    params: p.proposal.params,
    risk: 0,
    requestedBy: p.requestedBy,
    incidentId: p.incidentId,
    podsAffected: 0,
    workloadsAffected: 1,
  };
}

/**
 * The planned write as the policy judges it: risk and blast radius from the plan. A ConfigMap restore is
 * judged by the workloads that read it: each must be in scope, and each counts in the blast radius.
 */
export function plannedProposal(p: ProposalInput, plan: Plan | Omit<Plan, 'writes'>): ActionProposal {
  const readers = plan.content?.readers.map((r) => r.name);
  return {
    ...preliminaryProposal(p),
    target: { kind: plan.target.kind, namespace: plan.target.namespace, name: plan.target.name },
    params: plan.params,
    risk: plan.risk.score,
    podsAffected: podsAffected(plan),
    ...(readers ? { readers: [...new Set(readers)], ...(readers[0] ? { service: readers[0] } : {}) } : {}),
    // Every catalog action writes to exactly one object; a ConfigMap's readers all run with the change.
    workloadsAffected: readers ? Math.max(1, new Set(readers).size) : 1,
  };
}

/**
 * The service a target belongs to when it is not the workload itself: a pod's diagnosed workload, and
 * for a flag or a pull request the component the proposal names (a flag `new-checkout-flow` of checkout).
 */
function serviceOf(p: ProposalInput): { service?: string } {
  const kind = p.proposal.target.kind.toLowerCase();
  if (kind === 'pod') return p.diagnosedService ? { service: p.diagnosedService } : {};
  if (p.proposal.action === 'flip_flag' || p.proposal.action === 'revert_pr') return { service: p.proposal.target.name };
  return {};
}

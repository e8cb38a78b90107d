/**
 * The write actions Vigil can propose (the mitigation catalog). Policy rules name these; anything else
 * is refused. Every one of them is a write: reads never go through policy.
 */
export const ACTION_TYPES = [
  'scale',
  'rollout_restart',
  'rollout_undo',
  'set_image',
  'set_resources',
  'suspend_cronjob',
  'delete_pod',
  'restore_config',
  'restore_object',
  'cordon_node',
  'pause_chaos',
  'delete_network_policy',
  'flip_flag',
  'revert_pr',
] as const;

export type ActionType = (typeof ACTION_TYPES)[number];

export function isActionType(action: string): action is ActionType {
  return (ACTION_TYPES as readonly string[]).includes(action);
}

/** Limits a matching rule puts on one action; absent means no cap of that kind. */
export interface PolicyLimits {
  /** At most `max` executions of any write on the same target within the window. */
  perTarget?: { max: number; windowMs: number };
  maxPods?: number;
  maxWorkloads?: number;
}

export interface PolicyMatch {
  actions?: ActionType[];
  /** Environment names from `environments:`; a namespace outside every environment matches none. */
  environments?: string[];
  /** Namespace names or globs (`*`, `?`). */
  namespaces?: string[];
  /** Service (workload) names or globs, matched against the proposal's service. */
  services?: string[];
}

/** A rule after defaults were applied: every field a decision needs is present. */
export interface PolicyRule {
  /** `name` from the file, else its position, e.g. `rules[2]`; recorded with every decision. */
  id: string;
  /** 1-based line in the policy file, when loaded from one. */
  line?: number;
  match: PolicyMatch;
  allowed: boolean;
  /** Shown when a rule with `allowed: false` refuses an action. */
  reason?: string;
  /** Distinct approvers needed; always ≥ 1 — no write runs without a human approval. */
  approvals: number;
  /** Slack user group ids whose members may approve; `owner` stands for the service's owning team. */
  approverGroups: string[];
  /** Whether the requester may approve their own action at all (still only below `selfApproveMaxRisk`). */
  selfApprove: boolean;
  /** The requester may approve their own action only when its risk is below this (0–100). */
  selfApproveMaxRisk: number;
  /** Proposals riskier than this are refused outright (0–100). */
  maxRisk?: number;
  limits: PolicyLimits;
}

export interface Environment {
  namespaces: string[];
  /** No writes at all in a frozen environment. */
  frozen: boolean;
}

/** The validated policy, durations in milliseconds. Built only by `parsePolicy`/`loadPolicy`. */
export interface Policy {
  /** Where it came from (a file path, or the built-in read-only default). */
  source: string;
  environments: Record<string, Environment>;
  /** Namespaces (names or globs) or environment names where writes are never allowed. */
  neverWrite: string[];
  /** First match wins; no match means refused. */
  rules: PolicyRule[];
  incident: {
    /** Executed writes allowed per incident. */
    mutationBudget: number;
    /** The same action on the same target at most this many times within the window. */
    loop: { sameActionSameTarget: number; windowMs: number };
  };
  /** Slack user ids that may use the global stop. */
  admins: string[];
}

export interface ActionTarget {
  /** Kubernetes kind (`Deployment`, `Pod`, …) or `Flag` / `PullRequest`. */
  kind: string;
  namespace: string;
  name: string;
}

/** `vigil` when Vigil proposed it; otherwise the Slack user id of the person who asked for it. */
export type Requester = 'vigil' | (string & {});

/** One proposed write, as the policy sees it; built by actions/ from a mitigation plan. */
export interface ActionProposal {
  /** Typed as string because proposals can come from the model; unknown actions are refused. */
  action: string;
  target: ActionTarget;
  /**
   * The service (workload) the action affects, for scope and `services` matching, when the target is
   * not itself the workload: the deployment owning a pod, the service owning a flag or repository.
   * Defaults to `target.name`. For a ConfigMap: its first reader.
   */
  service?: string;
  /**
   * For a ConfigMap target: the workloads (in its namespace) whose pods read it, from the plan. Every one
   * of them must be in the incident's scope (restoring it changes what each of them runs with). For a
   * Service, Ingress, NetworkPolicy, HPA or mesh object (`restore_object`): the workloads behind it.
   * Absent before planning, when only the namespace can be checked.
   */
  readers?: string[];
  params: Record<string, unknown>;
  /** 0–100 */
  risk: number;
  requestedBy: Requester;
  incidentId: string;
  podsAffected: number;
  workloadsAffected: number;
}

/** How a past execution ended; all of them count towards rate and loop limits. */
export type ExecutionOutcome = 'succeeded' | 'failed' | 'rolled_back';

export interface ExecutionRecord {
  action: string;
  /** `targetKey(target)` of the executed action. */
  targetKey: string;
  at: Date;
  outcome: ExecutionOutcome;
}

/** The services an incident may touch, and what the service catalog says each one owns. */
export interface IncidentScope {
  namespace: string;
  services: string[];
  /**
   * `namespace/service` → its flags and repository (service catalog). `flip_flag` and `revert_pr` may only
   * touch what the proposal's service owns: a flag key or repository named by a model is not trusted.
   */
  owned?: Record<string, { flags: string[]; repo?: string }>;
}

/** What the policy needs to know about the world; assembled fresh for every evaluation. */
export interface PolicyContext {
  /**
   * The incident's service and its known dependencies. A bare service name lives in `namespace`;
   * `other-ns/name` names a dependency in another namespace.
   */
  incidentScope: IncidentScope;
  /** Slack user group owning the proposal's service (service catalog `owner`), for `owner` approvers. */
  serviceOwner?: string;
  /** Past executions (of any incident) on the proposal's target — at least those inside the policy windows. */
  history: ExecutionRecord[];
  /** Writes already executed for this incident. */
  incidentMutations: number;
  stopped: { global: boolean; incident: boolean };
  now: Date;
}

/**
 * Why a proposal is refused, for code that reacts to it: `loop` and `budget` mean "escalate to a human";
 * `stopped` means someone pulled the kill switch.
 */
export type DenyCode =
  | 'stopped'
  | 'invalid_proposal'
  | 'never_write'
  | 'out_of_scope'
  | 'no_rule'
  | 'rule_forbids'
  | 'no_owner'
  | 'risk_too_high'
  | 'blast_radius'
  | 'budget'
  | 'loop'
  | 'rate_limit';

/**
 * The policy's verdict on a proposal. There is no `allow`: every write needs at least one human
 * approval, so the best a proposal gets is `require_approval`.
 */
export type PolicyDecision =
  | { kind: 'deny'; code: DenyCode; /** A sentence for the card, starting with `refused:`. */ reason: string; rule?: string }
  | {
      kind: 'require_approval';
      approvals: number;
      /** Resolved Slack user group ids (`owner` already replaced by the service's team). */
      approverGroups: string[];
      /** Whether the requester may approve their own action (rule allows it and risk is below the threshold). */
      selfApprove: boolean;
      selfApproveMaxRisk: number;
      rule: string;
      limits: PolicyLimits;
    };

export type ApprovalRejection = 'not_approvable' | 'already_approved' | 'duplicate' | 'self_approval' | 'not_in_group';

export type ApprovalVerdict =
  | { kind: 'accepted'; /** Approvals still needed after this one; 0 means it may execute (after the re-check). */ remaining: number }
  | {
      kind: 'rejected';
      code: ApprovalRejection;
      reason: string;
      /** For `not_in_group`: the groups that may approve, for the renderer to mention. */
      approverGroups?: string[];
    };

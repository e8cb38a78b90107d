/**
 * The risk score of a mitigation, 0–100, with the factors that produced it, so the card can say why.
 * Pure: the plan builder gathers the inputs; policy may gate on the score.
 */

export type Environment = 'production' | 'staging' | 'development' | 'unknown';

/** The kind of change, finer than the action name where the risk differs (a scale-down is not a scale-up). */
export type RiskKind =
  | 'scale_up'
  | 'scale_down'
  | 'scale_to_zero'
  | 'rollout_restart'
  | 'rollout_undo'
  | 'set_image'
  | 'set_resources'
  | 'suspend_cronjob'
  | 'resume_cronjob'
  | 'delete_pod'
  | 'restore_config'
  | 'restore_object'
  | 'restore_network_policy'
  | 'delete_network_policy'
  | 'cordon_node'
  | 'uncordon_node'
  | 'pause_chaos'
  | 'resume_chaos'
  | 'flip_flag'
  | 'revert_pr';

export interface RiskInput {
  kind: RiskKind;
  environment: Environment;
  /** Running pods the change stops or replaces (0 for a scale-up), or with `blastRadius: 'reading'` the pods that read the changed content. */
  podsDisrupted: number;
  /**
   * `reading`: the change replaces no pod but every counted pod runs with it (a ConfigMap its pods read,
   * all at once and without a rollout's readiness gate). `routed`: the pods whose traffic, network access
   * or scaling the restored object decides. `on-node`: the pods on a node being cordoned (none is
   * evicted; replacements land elsewhere). Scored the same; the card says which it is.
   */
  blastRadius?: 'replaced' | 'reading' | 'routed' | 'on-node';
  /** yes: one approved step restores the exact previous state; partial: it restores it with side effects; no: it cannot be undone. */
  reversible: 'yes' | 'partial' | 'no';
  /** Failed or rolled-back runs of the same action on the same target recently. */
  recentFailures: number;
}

export interface RiskFactor {
  name: 'action' | 'environment' | 'blast radius' | 'reversibility' | 'recent failures';
  points: number;
  detail: string;
}

export interface RiskScore {
  score: number;
  factors: RiskFactor[];
}

/** Base risk per kind: how much a correct execution can still hurt. */
export const BASE_RISK: Record<RiskKind, number> = {
  scale_up: 10,
  resume_cronjob: 10,
  suspend_cronjob: 15,
  rollout_restart: 20,
  scale_down: 25,
  delete_pod: 25,
  flip_flag: 25,
  set_resources: 30,
  rollout_undo: 30,
  // Every reader gets the content at once (volume mounts within a minute), with no rollout to stop halfway.
  restore_config: 30,
  // Routing, selection or scaling switches for every pod at once (no rollout to stop halfway).
  restore_object: 30,
  // A policy edit is a security decision, in either direction.
  restore_network_policy: 40,
  // Removes a policy someone added on purpose: the traffic it denied flows again.
  delete_network_policy: 55,
  // Stops a fault being injected; the experiment owner may want it back.
  pause_chaos: 10,
  resume_chaos: 20,
  uncordon_node: 10,
  // No pod stops; the cluster loses the node's capacity for new pods.
  cordon_node: 20,
  set_image: 35,
  revert_pr: 35,
  scale_to_zero: 45,
};

const ENVIRONMENT_RISK: Record<Environment, number> = { production: 25, unknown: 15, staging: 5, development: 0 };
const REVERSIBILITY_RISK = { yes: 0, partial: 10, no: 20 } as const;

const BLAST_TEXT = {
  replaced: 'stopped or replaced',
  reading: 'read the changed content',
  routed: 'behind the changed object (traffic, network access or scaling)',
  'on-node': 'on the node (none evicted; new pods go elsewhere)',
} as const;

export function scoreRisk(input: RiskInput): RiskScore {
  const pods = Math.max(0, Math.floor(input.podsDisrupted));
  const failures = Math.max(0, Math.floor(input.recentFailures));
  const factors: RiskFactor[] = [
    { name: 'action', points: BASE_RISK[input.kind], detail: input.kind.replaceAll('_', ' ') },
    { name: 'environment', points: ENVIRONMENT_RISK[input.environment], detail: input.environment },
    // The first disrupted pod counts most; beyond that each adds a little, capped (a rollout replaces pods gradually).
    { name: 'blast radius', points: pods === 0 ? 0 : Math.min(20, 6 + (pods - 1) * 2), detail: `${pods} running pod${pods === 1 ? '' : 's'} ${BLAST_TEXT[input.blastRadius ?? 'replaced']}` },
    { name: 'reversibility', points: REVERSIBILITY_RISK[input.reversible], detail: { yes: 'reversible', partial: 'partly reversible', no: 'irreversible' }[input.reversible] },
    { name: 'recent failures', points: Math.min(30, failures * 15), detail: `${failures} recent failure${failures === 1 ? '' : 's'} of this action on the target` },
  ];
  const score = Math.max(0, Math.min(100, factors.reduce((sum, f) => sum + f.points, 0)));
  return { score, factors };
}

/** Namespace-name guess when the catalog does not say: `prod`, `production`, `shop-prod` → production. */
export function guessEnvironment(namespace: string): Environment {
  const parts = namespace.toLowerCase().split(/[-_.]/);
  if (parts.some((p) => p === 'prod' || p === 'production' || p === 'prd')) return 'production';
  if (parts.some((p) => p === 'staging' || p === 'stage' || p === 'stg' || p === 'preprod')) return 'staging';
  if (parts.some((p) => p === 'dev' || p === 'development' || p === 'test' || p === 'sandbox')) return 'development';
  return 'unknown';
}

/** Readable one-liner for a card: `risk 25/100 (scale up 10, production 25)`. */
export function describeRisk(risk: RiskScore): string {
  const parts = risk.factors.filter((f) => f.points > 0).map((f) => `${f.detail} +${f.points}`);
  return `risk ${risk.score}/100${parts.length ? ` (${parts.join(', ')})` : ''}`;
}

import type { Citation, ComponentRef } from '../evidence/types.js';

/** What kind of change; ranking weighs some kinds as more likely to break things. */
export type ChangeKind =
  | 'rollout' // new ReplicaSet/ControllerRevision (template change)
  | 'image' // container image changed
  | 'scale' // replicas changed by hand or by a tool
  | 'edit' // kubectl edit/patch/apply of a spec field
  | 'resources' // requests/limits changed
  | 'helm_upgrade'
  | 'helm_rollback'
  | 'helm_install'
  | 'config' // ConfigMap edited (values never shown)
  | 'secret' // Secret edited (values never shown)
  | 'network_policy'
  | 'hpa'
  | 'deploy' // a deployment record (GitHub deployments, CI)
  | 'pr_merged'
  | 'commit'
  | 'flag' // feature-flag flip
  | 'announcement'; // a change announced in Slack by a deploy bot, CI or a flag tool

/**
 * One change from any source, in one shape: the change timeline of an investigation is a list of these,
 * ranked by how likely each is to relate to the alert.
 */
export interface ChangeEvent {
  at: Date;
  /** Who made it: a field manager, a GitHub login, a flag tool user, a bot name. */
  actor: string;
  kind: ChangeKind;
  /** What changed: a Kubernetes object, or a service/repo/flag by name. */
  target: ComponentRef;
  /** Short descriptions of the state before and after (never secret values). */
  before?: string;
  after?: string;
  /** `kubernetes`, `helm`, `github`, `flags`, `slack`. */
  source: string;
  summary: string;
  citation: Citation;
}

/** A change with its rank against an alert: higher is more likely related. */
export interface RankedChange extends ChangeEvent {
  score: number;
  /** Why it ranks where it does, in words ("13 s before onset · same workload · scale"). */
  why: string[];
}

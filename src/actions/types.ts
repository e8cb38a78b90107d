/**
 * The shapes of the mitigation catalog: a typed action, the Plan an approval card shows, the writes it
 * sends, its pre-checks, dry run, success criteria, rollback and risk, and the results of executing and
 * verifying it. Every Plan is plain JSON so it can be stored with the approval request and resumed.
 */
import type { z } from 'zod';
import type { ComponentRef } from '../evidence/types.js';
import type { MitigationProposal } from '../triage/types.js';
import type { ApprovedExecutor, DryRunExecutor, ExecutorIdentityInfo } from './executor.js';
import type { Redactor } from '../redact/index.js';
import type { ExternalChange, ExternalProviders } from './external/types.js';
import type { ObjectKind } from './objects/kinds.js';
import type { TargetReader } from './reader.js';
import type { Environment, RiskKind, RiskScore } from './risk.js';

/**
 * What the catalog writes to: Kubernetes kinds, plus a feature flag (name = flag key) and a pull request
 * (name = `owner/repo#number`). For the last two the namespace is the diagnosed service's, so policy
 * scope, environments and per-target limits apply to them as to any workload. A ConfigMap is not a
 * workload: the policy judges it by the workloads that read it (`ContentRestore.readers`).
 */
export type TargetKind = 'Deployment' | 'StatefulSet' | 'CronJob' | 'Pod' | 'ConfigMap' | ObjectKind | 'FeatureFlag' | 'PullRequest';

export interface ObjectRef {
  kind: TargetKind;
  namespace: string;
  name: string;
}

/**
 * One request to the API server. `merge` is RFC 7386 (maps merge, lists replace); `json` is RFC 6902
 * with `test` ops that make the server refuse when the state moved since the plan.
 */
export type KubeWrite =
  | {
      op: 'patch';
      target: ObjectRef;
      /** `scale` goes through the scale subresource (RBAC `deployments/scale`), as `kubectl scale` does. */
      subresource?: 'scale';
      patchType: 'merge' | 'json';
      body: unknown;
      /** Whether the object had `metadata.annotations` when planned (decides how a JSON patch adds ours). */
      hasAnnotations?: boolean;
      purpose: string;
    }
  | { op: 'delete'; target: ObjectRef; /** Delete only this incarnation of the object. */ uid?: string; purpose: string }
  /** Creates the object (the undo of `delete_network_policy`); the change annotation goes into its body. */
  | { op: 'create'; target: ObjectRef; body: KubeObject; purpose: string };

/** One changed field, for the card: `spec.replicas: 0 → 3`. Values are JSON-ish; env values are masked. */
export interface FieldChange {
  path: string;
  before: unknown;
  after: unknown;
}

export type CheckStatus = 'pass' | 'fail' | 'warn';

export interface PreCheck {
  /** `target exists`, `it is the one in the diagnosis`, `current state is as expected`, `executor may …`. */
  name: string;
  status: CheckStatus;
  detail: string;
}

/** The server-side dry run, sent through the executor identity (never the reader). */
export type DryRunResult =
  | { status: 'accepted'; identity: string; requests: string[] }
  | { status: 'rejected'; identity: string; requests: string[]; code?: number; reason?: string; message: string }
  | { status: 'skipped'; message: string }
  /** The provider has no dry run (GitHub's revert): the pre-checks read the same state as the writer instead. */
  | { status: 'unavailable'; identity: string; message: string };

/** A PromQL check supplied by the caller, e.g. 5xx ratio below 1 %. */
export interface MetricCriterion {
  query: string;
  op: '<' | '<=' | '>' | '>=';
  threshold: number;
  description: string;
}

/** What Vigil checks after execution; each is shown on the card as a sentence. */
export type SuccessCriterion = (
  | { kind: 'ready_replicas'; target: ObjectRef; atLeast: number }
  | { kind: 'replicas_settled'; target: ObjectRef; replicas: 0 }
  | { kind: 'rollout_complete'; target: ObjectRef; minGeneration: number }
  | { kind: 'container_image'; target: ObjectRef; container: string; image: string }
  | { kind: 'cronjob_suspended'; target: ObjectRef; suspend: boolean }
  | { kind: 'pod_replaced'; target: ObjectRef; uid: string; owner?: ObjectRef; readyAtLeast?: number }
  | { kind: 'flag_state'; flag: string; environment: string; on: boolean }
  | { kind: 'revert_pr_open'; repo: string; number: number; /** Carried in a Vigil revert's body. */ marker: string; /** GitHub's revert title (one opened by hand). */ title?: string }
  /** The ConfigMap's content digest (see actions/config/content.ts) equals the restored content's. */
  | { kind: 'config_content'; target: ObjectRef; digest: string }
  /** The restored spec fields' digest (see actions/objects/fields.ts) equals the restored fields'. */
  | { kind: 'object_fields'; target: ObjectRef; digest: string }
  /** The Node's `spec.unschedulable` is this (cordoned: true). */
  | { kind: 'node_unschedulable'; target: ObjectRef; unschedulable: boolean }
  /** The object is gone (no object, or another incarnation: a different uid). */
  | { kind: 'object_deleted'; target: ObjectRef; uid: string }
  /** The object exists again (re-created by the undo of a delete). */
  | { kind: 'object_exists'; target: ObjectRef }
  /** The chaos experiment is paused (Chaos Mesh annotation, Litmus engineState stop) or running again. */
  | { kind: 'chaos_paused'; target: ObjectRef; paused: boolean }
  | ({ kind: 'metric' } & MetricCriterion)
) & { description: string; withinSeconds: number };

export interface Approval {
  /** Slack user id of the approver (`body.user.id` of the click). */
  userId: string;
  userName?: string;
  at: Date;
}

/** What the diagnosis saw: the Finding's component and structured facts (`replicas`, `image`, `revision` …). */
export interface DiagnosisSnapshot {
  component?: ComponentRef;
  facts?: Record<string, string | number | boolean>;
}

/** A past execution on some target, for the risk score's "recent failures" factor. */
export interface ActionHistoryEntry {
  action: string;
  target: ComponentRef;
  outcome: 'succeeded' | 'failed' | 'rolled_back';
  at: Date;
}

export interface PlanContext {
  incidentId: string;
  /** Reads with the reader identity (GET/LIST only). */
  reader: TargetReader;
  /** The executor for the server-side dry run; without it the dry run is `skipped` and the plan not executable. */
  executor?: DryRunExecutor;
  diagnosis?: DiagnosisSnapshot;
  /** Where the target runs; when absent it is guessed from the namespace name, else `unknown`. */
  environment?: Environment;
  history?: ActionHistoryEntry[];
  /** Extra PromQL success criteria from the caller (the service's SLO), checked after execution. */
  metricCriteria?: MetricCriterion[];
  /** How long verification may take; default 300 s. */
  withinSeconds?: number;
  /** The non-Kubernetes providers (flag tool, GitHub); an action whose provider is absent plans as not executable. */
  providers?: ExternalProviders;
  /**
   * Masks secrets in what a plan shows of object content (a ConfigMap's line diff). The approval flow
   * passes its own; without one a default redactor is used: plans never show raw config values.
   */
  redactor?: Redactor;
  now?: () => Date;
}

/** Where the content a `restore_config` puts back comes from (see actions/config/sources.ts). */
export type ContentSource =
  /** `kubectl.kubernetes.io/last-applied-configuration`: the data of the last `kubectl apply`. */
  | { kind: 'last-applied' }
  /** A Helm release revision's rendered manifest (from its release Secret). */
  | { kind: 'helm'; release: string; namespace: string; revision: number }
  /** What Vigil replaced in its last restore, kept on the object (`vigil.dev/replaced-content`): the undo. */
  | { kind: 'replaced' };

/** A workload whose pod template reads a ConfigMap, and how: that decides when it sees new content. */
export interface ConfigReader {
  kind: 'Deployment' | 'StatefulSet' | 'DaemonSet' | 'CronJob';
  name: string;
  /**
   * `env` (`envFrom`, `valueFrom.configMapKeyRef`) and `subPath` mounts see new content only in new
   * pods; `volume` mounts get it from the kubelet within about a minute, if the process re-reads it.
   * `selected` (restore_object): its pods are the ones the restored object selects, routes to, or scales.
   */
  via: ('env' | 'volume' | 'subPath' | 'selected')[];
  /** Pods it runs (desired replicas; a CronJob's 0: its next run reads the new content). */
  pods: number;
}

/**
 * A content restore as a plan carries it: never the content itself (it may hold passwords), only its
 * digests, key names and readers. The write body is re-derived from `source` whenever the plan is made
 * again (right before executing), and must hash to `restoreDigest` (approvals/drift.ts).
 */
export interface ContentRestore {
  source: ContentSource;
  /** As the card says it: `the last kubectl apply (last-applied-configuration)`, `Helm release shop revision 4`. */
  sourceLabel: string;
  /** Digest of the content live when planned: what the rollback puts back. */
  currentDigest: string;
  /** Digest of the content to restore: what the success criterion waits for. */
  restoreDigest: string;
  /** What the restore does to each key: adds it back, removes it, changes its value. */
  keys: { added: string[]; removed: string[]; changed: string[] };
  readers: ConfigReader[];
}

export interface Plan {
  action: string;
  /** `scale deployment/checkout to 3` */
  title: string;
  /** The equivalent kubectl command, for humans. */
  command: string;
  incidentId: string;
  target: ObjectRef;
  params: Record<string, unknown>;
  proposal: MitigationProposal;
  /** The exact change, field by field. */
  changes: FieldChange[];
  writes: KubeWrite[];
  preChecks: PreCheck[];
  dryRun: DryRunResult;
  successCriteria: SuccessCriterion[];
  /** The step that undoes this one, itself a proposal needing approval; absent when nothing can undo it. */
  rollback?: MitigationProposal;
  /** Why there is no rollback, or what it does not restore. */
  rollbackNote?: string;
  risk: RiskScore;
  /** All pre-checks pass (warnings allowed) and the dry run was accepted. */
  executable: boolean;
  /** The target as planned: uid, resourceVersion, generation. */
  observed: { uid?: string; resourceVersion?: string; generation?: number };
  /** For flag and pull-request actions: the change the provider will make (no secrets; stored with the plan). */
  external?: ExternalChange;
  /** For `restore_config`: digests, keys and readers of the content put back (never the content). */
  content?: ContentRestore;
  /** What approvers should know beyond the change itself (who sees new config when), one sentence each. */
  notes?: string[];
  /**
   * Steps this one calls for but does not take (a restart of the readers that only see new config in new
   * pods). Each becomes its own proposal, with its own card and approval, once this one is verified.
   */
  followUps?: MitigationProposal[];
  createdAt: string;
}

/** What a catalog action builds from the target before the common plan steps (checks, dry run, risk). */
export interface ActionDraft {
  title: string;
  command: string;
  target: ObjectRef;
  /** The object as read now (undefined: it does not exist). */
  before?: KubeObject;
  /** The object after the change, for the diff (same as before when nothing would change). */
  after?: KubeObject;
  writes: KubeWrite[];
  /** Overrides the before→after field diff (a deletion is one line, not every field). */
  changes?: FieldChange[];
  /** The action-specific `current state is as expected` checks (and any other). */
  checks: PreCheck[];
  successCriteria: SuccessCriterion[];
  rollback?: MitigationProposal;
  rollbackNote?: string;
  content?: ContentRestore;
  notes?: string[];
  followUps?: MitigationProposal[];
  /** The write creates the target: the pre-check is that it does not exist (yet). */
  absent?: boolean;
  /** Risk inputs the action knows best. */
  riskKind: RiskKind;
  podsDisrupted: number;
  /** What `podsDisrupted` counts: pods stopped or replaced (default), or pods that read the changed content. */
  blastRadius?: 'replaced' | 'reading' | 'routed' | 'on-node';
  reversible: 'yes' | 'partial' | 'no';
  /** Permissions the writes need, checked with a SelfSubjectAccessReview as the executor. */
  access: AccessCheck[];
}

export interface AccessCheck {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  namespace: string;
  name?: string;
}

/** A Kubernetes object as JSON. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: { apiVersion?: string; kind: string; name: string; uid?: string; controller?: boolean }[];
    deletionTimestamp?: unknown;
    [k: string]: unknown;
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  [k: string]: unknown;
}

/** One request the executor sent, as the thread prints it. */
export interface WriteOutcome {
  request: string;
  dryRun: boolean;
  status: 'ok' | 'rejected';
  code?: number;
  reason?: string;
  message?: string;
  /**
   * No clear answer (timeout, connection lost, 5xx): the request may have been applied. Counted as sent
   * by the limits, and verification decides what happened.
   */
  uncertain?: boolean;
}

export type ExecutionResult =
  | { status: 'applied'; identity: ExecutorIdentityInfo; annotation: string; writes: WriteOutcome[] }
  /** The API refused (the final dry run or the write): nothing or only part was applied; see writes. */
  | { status: 'rejected'; identity: ExecutorIdentityInfo; annotation: string; writes: WriteOutcome[]; message: string }
  /** Vigil refused before sending anything (plan not executable, no provider). */
  | { status: 'refused'; message: string };

export interface CriterionCheck {
  description: string;
  ok: boolean;
  /** What was seen at the last poll, e.g. `readyReplicas 2/3`. */
  observed: string;
}

export interface VerificationResult {
  ok: boolean;
  /** The target's state at the last poll (replicas, image, revision …). */
  observed: Record<string, unknown>;
  checks: CriterionCheck[];
  elapsedMs: number;
  /** On failure, the plan's rollback step, returned for approval (never executed here). */
  rollback?: MitigationProposal;
}

/**
 * A catalog action as a typed value. `plan` reads (reader identity) and dry-runs (executor identity);
 * `execute` writes only with an approved executor; `verify` reads until the success criteria hold.
 */
export interface ActionDefinition<P extends z.ZodType = z.ZodType> {
  name: string;
  /** For the model and the card: what the action does. */
  description: string;
  params: P;
  effect: 'write';
  /** Reads the target and describes the change; the common steps (plan.ts) add checks, dry run and risk. */
  draft(ctx: PlanContext, target: ComponentRef, params: z.infer<P>): Promise<ActionDraft>;
  plan(ctx: PlanContext, proposal: MitigationProposal): Promise<Plan>;
  execute(executor: ApprovedExecutor, plan: Plan, guard?: WriteGuard): Promise<ExecutionResult>;
  verify(reader: TargetReader, plan: Plan, options?: VerifyOptions): Promise<VerificationResult>;
}

/**
 * Asked right before the first real write (after the final dry run): a reason not to write now (the kill
 * switch was pulled meanwhile), or undefined to go ahead.
 */
export type WriteGuard = () => Promise<string | undefined>;

export interface VerifyOptions {
  /** Reads flag and pull-request state for their criteria. */
  providers?: ExternalProviders;
  /** Overrides the criteria's `withinSeconds` (tests use short windows). */
  windowMs?: number;
  /** Poll interval; default 5 s. */
  intervalMs?: number;
  /** Answers PromQL for `metric` criteria; without it those criteria fail as unverifiable. */
  metrics?: MetricProbe;
}

/** The one thing verification needs from Prometheus: an instant query's single value. */
export interface MetricProbe {
  value(query: string): Promise<number | undefined>;
}

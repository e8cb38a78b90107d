/**
 * The executor identity: the only way Vigil writes to Kubernetes. Writes never use the reader's
 * KubeConfig; they run as a dedicated ServiceAccount (`system:serviceaccount:vigil:vigil-executor`),
 * reached in one of two ways:
 * - `impersonate`: the bot's own credentials with `Impersonate-User: <executor SA>`, plus per-request
 *   `Impersonate-Extra-approved-by` / `Impersonate-Extra-incident` headers, so the API server's audit log
 *   names the approving human and the incident (RBAC: the bot needs `impersonate` on that SA and on
 *   `userextras/approved-by`, `userextras/incident`).
 * - `token`: a TokenRequest for the executor SA (`expirationSeconds: 600`, the API's minimum), used for
 *   this execution only and never stored or logged (RBAC: `create serviceaccounts/token` on that SA).
 * - `own` (split mode, `vigil executor`): the executor process's own credential IS the executor SA (its pod's
 *   ServiceAccount token, or VIGIL_EXECUTOR_KUBECONFIG), checked once at start with a SelfSubjectReview;
 *   the investigator holds no way at all to become it.
 * Every write carries `fieldManager: vigil` and the `vigil.dev/change` annotation (stamp.ts).
 */
import * as k8s from '@kubernetes/client-node';
import { sendWrite, describeWrite, type WriteApis } from './send.js';
import { changeAnnotation, stampWrite } from './stamp.js';
import type { AccessCheck, Approval, KubeWrite, WriteOutcome } from './types.js';
import { DEFAULT_KUBE_TIMEOUT_MS, makeTimedApiClient } from '../evidence/kubernetes/client.js';

export const FIELD_MANAGER = 'vigil';
export const DEFAULT_EXECUTOR_SA = { namespace: 'vigil', name: 'vigil-executor' } as const;
/** TokenRequest's minimum lifetime, and Vigil's maximum. */
export const TOKEN_SECONDS = 600;

export interface ServiceAccountRef {
  namespace: string;
  name: string;
}

/**
 * How to become the executor. `base` is the bot's own identity, used only to impersonate or to mint
 * the token — never to write.
 */
export type ExecutorCredentials =
  | { mode: 'impersonate'; base: k8s.KubeConfig; serviceAccount?: ServiceAccountRef }
  | { mode: 'token'; base: k8s.KubeConfig; serviceAccount?: ServiceAccountRef; now?: () => Date }
  /** Split mode, in the executor process: a KubeConfig `ownExecutorKubeConfig` verified as the executor SA. */
  | { mode: 'own'; kubeConfig: ExecutorKubeConfig; serviceAccount?: ServiceAccountRef }
  /** Split mode, in the investigator: no way to write or dry-run at all (the executor plans and writes). */
  | { mode: 'none' };

/** Who performed a write, as the API server sees it; printed in the thread. */
export interface ExecutorIdentityInfo {
  /** `api-token`: a provider's own writer token (flag tool, GitHub), never the reader's; `own`: the executor process's own SA credential (split mode). */
  mode: 'impersonate' | 'token' | 'own' | 'api-token';
  /** The user name the API server authorised, e.g. `system:serviceaccount:vigil:vigil-executor`. */
  user: string;
  /** Token mode: when the minted token stops working. */
  expiresAt?: string;
}

export class ExecutorIdentityError extends Error {
  override readonly name = 'ExecutorIdentityError';
}

/** Dry runs and permission checks as the executor; what plans use before anyone approved. */
export interface DryRunExecutor {
  readonly identity: ExecutorIdentityInfo;
  readonly incidentId: string;
  /** Sends the stamped requests with `dryRun: All`; nothing persists. */
  dryRun(write: KubeWrite): Promise<WriteOutcome[]>;
  /** SelfSubjectAccessReview as the executor. */
  canI(check: AccessCheck): Promise<boolean>;
}

/** An executor bound to one approval: the only type that can persist a write. */
export interface ApprovedExecutor extends DryRunExecutor {
  readonly approval: Approval;
  readonly annotation: string;
  apply(write: KubeWrite): Promise<WriteOutcome[]>;
}

/** A KubeConfig that acts as the executor; only this module makes one. */
export type ExecutorKubeConfig = k8s.KubeConfig & { readonly __executor: unique symbol };

const saUser = (sa: ServiceAccountRef): string => `system:serviceaccount:${sa.namespace}:${sa.name}`;
/** KubeConfigs this module built from a minted token (a module-private record, not a property anyone can set). */
const minted = new WeakMap<k8s.KubeConfig, string>();
/** KubeConfigs whose own credential the API server named as the executor SA (ownExecutorKubeConfig). */
const own = new WeakMap<k8s.KubeConfig, string>();

/**
 * Runtime guard: refuse any KubeConfig that does not act as the executor SA — e.g. the reader's.
 * (The types already forbid passing one; this also stops casts and `any`.)
 */
export function assertExecutorKubeConfig(kc: k8s.KubeConfig, serviceAccount: ServiceAccountRef = DEFAULT_EXECUTOR_SA): asserts kc is ExecutorKubeConfig {
  const want = saUser(serviceAccount);
  const user = kc.getCurrentUser();
  if (minted.get(kc) === want) return;
  if (own.get(kc) === want) return;
  if (user?.impersonateUser === want) return;
  throw new ExecutorIdentityError(
    `refusing to write with KubeConfig user "${user?.name ?? '?'}": it is neither impersonating ${want} nor a token minted for it (reader credentials never write)`,
  );
}

/** The bot's KubeConfig, copied, with its current user impersonating the executor SA. */
export function impersonateExecutor(base: k8s.KubeConfig, serviceAccount: ServiceAccountRef = DEFAULT_EXECUTOR_SA): ExecutorKubeConfig {
  const user = base.getCurrentUser();
  const context = base.getContextObject(base.getCurrentContext());
  if (!user || !context) throw new ExecutorIdentityError('the base KubeConfig has no current user/context');
  if (user.impersonateUser && user.impersonateUser !== saUser(serviceAccount))
    throw new ExecutorIdentityError(`the base KubeConfig already impersonates ${user.impersonateUser}`);
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: base.clusters,
    users: base.users.map((u) => (u.name === user.name ? { ...u, impersonateUser: saUser(serviceAccount) } : u)),
    contexts: base.contexts,
    currentContext: base.getCurrentContext(),
  });
  assertExecutorKubeConfig(kc, serviceAccount);
  return kc;
}

/**
 * Mints a 10-minute token for the executor SA with the bot's credentials and returns a KubeConfig that
 * holds it in memory only. Refuses a token that lives longer than 10 minutes.
 */
export async function mintExecutorToken(
  base: k8s.KubeConfig,
  serviceAccount: ServiceAccountRef = DEFAULT_EXECUTOR_SA,
  now: () => Date = () => new Date(),
): Promise<{ kc: ExecutorKubeConfig; expiresAt: Date }> {
  const cluster = base.getCurrentCluster();
  if (!cluster) throw new ExecutorIdentityError('the base KubeConfig has no current cluster');
  const core = makeTimedApiClient(base, k8s.CoreV1Api, DEFAULT_KUBE_TIMEOUT_MS);
  let tr: k8s.AuthenticationV1TokenRequest;
  try {
    tr = await core.createNamespacedServiceAccountToken({
      namespace: serviceAccount.namespace,
      name: serviceAccount.name,
      body: { spec: { audiences: [], expirationSeconds: TOKEN_SECONDS } },
    });
  } catch (err) {
    const detail = err instanceof k8s.ApiException ? `HTTP ${err.code}` : err instanceof Error ? err.message : String(err);
    throw new ExecutorIdentityError(`could not mint a token for ${saUser(serviceAccount)}: ${detail}`);
  }
  const token = tr.status?.token;
  const expiresAt = tr.status?.expirationTimestamp ? new Date(tr.status.expirationTimestamp) : undefined;
  if (!token || !expiresAt) throw new ExecutorIdentityError('the TokenRequest answer has no token or expiry');
  if (expiresAt.getTime() - now().getTime() > (TOKEN_SECONDS + 60) * 1000)
    throw new ExecutorIdentityError(`refusing a token valid until ${expiresAt.toISOString()}: executor tokens live at most ${TOKEN_SECONDS / 60} minutes`);
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [cluster],
    users: [{ name: 'vigil-executor-token', token }],
    contexts: [{ name: 'vigil-executor', cluster: cluster.name, user: 'vigil-executor-token' }],
    currentContext: 'vigil-executor',
  });
  minted.set(kc, saUser(serviceAccount));
  assertExecutorKubeConfig(kc, serviceAccount);
  return { kc, expiresAt };
}

/**
 * Split mode: the executor process's own KubeConfig, accepted as the executor only once the API server says
 * so (SelfSubjectReview: who am I). A reader's kubeconfig given by mistake is refused before anything runs,
 * and so is one that impersonates (the executor process never impersonates).
 */
export async function ownExecutorKubeConfig(kc: k8s.KubeConfig, serviceAccount: ServiceAccountRef = DEFAULT_EXECUTOR_SA): Promise<ExecutorKubeConfig> {
  const want = saUser(serviceAccount);
  if (kc.getCurrentUser()?.impersonateUser) throw new ExecutorIdentityError('the executor kubeconfig impersonates someone: the executor writes with its own credential only');
  const user = await whoAmI(kc);
  if (user !== want) throw new ExecutorIdentityError(`the executor's Kubernetes credential is "${user}", not ${want}: give \`vigil executor\` the executor ServiceAccount's own token (VIGIL_EXECUTOR_KUBECONFIG or in-cluster)`);
  own.set(kc, want);
  assertExecutorKubeConfig(kc, serviceAccount);
  return kc;
}

/** The user name the API server authenticates this KubeConfig as (authentication.k8s.io/v1 SelfSubjectReview). */
export async function whoAmI(kc: k8s.KubeConfig): Promise<string> {
  const api = makeTimedApiClient(kc, k8s.AuthenticationV1Api, DEFAULT_KUBE_TIMEOUT_MS);
  try {
    const review = await api.createSelfSubjectReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
    const name = review.status?.userInfo?.username;
    if (!name) throw new ExecutorIdentityError('the SelfSubjectReview answer names no user');
    return name;
  } catch (err) {
    if (err instanceof ExecutorIdentityError) throw err;
    const detail = err instanceof k8s.ApiException ? `HTTP ${err.code}` : err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new ExecutorIdentityError(`could not ask the API server who the executor credential is: ${detail}`);
  }
}

/** The User-Agent of executor requests: `vigil-executor (incident=<id>; approved-by=<Slack user id>)`; ids are [A-Za-z0-9_-]. */
export function executorUserAgent(incidentId: string, approvedBy?: string): string {
  const safe = (v: string) => v.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 64);
  return `vigil-executor (incident=${safe(incidentId)}${approvedBy ? `; approved-by=${safe(approvedBy)}` : ''})`;
}

class KubeExecutor implements ApprovedExecutor {
  private readonly apis: WriteApis;
  private readonly authz: k8s.AuthorizationV1Api;
  readonly annotation: string;

  constructor(
    kc: ExecutorKubeConfig,
    readonly identity: ExecutorIdentityInfo,
    readonly incidentId: string,
    private readonly approvalOrUndefined: Approval | undefined,
  ) {
    // Timed: a hung API server must not hold an approved change for ever (a write without an answer is 'uncertain').
    this.apis = { apps: makeTimedApiClient(kc, k8s.AppsV1Api, DEFAULT_KUBE_TIMEOUT_MS), batch: makeTimedApiClient(kc, k8s.BatchV1Api, DEFAULT_KUBE_TIMEOUT_MS), core: makeTimedApiClient(kc, k8s.CoreV1Api, DEFAULT_KUBE_TIMEOUT_MS), custom: makeTimedApiClient(kc, k8s.CustomObjectsApi, DEFAULT_KUBE_TIMEOUT_MS) };
    this.authz = makeTimedApiClient(kc, k8s.AuthorizationV1Api, DEFAULT_KUBE_TIMEOUT_MS);
    this.annotation = changeAnnotation(incidentId, approvalOrUndefined);
  }

  get approval(): Approval {
    if (!this.approvalOrUndefined) throw new ExecutorIdentityError('this executor has no approval');
    return this.approvalOrUndefined;
  }

  /**
   * Who approved, on every request, in every mode: the API server's audit log records `userAgent` at every
   * audit level, so the approver and the incident are in the Kubernetes audit even with a minted token (which
   * carries no extras). Impersonate-Extra-* add them as structured fields where impersonation is used (the API
   * server rejects extras without Impersonate-User).
   */
  private headers(): Record<string, string> {
    const ua = { 'User-Agent': executorUserAgent(this.incidentId, this.approvalOrUndefined?.userId) };
    if (this.identity.mode !== 'impersonate') return ua;
    return {
      ...ua,
      'Impersonate-Extra-incident': this.incidentId,
      ...(this.approvalOrUndefined ? { 'Impersonate-Extra-approved-by': this.approvalOrUndefined.userId } : {}),
    };
  }

  private async send(write: KubeWrite, dryRun: boolean): Promise<WriteOutcome[]> {
    const out: WriteOutcome[] = [];
    for (const w of stampWrite(write, this.annotation)) {
      const result = await sendWrite(this.apis, w, { dryRun, fieldManager: FIELD_MANAGER, headers: this.headers() });
      out.push(result);
      if (result.status === 'rejected') break;
    }
    return out;
  }

  dryRun(write: KubeWrite): Promise<WriteOutcome[]> {
    return this.send(write, true);
  }

  apply(write: KubeWrite): Promise<WriteOutcome[]> {
    if (!this.approvalOrUndefined) throw new ExecutorIdentityError(`refusing to apply ${describeWrite(write)} without an approval`);
    return this.send(write, false);
  }

  async canI(check: AccessCheck): Promise<boolean> {
    const review = await this.authz.createSelfSubjectAccessReview(
      {
        body: {
          spec: {
            resourceAttributes: {
              verb: check.verb,
              group: check.group,
              resource: check.resource,
              namespace: check.namespace,
              ...(check.subresource ? { subresource: check.subresource } : {}),
              ...(check.name ? { name: check.name } : {}),
            },
          },
        },
      },
    );
    return review.status?.allowed === true;
  }
}

async function open(credentials: ExecutorCredentials, incidentId: string, approval: Approval | undefined): Promise<KubeExecutor> {
  if (credentials.mode === 'none') throw new ExecutorIdentityError('split mode: this process is the investigator and holds no write credential; the executor process plans and writes');
  const sa = credentials.serviceAccount ?? DEFAULT_EXECUTOR_SA;
  if (credentials.mode === 'own') {
    assertExecutorKubeConfig(credentials.kubeConfig, sa);
    return new KubeExecutor(credentials.kubeConfig, { mode: 'own', user: saUser(sa) }, incidentId, approval);
  }
  if (credentials.mode === 'impersonate') {
    const kc = impersonateExecutor(credentials.base, sa);
    return new KubeExecutor(kc, { mode: 'impersonate', user: saUser(sa) }, incidentId, approval);
  }
  const { kc, expiresAt } = await mintExecutorToken(credentials.base, sa, credentials.now);
  return new KubeExecutor(kc, { mode: 'token', user: saUser(sa), expiresAt: expiresAt.toISOString() }, incidentId, approval);
}

/** For plans: dry runs and access checks as the executor, before any approval (token mode mints a fresh token). */
export function openDryRunExecutor(credentials: ExecutorCredentials, incidentId: string): Promise<DryRunExecutor> {
  return open(credentials, incidentId, undefined);
}

/** For one approved execution: a fresh identity bound to the approval (token mode mints a token used only for it). */
export function openApprovedExecutor(credentials: ExecutorCredentials, incidentId: string, approval: Approval): Promise<ApprovedExecutor> {
  return open(credentials, incidentId, approval);
}

/**
 * For callers holding a KubeConfig directly (e.g. built elsewhere): checked at runtime, so the
 * reader's KubeConfig is refused before any request is sent.
 */
export function executorFromKubeConfig(
  kc: k8s.KubeConfig,
  incidentId: string,
  approval?: Approval,
  serviceAccount: ServiceAccountRef = DEFAULT_EXECUTOR_SA,
): DryRunExecutor | ApprovedExecutor {
  assertExecutorKubeConfig(kc, serviceAccount);
  const mode = minted.has(kc) ? 'token' : own.has(kc) ? 'own' : 'impersonate';
  return new KubeExecutor(kc, { mode, user: saUser(serviceAccount) }, incidentId, approval);
}

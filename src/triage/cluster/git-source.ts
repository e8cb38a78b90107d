/**
 * Which pull request put a GitOps-applied change into the cluster. A controller (Argo CD, Flux) writes
 * the object; the cause is the merge before it. Linked, in order of trust:
 * 1. a sync announcement at the write (argocd-notifications: `Application shop-routes sync succeeded to
 *    revision c41d7e9 (… (#611)) - httproute.gateway.networking.k8s.io/api configured`) naming the object
 *    or the object's Argo CD application, with its PR number or revision, matched to a merged PR;
 * 2. else the one PR merged shortly before the write whose title names the object.
 * The fix for such a change is reverting the PR: a `kubectl edit` would be undone by the next sync.
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';
import type { ChangeEvent, RankedChange } from '../../changes/types.js';
import type { MitigationProposal } from '../types.js';
import type { ComponentRef } from '../../evidence/types.js';
import { objectMeta, type ClusterSnapshot } from '../../topology/snapshot.js';
import type { Finding } from '../types.js';
import { clockTime } from '../time.js';
import { objectChanges } from './common.js';

/** Field managers of GitOps controllers: their writes are syncs of a repository. */
export const GITOPS_MANAGERS = /^(argocd-controller|argocd-application-controller|kustomize-controller|helm-controller|flux|fluxcd)/i;

/** A PR merged this long before the sync can be what the sync applied (auto-sync polls every 3 min by default). */
const MERGE_BEFORE_SYNC_MS = 30 * 60_000;
const SKEW_MS = 3 * 60_000;

export interface GitSource {
  repo: string;
  number: number;
  title?: string;
  mergedAt: Date;
  /** The PR's change and, when one linked it, the sync announcement. */
  pr: ChangeEvent;
  sync?: ChangeEvent;
}

/** `/repos/acme/gitops/pulls/611` → `{ repo: 'acme/gitops', number: 611 }`. */
function pullOf(c: ChangeEvent): { repo: string; number: number } | undefined {
  const m = /^\/?repos\/([\w.-]+\/[\w.-]+)\/pulls\/(\d+)/.exec(c.citation.ref);
  return m ? { repo: m[1]!, number: Number(m[2]) } : undefined;
}

/** The application an object belongs to in Argo CD: its instance label or tracking id. */
function argoApp(meta: V1ObjectMeta | undefined): string | undefined {
  return meta?.labels?.['argocd.argoproj.io/instance'] ?? meta?.annotations?.['argocd.argoproj.io/tracking-id']?.split(':')[0] ?? meta?.labels?.['kustomize.toolkit.fluxcd.io/name'] ?? meta?.labels?.['helm.toolkit.fluxcd.io/name'];
}

/** The merged PR behind a GitOps controller's write of `object` at `at`, when the evidence links one. */
export function gitSourceOf(changes: readonly RankedChange[] | readonly ChangeEvent[], object: ComponentRef, meta: V1ObjectMeta | undefined, at: Date): GitSource | undefined {
  const kind = object.kind.toLowerCase();
  const name = object.name.toLowerCase();
  const app = argoApp(meta)?.toLowerCase();
  // `httproute.gateway.networking.k8s.io/api` (Argo CD) or `DestinationRule/booking/fares` (Flux).
  const names = new RegExp(`\\b${kind}(?:\\.[a-z0-9.-]+)?/(?:${(object.namespace ?? '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/)?${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`, 'i');
  const pulls = changes.filter((c) => c.source === 'github' && c.kind === 'pr_merged' && c.at.getTime() <= at.getTime() + SKEW_MS && at.getTime() - c.at.getTime() <= MERGE_BEFORE_SYNC_MS);
  const syncs = changes.filter(
    (c) => c.source === 'slack' && /^(?:Argo CD synced|Flux applied) /.test(c.summary) && Math.abs(c.at.getTime() - at.getTime()) <= SKEW_MS && (names.test(c.summary) || (!!app && c.target.name.toLowerCase() === app)),
  );
  for (const sync of syncs) {
    const number = /\(PR #(\d+)\)/.exec(sync.summary)?.[1];
    const pr = pulls.find((p) => (number && p.summary.startsWith(`#${number} `)) || (!!sync.after && !!p.after && (p.after.startsWith(sync.after) || sync.after.startsWith(p.after))));
    const ref = pr && pullOf(pr);
    if (pr && ref) return { ...ref, ...titleOf(pr), mergedAt: pr.at, pr, sync };
  }
  const titled = pulls.filter((p) => new RegExp(`\\b${name}\\b`, 'i').test(titleOf(p).title ?? '') && /route|ingress|policy|gateway|config|values|chart|topic/i.test(titleOf(p).title ?? ''));
  const only = titled.length === 1 ? titled[0]! : undefined;
  const ref = only && pullOf(only);
  return only && ref ? { ...ref, ...titleOf(only), mergedAt: only.at, pr: only } : undefined;
}

function titleOf(pr: ChangeEvent): { title?: string } {
  const t = /^#\d+ "(.*)" merged/.exec(pr.summary)?.[1];
  return t ? { title: t } : {};
}

/** Revert the PR that a sync applied; the workload or object it broke is the policy target. */
export function revertPrProposal(src: GitSource, target: ComponentRef, what: string): MitigationProposal {
  return {
    action: 'revert_pr',
    target,
    params: { repo: src.repo, number: src.number },
    command: `gh pr view ${src.number} --repo ${src.repo} (then "Revert"; the GitOps sync applies it)`,
    rationale: `revert PR #${src.number}${src.title ? ` "${src.title}"` : ''} in ${src.repo}, which ${what}; an edit in the cluster would be undone by the next sync`,
  };
}

/**
 * For origins with no fix of their own: when a GitOps controller wrote the faulty object shortly before
 * the onset and the evidence ties that write to a merged PR, the fix is reverting the PR (an edit in the
 * cluster would be undone by the next sync). The write and the PR join the supporting evidence.
 */
export function withGitRevert(f: Finding, s: ClusterSnapshot, changes: readonly RankedChange[], onset: Date): Finding {
  if (f.status !== 'supported' || f.mitigation || !f.component) return f;
  const meta = objectMeta(s, f.component);
  if (!meta) return f;
  const write = objectChanges(f.component.kind, meta).find((c) => GITOPS_MANAGERS.test(c.actor) && c.at.getTime() <= onset.getTime() + SKEW_MS && onset.getTime() - c.at.getTime() <= 12 * 3600_000);
  const src = write && gitSourceOf(changes, f.component, meta, write.at);
  if (!src) return f;
  const evidence = { kind: 'change' as const, summary: `${src.pr.summary} in ${src.repo}${src.sync ? `; ${src.sync.summary}` : ''}, applied by ${write.actor} at ${clockTime(write.at)}`, citation: src.pr.citation, observedAt: src.mergedAt };
  return {
    ...f,
    facts: { ...f.facts, pr: String(src.number), repo: src.repo },
    supporting: [...f.supporting, evidence],
    mitigation: revertPrProposal(src, f.component, `changed ${f.component.kind} ${f.component.name}`),
  };
}

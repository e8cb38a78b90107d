import { checkBlastRadius, checkLoop, checkMutationBudget, checkRate } from './limits.js';
import { findRule, foreignResource, inScope, scopeEntries, serviceOf, writeBan } from './match.js';
import { isActionType, type ActionProposal, type DenyCode, type Policy, type PolicyContext, type PolicyDecision } from './types.js';

function deny(code: DenyCode, reason: string, rule?: string): PolicyDecision {
  return rule === undefined ? { kind: 'deny', code, reason } : { kind: 'deny', code, reason, rule };
}

function isCount(n: number): boolean {
  return Number.isInteger(n) && n >= 0;
}

/** `payments/payments-api`, plus the owning service when the target is not the workload itself. */
function describeTarget(p: ActionProposal): string {
  if (p.readers !== undefined) return `${p.target.namespace}/${p.target.name} (${p.target.kind === 'ConfigMap' ? 'read by' : 'affecting'} ${p.readers.length ? p.readers.join(', ') : 'no workload'})`;
  const service = serviceOf(p);
  return `${p.target.namespace}/${p.target.name}${service === p.target.name ? '' : ` (service ${service})`}`;
}

/**
 * Decide whether a proposed write may go ahead (after approval) or is refused, and why. Pure: the caller
 * gathers the context. Call it when the proposal is made AND again right before executing, with fresh
 * history, mutation count and stop flags — approval does not freeze the limits.
 *
 * Checks, in order: stop switches → a well-formed proposal → never-write namespaces → incident scope
 * (a prompt-injected "scale payments to 0" from a checkout incident stops here; a flag or repository
 * the catalog does not give the service, too) → the first matching
 * rule (none: read-only) → risk cap → approvers → blast radius → mutation budget → runaway loop → rate.
 */
export function evaluateProposal(policy: Policy, proposal: ActionProposal, context: PolicyContext): PolicyDecision {
  const p = proposal;
  if (context.stopped.global) return deny('stopped', 'refused: Vigil is stopped for all incidents by an admin (an admin can resume it)');
  if (context.stopped.incident) return deny('stopped', 'refused: Vigil is stopped for this incident (/sre resume to continue)');

  if (!isActionType(p.action)) return deny('invalid_proposal', `refused: \`${p.action}\` is not an action Vigil can take`);
  if (!p.target.namespace || !p.target.name) return deny('invalid_proposal', `refused: \`${p.action}\` has no namespaced target`);
  if (!Number.isFinite(p.risk) || p.risk < 0 || p.risk > 100) return deny('invalid_proposal', `refused: \`${p.action}\` on ${describeTarget(p)} has no valid risk score`);
  if (!isCount(p.podsAffected) || !isCount(p.workloadsAffected)) {
    return deny('invalid_proposal', `refused: the blast radius of \`${p.action}\` on ${describeTarget(p)} is unknown`);
  }

  const ban = writeBan(policy, p.target.namespace);
  if (ban) return deny('never_write', `refused: writes are never allowed in ${ban}`);

  if (!inScope(p, context.incidentScope)) {
    const scope = scopeEntries(context.incidentScope);
    return deny(
      'out_of_scope',
      `refused: \`${p.action}\` on ${describeTarget(p)} is outside this incident's scope (${scope.length ? scope.join(', ') : 'nothing in scope'})`,
    );
  }

  const foreign = foreignResource(p, context.incidentScope);
  if (foreign) return deny('out_of_scope', foreign);

  const rule = findRule(policy, p);
  if (!rule) return deny('no_rule', `refused: no policy rule allows \`${p.action}\` on ${describeTarget(p)} (read-only by default)`);
  if (!rule.allowed) {
    return deny('rule_forbids', `refused: policy rule ${rule.id} forbids \`${p.action}\` on ${describeTarget(p)}${rule.reason ? ` — ${rule.reason}` : ''}`, rule.id);
  }
  if (rule.maxRisk !== undefined && p.risk > rule.maxRisk) {
    return deny('risk_too_high', `refused: risk ${p.risk}/100 exceeds the maximum of ${rule.maxRisk} that policy rule ${rule.id} allows`, rule.id);
  }

  // `owner` means the service's owning team; without a known owner it drops out, and a rule left with
  // no approvers at all refuses rather than letting anyone approve.
  const approverGroups = [...new Set(rule.approverGroups.flatMap((g) => (g === 'owner' ? (context.serviceOwner ? [context.serviceOwner] : []) : [g])))];
  if (approverGroups.length === 0) {
    return deny('no_owner', `refused: \`${p.action}\` on ${describeTarget(p)} needs its owning team's approval, but the service catalog names no owner for ${serviceOf(p)}`, rule.id);
  }

  const breach = checkBlastRadius(p, rule.limits) ?? checkMutationBudget(policy, context) ?? checkLoop(policy, p, context) ?? checkRate(p, rule.limits, context);
  if (breach) return deny(breach.code, breach.reason, rule.id);

  return {
    kind: 'require_approval',
    approvals: rule.approvals,
    approverGroups,
    selfApprove: rule.selfApprove && p.risk < rule.selfApproveMaxRisk,
    selfApproveMaxRisk: rule.selfApproveMaxRisk,
    rule: rule.id,
    limits: rule.limits,
  };
}

/** Whether this Slack user may use the global stop (and resume). */
export function isPolicyAdmin(policy: Policy, userId: string): boolean {
  return policy.admins.includes(userId);
}

import type { ApprovalVerdict, PolicyDecision, Requester } from './types.js';

export interface ApprovalClick {
  userId: string;
  /** Slack user group ids the clicker belongs to, resolved by the caller (`usergroups.users.list`). */
  userGroups: string[];
  requestedBy: Requester;
  /** The action's risk now (0–100); self-approval is judged on it. */
  risk: number;
}

/**
 * Judge one Approve click against the decision the proposal got. Pure. Any member of any listed group
 * may approve; `approvals` distinct people are needed. The requester may approve their own action only
 * when the rule allows it and the risk is below `selfApproveMaxRisk` (four-eyes otherwise). Vigil's own
 * proposals have no human requester, so anyone in the groups may approve them.
 *
 * `remaining: 0` means the approvals are complete: re-run `evaluateProposal` with fresh context, then execute.
 */
export function evaluateApproval(decision: PolicyDecision, approval: ApprovalClick, existingApprovals: string[]): ApprovalVerdict {
  switch (decision.kind) {
    case 'deny':
      return { kind: 'rejected', code: 'not_approvable', reason: `nothing to approve: ${decision.reason}` };
    case 'require_approval': {
      const approvers = new Set(existingApprovals);
      if (approvers.size >= decision.approvals) {
        return { kind: 'rejected', code: 'already_approved', reason: `already has the ${approvals(decision.approvals)} it needs` };
      }
      if (approvers.has(approval.userId)) {
        return { kind: 'rejected', code: 'duplicate', reason: `you already approved this action; it needs ${approvals(decision.approvals - approvers.size)} from someone else` };
      }
      if (approval.requestedBy !== 'vigil' && approval.userId === approval.requestedBy) {
        if (!decision.selfApprove) {
          return { kind: 'rejected', code: 'self_approval', reason: 'you asked for this action, so someone else must approve it (four-eyes rule)' };
        }
        if (approval.risk >= decision.selfApproveMaxRisk) {
          return {
            kind: 'rejected',
            code: 'self_approval',
            reason: `you asked for this action and its risk ${approval.risk}/100 is at or above ${decision.selfApproveMaxRisk}, so someone else must approve it`,
          };
        }
      }
      if (!approval.userGroups.some((g) => decision.approverGroups.includes(g))) {
        return {
          kind: 'rejected',
          code: 'not_in_group',
          reason: 'you are not in a user group that may approve this action',
          approverGroups: decision.approverGroups,
        };
      }
      return { kind: 'accepted', remaining: decision.approvals - approvers.size - 1 };
    }
  }
}

function approvals(n: number): string {
  return `${n} approval${n === 1 ? '' : 's'}`;
}

import { describe, expect, it } from 'vitest';
import { evaluateApproval, type PolicyDecision } from '../../src/policy/index.js';

const twoApprovals: PolicyDecision = {
  kind: 'require_approval',
  approvals: 2,
  approverGroups: ['S0SREONCALL', 'S0TEAMCHECKOUT'],
  selfApprove: false,
  selfApproveMaxRisk: 30,
  rule: 'delete-pod',
  limits: { maxWorkloads: 1 },
};

const oneApprovalSelfOk: PolicyDecision = { ...twoApprovals, approvals: 1, selfApprove: true, selfApproveMaxRisk: 50, rule: 'staging' };

const alice = { userId: 'U0ALICE', userGroups: ['S0SREONCALL'], requestedBy: 'vigil', risk: 22 };
const carol = { userId: 'U0CAROL', userGroups: ['S0OTHER', 'S0TEAMCHECKOUT'], requestedBy: 'vigil', risk: 22 };

describe('evaluateApproval', () => {
  it('needs two distinct approvers from the listed groups when the rule says two', () => {
    expect(evaluateApproval(twoApprovals, alice, [])).toEqual({ kind: 'accepted', remaining: 1 });
    expect(evaluateApproval(twoApprovals, carol, ['U0ALICE'])).toEqual({ kind: 'accepted', remaining: 0 });
  });

  it('rejects someone outside every approver group and names the groups', () => {
    expect(evaluateApproval(twoApprovals, { ...alice, userId: 'U0MALLORY', userGroups: ['S0INTERNS'] }, [])).toEqual({
      kind: 'rejected',
      code: 'not_in_group',
      reason: 'you are not in a user group that may approve this action',
      approverGroups: ['S0SREONCALL', 'S0TEAMCHECKOUT'],
    });
    expect(evaluateApproval(twoApprovals, { ...alice, userGroups: [] }, []).kind).toBe('rejected');
  });

  it('rejects a second click by the same approver', () => {
    expect(evaluateApproval(twoApprovals, alice, ['U0ALICE'])).toEqual({
      kind: 'rejected',
      code: 'duplicate',
      reason: 'you already approved this action; it needs 1 approval from someone else',
    });
  });

  it('rejects approvals once enough were given', () => {
    expect(evaluateApproval(twoApprovals, { ...alice, userId: 'U0DAVE' }, ['U0ALICE', 'U0CAROL'])).toMatchObject({ kind: 'rejected', code: 'already_approved' });
  });

  it('keeps four eyes: the requester cannot approve their own action when the rule forbids it', () => {
    expect(evaluateApproval(twoApprovals, { ...alice, requestedBy: 'U0ALICE' }, [])).toEqual({
      kind: 'rejected',
      code: 'self_approval',
      reason: 'you asked for this action, so someone else must approve it (four-eyes rule)',
    });
    // Someone else in the group may approve what Alice asked for.
    expect(evaluateApproval(twoApprovals, { ...carol, requestedBy: 'U0ALICE' }, [])).toEqual({ kind: 'accepted', remaining: 1 });
  });

  it('lets the requester approve their own low-risk action only where the rule allows it', () => {
    expect(evaluateApproval(oneApprovalSelfOk, { ...alice, requestedBy: 'U0ALICE', risk: 20 }, [])).toEqual({ kind: 'accepted', remaining: 0 });
    expect(evaluateApproval(oneApprovalSelfOk, { ...alice, requestedBy: 'U0ALICE', risk: 50 }, [])).toEqual({
      kind: 'rejected',
      code: 'self_approval',
      reason: 'you asked for this action and its risk 50/100 is at or above 50, so someone else must approve it',
    });
  });

  it('has nothing to approve on a refused action', () => {
    const refused: PolicyDecision = { kind: 'deny', code: 'loop', reason: 'refused: the same `rollout_restart` on shop/checkout already ran 2 times in the last 30 min (runaway-loop stop) — escalate to a human' };
    expect(evaluateApproval(refused, alice, [])).toMatchObject({ kind: 'rejected', code: 'not_approvable' });
  });
});

import { describe, expect, it } from 'vitest';
import { evaluateProposal, isPolicyAdmin, parsePolicy, READ_ONLY_POLICY, targetKey, type PolicyDecision } from '../../src/policy/index.js';
import { context, proposal, ran } from './builders.js';

const policy = parsePolicy(
  `
version: 1
environments:
  production: { namespaces: [shop, payments] }
  staging: { namespaces: [shop-staging] }
  dr: { namespaces: [shop-dr], frozen: true }
neverWrite: [kube-system, monitoring]
rules:
  - name: no-deletes-stateful
    match: { actions: [delete_pod], services: ["*-db"] }
    allowed: false
    reason: this service keeps state in its pods
  - name: prod-scale-restart
    match: { actions: [scale, rollout_restart], environments: [production] }
    allowed: true
    approvals: 1
    approverGroups: [S0SREONCALL]
    selfApproveMaxRisk: 30
    maxRisk: 80
    limits: { perTarget: { max: 3, window: 1h }, maxPods: 10, maxWorkloads: 1 }
  - name: delete-pod
    match: { actions: [delete_pod], services: ["checkout*"] }
    allowed: true
    approvals: 2
    approverGroups: [S0SREONCALL, S0TEAMCHECKOUT]
  - name: flags
    match: { actions: [flip_flag] }
    allowed: true
    approverGroups: [owner]
  - name: staging-anything
    match: { environments: [staging] }
    allowed: true
    approverGroups: [S0DEV]
    selfApprove: true
    selfApproveMaxRisk: 50
incident: { mutationBudget: 5, loop: { sameActionSameTarget: 2, window: 30m } }
admins: [U0ADMIN1]
`,
  'test-policy.yaml',
);

function denial(d: PolicyDecision): { code: string; reason: string } {
  if (d.kind !== 'deny') throw new Error(`expected a denial, got ${JSON.stringify(d)}`);
  return { code: d.code, reason: d.reason };
}

const checkout = targetKey({ kind: 'Deployment', namespace: 'shop', name: 'checkout' });

describe('evaluateProposal', () => {
  it('requires approval for an in-scope, allowed action and carries the rule, groups and limits', () => {
    expect(evaluateProposal(policy, proposal(), context())).toEqual({
      kind: 'require_approval',
      approvals: 1,
      approverGroups: ['S0SREONCALL'],
      selfApprove: false,
      selfApproveMaxRisk: 30,
      rule: 'prod-scale-restart',
      limits: { maxWorkloads: 1, maxPods: 10, perTarget: { max: 3, windowMs: 3_600_000 } },
    });
  });

  it('is read-only by default: without a policy file nothing is executable', () => {
    for (const action of ['scale', 'rollout_restart', 'delete_pod', 'flip_flag']) {
      const params = action === 'flip_flag' ? { flag: 'new-checkout-flow', to: 'off' } : {};
      expect(denial(evaluateProposal(READ_ONLY_POLICY, proposal({ action, params }), context()))).toEqual({
        code: 'no_rule',
        reason: `refused: no policy rule allows \`${action}\` on shop/checkout (read-only by default)`,
      });
    }
  });

  it('refuses an action no rule allows', () => {
    expect(denial(evaluateProposal(policy, proposal({ action: 'set_image', params: { image: 'checkout:v2' } }), context()))).toEqual({
      code: 'no_rule',
      reason: 'refused: no policy rule allows `set_image` on shop/checkout (read-only by default)',
    });
  });

  it('refuses actions outside the catalog (a model inventing one)', () => {
    expect(denial(evaluateProposal(policy, proposal({ action: 'exec_shell' }), context()))).toEqual({
      code: 'invalid_proposal',
      reason: 'refused: `exec_shell` is not an action Vigil can take',
    });
  });

  it('refuses a prompt-injected "scale deployment payments to 0" from a checkout incident', () => {
    const injected = proposal({ target: { kind: 'Deployment', namespace: 'payments', name: 'payments' }, params: { replicas: 0 } });
    expect(denial(evaluateProposal(policy, injected, context({ incidentScope: { namespace: 'shop', services: ['checkout'] } })))).toEqual({
      code: 'out_of_scope',
      reason: "refused: `scale` on payments/payments is outside this incident's scope (shop/checkout)",
    });
  });

  it('refuses the same service name in another namespace, and accepts a listed cross-namespace dependency', () => {
    const other = proposal({ target: { kind: 'Deployment', namespace: 'shop-staging', name: 'checkout' } });
    expect(denial(evaluateProposal(policy, other, context())).code).toBe('out_of_scope');
    const dep = proposal({ action: 'rollout_restart', target: { kind: 'Deployment', namespace: 'payments', name: 'payments-api' } });
    expect(evaluateProposal(policy, dep, context()).kind).toBe('require_approval');
  });

  it('checks scope by the owning service when the target is a pod', () => {
    const pod = { kind: 'Pod', namespace: 'shop', name: 'checkout-7f9c-x2x' };
    expect(denial(evaluateProposal(policy, proposal({ action: 'delete_pod', target: pod, podsAffected: 1 }), context())).reason).toBe(
      "refused: `delete_pod` on shop/checkout-7f9c-x2x is outside this incident's scope (shop/checkout, shop/checkout-db, payments/payments-api)",
    );
    const decision = evaluateProposal(policy, proposal({ action: 'delete_pod', target: pod, service: 'checkout', podsAffected: 1 }), context());
    expect(decision).toMatchObject({ kind: 'require_approval', approvals: 2, approverGroups: ['S0SREONCALL', 'S0TEAMCHECKOUT'], rule: 'delete-pod' });
    // Deleting one replacement pod after another is the same action repeated: counted per workload.
    const history = [ran('delete_pod', 'shop/pods-of/checkout', 5), ran('delete_pod', 'shop/pods-of/checkout', 2)];
    const next = proposal({ action: 'delete_pod', target: { ...pod, name: 'checkout-7f9c-q8w' }, service: 'checkout', podsAffected: 1 });
    expect(denial(evaluateProposal(policy, next, context({ history }))).code).toBe('loop');
  });

  it('never writes in protected namespaces or frozen environments, whatever the scope says', () => {
    const scope = { namespace: 'kube-system', services: ['coredns'] };
    const coredns = proposal({ action: 'rollout_restart', target: { kind: 'Deployment', namespace: 'kube-system', name: 'coredns' } });
    expect(denial(evaluateProposal(policy, coredns, context({ incidentScope: scope })))).toEqual({
      code: 'never_write',
      reason: 'refused: writes are never allowed in namespace kube-system',
    });
    const dr = proposal({ target: { kind: 'Deployment', namespace: 'shop-dr', name: 'checkout' } });
    expect(denial(evaluateProposal(policy, dr, context({ incidentScope: { namespace: 'shop-dr', services: ['checkout'] } }))).reason).toBe(
      'refused: writes are never allowed in frozen environment dr (namespace shop-dr)',
    );
  });

  it('uses the first matching rule: a deny rule above an allow rule wins', () => {
    const db = proposal({ action: 'delete_pod', target: { kind: 'Pod', namespace: 'shop', name: 'checkout-db-0' }, service: 'checkout-db', podsAffected: 1 });
    expect(evaluateProposal(policy, db, context())).toEqual({
      kind: 'deny',
      code: 'rule_forbids',
      rule: 'no-deletes-stateful',
      reason: 'refused: policy rule no-deletes-stateful forbids `delete_pod` on shop/checkout-db-0 (service checkout-db) — this service keeps state in its pods',
    });
  });

  it('uses the first matching rule: a later, broader rule does not override an earlier one', () => {
    const reordered = parsePolicy(
      `
version: 1
rules:
  - match: { actions: [scale] }
    allowed: true
    approvals: 2
    approverGroups: [S0LEADS]
  - match: {}
    allowed: true
    approverGroups: [S0SRE]
`,
      'p.yaml',
    );
    expect(evaluateProposal(reordered, proposal(), context())).toMatchObject({ kind: 'require_approval', approvals: 2, approverGroups: ['S0LEADS'], rule: 'rules[0]' });
    expect(evaluateProposal(reordered, proposal({ action: 'rollout_restart' }), context())).toMatchObject({ approvals: 1, approverGroups: ['S0SRE'], rule: 'rules[1]' });
  });

  it('caps the blast radius in pods and workloads', () => {
    expect(denial(evaluateProposal(policy, proposal({ podsAffected: 24 }), context()))).toEqual({
      code: 'blast_radius',
      reason: 'refused: blast radius 24 pods exceeds the cap of 10',
    });
    expect(denial(evaluateProposal(policy, proposal({ workloadsAffected: 2 }), context())).reason).toBe(
      'refused: blast radius 2 workloads exceeds the cap of 1',
    );
    expect(denial(evaluateProposal(policy, proposal({ podsAffected: Number.NaN }), context())).code).toBe('invalid_proposal');
  });

  it('refuses risk above the rule maximum and proposals without a valid risk', () => {
    expect(denial(evaluateProposal(policy, proposal({ risk: 85 }), context()))).toEqual({
      code: 'risk_too_high',
      reason: 'refused: risk 85/100 exceeds the maximum of 80 that policy rule prod-scale-restart allows',
    });
    expect(denial(evaluateProposal(policy, proposal({ risk: 120 }), context())).reason).toBe('refused: `scale` on shop/checkout has no valid risk score');
  });

  it('stops at the runaway-loop limit and tells the responder to escalate', () => {
    const history = [ran('rollout_restart', checkout, 5), ran('rollout_restart', checkout, 20, 'failed')];
    expect(denial(evaluateProposal(policy, proposal({ action: 'rollout_restart' }), context({ history })))).toEqual({
      code: 'loop',
      reason: 'refused: the same `rollout_restart` on shop/checkout already ran 2 times in the last 30 min (runaway-loop stop) — escalate to a human',
    });
  });

  it('counts only the same action on the same target inside the loop window', () => {
    const restart = proposal({ action: 'rollout_restart' });
    const outsideWindow = [ran('rollout_restart', checkout, 45), ran('rollout_restart', checkout, 10)];
    expect(evaluateProposal(policy, restart, context({ history: outsideWindow })).kind).toBe('require_approval');
    const otherActionOrTarget = [ran('rollout_restart', checkout, 10), ran('scale', checkout, 5), ran('rollout_restart', 'shop/deployment/storefront', 5)];
    expect(evaluateProposal(policy, restart, context({ history: otherActionOrTarget })).kind).toBe('require_approval');
  });

  it('rate-limits any write on the same target', () => {
    const history = [ran('scale', checkout, 50), ran('rollout_restart', checkout, 40), ran('scale', checkout, 10)];
    expect(denial(evaluateProposal(policy, proposal({ action: 'rollout_restart' }), context({ history })))).toEqual({
      code: 'rate_limit',
      reason: 'refused: shop/checkout was already changed 3 times in the last 1 h (rate limit: 3 per 1 h)',
    });
    const older = [ran('scale', checkout, 70), ran('rollout_restart', checkout, 40), ran('scale', checkout, 10)];
    expect(evaluateProposal(policy, proposal({ action: 'rollout_restart' }), context({ history: older })).kind).toBe('require_approval');
  });

  it('enforces the per-incident mutation budget', () => {
    expect(denial(evaluateProposal(policy, proposal(), context({ incidentMutations: 5 })))).toEqual({
      code: 'budget',
      reason: 'refused: this incident has used its mutation budget (5 of 5 changes) — escalate to a human',
    });
    expect(evaluateProposal(policy, proposal(), context({ incidentMutations: 4 })).kind).toBe('require_approval');
  });

  it('honours the kill switches before anything else', () => {
    expect(denial(evaluateProposal(policy, proposal(), context({ stopped: { global: false, incident: true } })))).toEqual({
      code: 'stopped',
      reason: 'refused: Vigil is stopped for this incident (/sre resume to continue)',
    });
    expect(denial(evaluateProposal(policy, proposal({ action: 'nonsense' }), context({ stopped: { global: true, incident: false } })))).toEqual({
      code: 'stopped',
      reason: 'refused: Vigil is stopped for all incidents by an admin (an admin can resume it)',
    });
  });

  it('re-evaluated at execution time, an approved action is refused once the limits are reached', () => {
    const atProposal = evaluateProposal(policy, proposal({ action: 'rollout_restart' }), context());
    expect(atProposal.kind).toBe('require_approval');
    // Meanwhile another approval ran the same restart twice.
    const atExecution = evaluateProposal(policy, proposal({ action: 'rollout_restart' }), context({ history: [ran('rollout_restart', checkout, 2), ran('rollout_restart', checkout, 1)] }));
    expect(denial(atExecution).code).toBe('loop');
  });

  it('resolves `owner` approvers from the service catalog, and refuses when there is no owner', () => {
    const flag = proposal({ action: 'flip_flag', target: { kind: 'Flag', namespace: 'shop', name: 'new-checkout-flow' }, service: 'checkout', params: { flag: 'new-checkout-flow', to: 'off' }, podsAffected: 0 });
    expect(evaluateProposal(policy, flag, context({ serviceOwner: 'S0TEAMCHECKOUT' }))).toMatchObject({
      kind: 'require_approval',
      approverGroups: ['S0TEAMCHECKOUT'],
      rule: 'flags',
    });
    expect(denial(evaluateProposal(policy, flag, context()))).toEqual({
      code: 'no_owner',
      reason: "refused: `flip_flag` on shop/new-checkout-flow (service checkout) needs its owning team's approval, but the service catalog names no owner for checkout",
    });
  });

  it('flips only flags, and reverts only repositories, the catalog gives the proposal’s service', () => {
    const flip = (flag: string) => proposal({ action: 'flip_flag', target: { kind: 'FeatureFlag', namespace: 'shop', name: flag }, service: 'checkout', params: { flag, to: 'off' }, podsAffected: 0 });
    expect(evaluateProposal(policy, flip('new-checkout-flow'), context({ serviceOwner: 'S0TEAMCHECKOUT' })).kind).toBe('require_approval');
    // A model (or an injected log line) naming another team's kill switch is refused before any rule.
    expect(denial(evaluateProposal(policy, flip('payments-kill-switch'), context({ serviceOwner: 'S0TEAMCHECKOUT' })))).toEqual({
      code: 'out_of_scope',
      reason: "refused: flag payments-kill-switch is not one of checkout's flags in the service catalog (new-checkout-flow); Vigil changes only flags the catalog gives the incident's services",
    });
    const revert = (repo: string) => proposal({ action: 'revert_pr', target: { kind: 'PullRequest', namespace: 'shop', name: `${repo}#7` }, service: 'checkout', params: { repo, number: 7 }, podsAffected: 0 });
    expect(denial(evaluateProposal(policy, revert('acme/payments'), context())).reason).toBe(
      "refused: acme/payments is not checkout's repository in the service catalog (acme/checkout); Vigil reverts only changes in the incident's services' repositories",
    );
    expect(denial(evaluateProposal(policy, flip('new-checkout-flow'), context({ incidentScope: { namespace: 'shop', services: ['checkout'] } }))).reason).toContain('(none listed)');
  });

  it('computes whether the requester may approve their own action from the rule and the risk', () => {
    const scope = { namespace: 'shop-staging', services: ['checkout'] };
    const staging = { kind: 'Deployment', namespace: 'shop-staging', name: 'checkout' };
    expect(evaluateProposal(policy, proposal({ target: staging, requestedBy: 'U0BOB', risk: 40 }), context({ incidentScope: scope }))).toMatchObject({ selfApprove: true });
    expect(evaluateProposal(policy, proposal({ target: staging, requestedBy: 'U0BOB', risk: 50 }), context({ incidentScope: scope }))).toMatchObject({ selfApprove: false });
  });

  it('knows who may use the global stop', () => {
    expect(isPolicyAdmin(policy, 'U0ADMIN1')).toBe(true);
    expect(isPolicyAdmin(policy, 'U0BOB')).toBe(false);
    expect(isPolicyAdmin(READ_ONLY_POLICY, 'U0ADMIN1')).toBe(false);
  });
});

import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { evaluateApproval, evaluateProposal, loadPolicy, targetKey } from '../../src/policy/index.js';
import { context, proposal, ran } from './builders.js';

/** The shipped example must load and say what its comments promise. */
const policy = loadPolicy(fileURLToPath(new URL('../../deploy/policy.example.yaml', import.meta.url)));

const pod = (name: string, service: string) => proposal({ action: 'delete_pod', target: { kind: 'Pod', namespace: 'shop', name }, service, podsAffected: 1 });

describe('deploy/policy.example.yaml', () => {
  it('production scale and restart need one on-call approval', () => {
    expect(evaluateProposal(policy, proposal(), context())).toMatchObject({ kind: 'require_approval', approvals: 1, approverGroups: ['S0SREONCALL'], rule: 'prod-scale-restart' });
    const decision = evaluateProposal(policy, proposal({ action: 'rollout_restart', requestedBy: 'U0BOB' }), context());
    expect(evaluateApproval(decision, { userId: 'U0ALICE', userGroups: ['S0SREONCALL'], requestedBy: 'U0BOB', risk: 22 }, [])).toEqual({ kind: 'accepted', remaining: 0 });
    expect(evaluateApproval(decision, { userId: 'U0BOB', userGroups: ['S0SREONCALL'], requestedBy: 'U0BOB', risk: 22 }, [])).toMatchObject({ code: 'self_approval' });
  });

  it('a rollback needs two approvals', () => {
    const decision = evaluateProposal(policy, proposal({ action: 'rollout_undo', params: { toRevision: 6 } }), context());
    expect(decision).toMatchObject({ kind: 'require_approval', approvals: 2, approverGroups: ['S0SREONCALL', 'S0SRELEADS'], rule: 'prod-rollback' });
    expect(evaluateApproval(decision, { userId: 'U0ALICE', userGroups: ['S0SREONCALL'], requestedBy: 'vigil', risk: 35 }, [])).toEqual({ kind: 'accepted', remaining: 1 });
  });

  it('a ConfigMap restore is a rollback: two approvals; judged by its readers, each in scope, at most three', () => {
    const cm = (readers?: string[]) =>
      proposal({ action: 'restore_config', target: { kind: 'ConfigMap', namespace: 'shop', name: 'checkout-config' }, params: { kind: 'ConfigMap', name: 'checkout-config' }, podsAffected: 3, ...(readers ? { readers, service: readers[0], workloadsAffected: Math.max(1, readers.length) } : {}) });
    // Before planning only the namespace is known; after, every reader must be in the incident's scope.
    expect(evaluateProposal(policy, cm(), context())).toMatchObject({ kind: 'require_approval', approvals: 2, approverGroups: ['S0SREONCALL', 'S0SRELEADS'], rule: 'prod-restore-config' });
    expect(evaluateProposal(policy, cm(['checkout', 'checkout-db']), context())).toMatchObject({ kind: 'require_approval', rule: 'prod-restore-config' });
    expect(evaluateProposal(policy, cm(['checkout', 'storefront']), context())).toEqual({
      kind: 'deny',
      code: 'out_of_scope',
      reason: "refused: `restore_config` on shop/checkout-config (read by checkout, storefront) is outside this incident's scope (shop/checkout, shop/checkout-db, payments/payments-api)",
    });
    expect(evaluateProposal(policy, cm([]), context())).toMatchObject({ code: 'out_of_scope', reason: expect.stringContaining('(read by no workload)') });
    expect(evaluateProposal(policy, { ...cm(), target: { kind: 'ConfigMap', namespace: 'billing', name: 'x' } }, context())).toMatchObject({ code: 'out_of_scope' });
    const four = context({ incidentScope: { namespace: 'shop', services: ['a', 'b', 'c', 'd'] } });
    expect(evaluateProposal(policy, cm(['a', 'b', 'c', 'd']), four)).toMatchObject({ code: 'blast_radius', reason: 'refused: blast radius 4 workloads exceeds the cap of 3' });
  });

  it('deletes pods of stateless services only, one pod at a time', () => {
    expect(evaluateProposal(policy, pod('checkout-7f9c-x2x', 'checkout'), context())).toMatchObject({ kind: 'require_approval', rule: 'prod-delete-pod-stateless' });
    expect(evaluateProposal(policy, pod('checkout-db-0', 'checkout-db'), context())).toMatchObject({ kind: 'deny', code: 'rule_forbids', rule: 'no-pod-deletes-stateful' });
    expect(evaluateProposal(policy, { ...pod('checkout-7f9c-x2x', 'checkout'), podsAffected: 3 }, context())).toMatchObject({
      kind: 'deny',
      reason: 'refused: blast radius 3 pods exceeds the cap of 1',
    });
  });

  it('flips flags only with the owning team’s approval', () => {
    const flag = proposal({ action: 'flip_flag', target: { kind: 'Flag', namespace: 'shop', name: 'new-checkout-flow' }, service: 'checkout', params: { flag: 'new-checkout-flow', to: 'off' }, podsAffected: 0 });
    const decision = evaluateProposal(policy, flag, context({ serviceOwner: 'S0TEAMCHECKOUT' }));
    expect(decision).toMatchObject({ kind: 'require_approval', approverGroups: ['S0TEAMCHECKOUT'] });
    expect(evaluateApproval(decision, { userId: 'U0ALICE', userGroups: ['S0SREONCALL'], requestedBy: 'vigil', risk: 30 }, [])).toMatchObject({ code: 'not_in_group' });
  });

  it('never writes in kube-system or monitoring', () => {
    for (const namespace of ['kube-system', 'monitoring']) {
      const p = proposal({ action: 'rollout_restart', target: { kind: 'Deployment', namespace, name: 'agent' } });
      expect(evaluateProposal(policy, p, context({ incidentScope: { namespace, services: ['agent'] } }))).toEqual({
        kind: 'deny',
        code: 'never_write',
        reason: `refused: writes are never allowed in namespace ${namespace}`,
      });
    }
  });

  it('refuses image and resource edits, and what no rule names', () => {
    expect(evaluateProposal(policy, proposal({ action: 'set_image' }), context())).toMatchObject({ code: 'rule_forbids' });
    expect(evaluateProposal(policy, proposal({ action: 'suspend_cronjob' }), context())).toMatchObject({ code: 'no_rule' });
  });

  it('refuses the injected cross-namespace scale and the third restart in 30 minutes', () => {
    const injected = proposal({ target: { kind: 'Deployment', namespace: 'payments', name: 'payments' }, params: { replicas: 0 } });
    expect(evaluateProposal(policy, injected, context({ incidentScope: { namespace: 'shop', services: ['checkout'] } }))).toMatchObject({ code: 'out_of_scope' });
    const key = targetKey({ kind: 'Deployment', namespace: 'shop', name: 'checkout' });
    const history = [ran('rollout_restart', key, 25), ran('rollout_restart', key, 3)];
    expect(evaluateProposal(policy, proposal({ action: 'rollout_restart' }), context({ history }))).toMatchObject({ code: 'loop' });
  });
});

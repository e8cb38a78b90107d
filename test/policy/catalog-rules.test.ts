/**
 * The example policy's rules for the actions the catalog grew for the claimed fault families:
 * restore_object (two approvals, judged by the workloads behind the object), delete_network_policy (two
 * approvals in every environment, never self-approved), cordon_node and pause_chaos (one on-call
 * approval, judged by the incident's namespace).
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { evaluateApproval, evaluateProposal, loadPolicy } from '../../src/policy/index.js';
import { context, proposal } from './builders.js';

const policy = loadPolicy(fileURLToPath(new URL('../../deploy/policy.example.yaml', import.meta.url)));
const withReaders = (readers?: string[]) => (readers ? { readers, service: readers[0], workloadsAffected: Math.max(1, readers.length) } : {});

describe('deploy/policy.example.yaml: the new catalog actions', () => {
  it('restore_object needs two approvals and every workload behind the object in scope', () => {
    const svc = (readers?: string[]) => proposal({ action: 'restore_object', target: { kind: 'Service', namespace: 'shop', name: 'checkout' }, params: { kind: 'Service', name: 'checkout' }, podsAffected: 3, ...withReaders(readers) });
    expect(evaluateProposal(policy, svc(), context())).toMatchObject({ kind: 'require_approval', approvals: 2, approverGroups: ['S0SREONCALL', 'S0SRELEADS'], rule: 'prod-restore-object' });
    expect(evaluateProposal(policy, svc(['checkout']), context())).toMatchObject({ kind: 'require_approval', rule: 'prod-restore-object' });
    expect(evaluateProposal(policy, svc(['checkout', 'storefront']), context())).toMatchObject({ kind: 'deny', code: 'out_of_scope', reason: expect.stringContaining('(affecting checkout, storefront)') });
    expect(evaluateProposal(policy, svc([]), context())).toMatchObject({ code: 'out_of_scope' });
    // An Ingress named for nothing in the catalog is judged by its backends, not its name.
    const ing = proposal({ action: 'restore_object', target: { kind: 'Ingress', namespace: 'shop', name: 'shop-edge' }, params: { kind: 'Ingress', name: 'shop-edge' }, podsAffected: 3, ...withReaders(['checkout']) });
    expect(evaluateProposal(policy, ing, context())).toMatchObject({ kind: 'require_approval', rule: 'prod-restore-object' });
  });

  it('delete_network_policy needs two approvals, in staging too, and never the requester’s own', () => {
    const del = (namespace: string) => proposal({ action: 'delete_network_policy', target: { kind: 'NetworkPolicy', namespace, name: 'deny-egress' }, params: { name: 'deny-egress' }, podsAffected: 3, requestedBy: 'U0BOB' });
    const prod = evaluateProposal(policy, del('shop'), context());
    expect(prod).toMatchObject({ kind: 'require_approval', approvals: 2, approverGroups: ['S0SREONCALL', 'S0SRELEADS'], rule: 'delete-network-policy', selfApprove: false });
    expect(evaluateApproval(prod, { userId: 'U0BOB', userGroups: ['S0SREONCALL'], requestedBy: 'U0BOB', risk: 90 }, [])).toMatchObject({ code: 'self_approval' });
    expect(evaluateApproval(prod, { userId: 'U0ALICE', userGroups: ['S0SREONCALL'], requestedBy: 'U0BOB', risk: 90 }, [])).toEqual({ kind: 'accepted', remaining: 1 });
    const staging = context({ incidentScope: { namespace: 'shop-staging', services: ['checkout'] } });
    expect(evaluateProposal(policy, del('shop-staging'), staging)).toMatchObject({ kind: 'require_approval', approvals: 2, rule: 'delete-network-policy' });
  });

  it('cordon_node and pause_chaos: one on-call approval, in scope by the incident’s namespace', () => {
    const cordon = (namespace: string) => proposal({ action: 'cordon_node', target: { kind: 'Node', namespace, name: 'node-3' }, params: {}, podsAffected: 12 });
    expect(evaluateProposal(policy, cordon('shop'), context())).toMatchObject({ kind: 'require_approval', approvals: 1, approverGroups: ['S0SREONCALL'], rule: 'cordon-node' });
    expect(evaluateProposal(policy, cordon('billing'), context())).toMatchObject({ code: 'out_of_scope' });
    expect(evaluateProposal(policy, cordon('kube-system'), context({ incidentScope: { namespace: 'kube-system', services: ['coredns'] } }))).toMatchObject({ kind: 'deny' });
    const pause = proposal({ action: 'pause_chaos', target: { kind: 'PodChaos', namespace: 'shop', name: 'checkout-kill' }, params: {}, podsAffected: 0 });
    expect(evaluateProposal(policy, pause, context())).toMatchObject({ kind: 'require_approval', approvals: 1, approverGroups: ['S0SREONCALL'], rule: 'pause-chaos' });
  });
});

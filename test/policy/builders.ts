import type { ActionProposal, ExecutionRecord, PolicyContext } from '../../src/policy/index.js';

/** A checkout incident at 14:00 UTC; tests override what they exercise. */
export const NOW = new Date('2025-03-04T14:00:00Z');

export function minutesAgo(n: number): Date {
  return new Date(NOW.getTime() - n * 60_000);
}

export function proposal(over: Partial<ActionProposal> = {}): ActionProposal {
  return {
    action: 'scale',
    target: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
    params: { replicas: 3 },
    risk: 22,
    requestedBy: 'vigil',
    incidentId: 'inc-1',
    podsAffected: 3,
    workloadsAffected: 1,
    ...over,
  };
}

export function context(over: Partial<PolicyContext> = {}): PolicyContext {
  return {
    incidentScope: {
      namespace: 'shop',
      services: ['checkout', 'checkout-db', 'payments/payments-api'],
      owned: { 'shop/checkout': { flags: ['new-checkout-flow'], repo: 'acme/checkout' } },
    },
    history: [],
    incidentMutations: 0,
    stopped: { global: false, incident: false },
    now: NOW,
    ...over,
  };
}

export function ran(action: string, targetKey: string, minutes: number, outcome: ExecutionRecord['outcome'] = 'succeeded'): ExecutionRecord {
  return { action, targetKey, at: minutesAgo(minutes), outcome };
}

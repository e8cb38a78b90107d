import type { V1NetworkPolicy } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { KubeEvidence } from '../../src/evidence/kubernetes/gather.js';
import { emptySurroundings } from '../../src/evidence/kubernetes/surroundings.js';
import type { LogsEvidence } from '../../src/evidence/loki/types.js';
import type { TriageInput } from '../../src/triage/analyzer.js';
import { allowed, networkPolicy, selectorMatches } from '../../src/triage/analyzers/network-policy.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const at = (min: number) => new Date(ONSET.getTime() + min * 60_000);

const denyEgress = (createdMin: number): V1NetworkPolicy => ({
  metadata: {
    name: 'default-deny-egress',
    namespace: 'shop',
    creationTimestamp: at(createdMin),
    managedFields: [{ manager: 'kubectl-client-side-apply', operation: 'Update', time: at(createdMin), fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:policyTypes': {} } } }],
  },
  spec: { podSelector: {}, policyTypes: ['Egress'] },
});

const allowDnsAndPayments: V1NetworkPolicy = {
  metadata: { name: 'allow-dns-payments', namespace: 'shop', creationTimestamp: at(-2) },
  spec: {
    podSelector: { matchLabels: { app: 'checkout' } },
    policyTypes: ['Egress'],
    egress: [
      { to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } }, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }], ports: [{ protocol: 'UDP', port: 53 }, { protocol: 'TCP', port: 53 }] },
      { to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'payments' } } }], ports: [{ protocol: 'TCP', port: 8080 }] },
    ],
  },
};

function kube(policies: V1NetworkPolicy[], over: Partial<KubeEvidence> = {}): KubeEvidence {
  return {
    ...emptySurroundings(),
    onset: ONSET,
    target: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
    workload: {
      metadata: { name: 'checkout', namespace: 'shop' },
      spec: {
        selector: { matchLabels: { app: 'checkout' } },
        template: { metadata: { labels: { app: 'checkout' } }, spec: { containers: [{ name: 'checkout', ports: [{ containerPort: 8080 }], env: [{ name: 'PAYMENTS_URL', value: 'http://payments-api.payments.svc:8080' }] }] } },
      },
    },
    replicaSets: [],
    pods: [],
    services: [{ service: { metadata: { name: 'checkout' } } }],
    events: [],
    related: [],
    dependents: [{ kind: 'Deployment', name: 'storefront', via: 'env CHECKOUT_URL' }],
    namespacePods: [{ metadata: { name: 'storefront-7f8b9c6d5e-r2t6x', labels: { app: 'storefront' } } }],
    unhealthyPods: [],
    warningEvents: [],
    gaps: [],
    server: 'https://k8s.test',
    networkPolicies: policies,
    ...over,
  };
}

const dnsTimeouts: LogsEvidence = {
  summaries: [
    {
      selector: '{namespace="shop", app="checkout"}',
      query: '{namespace="shop", app="checkout"}',
      range: { from: at(-30), to: ONSET },
      status: 'success',
      totalLines: 300,
      sampled: false,
      patterns: [],
      errorPatterns: [],
      newSinceOnset: [
        {
          template: 'level=error msg="payment intent failed" error="dial tcp: lookup payments-api.payments.svc on <IP>: i/o timeout"',
          example: 'level=error msg="payment intent failed" error="dial tcp: lookup payments-api.payments.svc on 10.96.0.10:53: i/o timeout"',
          count: 30,
          first: at(-2.9),
          level: 'error',
          change: { kind: 'new', countBefore: 0, countAfter: 30, perMinuteBefore: 0, perMinuteAfter: 12 },
        },
      ],
      citation: { source: 'loki', ref: '{namespace="shop", app="checkout"}' },
    },
  ],
};

const input = (k: KubeEvidence, logs?: LogsEvidence): TriageInput => ({ alert: { labels: {}, labelValues: [] } as unknown as TriageInput['alert'], onset: ONSET, kube: k, changes: [], ...(logs ? { logs } : {}) });

describe('network-policy', () => {
  it('blames a default-deny egress policy created right before the onset: DNS first, payments too', () => {
    const [f] = networkPolicy.analyze(input(kube([denyEgress(-3)]), dnsTimeouts));
    expect(f).toMatchObject({
      status: 'supported',
      component: { kind: 'NetworkPolicy', namespace: 'shop', name: 'default-deny-egress' },
      facts: { policy: 'default-deny-egress', direction: 'egress', blockedPeer: 'kube-system/kube-dns', port: 53, protocol: 'UDP', editor: 'kubectl-client-side-apply' },
    });
    expect(f!.facts!['blockedPeers']).toContain('payments/payments-api:8080/TCP');
    expect(f!.confidence).toBeGreaterThanOrEqual(0.9);
    // Added right before the onset, no earlier spec known: deleting it is the proposal (a security decision: two approvers).
    expect(f!.mitigation).toMatchObject({ action: 'delete_network_policy', target: { kind: 'NetworkPolicy', namespace: 'shop', name: 'default-deny-egress' }, params: { name: 'default-deny-egress' } });
    expect(f!.supporting.some((e) => e.kind === 'log')).toBe(true);
  });

  it('rules out a recent policy when another policy (they are additive) allows DNS and the dependency', () => {
    const [f] = networkPolicy.analyze(input(kube([denyEgress(-3), allowDnsAndPayments]), dnsTimeouts));
    expect(f).toMatchObject({ status: 'ruled_out' });
    expect(f!.reason).toMatch(/still allowed/);
  });

  it('is inconclusive for a blocking policy that has been in place for days', () => {
    const [f] = networkPolicy.analyze(input(kube([denyEgress(-5 * 24 * 60)])));
    expect(f).toMatchObject({ status: 'inconclusive' });
  });

  it('says nothing without policies selecting the target, or when labels make the verdict unknown', () => {
    const other: V1NetworkPolicy = { ...denyEgress(-3), spec: { podSelector: { matchLabels: { app: 'reports' } }, policyTypes: ['Egress'] } };
    expect(networkPolicy.analyze(input(kube([other])))).toEqual([]);
    const byTeamLabel: V1NetworkPolicy = { ...denyEgress(-3), spec: { podSelector: {}, policyTypes: ['Egress'], egress: [{ to: [{ namespaceSelector: { matchLabels: { team: 'platform' } } }] }] } };
    // DNS and payments depend on namespace labels Vigil does not read: unknown, never reported as blocked.
    expect(networkPolicy.analyze(input(kube([byTeamLabel])))).toEqual([]);
  });

  it('checks ingress from callers by their pod labels', () => {
    const ingressOnlyFromApi: V1NetworkPolicy = {
      metadata: { name: 'checkout-ingress', namespace: 'shop', creationTimestamp: at(-4) },
      spec: { podSelector: { matchLabels: { app: 'checkout' } }, policyTypes: ['Ingress'], ingress: [{ _from: [{ podSelector: { matchLabels: { app: 'api-gateway' } } }], ports: [{ protocol: 'TCP', port: 8080 }] }] },
    };
    const [f] = networkPolicy.analyze(input(kube([ingressOnlyFromApi])));
    expect(f).toMatchObject({ status: 'supported', facts: { direction: 'ingress', blockedPeer: 'shop/storefront', port: 8080 } });
  });

  it('names the peer the failing connections are about, not the first one a default-deny cuts', () => {
    const k = kube([denyEgress(-3)]);
    k.workload!.spec!.template.spec!.containers[0]!.env = [{ name: 'MQ_URL', value: 'amqp://mq.rabbitmq.svc:5672' }, { name: 'DB_HOST', value: 'postgres://billing-pg-rw.databases.svc:5432/billing' }];
    const db: LogsEvidence = { summaries: [{ ...dnsTimeouts.summaries[0]!, newSinceOnset: [{ ...dnsTimeouts.summaries[0]!.newSinceOnset[0]!, template: 'acquire db conn: failed to connect: dial tcp 10.96.44.12:5432: i/o timeout', example: 'acquire db conn: failed to connect to (billing-pg-rw.databases.svc): dial tcp 10.96.44.12:5432: i/o timeout' }] }] };
    const [f] = networkPolicy.analyze(input(k, db));
    expect(f!.facts).toMatchObject({ blockedPeer: 'databases/billing-pg-rw', port: 5432 });
    expect(f!.facts!['blockedPeers']).toContain('rabbitmq/mq:5672/TCP');
  });

  it('also learns needed dependencies from failing log lines', () => {
    const noEnv = kube([denyEgress(-3)]);
    noEnv.workload!.spec!.template.spec!.containers[0]!.env = [];
    const ledger: LogsEvidence = { summaries: [{ ...dnsTimeouts.summaries[0]!, newSinceOnset: [{ ...dnsTimeouts.summaries[0]!.newSinceOnset[0]!, example: 'error="Post \\"http://ledger.finance.svc:9000/v1\\": dial tcp 10.96.3.3:9000: i/o timeout"' }] }] };
    const [f] = networkPolicy.analyze(input(noEnv, ledger));
    expect(f!.facts!['blockedPeers']).toContain('finance/ledger:9000/TCP');
    expect(f!.facts!['blockedPeers']).not.toContain('payments/payments-api');
  });

  it('evaluates selectors and ports', () => {
    expect(selectorMatches({ matchExpressions: [{ key: 'app', operator: 'In', values: ['checkout'] }] }, { app: 'checkout' })).toBe('yes');
    expect(selectorMatches({ matchLabels: { app: 'x' } }, undefined)).toBe('unknown');
    const dns = { label: 'kube-system/kube-dns', namespace: 'kube-system', labels: { 'k8s-app': 'kube-dns' }, port: 53, protocol: 'UDP' as const };
    expect(allowed([allowDnsAndPayments], 'Egress', dns)).toBe('yes');
    expect(allowed([denyEgress(-3)], 'Egress', dns)).toBe('no');
  });
});

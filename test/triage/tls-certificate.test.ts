import type { V1Ingress } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { KubeEvidence } from '../../src/evidence/kubernetes/gather.js';
import { emptySurroundings, type TlsCertificate } from '../../src/evidence/kubernetes/surroundings.js';
import type { TriageInput } from '../../src/triage/analyzer.js';
import { tlsCertificate } from '../../src/triage/analyzers/tls-certificate.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const at = (min: number) => new Date(ONSET.getTime() + min * 60_000);

const cert = (notAfterMin: number, usedBy = ['storefront']): TlsCertificate => ({
  secret: 'shop-tls',
  namespace: 'shop',
  subject: 'CN=shop.example.com',
  sans: ['shop.example.com', 'www.shop.example.com'],
  issuer: "CN=R11, O=Let's Encrypt, C=US",
  notBefore: at(notAfterMin - 90 * 24 * 60),
  notAfter: at(notAfterMin),
  usedBy,
});

const ingress = (name: string, service: string): V1Ingress => ({
  metadata: { name, namespace: 'shop' },
  spec: {
    tls: [{ hosts: ['shop.example.com', 'www.shop.example.com'], secretName: 'shop-tls' }],
    rules: [{ host: 'shop.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: service, port: { number: 8080 } } } }] } }],
  },
});

function kube(over: Partial<KubeEvidence> = {}): KubeEvidence {
  return {
    ...emptySurroundings(),
    onset: ONSET,
    target: { kind: 'Deployment', namespace: 'shop', name: 'storefront' },
    replicaSets: [],
    pods: [],
    services: [{ service: { metadata: { name: 'storefront' } } }],
    events: [
      {
        metadata: { name: 'shop-tls-9.1', namespace: 'shop' },
        involvedObject: { kind: 'CertificateRequest', name: 'shop-tls-9', namespace: 'shop' },
        reason: 'Failed',
        message: 'Failed to finalize Order: 429 urn:ietf:params:acme:error:rateLimited',
        type: 'Warning',
        lastTimestamp: at(-20),
      },
    ],
    related: [],
    dependents: [],
    unhealthyPods: [],
    warningEvents: [],
    gaps: [],
    server: 'https://k8s.test',
    ingresses: [ingress('storefront', 'storefront')],
    certificates: [cert(-10)],
    ...over,
  };
}

const input = (k: KubeEvidence): TriageInput => ({ alert: { labels: {}, labelValues: [] } as unknown as TriageInput['alert'], onset: ONSET, kube: k, changes: [] });

describe('tls-certificate', () => {
  it('reports the expired certificate of the target\'s Ingress with hosts, notAfter and no mitigation', () => {
    const [f] = tlsCertificate.analyze(input(kube()));
    expect(f).toMatchObject({
      status: 'supported',
      component: { kind: 'Secret', namespace: 'shop', name: 'shop-tls' },
      facts: { secretName: 'shop-tls', notAfter: '2026-03-01T11:50:00Z', hosts: 'shop.example.com,www.shop.example.com', ingress: 'storefront', daysLeft: -0.01 },
    });
    expect(f!.confidence).toBeGreaterThanOrEqual(0.9);
    expect(f!.mitigation).toBeUndefined();
    expect(f!.affected).toContainEqual({ kind: 'Ingress', namespace: 'shop', name: 'storefront' });
    expect(f!.supporting.some((e) => /rateLimited/.test(e.summary))).toBe(true);
    expect(f!.mechanism).toMatch(/Renew it/);
  });

  it('warns (open, low confidence) about a certificate that expires soon, and ignores one valid for months', () => {
    const [soon] = tlsCertificate.analyze(input(kube({ certificates: [cert(3 * 24 * 60)] })));
    expect(soon).toMatchObject({ status: 'open' });
    expect(soon!.confidence).toBeLessThan(0.5);
    expect(tlsCertificate.analyze(input(kube({ certificates: [cert(60 * 24 * 60)] })))).toEqual([]);
  });

  it('leaves alone an expired certificate served by an Ingress that does not route to the target', () => {
    expect(tlsCertificate.analyze(input(kube({ ingresses: [ingress('grafana', 'grafana')], certificates: [cert(-10, ['grafana'])] })))).toEqual([]);
  });
});

describe('tls-certificate: a valid certificate from an issuer no client trusts', () => {
  const staging = (issuedMin: number, dn = '(STAGING) Wannabe Watercress R11'): TlsCertificate => ({ ...cert(90 * 24 * 60), issuer: `CN=${dn}, O=(STAGING) Let's Encrypt, C=US`, notBefore: at(issuedMin) });
  const withCertManager = (k: KubeEvidence, server: string): TriageInput => ({
    ...input(k),
    cluster: {
      snapshot: {
        custom: {
          Certificate: [{ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'shop-cert', namespace: 'shop' }, spec: { secretName: 'shop-tls', issuerRef: { kind: 'ClusterIssuer', name: 'letsencrypt-staging' } } }],
          ClusterIssuer: [{ apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'letsencrypt-staging' }, spec: { acme: { server } } }],
        },
      },
    } as never,
  });

  it('localises a staging re-issue to its Certificate, with the issuer it now comes from', () => {
    const [f] = tlsCertificate.analyze(withCertManager(kube({ events: [], certificates: [staging(-12)] }), 'https://acme-staging-v02.api.letsencrypt.org/directory'));
    expect(f).toMatchObject({ status: 'supported', family: 'tls-certificate', component: { kind: 'Certificate', namespace: 'shop', name: 'shop-cert' }, facts: { secretName: 'shop-tls', certificate: 'shop-cert', issuer: 'letsencrypt-staging', hosts: 'shop.example.com,www.shop.example.com', ingress: 'storefront' } });
    expect(f!.supporting.some((e) => e.summary.includes('ACME server https://acme-staging-v02') && e.citation.ref.includes('letsencrypt-staging'))).toBe(true);
  });

  it('knows a test CA by its name alone, and is only open about one issued long ago', () => {
    expect(tlsCertificate.analyze(input(kube({ events: [], certificates: [staging(-60)] })))[0]).toMatchObject({ status: 'supported', component: { kind: 'Secret', name: 'shop-tls' } });
    expect(tlsCertificate.analyze(input(kube({ events: [], certificates: [staging(-30 * 24 * 60)] })))[0]).toMatchObject({ status: 'open' });
    // A production chain, valid for months: nothing to say.
    expect(tlsCertificate.analyze(input(kube({ events: [], certificates: [cert(90 * 24 * 60)] })))).toEqual([]);
  });
});

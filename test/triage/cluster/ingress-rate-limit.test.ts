// An ingress-nginx rate limit written by the Ingress's latest change (its managedFields entry at that
// time owns the annotation) is raised; one owned by an older write is not this change's.
import type { V1Ingress } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { rateLimitSetBy } from '../../../src/triage/cluster/ingress-misroute.js';

const NOW = new Date('2026-03-01T12:00:00Z');
const OLD = new Date('2025-12-01T12:00:00Z');
const owns = (...keys: string[]) => ({ 'f:metadata': { 'f:annotations': Object.fromEntries(keys.map((k) => [`f:nginx.ingress.kubernetes.io/${k}`, {}])) } });
const ingress = (latest: object, older: object): V1Ingress => ({
  metadata: {
    name: 'storefront',
    namespace: 'shop',
    annotations: { 'nginx.ingress.kubernetes.io/limit-rps': '5', 'nginx.ingress.kubernetes.io/limit-burst-multiplier': '3', 'nginx.ingress.kubernetes.io/proxy-body-size': '10m' },
    managedFields: [
      { manager: 'argocd-controller', operation: 'Update', time: NOW, fieldsType: 'FieldsV1', fieldsV1: latest },
      { manager: 'argocd-controller', operation: 'Update', time: OLD, fieldsType: 'FieldsV1', fieldsV1: older },
    ],
  },
});

describe('rateLimitSetBy', () => {
  it('finds the limit the latest change wrote, with its burst multiplier', () => {
    expect(rateLimitSetBy(ingress(owns('limit-rps', 'limit-burst-multiplier'), owns('proxy-body-size')), NOW)).toEqual({ annotation: 'nginx.ingress.kubernetes.io/limit-rps', value: '5', burst: '3' });
  });

  it('ignores a limit that an older write owns', () => {
    expect(rateLimitSetBy(ingress(owns('proxy-body-size'), owns('limit-rps')), NOW)).toBeUndefined();
  });
});

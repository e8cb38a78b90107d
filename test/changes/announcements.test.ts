import { describe, expect, it } from 'vitest';
import { parseAnnouncement } from '../../src/changes/announcements.js';

const at = new Date('2026-11-29T14:00:00Z');
const msg = (text: string, author = 'deploybot') => ({ channel: 'C0DEPLOYS', ts: '1795960000.000100', text, author, at });

describe('parseAnnouncement', () => {
  it.each([
    ['Deployed *checkout* v1.14.3 to production by <@U0ALICE|alice>', { kind: 'deploy', target: { kind: 'Service', name: 'checkout' }, after: 'v1.14.3', actor: '@U0ALICE' }],
    [':rocket: shop/payments-api@3f9c2ab deployed? no — Rolled out payments-api 3f9c2ab1 to prod', { kind: 'deploy', target: { name: 'payments-api' }, after: '3f9c2ab1' }],
    ['Application storefront has been successfully synced to 8c1d2e3f', { kind: 'deploy', target: { name: 'storefront' }, after: '8c1d2e3f' }],
    ['bob turned on flag new-checkout-flow in production', { kind: 'flag', target: { kind: 'FeatureFlag', name: 'new-checkout-flow' }, before: 'off', after: 'on', actor: 'bob' }],
    ['alice changed the flag `pricing.v2` in Production: turned targeting ON', { kind: 'flag', target: { name: 'pricing.v2' } }],
    ['running helm upgrade checkout --set replicaCount=3', { kind: 'helm_upgrade', target: { kind: 'HelmRelease', name: 'checkout' } }],
  ])('%s', (text, expected) => {
    const c = parseAnnouncement(msg(text));
    expect(c).toMatchObject({ ...expected, source: 'slack', at });
    expect(c!.citation).toMatchObject({ source: 'slack', ref: 'C0DEPLOYS/1795960000.000100' });
  });

  it.each(['lunch is here', 'who broke the build?', 'deploy freeze starts friday'])('ignores chatter: %s', (text) => {
    expect(parseAnnouncement(msg(text))).toBeUndefined();
  });
});

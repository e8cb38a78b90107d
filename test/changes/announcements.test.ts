import { describe, expect, it } from 'vitest';
import { parseAnnouncement } from '../../src/changes/announcements.js';
import { createRedactor, isPlaceholder } from '../../src/redact/index.js';
import { chars, seededRandom } from '../redact/planted.js';

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

  it('keeps the PR and the resources an argocd-notifications sync message names', () => {
    const c = parseAnnouncement(msg('Application shop-routes sync succeeded to revision c41d7e9 (orders: align route ports with container ports (#611)) - httproute.gateway.networking.k8s.io/api configured', 'Argo CD'));
    expect(c).toMatchObject({ kind: 'deploy', target: { name: 'shop-routes' }, after: 'c41d7e9', summary: 'Argo CD synced shop-routes to c41d7e9 (PR #611): httproute.gateway.networking.k8s.io/api configured' });
  });

  it('reads Flux notification-controller posts: the Kustomization, what it applied, the source revision', () => {
    const c = parseAnnouncement(msg('kustomization/mesh-config.flux-system\nDestinationRule/booking/fares configured\nrevision: main@sha1:9e4b2d1f0c6a3e85b7d24c19f8a06e3b5d7c1a92', 'Flux'));
    expect(c).toMatchObject({ kind: 'deploy', target: { name: 'mesh-config' }, after: '9e4b2d1', summary: 'Flux applied mesh-config at 9e4b2d1: DestinationRule/booking/fares configured' });
    const h = parseAnnouncement(msg('helmrelease/booking-web.booking\nHelm upgrade succeeded for release booking/booking-web.v58 with chart booking-web@2.31.0', 'Flux'));
    expect(h).toMatchObject({ kind: 'helm_upgrade', target: { kind: 'HelmRelease', namespace: 'booking', name: 'booking-web' }, after: 'booking-web@2.31.0' });
    // A Flux health alert names a Kustomization but applied nothing: not a change.
    expect(parseAnnouncement(msg('kustomization/mesh-config.flux-system\nHealth check failed after 5m0s', 'Flux'))).toBeUndefined();
  });

  it.each(['lunch is here', 'who broke the build?', 'deploy freeze starts friday'])('ignores chatter: %s', (text) => {
    expect(parseAnnouncement(msg(text))).toBeUndefined();
  });
});

describe('parseAnnouncement: redacted first, then cleaned and cut', () => {
  const redactor = createRedactor({ salt: 'announce' });
  const rng = seededRandom(5);
  const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  // Assembled at run time so the repository holds no literal token.
  const ghp = 'gh' + 'p_' + 'Q7r' + chars(rng, ALNUM, 33);
  const stripe = 'sk' + '_live_' + 'X4y' + chars(rng, ALNUM, 21);
  // Cleaning strips `_*~`, so `_ghp_…_` would read `ghp…`; the summary keeps 80 characters of the change
  // and `after` 120, so `*sk_live_…*` straddles one cut.
  const raw = `alice changed the flag pricing.v2 in production: rotated _${ghp}_ and ${'x'.repeat(60)} *${stripe}* for checkout`;
  const windows = (s: string) => Array.from({ length: s.length - 11 }, (_, i) => s.slice(i, i + 12)).concat(s.replace(/_/g, '').slice(0, 12));
  const leaked = (c: unknown, secret: string) => windows(secret).some((w) => JSON.stringify(c).includes(w));

  it('the other order leaks: cleaned and cut first, the tokens no longer match a detector', () => {
    const late = redactor.redactValue(parseAnnouncement(msg(raw)));
    expect(leaked(late, ghp) || leaked(late, stripe)).toBe(true);
  });

  it('redacted first: nothing of either token survives, and placeholders come through cleaning whole', () => {
    const c = parseAnnouncement(msg(redactor.redactText(raw)));
    expect(c).toMatchObject({ kind: 'flag', target: { name: 'pricing.v2' } });
    expect(leaked(c, ghp)).toBe(false);
    expect(leaked(c, stripe)).toBe(false);
    expect(c!.after).toContain('[REDACTED:github_token:');
    for (const p of JSON.stringify(c).match(/\[REDACTED[^\]]*\]?/g) ?? []) expect(isPlaceholder(p), p).toBe(true);
  });
});

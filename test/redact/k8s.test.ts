import { describe, expect, it } from 'vitest';
import { createRedactor } from '../../src/redact/index.js';
import { containsAnywhere } from './strings.js';

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
const b64 = (s: string): string => Buffer.from(s).toString('base64');
const PLACEHOLDER = /^\[REDACTED:k8s_secret:[0-9a-f]{8}\]$/;

function secret(name: string, password: string): Record<string, unknown> {
  const body = { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'shop' }, type: 'Opaque', data: { password: b64(password), username: b64('app') } };
  return { ...body, metadata: { ...body.metadata, annotations: { [LAST_APPLIED]: JSON.stringify(body), team: 'payments' } } };
}

describe('redactK8sObject', () => {
  it('keeps a Secret’s keys and replaces every value, including its last-applied annotation', () => {
    const r = createRedactor({ salt: 'k' });
    const out = r.redactK8sObject({ ...secret('db', 'Sup3r-s3cret'), stringData: { token: 'tok-1234567' } }) as unknown as {
      metadata: { name: string; annotations: Record<string, string> };
      data: Record<string, string>;
      stringData: Record<string, string>;
      type: string;
    };
    expect(Object.keys(out.data)).toEqual(['password', 'username']);
    expect(out.data['password']).toMatch(PLACEHOLDER);
    expect(out.data['username']).toMatch(PLACEHOLDER);
    expect(out.stringData['token']).toMatch(PLACEHOLDER);
    expect(out.metadata.name).toBe('db');
    expect(out.type).toBe('Opaque');
    expect(out.metadata.annotations['team']).toBe('payments');
    expect(out.metadata.annotations[LAST_APPLIED]).toMatch(PLACEHOLDER);
    for (const raw of ['Sup3r-s3cret', b64('Sup3r-s3cret'), 'tok-1234567']) expect(containsAnywhere(out, raw)).toBe(false);
    expect(r.stats()).toEqual({ k8s_secret: 4 });
  });

  it('hashes decoded data, so a Secret value and the same password elsewhere share a placeholder', () => {
    const r = createRedactor({ salt: 'k' });
    const out = r.redactK8sObject(secret('db', 'Sup3r-s3cret')) as { data: Record<string, string> };
    const hex = (s: string | undefined): string | undefined => s?.match(/:([0-9a-f]{8})\]/)?.[1];
    expect(hex(out.data['password'])).toBe(hex(r.redactText('password: Sup3r-s3cret')));
  });

  it('recognises the kind-less items of a SecretList', () => {
    const r = createRedactor({ salt: 'k' });
    const item = { metadata: { name: 'db' }, type: 'Opaque', data: { password: b64('Sup3r-s3cret') } };
    const out = r.redactK8sObject({ apiVersion: 'v1', kind: 'SecretList', items: [item] });
    expect(containsAnywhere(out, b64('Sup3r-s3cret'))).toBe(false);
    // redactValue stays strict: kind-less objects are not guessed at, but a kind: Secret is.
    expect(containsAnywhere(r.redactValue({ evidence: [secret('db', 'Sup3r-s3cret')] }), b64('Sup3r-s3cret'))).toBe(false);
  });

  it('redacts the last-applied annotation of other objects structurally', () => {
    const r = createRedactor({ salt: 'k' });
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'checkout', annotations: {} as Record<string, string> },
      spec: { template: { spec: { containers: [{ name: 'app', env: [{ name: 'STRIPE_KEY_PASSWORD', value: 'pw-Qq12zz' }, { name: 'PORT', value: '8080' }] }] } } },
    };
    deployment.metadata.annotations[LAST_APPLIED] = JSON.stringify(deployment);
    const out = r.redactK8sObject(deployment) as typeof deployment;
    expect(containsAnywhere(out, 'pw-Qq12zz')).toBe(false);
    const applied = JSON.parse(out.metadata.annotations[LAST_APPLIED] ?? '{}') as typeof deployment;
    const env = applied.spec.template.spec.containers[0]?.env;
    expect(env?.[0]?.value).toMatch(/^\[REDACTED:password:[0-9a-f]{8}\]$/);
    expect(env?.[1]).toEqual({ name: 'PORT', value: '8080' });
  });

  it('scans env values and keeps valueFrom references', () => {
    const r = createRedactor({ salt: 'k' });
    const container = {
      env: [
        { name: 'DATABASE_URL', value: 'postgres://app:pw-Qq12zz@db:5432/orders' },
        { name: 'DB_PASSWORD', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } },
        { name: 'LOG_LEVEL', value: 'info' },
      ],
    };
    const out = r.redactK8sObject(container);
    expect(out.env[0]?.value).toMatch(/^postgres:\/\/app:\[REDACTED:password:[0-9a-f]{8}\]@db:5432\/orders$/);
    expect(out.env.slice(1)).toEqual(container.env.slice(1));
  });

  it('turns errors into plain objects with redacted messages and survives cycles', () => {
    const r = createRedactor({ salt: 'k' });
    const err = new Error('connect failed: postgres://app:pw-Qq12zz@db:5432');
    const cyclic: Record<string, unknown> = { err, token: 'tok-9Zx81QaB' };
    cyclic['self'] = cyclic;
    const out = r.redactValue(cyclic);
    expect(containsAnywhere({ ...out, self: undefined }, 'pw-Qq12zz')).toBe(false);
    expect(out['token']).toMatch(/^\[REDACTED:token:/);
    expect(out['self']).toBe(out);
    expect((out['err'] as { type: string }).type).toBe('Error');
  });
});

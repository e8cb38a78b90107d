import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { createRedactor } from '../../src/redact/index.js';
import { plantAll, seededRandom, type Planted } from './planted.js';
import { containsAnywhere } from './strings.js';

const planted = plantAll(seededRandom(42));
const redactor = createRedactor({ salt: 'containers' });

/** Each shape turns a planted value into what Vigil would see, redacted. */
const shapes: Record<string, (p: Planted) => unknown> = {
  'log line': (p) => redactor.redactText(`2024-01-15T10:00:00.123Z level=error pod=checkout-7d9f8b6c5-x2x9k ${p.line}`),
  'env var list': (p) =>
    redactor.redactValue([
      { name: 'APP_NOTE', value: p.line },
      { name: 'UPSTREAM_API_TOKEN', value: p.secret },
      { name: 'DB_PASSWORD', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } },
    ]),
  'JSON text': (p) => redactor.redactText(JSON.stringify({ level: 'error', msg: p.line, ctx: { password: p.secret } })),
  'YAML text': (p) => redactor.redactText(YAML.stringify({ app: { log: p.line, db: { password: p.secret } } }, { lineWidth: 0 })),
  'nested object': (p) =>
    redactor.redactValue({ incident: { evidence: [{ kind: 'log', lines: [p.line] }], notes: new Map([['first', p.line]]) } }),
  'k8s Secret': (p) =>
    redactor.redactK8sObject({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'app', namespace: 'shop' },
      type: 'Opaque',
      data: { value: Buffer.from(p.secret).toString('base64') },
      stringData: { line: p.line },
    }),
  'k8s ConfigMap': (p) =>
    redactor.redactK8sObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app' }, data: { 'app.log': p.line } }),
  'Helm values': (p) =>
    redactor.redactValue({
      image: { repository: 'registry.example.com/shop/checkout', tag: '1.14.2' },
      postgresql: { auth: { username: 'app', password: p.secret, database: 'orders' } },
      extraEnv: [{ name: 'NOTE', value: p.line }],
      config: { 'app.yaml': `log: ${JSON.stringify(p.line)}` },
    }),
};

describe('every planted kind is gone from every container shape', () => {
  for (const [shape, render] of Object.entries(shapes)) {
    it.each(planted.map((p) => [p.kind, p] as const))(`${shape}: %s`, (_kind, p) => {
      const out = render(p);
      expect(containsAnywhere(out, p.secret)).toBe(false);
      for (const probe of p.probes ?? []) expect(containsAnywhere(out, probe)).toBe(false);
      expect(containsAnywhere(out, '[REDACTED:')).toBe(true);
    });
  }

  it.each(planted.filter((p) => p.url !== undefined).map((p) => [p.kind, p] as const))('URL: %s', (_kind, p) => {
    const url = p.url ?? '';
    const out = redactor.redactText(url);
    expect(out).not.toContain(p.secret);
    // Scheme and host survive: the evidence still says where the request went.
    expect(out.startsWith(url.slice(0, url.indexOf('//') + 2))).toBe(true);
    expect(out).toContain(new URL(url).hostname);
  });

  it('keeps the structure around the secrets', () => {
    const [p] = planted;
    if (!p) throw new Error('fixture missing');
    const env = shapes['env var list']?.(p) as Array<Record<string, unknown>>;
    expect(env[1]?.['name']).toBe('UPSTREAM_API_TOKEN');
    expect(env[1]?.['value']).toMatch(/^\[REDACTED:token:[0-9a-f]{8}\]$/);
    expect(env[2]).toEqual({ name: 'DB_PASSWORD', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } });

    const helm = shapes['Helm values']?.(p) as { image: unknown; postgresql: { auth: Record<string, unknown> } };
    expect(helm.image).toEqual({ repository: 'registry.example.com/shop/checkout', tag: '1.14.2' });
    expect(helm.postgresql.auth['username']).toBe('app');
    expect(helm.postgresql.auth['database']).toBe('orders');
    expect(helm.postgresql.auth['password']).toMatch(/^\[REDACTED:password:[0-9a-f]{8}\]$/);
  });
});

import { describe, expect, it } from 'vitest';
import { createRedactor } from '../../src/redact/index.js';
import { NOISE } from './noise.js';

describe('false positives: evidence survives untouched', () => {
  const redactor = createRedactor({ salt: 'fp' });

  it.each(NOISE.map((n) => [n] as const))('%s', (noise) => {
    expect(redactor.redactText(noise)).toBe(noise);
    const line = `2024-01-15T10:00:00.123Z level=info pod=checkout-7d9f8b6c5-x2x9k msg="${noise.replace(/"/g, "'")}" status=200`;
    expect(redactor.redactText(line)).toBe(line);
  });

  it('leaves non-sensitive structured data as it was', () => {
    const pod = {
      metadata: { name: 'checkout-7d9f8b6c5-x2x9k', resourceVersion: '48291734', uid: '550e8400-e29b-41d4-a716-446655440000' },
      spec: {
        automountServiceAccountToken: false,
        containers: [
          {
            image: 'registry.example.com/shop/checkout:1.14.2',
            resources: { limits: { memory: '512Mi', cpu: '500m' } },
            env: [
              { name: 'PORT', value: '8080' },
              { name: 'DB_PASSWORD', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } },
            ],
            envFrom: [{ secretRef: { name: 'app-secrets' } }],
          },
        ],
        volumes: [
          { name: 'certs', secret: { secretName: 'tls-certs', defaultMode: 420, items: [{ key: 'tls.crt', path: 'tls.crt' }] } },
          { name: 'sa', projected: { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3600 } }] } },
        ],
        imagePullSecrets: [{ name: 'regcred' }],
      },
    };
    expect(redactor.redactK8sObject(pod)).toEqual(pod);
    expect(redactor.stats()).toEqual({});
  });
});

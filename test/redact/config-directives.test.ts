/** Config files that separate a directive from its value with blanks (redis.conf, valkey.conf): the password goes, the rest stays. */
import { describe, expect, it } from 'vitest';
import { createRedactor } from '../../src/redact/index.js';

const redactor = createRedactor({ salt: 'cfg' });

describe('config directives', () => {
  it('redacts requirepass / masterauth and other secret-named directives, quoted or not, inside a whole file', () => {
    const conf = 'bind 0.0.0.0\nport 6379\nrequirepass 9vQm3Lx7Kp2Wz8Rt\n  masterauth "Prim4ry Pass"\nmaxmemory 2gb\n';
    const out = redactor.redactText(conf);
    expect(out).toMatch(/^bind 0\.0\.0\.0\nport 6379\nrequirepass \[REDACTED:password:[0-9a-f]{8}\]\n {2}masterauth "\[REDACTED:password:[0-9a-f]{8}\]"\nmaxmemory 2gb\n$/);
    expect(redactor.redactText('auth_token Zx9Qm2Lp7Vb4Kt8W')).toMatch(/^auth_token \[REDACTED:token:[0-9a-f]{8}\]$/);
    // The same words as `key=value` and as argv.
    expect(redactor.redactText('requirepass=9vQm3Lx7Kp2Wz8Rt')).toMatch(/^requirepass=\[REDACTED:password:/);
    expect(JSON.stringify(redactor.redactValue({ args: ['redis-server', '--requirepass', '9vQm3Lx7Kp2Wz8Rt'] }))).not.toContain('9vQm3Lx7Kp2Wz8Rt');
  });

  it('reads the content kept in a ConfigMap annotation (last-applied, replaced-content) as a structure, so its file lines are seen as lines', () => {
    const data = { 'redis.conf': 'port 6379\nrequirepass 9vQm3Lx7Kp2Wz8Rt\nmaxmemory 2gb\n' };
    const cm = {
      kind: 'ConfigMap',
      metadata: { name: 'cache', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ kind: 'ConfigMap', data }), 'vigil.dev/replaced-content': JSON.stringify({ data, binaryData: {} }) } },
      data,
    };
    const out = JSON.stringify(redactor.redactK8sObject(cm));
    expect(out).not.toContain('9vQm3Lx7Kp2Wz8Rt');
    expect(out).toContain('maxmemory 2gb');
    expect(JSON.parse((redactor.redactK8sObject(cm).metadata.annotations as Record<string, string>)['vigil.dev/replaced-content']!).data['redis.conf']).toMatch(/^port 6379\nrequirepass \[REDACTED:password:[0-9a-f]{8}\]\nmaxmemory 2gb\n$/);
  });

  it('leaves prose, log lines and plain settings alone', () => {
    for (const s of ['token expired', 'password authentication failed for user "app"', '2024-01-15T10:00:00Z requirepass is set', 'maxmemory-policy allkeys-lru', 'key tls.crt', 'requirepass ""'])
      expect(redactor.redactText(s), s).toBe(s);
  });
});

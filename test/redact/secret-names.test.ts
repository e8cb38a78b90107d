/**
 * Secret names whose last word is short (`DB_PASS`, `redisPw`, `SESSION_KEY`, `--master-key`) and argv
 * lists that carry a secret as the item after its flag — in env pairs, ConfigMap data, text and args.
 * The same words inside other words (`bypass`, `keyspace`) and well-known data keys (`primary_key`,
 * `topologyKey`) stay evidence.
 */
import { describe, expect, it } from 'vitest';
import { createRedactor } from '../../src/redact/index.js';
import { sensitiveKeyKind } from '../../src/redact/sensitive-keys.js';
import { containsAnywhere } from './strings.js';

const PASS = 'Tr0ub4dor-and-3';
const KEY = 'kQ9vX2mL7pR4tZ8wB1nC6yD3fG5hJ0sA';

describe('sensitiveKeyKind: short words count as the last word of a longer name', () => {
  it.each([
    ['DB_PASS', 'password'],
    ['REDIS_PASS', 'password'],
    ['dbPass', 'password'],
    ['DBPass', 'password'],
    ['smtp-pass2', 'password'],
    ['ADMIN_PW', 'password'],
    ['MYSQL_PWD', 'password'],
    ['SESSION_KEY', 'secret'],
    ['MASTER_KEY', 'secret'],
    ['master-key', 'secret'],
    ['tlsKey', 'secret'],
    ['DB_PASSWORD', 'password'],
    ['api_key', 'api_key'],
  ])('%s → %s', (key, kind) => {
    expect(sensitiveKeyKind(key)).toBe(kind);
  });

  it.each(['bypass', 'BYPASS', 'cache_bypass', 'keyspace', 'monkey', 'compass', 'pass', 'key', 'OLDPWD', 'primary_key', 'sort_key', 'partitionKey', 'topologyKey', 'public_key', 'groupKey', 'dedup_key', 'idempotency-key', 'secretKeyRef', 'keyId', 'passes'])(
    '%s is not a secret name',
    (key) => {
      expect(sensitiveKeyKind(key)).toBeUndefined();
    },
  );
});

describe('structured data', () => {
  const r = createRedactor({ salt: 'names' });

  it('env pairs and ConfigMap data under short secret names lose their values', () => {
    const env = [
      { name: 'DB_PASS', value: PASS },
      { name: 'REDIS_PASS', value: 'r3dis-Pa55' },
      { name: 'SESSION_KEY', value: KEY },
      { name: 'MASTER_KEY', value: `${KEY}x` },
      { name: 'PRIMARY_KEY', value: 'order_id' },
      { name: 'KEYSPACE', value: 'orders' },
    ];
    const out = r.redactValue(env);
    for (const raw of [PASS, 'r3dis-Pa55', KEY, `${KEY}x`]) expect(containsAnywhere(out, raw)).toBe(false);
    expect(out[4]).toEqual({ name: 'PRIMARY_KEY', value: 'order_id' });
    expect(out[5]).toEqual({ name: 'KEYSPACE', value: 'orders' });

    const configMap = r.redactK8sObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app' }, data: { DB_PASS: PASS, dbPw: 'pw-123456', SORT_KEY: 'created_at', BYPASS: 'edge' } });
    expect(containsAnywhere(configMap, PASS)).toBe(false);
    expect(containsAnywhere(configMap, 'pw-123456')).toBe(false);
    expect(configMap.data).toMatchObject({ SORT_KEY: 'created_at', BYPASS: 'edge' });
  });

  it('a value under a `…Key` name goes only when it looks like a credential (the name also names data)', () => {
    const facts = { mismatchedKey: 'app', configKey: 'db.url', existingSecretPasswordKey: 'redis-password', sessionKey: KEY };
    const out = r.redactValue(facts);
    expect(out).toMatchObject({ mismatchedKey: 'app', configKey: 'db.url', existingSecretPasswordKey: 'redis-password' });
    expect(out.sessionKey).toMatch(/^\[REDACTED:secret:[0-9a-f]{8}\]$/);
  });

  it('argv lists: a secret-naming flag makes the next item secret, and only then', () => {
    const container = {
      name: 'app',
      command: ['/app/server'],
      args: ['--db-password', PASS, '--api-key', KEY, '-token', KEY.toLowerCase() + 'Z9', '--port', '8080', '-p', '5432', '--tls-key', '/etc/tls/tls.key', '--password', '$(DB_PASSWORD)', '--verbose'],
    };
    const out = r.redactK8sObject(container);
    for (const raw of [PASS, KEY, KEY.toLowerCase() + 'Z9']) expect(containsAnywhere(out, raw)).toBe(false);
    expect(out.args[1]).toMatch(/^\[REDACTED:password:[0-9a-f]{8}\]$/);
    expect(out.args[3]).toMatch(/^\[REDACTED:api_key:[0-9a-f]{8}\]$/);
    expect(out.args.slice(6)).toEqual(['--port', '8080', '-p', '5432', '--tls-key', '/etc/tls/tls.key', '--password', '$(DB_PASSWORD)', '--verbose']);
    expect(out.command).toEqual(['/app/server']);
  });
});

describe('text', () => {
  const r = createRedactor({ salt: 'names' });

  it.each([
    [`DB_PASS=${PASS}`, PASS],
    [`REDIS_PASS: ${PASS}`, PASS],
    [`SESSION_KEY=${KEY}`, KEY],
    [`MASTER_KEY="${KEY}"`, KEY],
    [`ps: /usr/bin/app --db-password ${PASS} --port 8080`, PASS],
    [`Args: --session-key ${KEY}`, KEY],
    [`"args":["--db-password","${PASS}"]`, PASS],
  ])('%s', (line, secret) => {
    const out = r.redactText(line);
    expect(out).not.toContain(secret);
    expect(out).toContain('[REDACTED:');
  });

  it('keeps what only looks like it', () => {
    for (const line of ['bypass=edge-cache', 'keyspace=orders_v2', 'primary_key=order_id', 'sort_key: created_at', '--tls-key /etc/tls/tls.key', 'redis-cli -p 6379 ping', '--token-ttl 3600'])
      expect(r.redactText(line)).toBe(line);
  });
});

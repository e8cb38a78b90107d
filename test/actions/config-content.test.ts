/** The pure parts of restore_config: digests, key changes, the masked line diff, who reads a ConfigMap and how. */
import { describe, expect, it } from 'vitest';
import { contentDigest, contentOf, keyChanges } from '../../src/actions/config/content.js';
import { contentChanges, diffLines, maskLine } from '../../src/actions/config/diff.js';
import { needsRestart, readersOf } from '../../src/actions/config/readers.js';
import type { KubeObject } from '../../src/actions/types.js';
import { createRedactor } from '../../src/redact/index.js';

const redactor = createRedactor({ salt: 'test' });
const PLACEHOLDER = /\[REDACTED:[a-z_]+:[0-9a-f]{8}\]/;

describe('content', () => {
  it('takes data and binaryData, refuses non-string values, and digests per object with keys in any order', () => {
    expect(contentOf({ data: { a: '1' } })).toEqual({ data: { a: '1' }, binaryData: {} });
    expect(contentOf({ data: { a: 1 } })).toBe('data.a is not a string');
    const a = { data: { x: '1', y: '2' }, binaryData: {} };
    const b = { data: { y: '2', x: '1' }, binaryData: {} };
    expect(contentDigest('uid-1', a)).toBe(contentDigest('uid-1', b));
    expect(contentDigest('uid-1', a)).not.toBe(contentDigest('uid-2', a));
    expect(keyChanges({ data: { a: '1', b: '2' }, binaryData: {} }, { data: { b: '3', c: '4' }, binaryData: { bin: 'AA==' } })).toEqual({ added: ['c', 'binaryData.bin'], removed: ['a'], changed: ['b'] });
  });
});

describe('masked line diff', () => {
  it('masks secret-looking config lines the redactor alone would leave', () => {
    for (const line of ['requirepass hunter2', 'masterauth "p w"', 'auth_pass abc', 'ssl.key-password = x1', '  "db_token": "t0k3nValue",', 'export API_KEY=abcd1234efgh']) {
      const out = maskLine(redactor, line);
      expect(out, line).toMatch(PLACEHOLDER);
      expect(out, line).not.toMatch(/hunter2|p w|abc$|x1|t0k3n|abcd1234/);
    }
    expect(maskLine(redactor, 'user default on >s3cr3tPw ~* +@all')).toMatch(/^user default on >\[REDACTED:password:[0-9a-f]{8}\] ~\* \+@all$/);
    for (const line of ['maxmemory 2gb', 'bind 0.0.0.0', 'timeout = 30s', 'log.level: debug']) expect(maskLine(redactor, line)).toBe(line);
  });

  it('aligns changed lines, numbers them, masks whole values of secret-named keys, and stays bounded', () => {
    expect(diffLines(['a', 'b', 'c'], ['a', 'x', 'c', 'd']).map((o) => `${o.kind} ${o.line}`)).toEqual(['same a', 'ins x', 'del b', 'same c', 'ins d']);
    const rows = contentChanges(
      { data: { 'app.conf': 'a\nb\nc\n', DB_PASSWORD: 'old-pw', MODE: 'x' }, binaryData: { logo: 'AAAA' } },
      { data: { 'app.conf': 'a\nB\nc\nd\n', DB_PASSWORD: 'new-pw' }, binaryData: {} },
      redactor,
    );
    expect(rows.map((r) => r.path)).toEqual(['data.DB_PASSWORD', 'data.MODE', 'data.app.conf line 2', 'data.app.conf after line 3', 'binaryData.logo']);
    expect(rows[0]).toMatchObject({ before: expect.stringMatching(PLACEHOLDER), after: expect.stringMatching(PLACEHOLDER) });
    expect(rows[1]).toEqual({ path: 'data.MODE', before: 'x', after: undefined });
    expect(rows[2]).toEqual({ path: 'data.app.conf line 2', before: 'b', after: 'B' });
    expect(rows[3]).toEqual({ path: 'data.app.conf after line 3', before: undefined, after: 'd' });
    expect(rows[4]).toEqual({ path: 'binaryData.logo', before: '(3 bytes, binary)', after: undefined });
    expect(JSON.stringify(rows)).not.toMatch(/old-pw|new-pw/);
    const big = contentChanges({ data: { f: Array.from({ length: 200 }, (_, i) => `k${i}=a`).join('\n') }, binaryData: {} }, { data: { f: Array.from({ length: 200 }, (_, i) => `k${i}=b`).join('\n') }, binaryData: {} }, redactor);
    expect(big).toHaveLength(40);
    expect(big.at(-1)).toEqual({ path: '…', before: undefined, after: '161 more changed lines not shown' });
  });
});

describe('readers', () => {
  const owner = (kind: string, name: string, spec: object, replicas = 2): KubeObject => ({ kind, metadata: { name }, spec: kind === 'CronJob' ? { jobTemplate: { spec: { template: { spec } } } } : { replicas, template: { spec } } });
  it('finds env, envFrom, volume, projected and subPath readers; restarts are needed for env and subPath', () => {
    const readers = readersOf(
      [
        owner('Deployment', 'env', { containers: [{ name: 'c', env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'X' } } }] }] }),
        owner('Deployment', 'init', { containers: [{ name: 'c' }], initContainers: [{ name: 'i', envFrom: [{ configMapRef: { name: 'cfg' } }] }] }),
        owner('StatefulSet', 'vol', { containers: [{ name: 'c', volumeMounts: [{ name: 'v', mountPath: '/etc' }] }], volumes: [{ name: 'v', configMap: { name: 'cfg' } }] }, 1),
        owner('Deployment', 'sub', { containers: [{ name: 'c', volumeMounts: [{ name: 'p', mountPath: '/etc/a', subPath: 'a' }] }], volumes: [{ name: 'p', projected: { sources: [{ configMap: { name: 'cfg' } }] } }] }),
        owner('Deployment', 'unmounted', { containers: [{ name: 'c' }], volumes: [{ name: 'v', configMap: { name: 'cfg' } }] }),
        owner('Deployment', 'other', { containers: [{ name: 'c', envFrom: [{ configMapRef: { name: 'other' } }] }] }),
        owner('CronJob', 'job', { containers: [{ name: 'c', envFrom: [{ configMapRef: { name: 'cfg' } }] }] }),
      ],
      'cfg',
    );
    expect(readers).toEqual([
      { kind: 'Deployment', name: 'env', via: ['env'], pods: 2 },
      { kind: 'Deployment', name: 'init', via: ['env'], pods: 2 },
      { kind: 'CronJob', name: 'job', via: ['env'], pods: 0 },
      { kind: 'Deployment', name: 'sub', via: ['subPath'], pods: 2 },
      { kind: 'StatefulSet', name: 'vol', via: ['volume'], pods: 1 },
    ]);
    expect(readers.map(needsRestart)).toEqual([true, true, true, true, false]);
  });
});

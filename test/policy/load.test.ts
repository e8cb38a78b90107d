import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { evaluateProposal, loadPolicy, PolicyError, READ_ONLY_POLICY } from '../../src/policy/index.js';
import { context, proposal } from './builders.js';

const dir = mkdtempSync(join(tmpdir(), 'vigil-policy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('loadPolicy', () => {
  it('without a file is read-only: no rules, so every write is refused', () => {
    expect(loadPolicy()).toBe(READ_ONLY_POLICY);
    expect(loadPolicy('')).toBe(READ_ONLY_POLICY);
    expect(READ_ONLY_POLICY.rules).toEqual([]);
    expect(evaluateProposal(loadPolicy(), proposal(), context())).toMatchObject({ kind: 'deny', code: 'no_rule' });
  });

  it('stops on a configured file that cannot be read', () => {
    const missing = join(dir, 'nope.yaml');
    expect(() => loadPolicy(missing)).toThrow(PolicyError);
    expect(() => loadPolicy(missing)).toThrow(`${missing}: cannot read the policy file (ENOENT)`);
  });

  it('stops on an invalid file with every problem in the message', () => {
    const file = join(dir, 'policy.yaml');
    writeFileSync(file, 'version: 1\nrules:\n  - match: { actions: [scale] }\n    allowed: true\n    approverGroups: [S0SRE]\n    approvals: 0\nadmins: [bob]\n');
    let err: unknown;
    try {
      loadPolicy(file);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PolicyError);
    const e = err as PolicyError;
    expect(e.problems).toEqual([
      `${file}:6: rules[0].approvals: expected a whole number ≥ 1`,
      `${file}:7: admins[0]: expected a Slack user id such as U0123ABCD`,
    ]);
    expect(e.message).toBe(`invalid policy ${file}: 2 problems\n  - ${e.problems[0]}\n  - ${e.problems[1]}`);
  });

  it('loads a valid file', () => {
    const file = join(dir, 'ok.yaml');
    writeFileSync(file, 'version: 1\nrules:\n  - match: { actions: [scale] }\n    allowed: true\n    approverGroups: [S0SRE]\n');
    const policy = loadPolicy(file);
    expect(policy.source).toBe(file);
    expect(evaluateProposal(policy, proposal(), context())).toMatchObject({ kind: 'require_approval', approverGroups: ['S0SRE'], rule: 'rules[0]' });
  });
});

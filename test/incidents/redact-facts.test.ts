// Facts naming an object keep the name even under a key that reads like a secret (`secret`: the Secret a
// workload reads), while a real secret in them is still caught by the text detectors.
import { describe, expect, it } from 'vitest';
import { redactFacts } from '../../src/incidents/findings.js';
import { createRedactor } from '../../src/redact/index.js';

describe('redactFacts', () => {
  const redactor = createRedactor({ salt: 'facts' });
  it('keeps a Secret name under `secret`, blanks values under other sensitive keys', () => {
    expect(redactFacts(redactor, { secret: 'invoice-api-db', password: 'hunter2hunter2', keys: 'DB_PASSWORD' })).toEqual({ secret: 'invoice-api-db', password: expect.stringMatching(/^\[REDACTED:/), keys: 'DB_PASSWORD' });
  });
  it('still scans the name as text', () => {
    const token = 'gh' + 'p_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';
    expect(redactFacts(redactor, { secret: token })['secret']).toMatch(/^\[REDACTED:github_token:/);
  });
});

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { envSchema } from '../../src/config/schema.js';

const valid = { SLACK_BOT_TOKEN: 'xoxb-1-2-abc', SLACK_SIGNING_SECRET: '0123456789abcdef0123456789abcdef', VIGIL_ALERT_CHANNELS: 'C0ALERTS,C0MORE' };

describe('config', () => {
  it('parses a valid HTTP-mode environment with defaults', () => {
    const c = loadConfig(valid);
    expect(c.slack.mode).toBe('http');
    expect(c.slack.alertChannels).toEqual(['C0ALERTS', 'C0MORE']);
    expect(c.databaseUrl).toBe('file:./data/vigil.db');
    expect(c.incidents.dedupWindowMs).toBe(240 * 60_000);
  });

  it('times Slack Web API calls out after 10 s by default, or SLACK_API_TIMEOUT_SECONDS', () => {
    expect(loadConfig(valid).slack.apiTimeoutMs).toBe(10_000);
    expect(loadConfig({ ...valid, SLACK_API_TIMEOUT_SECONDS: '3' }).slack.apiTimeoutMs).toBe(3_000);
    expect(() => loadConfig({ ...valid, SLACK_API_TIMEOUT_SECONDS: '0' })).toThrow(/SLACK_API_TIMEOUT_SECONDS: expects seconds a Slack Web API call may take/);
  });

  it('chooses Socket Mode when an app token is set', () => {
    expect(loadConfig({ ...valid, SLACK_APP_TOKEN: 'xapp-1-abc' }).slack.mode).toBe('socket');
  });

  it('names every bad variable and what it expects, in one error', () => {
    let err: unknown;
    try {
      loadConfig({ SLACK_BOT_TOKEN: 'xoxp-user-token', PORT: 'eighty', DATABASE_URL: 'mysql://x', VIGIL_ALERT_CHANNELS: '#alerts' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const msg = (err as Error).message;
    expect(msg).toMatch(/SLACK_BOT_TOKEN: expects a bot token starting with xoxb-/);
    expect(msg).toMatch(/PORT: expects .*whole number/);
    expect(msg).toMatch(/DATABASE_URL: expects file:<path> \(SQLite\) or postgresql:/);
    expect(msg).toMatch(/VIGIL_ALERT_CHANNELS: expects Slack channel ids/);
    expect(msg).toMatch(/SLACK_APP_TOKEN: set SLACK_APP_TOKEN .* or SLACK_SIGNING_SECRET/);
    expect((err as ConfigError).problems).toHaveLength(5);
  });

  it('reports required variables as required', () => {
    expect(() => loadConfig({})).toThrow(/SLACK_BOT_TOKEN: is required/);
    expect(() => loadConfig({})).toThrow(/VIGIL_ALERT_CHANNELS: is required/);
  });

  it('treats empty values as unset, as .env files write them', () => {
    expect(loadConfig({ ...valid, SLACK_APP_TOKEN: '', KUBECONFIG: '' }).slack.mode).toBe('http');
  });

  it('writers outside Kubernetes need their own token, distinct from the reader', () => {
    const ld = { LAUNCHDARKLY_PROJECT: 'shop', LAUNCHDARKLY_READ_TOKEN: 'api-r', LAUNCHDARKLY_WRITE_TOKEN: 'api-w' };
    expect(loadConfig({ ...valid, ...ld }).flags).toEqual({ project: 'shop', environment: 'production', readToken: 'api-r', writeToken: 'api-w' });
    expect(loadConfig(valid).flags).toBeUndefined();
    expect(() => loadConfig({ ...valid, LAUNCHDARKLY_PROJECT: 'shop' })).toThrow(/LAUNCHDARKLY_WRITE_TOKEN: is required with the other LAUNCHDARKLY_\* settings/);
    expect(() => loadConfig({ ...valid, ...ld, LAUNCHDARKLY_WRITE_TOKEN: 'api-r' })).toThrow(/LAUNCHDARKLY_WRITE_TOKEN: must be a different token/);
    expect(() => loadConfig({ ...valid, GITHUB_TOKEN: 'ghp-1', GITHUB_WRITE_TOKEN: 'ghp-1' })).toThrow(/GITHUB_WRITE_TOKEN: must be a different token from GITHUB_TOKEN/);
    expect(loadConfig({ ...valid, GITHUB_TOKEN: 'ghp-1', GITHUB_WRITE_TOKEN: 'ghp-2' }).githubWriteToken).toBe('ghp-2');
    expect(loadConfig({ ...valid, VIGIL_AUDIT_ANCHOR_INTERVAL: '15' }).auditAnchorIntervalMs).toBe(15 * 60_000);
  });

  it('.env.example documents every setting, and only real ones', () => {
    const example = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');
    const documented = [...example.matchAll(/^([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]);
    const keys = Object.keys(envSchema.shape);
    expect(new Set(documented)).toEqual(new Set(keys));
  });

  it('an invalid policy file stops start-up with every problem listed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vigil-policy-'));
    try {
      const file = join(dir, 'policy.yaml');
      writeFileSync(file, 'version: 1\ndefaults: { allowed: false }\nrules:\n  - match: { actions: [scale] }\n    allowed: true\n    approvals: 0\n');
      const res = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        cwd: new URL('../..', import.meta.url).pathname,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...valid, DATABASE_URL: `file:${join(dir, 'v.db')}`, VIGIL_POLICY_FILE: file, PORT: '0', LOG_LEVEL: 'silent' },
        encoding: 'utf8',
        timeout: 20_000,
      });
      expect(res.status).toBe(2);
      expect(res.stderr).toMatch(/invalid policy .*policy\.yaml/);
      expect(res.stderr).toMatch(/approvals/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('npm start with missing settings exits with one clear message', () => {
    const res = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: new URL('../..', import.meta.url).pathname,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SLACK_BOT_TOKEN: 'nope' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(res.status).toBe(2);
    expect(res.stderr).toMatch(/Vigil cannot start: invalid settings/);
    expect(res.stderr).toMatch(/SLACK_BOT_TOKEN: expects a bot token starting with xoxb-/);
    expect(res.stderr).toMatch(/VIGIL_ALERT_CHANNELS: is required/);
    expect(res.stderr).not.toMatch(/at .*\.ts:\d+/); // no stack trace
  });
});

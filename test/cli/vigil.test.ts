import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = new URL('../..', import.meta.url).pathname;
const run = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/vigil.ts', ...args], { cwd: root, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, encoding: 'utf8', timeout: 30_000 });

describe('vigil CLI', () => {
  it('migrate applies the committed migrations once, then reports up to date', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vigil-cli-'));
    try {
      const url = `file:${join(dir, 'v.db')}`;
      const first = run(['migrate'], { DATABASE_URL: url });
      expect(first.status, first.stderr).toBe(0);
      expect(first.stdout).toMatch(/Applied \d+ migration\(s\)/);
      expect(first.stdout).toMatch(/_init/);
      const second = run(['migrate'], { DATABASE_URL: url });
      expect(second.stdout).toMatch(/is up to date/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an unknown command exits 2 with the usage', () => {
    const res = run(['frobnicate']);
    expect(res.status).toBe(2);
    expect(res.stderr).toMatch(/Unknown command "frobnicate"/);
    expect(res.stderr).toMatch(/migrate/);
  });
});

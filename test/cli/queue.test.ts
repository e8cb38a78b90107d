/**
 * `vigil queue` shows stuck work without SQL: an investigation whose holder stopped renewing its lease more
 * than a lease ago is STUCK (exit 1), one held now is not, a failed one says its last error.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyMigrations } from '../../src/store/migrate.js';
import { openDatabase, type Database } from '../../src/store/db.js';

const root = new URL('../..', import.meta.url).pathname;
const run = (args: string[], env: Record<string, string>) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/vigil.ts', ...args], { cwd: root, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, encoding: 'utf8', timeout: 30_000 });

describe('vigil queue', () => {
  let dir: string;
  let url: string;
  let db: Database;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'vigil-queue-'));
    url = `file:${join(dir, 'v.db')}`;
    db = await openDatabase(url);
    await applyMigrations(db);
    const incident = (title: string) => db.prisma.incident.create({ data: { fingerprint: title, title, alertName: title, source: 'manual', channelId: 'C1' } });
    const now = Date.now();
    await db.prisma.investigation.create({ data: { incidentId: (await incident('orphaned')).id, state: 'running', step: 'announced', attempts: 1, leaseOwner: 'vigil-dead', leaseUntil: new Date(now - 120_000) } });
    await db.prisma.investigation.create({ data: { incidentId: (await incident('held')).id, state: 'running', step: 'triaged', attempts: 1, leaseOwner: 'vigil-alive', leaseUntil: new Date(now + 30_000) } });
    await db.prisma.investigation.create({ data: { incidentId: (await incident('gave up')).id, state: 'failed', step: 'announced', attempts: 5, lastError: 'kubernetes is unavailable for now (list pods: HTTP 503)' } });
    await db.prisma.investigation.create({ data: { incidentId: (await incident('finished')).id, state: 'waiting', step: 'reported', attempts: 1 } });
    await db.close();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('lists unfinished work, marks the orphan as stuck and exits 1', () => {
    const res = run(['queue'], { DATABASE_URL: url, VIGIL_LEASE_SECONDS: '60' });
    expect(res.status, res.stderr).toBe(1);
    const lines = res.stdout.split('\n');
    expect(lines.find((l) => l.includes('orphaned'))).toMatch(/^STUCK running .* step announced, attempt 1, held by vigil-dead/);
    expect(lines.find((l) => l.endsWith('  held'))).toMatch(/^running .* held by vigil-alive/);
    expect(res.stdout).toMatch(/failed .*gave up\n\s+last error: kubernetes is unavailable for now/);
    expect(res.stdout).not.toMatch(/finished/);
    expect(res.stdout).toMatch(/1 stuck: no replica has claimed them for a whole lease/);
  });

  it('--json gives the same rows as data', () => {
    const res = run(['queue', '--json'], { DATABASE_URL: url, VIGIL_LEASE_SECONDS: '60' });
    const rows = JSON.parse(res.stdout) as { title: string; stuck: boolean; state: string }[];
    expect(rows.map((r) => [r.title, r.state, r.stuck])).toEqual([
      ['orphaned', 'running', true],
      ['held', 'running', false],
      ['gave up', 'failed', false],
    ]);
  });

  it('an unknown argument is a usage error', () => {
    const res = run(['queue', '--frob'], { DATABASE_URL: url });
    expect(res.status).toBe(2);
    expect(res.stderr).toMatch(/Usage: vigil queue/);
  });
});

// The Prisma CLI (through prisma.config.ts) must see what applyMigrations recorded, so operators can use
// `npx prisma migrate status|deploy|resolve` on a database Vigil migrated itself. Runs offline: the
// config uses the bundled WASM schema engine and the update check is disabled.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/store/db.js';
import { applyMigrations } from '../../src/store/migrate.js';
import { createTestDatabase, testProviders, type TestDatabase } from './test-databases.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

function prisma(args: string[], databaseUrl: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['node_modules/prisma/build/index.js', ...args],
      { cwd: root, env: { ...process.env, DATABASE_URL: databaseUrl, CHECKPOINT_DISABLE: '1' } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}\n${stderr}` }),
    );
  });
}

describe.each(testProviders)('prisma CLI on a %s database migrated by Vigil', (provider) => {
  let target: TestDatabase;
  let db: Database;
  beforeAll(async () => {
    target = await createTestDatabase(provider);
    db = await openDatabase(target.url);
  });
  afterAll(async () => {
    await db?.close();
    await target?.drop();
  });

  // Each CLI run takes 1-3 s; `migrate deploy` on PostgreSQL lingers ~10 s after finishing (a timer
  // inside Prisma 6.19.3's schema engine, not our pool), hence the long timeout.
  it('reports pending migrations before, and an up-to-date schema after applyMigrations', { timeout: 90_000 }, async () => {
    const before = await prisma(['migrate', 'status'], target.url);
    expect(before.code).not.toBe(0);
    expect(before.output).not.toContain('Database schema is up to date!');

    await applyMigrations(db);

    const status = await prisma(['migrate', 'status'], target.url);
    expect(status.output).toContain('Database schema is up to date!');
    expect(status.code).toBe(0);
    const deploy = await prisma(['migrate', 'deploy'], target.url);
    expect(deploy.output).toContain('No pending migrations to apply.');
    expect(deploy.code).toBe(0);
  });
});

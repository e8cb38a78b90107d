// Throwaway databases for the store tests, one per provider. SQLite always runs; PostgreSQL runs when
// VIGIL_TEST_DATABASE_URL points at a server whose role may CREATE DATABASE. In CI (CI set) a missing
// PostgreSQL URL fails the PostgreSQL cases instead of silently skipping them.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Provider } from '../../src/store/db.js';

export type TestDatabase = { provider: Provider; url: string; drop(): Promise<void> };

const adminUrl = process.env.VIGIL_TEST_DATABASE_URL;

/** The providers to run: PostgreSQL too when a server is configured, or when CI demands it. */
export const testProviders: Provider[] = adminUrl || process.env.CI ? ['sqlite', 'postgresql'] : ['sqlite'];

export async function createTestDatabase(provider: Provider): Promise<TestDatabase> {
  if (provider === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'vigil-store-'));
    return {
      provider,
      url: `file:${join(dir, 'data', 'vigil.db')}`,
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  if (!adminUrl) throw new Error('CI is set but VIGIL_TEST_DATABASE_URL is not: the PostgreSQL store tests must run in CI');
  // A fresh database per run, so parallel test files and runs never share state.
  const name = `vigil_test_${randomBytes(6).toString('hex')}`;
  await withAdmin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    provider,
    url: url.toString(),
    drop: () => withAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

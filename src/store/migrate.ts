// Applies the committed SQL migrations at start, without the Prisma CLI. Applied migrations are
// recorded in Prisma's own `_prisma_migrations` table (same columns, same sha256 checksum), so
// `npx prisma migrate status|deploy|resolve` (prisma.config.ts) see exactly what Vigil applied.
//
// Contract:
// - each migration runs in one transaction together with its record, so it is applied whole or not at all;
//   migrations must therefore not use statements PostgreSQL forbids in a transaction (CREATE INDEX CONCURRENTLY);
// - on PostgreSQL, replicas serialise on the advisory lock key Prisma's schema engine uses (72707369),
//   so several replicas, or a replica and `prisma migrate deploy`, never apply the same migration twice;
// - a migration that failed earlier (finished_at NULL, not rolled back) stops start-up until an operator
//   resolves it; a failure here is rolled back and then recorded the same way.
import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { parseDatabaseUrl, type Database, type Provider } from './db.js';

export type ApplyMigrationsOptions = {
  logger?: Logger;
  /** Folder of `<timestamp>_<name>/migration.sql`; defaults to the provider's folder in the package. */
  migrationsDir?: string;
  /** PostgreSQL: how long to wait for another replica's migration run (ms). */
  lockTimeoutMs?: number;
};

export type Migration = { name: string; sql: string; checksum: string };

/** A `_prisma_migrations` row that is not rolled back. */
type AppliedRow = { migration_name: string; checksum: string; finished_at: unknown; logs: string | null };

/** What a provider's driver must do; each method runs on one dedicated connection. */
type MigrationSession = {
  /** Holds the migration lock until `close`, and makes sure the table exists. */
  begin(): Promise<void>;
  rows(): Promise<AppliedRow[]>;
  /** Runs the script and records it as finished, in one transaction. */
  apply(migration: Migration): Promise<void>;
  /** Records a failed attempt (finished_at NULL), as Prisma does. */
  recordFailure(migration: Migration, error: unknown): Promise<void>;
  close(): Promise<void>;
};

/** Prisma's schema-engine lock key; sharing it also excludes a concurrent `prisma migrate deploy`. */
const PRISMA_ADVISORY_LOCK_KEY = 72707369;

const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export function migrationsDirFor(provider: Provider): string {
  return join(PACKAGE_ROOT, provider === 'sqlite' ? 'prisma/migrations' : 'prisma/postgres/migrations');
}

/** Prisma's migration checksum: sha256 of the script, lowercase hex. */
export function migrationChecksum(sql: string): string {
  return createHash('sha256').update(sql, 'utf8').digest('hex');
}

/** The migrations in `dir`, in Prisma's order (folder names compared with localeCompare). */
export async function readMigrations(dir: string): Promise<Migration[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort((a, b) => a.localeCompare(b));
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: migrationChecksum(sql) };
    }),
  );
}

export async function applyMigrations(db: Database, opts: ApplyMigrationsOptions = {}): Promise<{ applied: string[] }> {
  const migrations = await readMigrations(opts.migrationsDir ?? migrationsDirFor(db.provider));
  const session = db.provider === 'sqlite' ? await sqliteSession(db.url) : await postgresSession(db.url, opts.lockTimeoutMs ?? 300_000);
  const applied: string[] = [];
  try {
    await session.begin();
    const rows = await session.rows();
    stopOnFailedMigration(rows);
    warnAboutDrift(rows, migrations, opts.logger);
    const done = new Set(rows.map((r) => r.migration_name));
    for (const migration of migrations.filter((m) => !done.has(m.name))) {
      try {
        await session.apply(migration);
      } catch (error) {
        await session.recordFailure(migration, error);
        throw new Error(
          `Migration ${migration.name} failed and was rolled back: ${errorMessage(error)}. ` +
            `Fix it, then run \`npx prisma migrate resolve --rolled-back ${migration.name}\` and restart.`,
          { cause: error },
        );
      }
      applied.push(migration.name);
      opts.logger?.info({ migration: migration.name }, 'migration applied');
    }
  } finally {
    await session.close();
  }
  return { applied };
}

function stopOnFailedMigration(rows: AppliedRow[]): void {
  const failed = rows.find((r) => r.finished_at === null);
  if (!failed) return;
  const logs = failed.logs ? `: ${failed.logs.split('\n')[0]}` : '';
  throw new Error(
    `Migration ${failed.migration_name} failed earlier and is not resolved${logs}. ` +
      `Repair the database, then run \`npx prisma migrate resolve --rolled-back ${failed.migration_name}\` ` +
      `(or --applied if you completed it by hand) with the same DATABASE_URL, and restart.`,
  );
}

function warnAboutDrift(rows: AppliedRow[], migrations: Migration[], logger: Logger | undefined): void {
  const local = new Map(migrations.map((m) => [m.name, m]));
  for (const row of rows) {
    const mine = local.get(row.migration_name);
    if (!mine) logger?.warn({ migration: row.migration_name }, 'database has a migration this version does not know (newer release?)');
    else if (mine.checksum !== row.checksum) logger?.warn({ migration: row.migration_name }, 'migration file changed after it was applied');
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Prisma's DDL for its table (schema engine 6.19.3), per provider. */
const MIGRATIONS_TABLE = {
  sqlite: `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    TEXT PRIMARY KEY NOT NULL,
    "checksum"              TEXT NOT NULL,
    "finished_at"           DATETIME,
    "migration_name"        TEXT NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        DATETIME,
    "started_at"            DATETIME NOT NULL DEFAULT current_timestamp,
    "applied_steps_count"   INTEGER UNSIGNED NOT NULL DEFAULT 0
)`,
  postgresql: `CREATE TABLE IF NOT EXISTS _prisma_migrations (
    id                      VARCHAR(36) PRIMARY KEY NOT NULL,
    checksum                VARCHAR(64) NOT NULL,
    finished_at             TIMESTAMPTZ,
    migration_name          VARCHAR(255) NOT NULL,
    logs                    TEXT,
    rolled_back_at          TIMESTAMPTZ,
    started_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    applied_steps_count     INTEGER NOT NULL DEFAULT 0
)`,
} as const;

const SELECT_ROWS =
  'SELECT migration_name, checksum, finished_at, logs FROM _prisma_migrations WHERE rolled_back_at IS NULL ORDER BY started_at';

/** Prisma writes SQLite timestamps as RFC 3339 text with milliseconds and `+00:00`. */
function sqliteNow(): string {
  return new Date().toISOString().replace('Z', '+00:00');
}

async function sqliteSession(url: string): Promise<MigrationSession> {
  const target = parseDatabaseUrl(url);
  if (target.provider !== 'sqlite') throw new Error('sqliteSession needs a file: URL');
  const { default: BetterSqlite3 } = await import('better-sqlite3');
  const conn = new BetterSqlite3(target.file, { timeout: 30_000 });
  // Off on this migration-only connection: with foreign keys on, the DROP TABLE in a SQLite table
  // rebuild would fire ON DELETE CASCADE on the children. Integrity is checked before each commit.
  conn.pragma('foreign_keys = OFF');
  const insert = (...values: unknown[]) =>
    conn
      .prepare(
        'INSERT INTO _prisma_migrations (id, checksum, finished_at, migration_name, logs, started_at, applied_steps_count) VALUES (?, ?, ?, ?, ?, ?, ?)',
      )
      .run(...values);
  return {
    async begin() {
      conn.exec(MIGRATIONS_TABLE.sqlite);
    },
    async rows() {
      return conn.prepare(SELECT_ROWS).all() as AppliedRow[];
    },
    async apply(m) {
      const startedAt = sqliteNow();
      // IMMEDIATE takes the write lock first, so another process on the same file waits, then re-checks.
      conn.exec('BEGIN IMMEDIATE');
      try {
        const already = conn.prepare('SELECT 1 FROM _prisma_migrations WHERE migration_name = ? AND rolled_back_at IS NULL').get(m.name);
        if (!already) {
          conn.exec(m.sql);
          const violations = conn.pragma('foreign_key_check') as unknown[];
          if (violations.length > 0) throw new Error(`foreign key check found ${violations.length} violation(s)`);
          insert(randomUUID(), m.checksum, sqliteNow(), m.name, null, startedAt, 1);
        }
        conn.exec('COMMIT');
      } catch (error) {
        if (conn.inTransaction) conn.exec('ROLLBACK');
        throw error;
      }
    },
    async recordFailure(m, error) {
      insert(randomUUID(), m.checksum, null, m.name, errorMessage(error), sqliteNow(), 0);
    },
    async close() {
      conn.close();
    },
  };
}

async function postgresSession(url: string, lockTimeoutMs: number): Promise<MigrationSession> {
  const { default: pg } = await import('pg');
  const conn = new pg.Client({ connectionString: url });
  await conn.connect();
  let locked = false;
  const insert = (m: Migration, finished: boolean, logs: string | null) =>
    conn.query(
      `INSERT INTO _prisma_migrations (id, checksum, finished_at, migration_name, logs, started_at, applied_steps_count)
       VALUES ($1, $2, ${finished ? 'now()' : 'NULL'}, $3, $4, now(), $5)`,
      [randomUUID(), m.checksum, m.name, logs, finished ? 1 : 0],
    );
  return {
    async begin() {
      // Poll instead of blocking in pg_advisory_lock, so the wait is bounded without touching lock_timeout.
      const deadline = Date.now() + lockTimeoutMs;
      while (!locked) {
        const { rows } = await conn.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [PRISMA_ADVISORY_LOCK_KEY]);
        locked = rows[0]?.ok === true;
        if (locked) break;
        if (Date.now() > deadline) {
          throw new Error(`Timed out after ${lockTimeoutMs} ms waiting for the migration lock (another replica or prisma migrate holds it)`);
        }
        await new Promise((r) => setTimeout(r, 250));
      }
      await conn.query(MIGRATIONS_TABLE.postgresql);
    },
    async rows() {
      return (await conn.query<AppliedRow>(SELECT_ROWS)).rows;
    },
    async apply(m) {
      await conn.query('BEGIN');
      try {
        // No parameters: the simple query protocol runs a multi-statement script.
        await conn.query(m.sql);
        await insert(m, true, null);
        await conn.query('COMMIT');
      } catch (error) {
        await conn.query('ROLLBACK');
        throw error;
      }
    },
    async recordFailure(m, error) {
      await insert(m, false, errorMessage(error));
    },
    async close() {
      try {
        if (locked) await conn.query('SELECT pg_advisory_unlock($1)', [PRISMA_ADVISORY_LOCK_KEY]);
      } finally {
        await conn.end();
      }
    },
  };
}

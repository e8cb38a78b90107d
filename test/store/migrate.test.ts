import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/store/db.js';
import { applyMigrations, migrationsDirFor, readMigrations } from '../../src/store/migrate.js';
import { createTestDatabase, testProviders, type TestDatabase } from './test-databases.js';

type MigrationRow = {
  migration_name: string;
  checksum: string;
  finished_at: unknown;
  rolled_back_at: unknown;
  logs: string | null;
  applied_steps_count: number | bigint;
};

async function migrationRows(db: Database): Promise<MigrationRow[]> {
  return db.prisma.$queryRawUnsafe<MigrationRow[]>(
    'SELECT migration_name, checksum, finished_at, rolled_back_at, logs, applied_steps_count FROM _prisma_migrations ORDER BY started_at',
  );
}

describe.each(testProviders)('applyMigrations on %s', (provider) => {
  let target: TestDatabase;
  let db: Database;
  beforeEach(async () => {
    target = await createTestDatabase(provider);
    db = await openDatabase(target.url);
  });
  afterEach(async () => {
    await db?.close();
    await target?.drop();
  });

  it('applies every committed migration to an empty database, then nothing the second time', async () => {
    const committed = await readMigrations(migrationsDirFor(provider));
    expect(committed.length).toBeGreaterThan(0);

    const first = await applyMigrations(db);
    expect(first.applied).toEqual(committed.map((m) => m.name));
    const second = await applyMigrations(db);
    expect(second.applied).toEqual([]);

    const rows = await migrationRows(db);
    expect(rows.map((r) => r.migration_name)).toEqual(committed.map((m) => m.name));
    for (const [i, row] of rows.entries()) {
      const file = join(migrationsDirFor(provider), row.migration_name, 'migration.sql');
      expect(row.checksum).toBe(createHash('sha256').update(readFileSync(file)).digest('hex'));
      expect(row.checksum).toBe(committed[i]?.checksum);
      expect(row.finished_at).not.toBeNull();
      expect(row.rolled_back_at).toBeNull();
      expect(Number(row.applied_steps_count)).toBe(1);
    }
    expect(await db.prisma.incident.count()).toBe(0);
  });

  describe('with a migration that fails', () => {
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'vigil-migrations-'));
      const write = (name: string, sql: string) => {
        mkdirSync(join(dir, name));
        writeFileSync(join(dir, name, 'migration.sql'), sql);
      };
      write('20240101000000_good', 'CREATE TABLE "Good" ("id" INTEGER NOT NULL PRIMARY KEY);\n');
      write('20240102000000_bad', 'CREATE TABLE "Half" ("id" INTEGER NOT NULL PRIMARY KEY);\nINSERT INTO "Missing" VALUES (1);\n');
      write('20240103000000_after', 'CREATE TABLE "After" ("id" INTEGER NOT NULL PRIMARY KEY);\n');
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('rolls the failed one back, records it as Prisma does, and refuses to start until it is resolved', async () => {
      await expect(applyMigrations(db, { migrationsDir: dir })).rejects.toThrow(
        /20240102000000_bad failed and was rolled back.*prisma migrate resolve --rolled-back 20240102000000_bad/,
      );
      const rows = await migrationRows(db);
      expect(rows.map((r) => [r.migration_name, r.finished_at === null])).toEqual([
        ['20240101000000_good', false],
        ['20240102000000_bad', true],
      ]);
      expect(rows[1]?.logs).toMatch(/Missing/);
      // The statement before the failing one was rolled back with it.
      await expect(db.prisma.$queryRawUnsafe('SELECT * FROM "Half"')).rejects.toThrow();

      await expect(applyMigrations(db, { migrationsDir: dir })).rejects.toThrow(
        /20240102000000_bad failed earlier and is not resolved.*--rolled-back 20240102000000_bad/,
      );
      await expect(db.prisma.$queryRawUnsafe('SELECT * FROM "After"')).rejects.toThrow();
    });
  });
});

describe('applyMigrations on sqlite, a table rebuild', () => {
  let target: TestDatabase;
  let db: Database;
  let dir: string;
  beforeEach(async () => {
    target = await createTestDatabase('sqlite');
    db = await openDatabase(target.url);
    dir = mkdtempSync(join(tmpdir(), 'vigil-migrations-'));
  });
  afterEach(async () => {
    await db.close();
    await target.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  // Prisma redefines a SQLite table by copy, DROP TABLE and rename. With foreign keys on, that DROP
  // would cascade-delete every child row; the migration connection runs with them off.
  it('keeps the rows that reference the rebuilt table', async () => {
    const write = (name: string, sql: string) => {
      mkdirSync(join(dir, name));
      writeFileSync(join(dir, name, 'migration.sql'), sql);
    };
    write(
      '20240101000000_tables',
      `CREATE TABLE "Parent" ("id" TEXT NOT NULL PRIMARY KEY, "title" TEXT NOT NULL);
CREATE TABLE "Child" ("id" TEXT NOT NULL PRIMARY KEY, "parentId" TEXT NOT NULL,
  CONSTRAINT "Child_parentId_fkey" FOREIGN KEY ("parentId") REFERENCES "Parent" ("id") ON DELETE CASCADE ON UPDATE CASCADE);
`,
    );
    await applyMigrations(db, { migrationsDir: dir });
    await db.prisma.$executeRawUnsafe(`INSERT INTO "Parent" VALUES ('p1', 't')`);
    await db.prisma.$executeRawUnsafe(`INSERT INTO "Child" VALUES ('c1', 'p1')`);

    write(
      '20240102000000_rebuild',
      `-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Parent" ("id" TEXT NOT NULL PRIMARY KEY, "title" TEXT NOT NULL DEFAULT 'untitled');
INSERT INTO "new_Parent" ("id", "title") SELECT "id", "title" FROM "Parent";
DROP TABLE "Parent";
ALTER TABLE "new_Parent" RENAME TO "Parent";
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;
`,
    );
    expect((await applyMigrations(db, { migrationsDir: dir })).applied).toEqual(['20240102000000_rebuild']);
    expect(await db.prisma.$queryRawUnsafe('SELECT "id", "parentId" FROM "Child"')).toEqual([{ id: 'c1', parentId: 'p1' }]);
  });
});

describe.runIf(testProviders.includes('postgresql'))('applyMigrations on postgresql, two replicas at once', () => {
  let target: TestDatabase;
  const dbs: Database[] = [];
  beforeEach(async () => {
    target = await createTestDatabase('postgresql');
  });
  afterEach(async () => {
    await Promise.all(dbs.splice(0).map((d) => d.close()));
    await target?.drop();
  });

  it('applies each migration once', async () => {
    dbs.push(await openDatabase(target.url), await openDatabase(target.url));
    const results = await Promise.all(dbs.map((d) => applyMigrations(d)));
    const committed = (await readMigrations(migrationsDirFor('postgresql'))).map((m) => m.name);

    expect(results.flatMap((r) => r.applied).sort()).toEqual(committed.sort());
    expect(results.some((r) => r.applied.length === 0)).toBe(true);
    const rows = await migrationRows(dbs[0]!);
    expect(rows.map((r) => r.migration_name).sort()).toEqual(committed.sort());
  });
});

import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { describeDatabaseUrl, openDatabase, parseDatabaseUrl, type Database } from '../../src/store/db.js';
import { createTestDatabase, type TestDatabase } from './test-databases.js';

describe('parseDatabaseUrl', () => {
  it('reads SQLite file URLs relative to the working directory', () => {
    expect(parseDatabaseUrl('file:./data/vigil.db')).toEqual({ provider: 'sqlite', file: `${process.cwd()}/data/vigil.db` });
    expect(parseDatabaseUrl('file:/var/lib/vigil/vigil.db?connection_limit=1')).toEqual({ provider: 'sqlite', file: '/var/lib/vigil/vigil.db' });
  });

  it('accepts both PostgreSQL schemes', () => {
    for (const url of ['postgres://vigil:pw@db:5432/vigil', 'postgresql://vigil@db/vigil?sslmode=require']) {
      expect(parseDatabaseUrl(url)).toEqual({ provider: 'postgresql', url });
    }
  });

  it.each([
    ['', /got an empty value/],
    ['mysql://root@db/vigil', /got a "mysql:" URL/],
    ['./data/vigil.db', /got no URL scheme/],
    ['file:', /without a path/],
    ['file::memory:', /in-memory SQLite is not supported/],
    ['postgresql://', /unparsable|no host/],
  ])('rejects %j naming DATABASE_URL and what it expects', (url, reason) => {
    expect(() => parseDatabaseUrl(url)).toThrow(/^DATABASE_URL must be `file:<path>` for SQLite .* `postgresql:\/\/user:password@host:5432\/database`/);
    expect(() => parseDatabaseUrl(url)).toThrow(reason);
  });
});

describe('describeDatabaseUrl', () => {
  it('masks the password and leaves everything else', () => {
    expect(describeDatabaseUrl('postgresql://vigil:s3cr%40t@db:5432/vigil')).toBe('postgresql://vigil:***@db:5432/vigil');
    expect(describeDatabaseUrl('postgres://vigil@db/vigil')).toBe('postgres://vigil@db/vigil');
    expect(describeDatabaseUrl('file:./data/vigil.db')).toBe('file:./data/vigil.db');
  });
});

describe('openDatabase', () => {
  let target: TestDatabase | undefined;
  let db: Database | undefined;
  afterEach(async () => {
    await db?.close();
    await target?.drop();
    db = target = undefined;
  });

  it('creates the SQLite folder and sets WAL, the busy timeout and foreign keys on the connection', async () => {
    target = await createTestDatabase('sqlite');
    const file = target.url.slice('file:'.length);
    expect(existsSync(dirname(file))).toBe(false);
    db = await openDatabase(target.url, { busyTimeoutMs: 1234 });
    expect(db.provider).toBe('sqlite');
    expect(existsSync(file)).toBe(true);
    const pragma = async (name: string) => Object.values((await db!.prisma.$queryRawUnsafe<Record<string, unknown>[]>(`PRAGMA ${name}`))[0] ?? {})[0];
    expect(await pragma('journal_mode')).toBe('wal');
    expect(Number(await pragma('busy_timeout'))).toBe(1234);
    expect(Number(await pragma('foreign_keys'))).toBe(1);
  });

  it('fails with a message naming DATABASE_URL, without the password, when PostgreSQL is unreachable', async () => {
    // Port 1 on loopback: nothing listens there, so the connection is refused at once.
    const attempt = openDatabase('postgresql://vigil:hunter2@127.0.0.1:1/vigil');
    await expect(attempt).rejects.toThrow(/^Could not open the database at DATABASE_URL \(postgresql:\/\/vigil:\*\*\*@127\.0\.0\.1:1\/vigil\)/);
    await expect(attempt).rejects.not.toThrow(/hunter2/);
  });
});

// Prisma CLI configuration, so operators can run `npx prisma migrate status|deploy` against the same
// database Vigil uses. Vigil itself applies migrations at start (src/store/migrate.ts) and does not
// need this file at runtime.
//
// Offline facts this relies on (docs/PLATFORM-FACTS §F, verified with prisma 6.19.3):
// - `engine: 'js'` + an adapter uses the bundled WASM schema engine, so nothing is downloaded.
// - DATABASE_URL must be set even for `generate` (scripts/prisma.mjs sets a dummy one).
// - PostgreSQL needs three workarounds, all in `postgresAdapter` below.
// The provider, schema and migrations folder follow DATABASE_URL: `postgres://` or `postgresql://`
// selects prisma/postgres/, anything else the SQLite default in prisma/.
// SQLite `file:` paths are relative to the working directory (better-sqlite3 opens them), not to
// the schema file as with Prisma's classic engines.
import { randomUUID } from 'node:crypto';
import { PrismaBetterSQLite3 } from '@prisma/adapter-better-sqlite3';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { defineConfig } from 'prisma/config';

const databaseUrl = process.env.DATABASE_URL ?? '';
const isPostgres = /^postgres(ql)?:\/\//i.test(databaseUrl);

export default defineConfig({
  experimental: { adapter: true },
  engine: 'js',
  schema: isPostgres ? 'prisma/postgres/schema.prisma' : 'prisma/schema.prisma',
  migrations: { path: isPostgres ? 'prisma/postgres/migrations' : 'prisma/migrations' },
  async adapter() {
    if (isPostgres) return postgresAdapter(databaseUrl);
    return sqliteAdapter(databaseUrl || 'file:./data/vigil.db');
  },
});

/**
 * `migrate diff --from-migrations` (and `migrate dev`) replay each migration into an in-memory shadow
 * database with one `executeRaw` of the whole script, which better-sqlite3's `prepare` rejects ("more
 * than one statement"; seen with 6.19.3). Scripts without parameters go through `executeScript` there.
 */
function sqliteAdapter(url: string): PrismaBetterSQLite3 {
  const factory = new PrismaBetterSQLite3({ url });
  const connectToShadowDb = factory.connectToShadowDb.bind(factory);
  factory.connectToShadowDb = async () => {
    const adapter = await connectToShadowDb();
    const executeRaw = adapter.executeRaw.bind(adapter);
    adapter.executeRaw = async (query) => {
      if (query.args.length > 0) return executeRaw(query);
      await adapter.executeScript(query.sql);
      return 0;
    };
    return adapter;
  };
  return factory;
}

/**
 * prisma/orm#27403 (fixed after 6.19.3): the schema engine cannot deserialise the `name` (19),
 * `char` (18) and `name[]`/`char[]` (1003/1002) columns of the catalogue queries it runs. Reporting
 * them as text / text[] makes `migrate *` work. pg-pool calls `query` with a callback and the
 * adapter's transactions use the promise form, so both are patched.
 */
const TEXT_FOR = new Map<number, number>([
  [18, 25],
  [19, 25],
  [1002, 1009],
  [1003, 1009],
]);

function reportNamesAsText<T>(result: T): T {
  for (const one of Array.isArray(result) ? result : [result]) {
    const fields = (one as { fields?: { dataTypeID: number }[] } | undefined)?.fields;
    for (const field of fields ?? []) field.dataTypeID = TEXT_FOR.get(field.dataTypeID) ?? field.dataTypeID;
  }
  return result;
}

class NameAsTextClient extends pg.Client {
  // pg's `query` has a dozen overloads; this forwards any of them unchanged.
  override query(...args: unknown[]): never {
    const last = args.at(-1);
    if (typeof last === 'function') {
      args[args.length - 1] = (err: unknown, res: unknown) => last(err, err ? res : reportNamesAsText(res));
    }
    const ret = (super.query as (...a: unknown[]) => unknown)(...args);
    if (ret instanceof Promise) return ret.then(reportNamesAsText) as never;
    return ret as never;
  }
}

/**
 * Discrete connection fields, not `connectionString`: adapter-pg builds the shadow database config by
 * spreading ours and setting `database`, and pg lets a connection string win over `database`, which
 * would make the "shadow" database the real one (PLATFORM-FACTS §F.4).
 */
function discreteConfig(url: string): pg.PoolConfig {
  const u = new URL(url);
  const sslmode = u.searchParams.get('sslmode');
  return {
    host: u.searchParams.get('host') ?? (decodeURIComponent(u.hostname) || 'localhost'),
    port: u.port ? Number(u.port) : 5432,
    user: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    database: decodeURIComponent(u.pathname.replace(/^\//, '')) || undefined,
    ...(sslmode === null ? {} : { ssl: sslmode === 'disable' ? false : { rejectUnauthorized: sslmode.startsWith('verify-') } }),
    Client: NameAsTextClient,
    // The CLI does not always end the adapter's pool; without this an idle connection keeps the
    // process alive for pg's 10 s idle timeout after every command.
    allowExitOnIdle: true,
  };
}

/**
 * adapter-pg 6.19.3 drops its shadow database while its own pool still holds connections, so the
 * DROP fails. Ours creates the shadow database, and drops it WITH (FORCE) after the adapter's own
 * dispose (PLATFORM-FACTS §F.5). The role needs CREATEDB.
 */
function postgresAdapter(url: string): PrismaPg {
  const config = discreteConfig(url);
  const factory = new PrismaPg(config);
  const admin = async <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client(config);
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };
  factory.connectToShadowDb = async () => {
    const database = `prisma_shadow_${randomUUID().replaceAll('-', '')}`;
    await admin((c) => c.query(`CREATE DATABASE "${database}"`));
    const adapter = await new PrismaPg({ ...config, database }).connect();
    const dispose = adapter.dispose.bind(adapter);
    adapter.dispose = async () => {
      await dispose();
      await admin((c) => c.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`));
    };
    return adapter;
  };
  return factory;
}

// Opens Vigil's store: SQLite (embedded default) or PostgreSQL (several replicas), both through
// Prisma 6.19 driver adapters and the clients that `node scripts/prisma.mjs generate` writes to
// node_modules/.prisma/vigil-{sqlite,postgres}. Schema changes are applied by ./migrate.ts.
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Logger } from 'pino';
import type { PrismaClient } from '../../node_modules/.prisma/vigil-sqlite/index.js';
import { withCleanText } from './sanitize.js';

export type {
  Prisma,
  Incident,
  Alert,
  Investigation,
  Hypothesis,
  Evidence,
  SteeringMessage,
  SlackPost,
  ProcessedDelivery,
  AuditEvent,
} from '../../node_modules/.prisma/vigil-sqlite/index.js';

/**
 * The store's Prisma client, built with `errorFormat: 'minimal'` (error messages carry Prisma's reason
 * without a source-code frame, which suits logs). Typed as the SQLite client; the PostgreSQL one has
 * the same model API.
 */
export type Db = PrismaClient;

export type Provider = 'sqlite' | 'postgresql';

export type Database = {
  prisma: Db;
  provider: Provider;
  /** DATABASE_URL as given. May hold a password: log `describeDatabaseUrl(url)` instead. */
  url: string;
  close(): Promise<void>;
};

export type OpenDatabaseOptions = {
  logger?: Logger;
  /** PostgreSQL: connections in this replica's pool (pg's default is 10). */
  poolSize?: number;
  /** SQLite: how long a writer waits for another's lock before failing (ms). */
  busyTimeoutMs?: number;
};

/** Where DATABASE_URL points. SQLite `file:` paths are resolved against the working directory. */
export type DatabaseTarget = { provider: 'sqlite'; file: string } | { provider: 'postgresql'; url: string };

const EXPECTED =
  'DATABASE_URL must be `file:<path>` for SQLite (e.g. file:./data/vigil.db) or ' +
  '`postgresql://user:password@host:5432/database` for PostgreSQL';

export function parseDatabaseUrl(url: string): DatabaseTarget {
  const trimmed = url.trim();
  if (/^postgres(ql)?:\/\//i.test(trimmed)) {
    let parsed: URL;
    try {
      parsed = new URL(trimmed);
    } catch {
      throw new Error(`${EXPECTED}; got an unparsable PostgreSQL URL`);
    }
    if (!parsed.hostname && !parsed.searchParams.get('host')) throw new Error(`${EXPECTED}; the PostgreSQL URL has no host`);
    return { provider: 'postgresql', url: trimmed };
  }
  if (/^file:/i.test(trimmed)) {
    // Prisma's classic SQLite URLs may carry `?connection_limit=…`; the path is what precedes it.
    const path = trimmed.slice('file:'.length).split('?')[0] ?? '';
    if (path === '') throw new Error(`${EXPECTED}; got "file:" without a path`);
    if (path === ':memory:' || path.startsWith(':memory:')) {
      throw new Error(`${EXPECTED}; in-memory SQLite is not supported (migrations use their own connection), use a file`);
    }
    return { provider: 'sqlite', file: resolve(path) };
  }
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(trimmed)?.[1];
  throw new Error(`${EXPECTED}; got ${scheme ? `a "${scheme}:" URL` : trimmed === '' ? 'an empty value' : 'no URL scheme'}`);
}

/** The URL with its password masked, for logs and error messages. */
export function describeDatabaseUrl(url: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/[^:/@]*:)[^@]*@/i, '$1***@');
}

/** The provider of a client or a transaction proxy: Prisma keeps the schema's provider on both. */
export function providerOf(client: object): Provider {
  return (client as { _activeProvider?: unknown })._activeProvider === 'postgresql' ? 'postgresql' : 'sqlite';
}

/** True when a Prisma call failed on a unique constraint (P2002), on either provider. */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'P2002';
}

export async function openDatabase(url: string, opts: OpenDatabaseOptions = {}): Promise<Database> {
  const target = parseDatabaseUrl(url);
  let prisma: Db | undefined;
  try {
    prisma = target.provider === 'sqlite' ? await openSqlite(target.file, opts) : await openPostgres(target.url, opts);
    await prisma.$connect();
    if (target.provider === 'sqlite') await tuneSqlite(prisma, opts.busyTimeoutMs ?? 5000);
    else await prisma.$queryRawUnsafe('SELECT 1');
  } catch (error) {
    await prisma?.$disconnect().catch(() => undefined);
    // Prisma prefixes "Invalid `prisma.$queryRawUnsafe()` invocation:" and blank lines; keep the reason.
    const reason = (error instanceof Error ? error.message : String(error))
      .replace(/^\s*Invalid `[^`]*` invocation:/, '')
      .replace(/\s+/g, ' ')
      .trim();
    throw new Error(`Could not open the database at DATABASE_URL (${describeDatabaseUrl(url)}): ${reason}`, { cause: error });
  }
  opts.logger?.info({ provider: target.provider, url: describeDatabaseUrl(url) }, 'database opened');
  const base = prisma;
  return {
    // Every write is cleaned of what PostgreSQL (NUL) or Prisma (lone surrogates) refuses: ./sanitize.ts.
    prisma: withCleanText(base),
    provider: target.provider,
    url,
    close: () => base.$disconnect(),
  };
}

async function openSqlite(file: string, opts: OpenDatabaseOptions): Promise<Db> {
  mkdirSync(dirname(file), { recursive: true });
  const [{ PrismaBetterSQLite3 }, { PrismaClient: SqliteClient }] = await Promise.all([
    import('@prisma/adapter-better-sqlite3'),
    import('../../node_modules/.prisma/vigil-sqlite/index.js'),
  ]);
  // adapter-better-sqlite3 6.19.3 takes better-sqlite3's own options plus `url`; `timeout` is the busy timeout.
  const adapter = new PrismaBetterSQLite3({ url: `file:${file}`, timeout: opts.busyTimeoutMs ?? 5000 });
  return new SqliteClient({ adapter, errorFormat: 'minimal' });
}

/**
 * The adapter holds a single better-sqlite3 connection for the client's life, so connection-level
 * pragmas set once here stay in force. WAL lets readers run while the investigation worker writes.
 */
async function tuneSqlite(prisma: Db, busyTimeoutMs: number): Promise<void> {
  await prisma.$queryRawUnsafe('PRAGMA journal_mode = WAL');
  await prisma.$queryRawUnsafe(`PRAGMA busy_timeout = ${Math.max(0, Math.trunc(busyTimeoutMs))}`);
  await prisma.$queryRawUnsafe('PRAGMA foreign_keys = ON');
}

async function openPostgres(url: string, opts: OpenDatabaseOptions): Promise<Db> {
  const [{ PrismaPg }, { PrismaClient: PostgresClient }] = await Promise.all([
    import('@prisma/adapter-pg'),
    import('../../node_modules/.prisma/vigil-postgres/index.js'),
  ]);
  // connectionString is safe here: the shadow-database trap (PLATFORM-FACTS §F.4) is CLI-only.
  const adapter = new PrismaPg(
    { connectionString: url, ...(opts.poolSize ? { max: opts.poolSize } : {}) },
    // The error carries the whole pg client (connection state, types, buffers): log what it says, not it.
    { onPoolError: (err) => opts.logger?.warn({ err: err.message, code: (err as { code?: string }).code }, 'idle PostgreSQL connection failed; the pool opens a new one') },
  );
  // Both clients are generated from the same models (test/store/schema-parity.test.ts), so their
  // model delegates have the same shapes; only provider internals differ. One `Db` type keeps every
  // repository provider-agnostic.
  return new PostgresClient({ adapter, errorFormat: 'minimal' }) as unknown as Db;
}

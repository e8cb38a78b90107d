// A migrated throwaway database per test: tampering with the chain must not leak between tests.
import { openDatabase, type Database, type Provider } from '../../src/store/db.js';
import { applyMigrations } from '../../src/store/migrate.js';
import { createTestDatabase, type TestDatabase } from '../store/test-databases.js';

export type AuditTestDb = { target: TestDatabase; db: Database; close(): Promise<void> };

export async function freshDatabase(provider: Provider): Promise<AuditTestDb> {
  const target = await createTestDatabase(provider);
  const db = await openDatabase(target.url);
  await applyMigrations(db);
  return {
    target,
    db,
    close: async () => {
      await db.close();
      await target.drop();
    },
  };
}

export function newIncident(db: Database, fingerprint = 'HighErrorRate|shop/checkout') {
  return db.prisma.incident.create({
    data: { fingerprint, title: 'checkout 5xx', alertName: 'HighErrorRate', source: 'alertmanager', channelId: 'C0ALERTS' },
  });
}

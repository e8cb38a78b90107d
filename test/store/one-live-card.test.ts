/**
 * One live approval card per incident, action and target is held by the database (a partial unique
 * index), not only by the service's check before its insert: a second pending row for the same change
 * is refused on both stores, while a dead card (executed, cancelled, …) does not block a new one.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isUniqueViolation, openDatabase, type Database } from '../../src/store/db.js';
import { applyMigrations } from '../../src/store/migrate.js';
import { createTestDatabase, testProviders, type TestDatabase } from './test-databases.js';

let target: TestDatabase | undefined;
let db: Database | undefined;
afterEach(async () => {
  await db?.close();
  await target?.drop();
  db = undefined;
  target = undefined;
});

const row = (incidentId: string, hypothesisKey: string, status: string) => ({
  incidentId,
  hypothesisKey,
  action: 'scale',
  targetKind: 'Deployment',
  targetNs: 'shop',
  targetName: 'checkout',
  proposal: '{}',
  decision: '{}',
  status,
  requestedBy: 'vigil',
  channelId: 'C0ALERTS',
});

describe.each(testProviders)('one live card per change (%s)', (provider) => {
  it('refuses a second live request for the same incident, action and target', async () => {
    target = await createTestDatabase(provider);
    db = await openDatabase(target.url);
    await applyMigrations(db);
    const p = db.prisma;
    const incident = await p.incident.create({ data: { fingerprint: 'f1', title: 't', alertName: 'KubeDeploymentReplicasMismatch', source: 'alertmanager', channelId: 'C0ALERTS' } });
    await p.approvalRequest.create({ data: row(incident.id, 'h1', 'pending') });
    const err = await p.approvalRequest.create({ data: row(incident.id, 'model:h1-restated', 'pending') }).catch((e: unknown) => e);
    expect(isUniqueViolation(err)).toBe(true);

    // Once the first card is dead, the same change may be proposed again.
    await p.approvalRequest.updateMany({ where: { incidentId: incident.id, hypothesisKey: 'h1' }, data: { status: 'executed' } });
    await p.approvalRequest.create({ data: row(incident.id, 'h2', 'approved') });
    // Refused and other dead statuses never count as live.
    await p.approvalRequest.create({ data: row(incident.id, 'h3', 'refused') });
    expect(await p.approvalRequest.count({ where: { incidentId: incident.id } })).toBe(3);
  });
});

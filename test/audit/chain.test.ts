import { afterEach, describe, expect, it } from 'vitest';
import { auditHash, GENESIS_HASH } from '../../src/audit/chain.js';
import { verifyAuditChain } from '../../src/audit/verify.js';
import { recordAudit } from '../../src/incidents/audit.js';
import { openDatabase, type Database } from '../../src/store/db.js';
import { testProviders } from '../store/test-databases.js';
import { freshDatabase, newIncident, type AuditTestDb } from './helpers.js';

describe.each(testProviders)('audit hash chain on %s', (provider) => {
  let t: AuditTestDb | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  const rows = (db: Database) => db.prisma.auditEvent.findMany({ orderBy: { id: 'asc' } });

  /** Five events through recordAudit, the third inside a caller's transaction with another write. */
  async function fiveEvents(db: Database) {
    const incident = await newIncident(db);
    await recordAudit(db.prisma, { incidentId: incident.id, actor: 'vigil', kind: 'incident.opened', data: { alert: 'HighErrorRate' } });
    await recordAudit(db.prisma, { incidentId: incident.id, actor: 'U123', kind: 'steer', data: { text: 'look at the deploy' } });
    await db.prisma.$transaction(async (tx) => {
      await tx.incident.update({ where: { id: incident.id }, data: { status: 'resolved' } });
      await recordAudit(tx, { incidentId: incident.id, actor: 'U123', kind: 'incident.resolved' });
    });
    await recordAudit(db.prisma, { actor: 'vigil', kind: 'stop.global', data: { stopped: true } });
    await recordAudit(db.prisma, { incidentId: incident.id, actor: 'vigil', kind: 'post', at: new Date('2026-11-29T10:00:00.123Z') });
    return incident;
  }

  it('links every row to the one before it, also when written inside a transaction', async () => {
    t = await freshDatabase(provider);
    const incident = await fiveEvents(t.db);
    const all = await rows(t.db);
    expect(all).toHaveLength(5);
    expect(all[0]!.prevHash).toBe(GENESIS_HASH);
    for (let i = 1; i < all.length; i++) expect(all[i]!.prevHash).toBe(all[i - 1]!.hash);
    for (const r of all) {
      expect(r.hash).toMatch(/^[0-9a-f]{64}$/);
      expect(r.hash).toBe(auditHash(r.prevHash!, { incidentRef: r.incidentRef, actor: r.actor, kind: r.kind, data: r.data, at: r.at }));
    }
    expect(all[2]).toMatchObject({ incidentId: incident.id, incidentRef: incident.id, kind: 'incident.resolved' });
    expect(all[4]!.at.toISOString()).toBe('2026-11-29T10:00:00.123Z');
    expect(await verifyAuditChain(t.db.prisma)).toEqual({ ok: true, checked: 5, unsealed: 0, head: all[4]!.hash, headId: all[4]!.id, problems: [] });
  });

  it('rolls the audit row back with the transaction that wrote it', async () => {
    t = await freshDatabase(provider);
    await recordAudit(t.db.prisma, { actor: 'vigil', kind: 'first' });
    await expect(
      t.db.prisma.$transaction(async (tx) => {
        await recordAudit(tx, { actor: 'vigil', kind: 'doomed' });
        throw new Error('caller failed');
      }),
    ).rejects.toThrow('caller failed');
    await recordAudit(t.db.prisma, { actor: 'vigil', kind: 'second' });
    expect((await rows(t.db)).map((r) => r.kind)).toEqual(['first', 'second']);
    expect((await verifyAuditChain(t.db.prisma)).ok).toBe(true);
  });

  it('keeps the chain valid when the incident is deleted (incidentId set to NULL)', async () => {
    t = await freshDatabase(provider);
    const incident = await fiveEvents(t.db);
    await t.db.prisma.incident.delete({ where: { id: incident.id } });
    expect((await rows(t.db)).filter((r) => r.incidentId === null)).toHaveLength(5);
    expect((await verifyAuditChain(t.db.prisma)).ok).toBe(true);
  });

  it('names the row whose data was edited', async () => {
    t = await freshDatabase(provider);
    await fiveEvents(t.db);
    const target = (await rows(t.db))[1]!;
    await t.db.prisma.$executeRawUnsafe(`UPDATE "AuditEvent" SET "data" = '{"text":"nothing to see"}' WHERE "id" = ${target.id}`);
    const result = await verifyAuditChain(t.db.prisma);
    expect(result.ok).toBe(false);
    expect(result.problems).toEqual([{ id: target.id, problem: 'edited', detail: expect.any(String) as string }]);
  });

  it('names the row whose incidentId was changed to another live incident', async () => {
    t = await freshDatabase(provider);
    await fiveEvents(t.db);
    const other = await newIncident(t.db, 'other');
    const target = (await rows(t.db))[0]!;
    await t.db.prisma.$executeRawUnsafe(`UPDATE "AuditEvent" SET "incidentId" = '${other.id}' WHERE "id" = ${target.id}`);
    expect((await verifyAuditChain(t.db.prisma)).problems).toEqual([{ id: target.id, problem: 'edited', detail: expect.stringContaining('incidentId') as string }]);
  });

  it('names the row after a deleted one', async () => {
    t = await freshDatabase(provider);
    await fiveEvents(t.db);
    const all = await rows(t.db);
    await t.db.prisma.$executeRawUnsafe(`DELETE FROM "AuditEvent" WHERE "id" = ${all[2]!.id}`);
    const result = await verifyAuditChain(t.db.prisma);
    expect(result.ok).toBe(false);
    expect(result.checked).toBe(4);
    expect(result.problems).toEqual([{ id: all[3]!.id, problem: 'removed_before', detail: expect.any(String) as string }]);
  });

  it('detects a deleted first row', async () => {
    t = await freshDatabase(provider);
    await fiveEvents(t.db);
    const all = await rows(t.db);
    await t.db.prisma.$executeRawUnsafe(`DELETE FROM "AuditEvent" WHERE "id" = ${all[0]!.id}`);
    expect((await verifyAuditChain(t.db.prisma)).problems).toEqual([{ id: all[1]!.id, problem: 'removed_before', detail: expect.any(String) as string }]);
  });

  it('names both rows of a swapped pair as reordered', async () => {
    t = await freshDatabase(provider);
    await fiveEvents(t.db);
    const all = await rows(t.db);
    const [a, b] = [all[1]!, all[2]!];
    const content = (r: typeof a) => ({ incidentId: r.incidentId, incidentRef: r.incidentRef, actor: r.actor, kind: r.kind, data: r.data, at: r.at, prevHash: r.prevHash, hash: r.hash });
    // prevHash is unique: park one row's link while the contents cross over.
    await t.db.prisma.auditEvent.update({ where: { id: a.id }, data: { prevHash: null } });
    await t.db.prisma.auditEvent.update({ where: { id: b.id }, data: content(a) });
    await t.db.prisma.auditEvent.update({ where: { id: a.id }, data: content(b) });
    const result = await verifyAuditChain(t.db.prisma);
    expect(result.ok).toBe(false);
    expect(result.problems.map((p) => [p.id, p.problem])).toEqual([
      [a.id, 'reordered'],
      [b.id, 'reordered'],
    ]);
  });

  it('flags a row appended with a forged link (fork) as a broken link', async () => {
    t = await freshDatabase(provider);
    await fiveEvents(t.db);
    const all = await rows(t.db);
    // The unique index refuses a second successor of row 2 outright …
    const forged = { actor: 'mallory', kind: 'x', data: '{}', at: new Date(), incidentRef: null };
    const write = (prevHash: string) => t!.db.prisma.auditEvent.create({ data: { ...forged, prevHash, hash: auditHash(prevHash, forged) } });
    await expect(write(all[1]!.hash!)).rejects.toMatchObject({ code: 'P2002' });
    // … so a forger re-links to the genesis after nulling the first row's link.
    await t.db.prisma.auditEvent.update({ where: { id: all[0]!.id }, data: { prevHash: null } });
    const row = await write(GENESIS_HASH);
    const problems = (await verifyAuditChain(t.db.prisma)).problems;
    expect(problems).toContainEqual({ id: all[0]!.id, problem: 'edited', detail: expect.any(String) as string });
    expect(problems).toContainEqual({ id: row.id, problem: 'broken_link', detail: expect.any(String) as string });
  });

  it('seals rows written before the chain existed on the next append', async () => {
    t = await freshDatabase(provider);
    const incident = await newIncident(t.db);
    // As the pre-migration code wrote them (the migration copies incidentId into incidentRef).
    await t.db.prisma.auditEvent.create({ data: { incidentId: incident.id, incidentRef: incident.id, actor: 'vigil', kind: 'legacy.1' } });
    await t.db.prisma.auditEvent.create({ data: { actor: 'U1', kind: 'legacy.2', data: '{"a":1}' } });
    expect(await verifyAuditChain(t.db.prisma)).toMatchObject({ ok: true, checked: 0, unsealed: 2 });
    await recordAudit(t.db.prisma, { incidentId: incident.id, actor: 'vigil', kind: 'new' });
    const all = await rows(t.db);
    expect(all.map((r) => r.prevHash)).toEqual([GENESIS_HASH, all[0]!.hash, all[1]!.hash]);
    expect(await verifyAuditChain(t.db.prisma)).toMatchObject({ ok: true, checked: 3, unsealed: 0 });
  });

  // Two SQLite clients in one process cannot take turns: better-sqlite3 waits for the file lock
  // synchronously, blocking the event loop the lock holder needs to commit. SQLite has one writer
  // process in production, so there the concurrency that matters is within one client.
  it('keeps one linear chain under concurrent appends from one client', async () => {
    t = await freshDatabase(provider);
    await Promise.all(Array.from({ length: 30 }, (_, i) => recordAudit(t!.db.prisma, { actor: 'vigil', kind: 'burst', data: { i } })));
    const all = await rows(t.db);
    expect(all).toHaveLength(30);
    expect(await verifyAuditChain(t.db.prisma)).toMatchObject({ ok: true, checked: 30, problems: [] });
  });

  it.runIf(provider === 'postgresql')('keeps one linear chain under concurrent appends from two clients (replicas)', async () => {
    t = await freshDatabase(provider);
    const second = await openDatabase(t.target.url);
    try {
      const burst = (db: Database, who: string) =>
        Promise.all(Array.from({ length: 15 }, (_, i) => recordAudit(db.prisma, { actor: who, kind: 'burst', data: { i } })));
      await Promise.all([burst(t.db, 'replica-a'), burst(second, 'replica-b')]);
    } finally {
      await second.close();
    }
    const all = await rows(t.db);
    expect(all).toHaveLength(30);
    expect(new Set(all.map((r) => r.prevHash)).size).toBe(30);
    expect(await verifyAuditChain(t.db.prisma)).toMatchObject({ ok: true, checked: 30, problems: [] });
  });
});

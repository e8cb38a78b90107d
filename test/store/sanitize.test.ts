import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/store/db.js';
import { applyMigrations } from '../../src/store/migrate.js';
import { cleanDeep, cleanText } from '../../src/store/sanitize.js';
import { createTestDatabase, testProviders, type TestDatabase } from './test-databases.js';

describe('cleanText / cleanDeep', () => {
  it('replaces NUL and unpaired surrogates with U+FFFD and keeps paired ones', () => {
    expect(cleanText('a\u0000b')).toBe('a\uFFFDb');
    expect(cleanText('x\uD800')).toBe('x\uFFFD');
    expect(cleanText('\uDC00y')).toBe('\uFFFDy');
    expect(cleanText('\uDC00\uD800')).toBe('\uFFFD\uFFFD');
    expect(cleanText('ok 😀 \u00e9')).toBe('ok 😀 \u00e9');
    expect(cleanText('\uD83D\uDE00\uD83D')).toBe('😀\uFFFD');
  });

  it('walks plain objects and arrays (keys too), leaves other objects alone, and copies nothing that is clean', () => {
    const when = new Date(0);
    const bytes = Buffer.from([0, 1]);
    const clean = { a: ['x', { b: 1 }], when, bytes };
    expect(cleanDeep(clean)).toBe(clean);
    const dirty = { data: { summary: 'p\u0000', list: ['ok', 'q\uD800'], ['k\u0000']: true, when, bytes }, n: 1, nil: null };
    const out = cleanDeep(dirty);
    expect(out).toEqual({ data: { summary: 'p\uFFFD', list: ['ok', 'q\uFFFD'], ['k\uFFFD']: true, when, bytes }, n: 1, nil: null });
    expect(out.data.when).toBe(when);
    expect(out.data.bytes).toBe(bytes);
    expect(dirty.data.summary).toBe('p\u0000'); // the input is not mutated
  });
});

describe.each(testProviders)('writes through the store on %s', (provider) => {
  let target: TestDatabase;
  let db: Database;
  beforeAll(async () => {
    target = await createTestDatabase(provider);
    db = await openDatabase(target.url);
    await applyMigrations(db);
  });
  afterAll(async () => {
    await db?.close();
    await target?.drop();
  });

  it('stores NUL and lone surrogates as U+FFFD in create, nested create, update, upsert and createMany, and finds them by the raw key', async () => {
    const incident = await db.prisma.incident.create({
      data: {
        fingerprint: 'Crash|shop/cart\u0000',
        title: 'cart \uD800 panics',
        alertName: 'KubePodCrashLooping',
        source: 'alertmanager',
        channelId: 'C0ALERTS',
        steering: { create: { channelId: 'C0ALERTS', messageTs: '1.1', userId: 'U1', text: 'look at \u0000 this' } },
      },
      include: { steering: true },
    });
    expect(incident.title).toBe('cart \uFFFD panics');
    expect(incident.steering[0]!.text).toBe('look at \uFFFD this');
    // A lookup by the raw value is cleaned the same way, so it finds the row.
    expect((await db.prisma.incident.findFirstOrThrow({ where: { fingerprint: 'Crash|shop/cart\u0000' } })).id).toBe(incident.id);
    await db.prisma.$transaction(async (tx) => {
      await tx.incident.update({ where: { id: incident.id }, data: { title: 'in tx \uDC00' } });
    });
    expect((await db.prisma.incident.findUniqueOrThrow({ where: { id: incident.id } })).title).toBe('in tx \uFFFD');
    const change = { at: new Date(), actor: 'a\u0000', kind: 'flag', targetKind: 'FeatureFlag', targetName: 'f', source: 'flags', summary: 's\uD800', citationRef: 'r' };
    await db.prisma.changeEvent.upsert({ where: { dedupeKey: 'k\u0000' }, create: { ...change, dedupeKey: 'k\u0000' }, update: {} });
    await db.prisma.changeEvent.createMany({ data: [{ ...change, dedupeKey: 'm\uD800' }] });
    const rows = await db.prisma.changeEvent.findMany({ orderBy: { dedupeKey: 'asc' } });
    expect(rows.map((r) => [r.dedupeKey, r.actor, r.summary])).toEqual([
      ['k\uFFFD', 'a\uFFFD', 's\uFFFD'],
      ['m\uFFFD', 'a\uFFFD', 's\uFFFD'],
    ]);
  });
});

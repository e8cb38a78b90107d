import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isUniqueViolation, openDatabase, type Database } from '../../src/store/db.js';
import { applyMigrations } from '../../src/store/migrate.js';
import { createTestDatabase, testProviders, type TestDatabase } from './test-databases.js';

/** Runs `write` and returns the Prisma error code it failed with. */
async function failureCode(write: () => Promise<unknown>): Promise<unknown> {
  try {
    await write();
  } catch (error) {
    return (error as { code?: unknown }).code;
  }
  throw new Error('expected the write to fail');
}

describe.each(testProviders)('store models on %s', (provider) => {
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

  async function newIncident(fingerprint: string) {
    return db.prisma.incident.create({
      data: { fingerprint, title: 'checkout 5xx', alertName: 'HighErrorRate', source: 'alertmanager', channelId: 'C0ALERTS' },
    });
  }

  it('stores an incident with every related record and reads it back', async () => {
    const incident = await db.prisma.incident.create({
      data: {
        fingerprint: 'HighErrorRate|shop/checkout',
        title: 'checkout 5xx',
        alertName: 'HighErrorRate',
        severity: 'critical',
        namespace: 'shop',
        service: 'checkout',
        source: 'alertmanager',
        channelId: 'C0ALERTS',
        threadTs: '1700000000.000100',
        alerts: {
          create: {
            source: 'alertmanager',
            status: 'firing',
            fingerprint: 'HighErrorRate|shop/checkout',
            title: 'checkout 5xx',
            dedupeKey: 'slack:C0ALERTS:1700000000.000100:firing',
            payload: '{"labels":{}}',
          },
        },
        steering: { create: { channelId: 'C0ALERTS', messageTs: '1700000001.000200', userId: 'U1', text: 'check the deploy' } },
        posts: { create: { purpose: 'header', channelId: 'C0ALERTS', threadTs: '1700000000.000100', ts: '1700000002.000300' } },
        auditEvents: { create: { actor: 'vigil', kind: 'incident.opened', data: '{"alerts":1}' } },
      },
    });
    const investigation = await db.prisma.investigation.create({ data: { incidentId: incident.id, state: 'running', step: 'evidence' } });
    const hypothesis = await db.prisma.hypothesis.create({
      data: {
        investigationId: investigation.id,
        key: 'rollout:shop/checkout',
        label: 'H1',
        ordinal: 1,
        analyzer: 'rollout',
        status: 'supported',
        confidence: 0.82,
        title: 'Bad rollout of checkout',
        mechanism: 'new image crashes on start',
        evidence: {
          create: {
            investigationId: investigation.id,
            stance: 'supports',
            kind: 'k8s.rollout',
            summary: 'checkout rolled out 2 minutes before the alert',
            citationSource: 'kubernetes',
            citationRef: 'deployment/shop/checkout',
            rangeFrom: new Date('2024-05-01T14:00:00Z'),
            rangeTo: new Date('2024-05-01T14:05:00Z'),
          },
        },
      },
    });
    await db.prisma.processedDelivery.create({ data: { key: 'event:Ev01' } });

    const stored = await db.prisma.incident.findUniqueOrThrow({
      where: { id: incident.id },
      include: {
        alerts: true,
        steering: true,
        posts: true,
        auditEvents: true,
        investigations: { include: { hypotheses: { include: { evidence: true } }, evidence: true } },
      },
    });
    expect(stored.status).toBe('open');
    expect(stored.alertCount).toBe(1);
    expect(stored.alerts.map((a) => a.dedupeKey)).toEqual(['slack:C0ALERTS:1700000000.000100:firing']);
    expect(stored.steering.map((s) => s.text)).toEqual(['check the deploy']);
    expect(stored.posts.map((p) => p.ts)).toEqual(['1700000002.000300']);
    expect(stored.auditEvents.map((e) => [e.actor, e.kind, typeof e.id])).toEqual([['vigil', 'incident.opened', 'number']]);
    const [inv] = stored.investigations;
    expect(inv?.context).toBe('{}');
    expect(inv?.hypotheses.map((h) => [h.id, h.confidence])).toEqual([[hypothesis.id, 0.82]]);
    expect(inv?.hypotheses[0]?.evidence[0]?.rangeFrom?.toISOString()).toBe('2024-05-01T14:00:00.000Z');
    expect(inv?.evidence).toHaveLength(1);
    expect(await db.prisma.processedDelivery.findUnique({ where: { key: 'event:Ev01' } })).not.toBeNull();

    const updated = await db.prisma.investigation.update({ where: { id: investigation.id }, data: { state: 'done', finishedAt: new Date() } });
    expect(updated.updatedAt.getTime()).toBeGreaterThanOrEqual(investigation.updatedAt.getTime());
  });

  it('rejects duplicates of every unique key with P2002', async () => {
    const incident = await newIncident('dup');
    const investigation = await db.prisma.investigation.create({ data: { incidentId: incident.id } });
    const alert = {
      incidentId: incident.id,
      source: 'grafana',
      status: 'firing',
      fingerprint: 'dup',
      title: 't',
      dedupeKey: 'grafana:dup',
      payload: '{}',
    };
    const hypothesis = {
      investigationId: investigation.id,
      key: 'k',
      label: 'H1',
      ordinal: 1,
      analyzer: 'a',
      status: 'open',
      confidence: 0.5,
      title: 't',
      mechanism: 'm',
    };
    const steering = { incidentId: incident.id, channelId: 'C1', messageTs: '1.1', userId: 'U1', text: 'x' };
    const post = { incidentId: incident.id, purpose: 'board', channelId: 'C1' };
    const writes: (() => Promise<unknown>)[] = [
      () => db.prisma.alert.create({ data: alert }),
      () => db.prisma.hypothesis.create({ data: hypothesis }),
      () => db.prisma.steeringMessage.create({ data: steering }),
      () => db.prisma.slackPost.create({ data: post }),
      () => db.prisma.processedDelivery.create({ data: { key: 'action:1.2' } }),
    ];
    for (const write of writes) {
      await write();
      expect(await failureCode(write)).toBe('P2002');
    }
    await expect(db.prisma.processedDelivery.create({ data: { key: 'action:1.2' } }).catch((e: unknown) => isUniqueViolation(e))).resolves.toBe(true);
  });

  it('cascades incident deletion to its records and keeps the audit trail', async () => {
    const incident = await newIncident('cascade');
    await db.prisma.alert.create({
      data: { incidentId: incident.id, source: 's', status: 'firing', fingerprint: 'cascade', title: 't', dedupeKey: 'cascade:1', payload: '{}' },
    });
    const audit = await db.prisma.auditEvent.create({ data: { incidentId: incident.id, actor: 'U1', kind: 'steer' } });
    await db.prisma.incident.delete({ where: { id: incident.id } });
    expect(await db.prisma.alert.count({ where: { dedupeKey: 'cascade:1' } })).toBe(0);
    expect((await db.prisma.auditEvent.findUniqueOrThrow({ where: { id: audit.id } })).incidentId).toBeNull();
  });

  it('rejects a record whose parent does not exist', async () => {
    expect(await failureCode(() => db.prisma.investigation.create({ data: { incidentId: 'no-such-incident' } }))).toBe('P2003');
  });
});

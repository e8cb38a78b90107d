import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runAuditCommand, type CliIo } from '../../src/audit/cli.js';
import { exportIncident } from '../../src/audit/export.js';
import { recordAudit } from '../../src/incidents/audit.js';
import { createRedactor } from '../../src/redact/index.js';
import type { Database } from '../../src/store/db.js';
import { testProviders } from '../store/test-databases.js';
import { freshDatabase, newIncident, type AuditTestDb } from './helpers.js';

// A GitHub token shape, split so repository scanners do not flag the fixture. It stands for a secret
// that slipped past redaction into the store: the export must not carry it.
const PLANTED = 'gh' + 'p_' + 'Zq8vN3kR7tW2yB5mC9xL4dF6hJ1sA0gE7pQ3';

function captureIo(): CliIo & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (l) => stdout.push(l), err: (l) => stderr.push(l) };
}

async function seedIncident(db: Database) {
  const p = db.prisma;
  const incident = await newIncident(db);
  await p.alert.create({
    data: { incidentId: incident.id, source: 'alertmanager', status: 'firing', fingerprint: incident.fingerprint, title: 'checkout 5xx', dedupeKey: 'a:1', payload: '{"labels":{"service":"checkout"}}' },
  });
  const inv = await p.investigation.create({ data: { incidentId: incident.id, state: 'done', context: '{"namespace":"shop"}' } });
  const hyp = await p.hypothesis.create({
    data: { investigationId: inv.id, key: 'deploy:checkout', label: 'H1', ordinal: 1, analyzer: 'deploy-regression', status: 'supported', confidence: 0.8, title: 'Bad release of checkout', mechanism: 'new image crashes' },
  });
  await p.evidence.create({
    data: { investigationId: inv.id, hypothesisId: hyp.id, stance: 'supports', kind: 'rollout', summary: 'rollout 5 minutes before errors', citationSource: 'kubernetes', citationRef: 'deployment/shop/checkout' },
  });
  await p.steeringMessage.create({ data: { incidentId: incident.id, channelId: 'C0ALERTS', messageTs: '1.2', userId: 'U123', text: `try the token ${PLANTED}` } });
  const req = await p.approvalRequest.create({
    data: { incidentId: incident.id, hypothesisKey: 'deploy:checkout', action: 'rollback', targetKind: 'Deployment', targetNs: 'shop', targetName: 'checkout', proposal: '{"action":"rollback"}', decision: '{"kind":"approve"}', requestedBy: 'vigil', channelId: 'C0ALERTS' },
  });
  await p.approvalDecision.create({ data: { requestId: req.id, userId: 'U123', decision: 'approve' } });
  await p.slackPost.create({ data: { incidentId: incident.id, purpose: 'board', channelId: 'C0ALERTS', ts: '1.3' } });
  await recordAudit(p, { incidentId: incident.id, actor: 'vigil', kind: 'incident.opened', data: { alert: 'HighErrorRate' } });
  await recordAudit(p, { incidentId: incident.id, actor: 'U123', kind: 'steer', data: { text: `header Authorization: Bearer ${PLANTED}` } });
  const other = await newIncident(db, 'other');
  await recordAudit(p, { incidentId: other.id, actor: 'vigil', kind: 'incident.opened' });
  return incident;
}

describe.each(testProviders)('audit export and CLI on %s', (provider) => {
  let t: AuditTestDb | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('exports the whole record of one incident without the planted secret', async () => {
    expect(createRedactor().findings(PLANTED).length).toBeGreaterThan(0);
    t = await freshDatabase(provider);
    const incident = await seedIncident(t.db);
    const doc = (await exportIncident(t.db.prisma, incident.id))!;
    expect(doc.incident).toMatchObject({ id: incident.id, title: 'checkout 5xx' });
    expect(doc.alerts).toEqual([expect.objectContaining({ payload: { labels: { service: 'checkout' } } })]);
    expect(doc.investigations).toEqual([
      expect.objectContaining({
        context: { namespace: 'shop' },
        hypotheses: [expect.objectContaining({ label: 'H1', evidence: [expect.objectContaining({ summary: 'rollout 5 minutes before errors' })] })],
      }),
    ]);
    expect(doc.steering).toHaveLength(1);
    expect(doc.approvals).toEqual([expect.objectContaining({ action: 'rollback', decisions: [expect.objectContaining({ userId: 'U123', decision: 'approve' })] })]);
    expect(doc.slackPosts).toEqual([expect.objectContaining({ purpose: 'board' })]);
    expect((doc.auditEvents as { kind: string; hash: string }[]).map((e) => e.kind)).toEqual(['incident.opened', 'steer']);
    const text = JSON.stringify(doc);
    expect(text).not.toContain(PLANTED);
    expect(text).toContain('[REDACTED:');
    expect(await exportIncident(t.db.prisma, 'no-such-incident')).toBeNull();
  });

  it('vigil audit verify exits 0 on an intact trail and 1 naming the tampered row', async () => {
    t = await freshDatabase(provider);
    await seedIncident(t.db);
    const env = { DATABASE_URL: t.target.url };
    const ok = captureIo();
    expect(await runAuditCommand(['audit', 'verify'], env, ok)).toBe(0);
    expect(ok.stdout.join('\n')).toMatch(/intact: 3 row\(s\) checked/);
    const second = (await t.db.prisma.auditEvent.findMany({ orderBy: { id: 'asc' } }))[1]!;
    await t.db.prisma.$executeRawUnsafe(`UPDATE "AuditEvent" SET "actor" = 'U999' WHERE "id" = ${second.id}`);
    const bad = captureIo();
    expect(await runAuditCommand(['audit', 'verify'], env, bad)).toBe(1);
    expect(bad.stderr.join('\n')).toContain(`row ${second.id}: edited`);
  });

  it('vigil export prints or writes the JSON, and exits 2 for an unknown incident or bad usage', async () => {
    t = await freshDatabase(provider);
    const incident = await seedIncident(t.db);
    const env = { DATABASE_URL: t.target.url };
    const printed = captureIo();
    expect(await runAuditCommand(['export', incident.id], env, printed)).toBe(0);
    expect(JSON.parse(printed.stdout.join('\n'))).toMatchObject({ format: 'vigil.incident-export/v1', incident: { id: incident.id } });

    dir = mkdtempSync(join(tmpdir(), 'vigil-export-'));
    const file = join(dir, 'incident.json');
    expect(await runAuditCommand(['export', incident.id, '--out', file], env, captureIo())).toBe(0);
    const written = readFileSync(file, 'utf8');
    expect(JSON.parse(written)).toMatchObject({ incident: { id: incident.id } });
    expect(written).not.toContain(PLANTED);

    const missing = captureIo();
    expect(await runAuditCommand(['export', 'no-such-incident'], env, missing)).toBe(2);
    expect(missing.stderr.join('\n')).toContain('No incident with id "no-such-incident"');
    expect(await runAuditCommand(['export'], env, captureIo())).toBe(2);
    expect(await runAuditCommand(['audit', 'bogus'], env, captureIo())).toBe(2);
  });
});

// The rows the postmortem and `vigil export` rely on are sealed in the audit chain (src/audit/records.ts):
// an SQL edit, insertion or deletion behind Vigil's back fails `vigil audit verify`, which names the row,
// the field, the current and the sealed value. The rows are written through the product's own write
// paths (IncidentService, storeFindings, the approval helpers the ApprovalService uses).
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { runAuditCommand, type CliIo } from '../../src/audit/cli.js';
import { exportIncident } from '../../src/audit/export.js';
import { sealedWrite, updateApproval, BASELINE_KIND, SEAL_KIND } from '../../src/audit/records.js';
import { verifyAuditTrail } from '../../src/audit/verify.js';
import { transition } from '../../src/approvals/store.js';
import { storeFindings } from '../../src/incidents/findings.js';
import { IncidentService } from '../../src/incidents/service.js';
import { createRedactor } from '../../src/redact/index.js';
import type { Database } from '../../src/store/db.js';
import type { Finding } from '../../src/triage/types.js';
import { testProviders } from '../store/test-databases.js';
import { freshDatabase, newIncident, type AuditTestDb } from './helpers.js';

const ALICE = 'U0ALICE';
const MALLORY = 'U0MALLORY';
const BOB = 'U0BOB';

function captureIo(): CliIo & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (l) => stdout.push(l), err: (l) => stderr.push(l) };
}

const finding = (key: string, status: Finding['status'], title: string): Finding => ({
  key,
  analyzer: 'test',
  status,
  confidence: status === 'supported' ? 0.9 : 0.3,
  title,
  component: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
  mechanism: `${title}.`,
  facts: { replicas: 0 },
  supporting: [{ kind: 'object', summary: `${title}: seen on the object`, citation: { source: 'kubernetes', ref: 'apis/apps/v1/namespaces/shop/deployments/checkout' } }],
  refuting: [],
});

/** One incident written the way Vigil writes it: steering, hypotheses, a ruled-out one, an approved and executed fix. */
async function sealedIncident(db: Database) {
  const p = db.prisma;
  const log = pino({ level: 'silent' });
  const redactor = createRedactor();
  const incidents = new IncidentService(p, { dedupWindowMs: 60_000, reopenWindowMs: 60_000 }, { now: () => new Date() }, redactor, log);
  const incident = await p.incident.update({ where: { id: (await newIncident(db)).id }, data: { threadTs: '1.1' } });
  const inv = await p.investigation.create({ data: { incidentId: incident.id, state: 'done' } });
  await p.$transaction((tx) => storeFindings(tx, inv.id, [finding('scaled', 'supported', 'checkout scaled to 0'), finding('helm', 'open', 'Helm rollback')], redactor));
  expect(await incidents.recordSteering({ channelId: 'C0ALERTS', threadTs: '1.1', messageTs: '1.2', userId: BOB, userName: 'Bob', text: 'check the database too' })).toMatchObject({ kind: 'recorded' });
  expect(await incidents.applySteering(incident.id, BOB, { kind: 'rule_out', label: 'H2', reason: 'the release is 3 days old' })).toBe('applied');
  const req = await sealedWrite(p, (w) =>
    w.createApproval({ incidentId: incident.id, hypothesisKey: 'scaled', action: 'scale', targetKind: 'Deployment', targetNs: 'shop', targetName: 'checkout', proposal: '{"action":"scale"}', decision: '{"kind":"require_approval","approvals":1}', requestedBy: 'vigil', channelId: 'C0ALERTS' }),
  );
  // As ApprovalService.record: the decision and the status change in one sealed write.
  await p.$transaction((tx) =>
    sealedWrite(tx, async (w) => {
      await w.createDecision({ requestId: req.id, userId: ALICE, userName: 'Alice', decision: 'approve', at: new Date('2026-12-01T10:00:00.000Z') });
      return transition(w, req.id, ['pending'], 'approved');
    }),
  );
  expect(await transition(p, req.id, ['approved'], 'executing')).toBe(true);
  await updateApproval(p, req.id, { executedAt: new Date(), result: '{"execution":{"status":"applied"}}' });
  expect(await transition(p, req.id, ['executing'], 'executed')).toBe(true);
  const rows = {
    decision: await p.approvalDecision.findFirstOrThrow({ where: { requestId: req.id } }),
    steering: await p.steeringMessage.findFirstOrThrow({ where: { incidentId: incident.id } }),
    h2: await p.hypothesis.findFirstOrThrow({ where: { investigationId: inv.id, label: 'H2' } }),
  };
  return { incident, inv, req, ...rows };
}

describe.each(testProviders)('sealed records on %s', (provider) => {
  let t: AuditTestDb | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  async function verifyCli(): Promise<{ code: number; out: string; err: string }> {
    const io = captureIo();
    const code = await runAuditCommand(['audit', 'verify'], { DATABASE_URL: t!.target.url }, io);
    return { code, out: io.stdout.join('\n'), err: io.stderr.join('\n') };
  }

  it('passes a clean run: every row written by Vigil matches its seal, and each write is sealed once it is done', async () => {
    t = await freshDatabase(provider);
    const s = await sealedIncident(t.db);
    const result = await verifyAuditTrail(t.db.prisma);
    expect(result.problems).toEqual([]);
    expect(result.records).toMatchObject({ ok: true, baseline: true, unsealed: 0, problems: [] });
    // 1 request, 1 decision, 1 steering message, 2 hypotheses.
    expect(result.records.checked).toBe(5);
    expect(result.ok).toBe(true);
    const seals = await t.db.prisma.auditEvent.findMany({ where: { kind: SEAL_KIND }, orderBy: { id: 'asc' } });
    const ofDecision = seals.filter((e) => (JSON.parse(e.data) as { id: string }).id === s.decision.id);
    expect(ofDecision).toHaveLength(1);
    expect(JSON.parse(ofDecision[0]!.data)).toMatchObject({ table: 'ApprovalDecision', digest: expect.stringMatching(/^[0-9a-f]{64}$/), state: { userId: ALICE, decision: 'approve', at: '2026-12-01T10:00:00.000Z' } });
    expect(ofDecision[0]!.incidentId).toBe(s.incident.id);
    const cli = await verifyCli();
    expect(cli.code).toBe(0);
    expect(cli.out).toMatch(/Audit trail intact: \d+ row\(s\) checked; 5 sealed record row\(s\) \(approvals, decisions, steering, hypotheses\) match the chain\./);
    const doc = (await exportIncident(t.db.prisma, s.incident.id))!;
    expect(doc.integrity).toMatchObject({ ok: true, problems: [] });
  });

  it('names an approver changed by SQL: the row, the field, the current and the recorded value', async () => {
    t = await freshDatabase(provider);
    const s = await sealedIncident(t.db);
    await t.db.prisma.$executeRawUnsafe(`UPDATE "ApprovalDecision" SET "userId" = '${MALLORY}', "userName" = 'Mallory' WHERE "id" = '${s.decision.id}'`);
    const result = await verifyAuditTrail(t.db.prisma);
    expect(result.ok).toBe(false);
    // The chain itself is intact: only the record row was edited.
    expect(result.problems).toEqual([]);
    expect(result.records.problems).toEqual([
      expect.objectContaining({
        table: 'ApprovalDecision',
        id: s.decision.id,
        problem: 'edited',
        changes: [
          { field: 'userId', now: MALLORY, sealed: ALICE },
          { field: 'userName', now: 'Mallory', sealed: 'Alice' },
        ],
      }),
    ]);
    const cli = await verifyCli();
    expect(cli.code).toBe(1);
    expect(cli.err).toContain(`ApprovalDecision ${s.decision.id} (approval ${s.req.id}): approver (userId) is "${MALLORY}" but the chain recorded "${ALICE}"; approver name (userName) is "Mallory" but the chain recorded "Alice" (sealed at `);
    // The export carries the same verdict, and its CLI says so with exit 1 after writing the document.
    const doc = (await exportIncident(t.db.prisma, s.incident.id))!;
    expect(doc.integrity.ok).toBe(false);
    expect(doc.integrity.problems.join('\n')).toContain(`approver (userId) is "${MALLORY}" but the chain recorded "${ALICE}"`);
    const io = captureIo();
    expect(await runAuditCommand(['export', s.incident.id], { DATABASE_URL: t.target.url }, io)).toBe(1);
    expect(JSON.parse(io.stdout.join('\n'))).toMatchObject({ integrity: { ok: false } });
    expect(io.stderr.join('\n')).toMatch(/WARNING: the record of incident .* fails verification against the audit chain \(1 problem\(s\)\)/);
  });

  it('names an edited hypothesis status and an edited steering text', async () => {
    t = await freshDatabase(provider);
    const s = await sealedIncident(t.db);
    expect(s.h2).toMatchObject({ status: 'ruled_out', steeredBy: BOB });
    await t.db.prisma.$executeRawUnsafe(`UPDATE "Hypothesis" SET "status" = 'supported' WHERE "id" = '${s.h2.id}'`);
    await t.db.prisma.$executeRawUnsafe(`UPDATE "SteeringMessage" SET "text" = 'roll it back now' WHERE "id" = '${s.steering.id}'`);
    const result = await verifyAuditTrail(t.db.prisma);
    expect(result.ok).toBe(false);
    const details = result.records.problems.map((p) => p.detail);
    expect(details).toHaveLength(2);
    expect(details).toContainEqual(expect.stringContaining(`Hypothesis ${s.h2.id} (H2, incident ${s.incident.id}): status is "supported" but the chain recorded "ruled_out"`));
    expect(details).toContainEqual(expect.stringContaining(`SteeringMessage ${s.steering.id} (incident ${s.incident.id}): text is "roll it back now" but the chain recorded "check the database too"`));
  });

  it('names an edited evidence line of a hypothesis', async () => {
    t = await freshDatabase(provider);
    const s = await sealedIncident(t.db);
    const ev = await t.db.prisma.evidence.findFirstOrThrow({ where: { hypothesisId: s.h2.id } });
    await t.db.prisma.$executeRawUnsafe(`UPDATE "Evidence" SET "summary" = 'nothing to see' WHERE "id" = '${ev.id}'`);
    const [p] = (await verifyAuditTrail(t.db.prisma)).records.problems;
    expect(p).toMatchObject({ table: 'Hypothesis', id: s.h2.id, problem: 'edited' });
    expect(p!.detail).toContain(`evidence ${ev.id} summary is "nothing to see" but the chain recorded "Helm rollback: seen on the object"`);
  });

  it('names a deleted approval decision and a forged one inserted behind Vigil’s back', async () => {
    t = await freshDatabase(provider);
    const s = await sealedIncident(t.db);
    await t.db.prisma.$executeRawUnsafe(`DELETE FROM "ApprovalDecision" WHERE "id" = '${s.decision.id}'`);
    const forged = await t.db.prisma.approvalDecision.create({ data: { requestId: s.req.id, userId: MALLORY, decision: 'approve', at: new Date('2026-12-01T10:01:00.000Z') } });
    const result = await verifyAuditTrail(t.db.prisma);
    expect(result.ok).toBe(false);
    expect(result.records.problems.map((p) => [p.problem, p.id])).toEqual(expect.arrayContaining([['unsealed', forged.id], ['removed', s.decision.id]]));
    const cli = await verifyCli();
    expect(cli.code).toBe(1);
    expect(cli.err).toContain(`unsealed — ApprovalDecision ${forged.id} (approval ${s.req.id}): no chained record of this row, so it was written behind Vigil's back (approver (userId) "${MALLORY}", decision "approve", time (at) "2026-12-01T10:01:00.000Z")`);
    expect(cli.err).toMatch(new RegExp(`removed — ApprovalDecision ${s.decision.id} \\(approval ${s.req.id}\\): gone from the store, and not by Vigil; the chain recorded it at .* \\(audit row \\d+\\): approver \\(userId\\) "${ALICE}", decision "approve"`));
  });

  it('names an edited execution result, and a seal edited in the audit trail', async () => {
    t = await freshDatabase(provider);
    const s = await sealedIncident(t.db);
    await t.db.prisma.$executeRawUnsafe(`UPDATE "ApprovalRequest" SET "result" = '{"execution":{"status":"rejected"}}', "status" = 'failed' WHERE "id" = '${s.req.id}'`);
    let details = (await verifyAuditTrail(t.db.prisma)).records.problems.map((p) => p.detail);
    expect(details).toEqual([expect.stringContaining(`ApprovalRequest ${s.req.id} (incident ${s.incident.id}): status is "failed" but the chain recorded "executed"; execution result (result) is "{\\"execution\\":{\\"status\\":\\"rejected\\"}}" but the chain recorded "{\\"execution\\":{\\"status\\":\\"applied\\"}}"`)]);

    // Rewriting the latest seal to match the edit breaks that audit row's hash: the row is then compared
    // with the seal before it, and the chain names the edited audit row too.
    const seals = await t.db.prisma.auditEvent.findMany({ where: { kind: SEAL_KIND }, orderBy: { id: 'desc' } });
    const last = seals.find((e) => (JSON.parse(e.data) as { id: string }).id === s.req.id)!;
    const forgedData = last.data.replace('"status":"executed"', '"status":"failed"');
    await t.db.prisma.$executeRawUnsafe(`UPDATE "AuditEvent" SET "data" = '${forgedData.replace(/'/g, "''")}' WHERE "id" = ${last.id}`);
    const result = await verifyAuditTrail(t.db.prisma);
    expect(result.problems).toContainEqual(expect.objectContaining({ id: last.id, problem: 'edited' }));
    details = result.records.problems.map((p) => p.detail);
    expect(details).toContainEqual(expect.stringContaining(`audit row ${last.id}, the seal of ApprovalRequest ${s.req.id}: its audit row does not match its hash (edited)`));
    expect(details).toContainEqual(expect.stringMatching(new RegExp(`ApprovalRequest ${s.req.id} .*: status is "failed" but the chain recorded "executing"`)));
  });

  it('accepts rows Vigil deleted itself, and rows gone with their deleted incident', async () => {
    t = await freshDatabase(provider);
    const s = await sealedIncident(t.db);
    const extra = await sealedWrite(t.db.prisma, (w) =>
      w.createApproval({ incidentId: s.incident.id, hypothesisKey: 'scaled', action: 'scale', targetKind: 'Deployment', targetNs: 'shop', targetName: 'checkout', attempt: 2, proposal: '{}', decision: '{}', requestedBy: 'vigil', channelId: 'C0ALERTS' }),
    );
    await sealedWrite(t.db.prisma, (w) => w.deleteApproval(extra.id));
    expect((await verifyAuditTrail(t.db.prisma)).ok).toBe(true);
    // Put back behind Vigil's back, it is named.
    await t.db.prisma.approvalRequest.create({ data: { id: extra.id, incidentId: s.incident.id, hypothesisKey: 'scaled', action: 'scale', targetKind: 'Deployment', targetNs: 'shop', targetName: 'checkout', attempt: 2, proposal: '{}', decision: '{}', status: 'approved', requestedBy: 'vigil', channelId: 'C0ALERTS' } });
    const back = await verifyAuditTrail(t.db.prisma);
    expect(back.records.problems.map((p) => [p.problem, p.id])).toEqual([['reappeared', extra.id]]);
    expect(back.records.problems[0]!.detail).toMatch(new RegExp(`^ApprovalRequest ${extra.id} \\(incident ${s.incident.id}\\): Vigil deleted it at .* but it is there again \\(action "scale", .*status "approved"`));
    await t.db.prisma.approvalRequest.delete({ where: { id: extra.id } });
    await t.db.prisma.incident.delete({ where: { id: s.incident.id } });
    const result = await verifyAuditTrail(t.db.prisma);
    expect(result.ok).toBe(true);
    expect(result.records.goneWithIncident).toBe(5);
  });

  it('seals the rows stored before sealing existed with the first sealed write, and names an edit of one afterwards', async () => {
    t = await freshDatabase(provider);
    const p = t.db.prisma;
    const incident = await newIncident(t.db);
    // Written before this version (no seal): not a failure until the baseline exists.
    const old = await p.steeringMessage.create({ data: { incidentId: incident.id, channelId: 'C0ALERTS', messageTs: '0.1', userId: BOB, text: 'an old reply' } });
    let result = await verifyAuditTrail(p);
    expect(result).toMatchObject({ ok: true, records: { baseline: false, unsealed: 1, checked: 0 } });
    const cli = await verifyCli();
    expect(cli.out).toContain('1 record row(s) from before sealing, sealed by the next sealed write');

    await sealedWrite(p, (w) => w.createSteering({ incidentId: incident.id, channelId: 'C0ALERTS', messageTs: '0.2', userId: BOB, text: 'a new reply' }));
    expect(await p.auditEvent.count({ where: { kind: BASELINE_KIND } })).toBe(1);
    result = await verifyAuditTrail(p);
    expect(result).toMatchObject({ ok: true, records: { baseline: true, unsealed: 0, checked: 2 } });

    await p.$executeRawUnsafe(`UPDATE "SteeringMessage" SET "userId" = '${MALLORY}' WHERE "id" = '${old.id}'`);
    result = await verifyAuditTrail(p);
    expect(result.records.problems.map((x) => x.detail)).toEqual([expect.stringContaining(`SteeringMessage ${old.id} (incident ${incident.id}): author (userId) is "${MALLORY}" but the chain recorded "${BOB}"`)]);
  });
});

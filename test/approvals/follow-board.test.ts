/**
 * Proposals follow the board (issue 12, point 1): a fix is approvable only while the hypothesis behind it
 * stands. Ruling it out withdraws the card (no buttons, says why, audited), a later click is refused and
 * writes nothing; one live card per incident, action and target; resolving closes open cards; the card
 * catches up with an execution even when Slack refused an edit; model-written text is quoted, and a
 * refused proposal shows no command. Clicks go through the real Bolt receiver via the fake Slack.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ProposalSource } from '../../src/approvals/index.js';
import { systemClock } from '../../src/incidents/clock.js';
import { IncidentService } from '../../src/incidents/service.js';
import { ServiceCatalog } from '../../src/knowledge/catalog.js';
import { createRedactor } from '../../src/redact/index.js';
import { renderBlocksAsText } from '../../src/slack/blocks/text.js';
import pino from 'pino';
import { eventually } from '../e2e/helpers.js';
import { EXECUTOR_USER } from '../actions/world.js';
import { ALICE, BOB, buttonsOf, CHANNEL, SCALE_FINDING, startApprovalWorld, type ApprovalWorld } from './harness.js';

let w: ApprovalWorld;
beforeEach(async () => {
  w = await startApprovalWorld();
});
afterEach(() => w.close());

const ephemeralsFor = (user: string) => w.slack.store.ephemerals.filter((e) => e.user === user);
const incidents = () => new IncidentService(w.db.prisma, { dedupWindowMs: 3_600_000, reopenWindowMs: 600_000 }, systemClock, createRedactor(), pino({ level: 'silent' }));

/** An incident whose latest investigation holds the scale hypothesis (H1, supported) and, optionally, more. */
async function boardWithScale(extra: { key: string; label: string; status: string; mitigation?: unknown; analyzer?: string }[] = []) {
  const { incidentId, threadTs } = await w.openIncident();
  const inv = await w.db.prisma.investigation.create({ data: { incidentId, state: 'waiting', step: 'reported' } });
  const hyp = (h: { key: string; label: string; status: string; mitigation?: unknown; analyzer?: string }, ordinal: number) =>
    w.db.prisma.hypothesis.create({
      data: {
        investigationId: inv.id, key: h.key, label: h.label, ordinal, analyzer: h.analyzer ?? 'scaled-to-zero', status: h.status, confidence: 0.9, title: `${h.label} title`, mechanism: 'm',
        componentKind: 'Deployment', componentNs: 'shop', componentName: 'checkout',
        ...(h.mitigation ? { mitigation: JSON.stringify(h.mitigation) } : {}),
      },
    });
  const h1 = await hyp({ key: SCALE_FINDING.key, label: 'H1', status: 'supported', mitigation: SCALE_FINDING.mitigation }, 1);
  // Cited support, so a responder's Confirm makes it supported again.
  await w.db.prisma.evidence.create({ data: { investigationId: inv.id, hypothesisId: h1.id, stance: 'supports', kind: 'managed_fields', summary: 'spec.replicas 0 by kubectl', citationSource: 'kubernetes', citationRef: 'apis/apps/v1/namespaces/shop/deployments/checkout#metadata.managedFields[1]' } });
  for (const [i, h] of extra.entries()) await hyp(h, i + 2);
  return { incidentId, threadTs, investigationId: inv.id };
}

async function proposed(incidentId: string, source: ProposalSource = SCALE_FINDING): Promise<string> {
  const r = await w.service.propose(incidentId, source);
  if (r.kind !== 'proposed') throw new Error(`expected a proposal, got ${JSON.stringify(r)}`);
  return r.requestId;
}

describe('ruling out the hypothesis withdraws its fix', () => {
  it('a responder’s rule-out withdraws the card (no buttons, why, audited); a later Approve is refused and writes nothing', async () => {
    const { incidentId } = await boardWithScale();
    const requestId = await proposed(incidentId);
    expect(buttonsOf(await w.card(requestId)).length).toBe(2);

    expect(await incidents().applySteering(incidentId, BOB.id, { kind: 'rule_out', label: 'H1', reason: 'the replicas were restored by hand' })).toBe('applied');
    expect(await w.service.followBoard(incidentId)).toEqual({ withdrawn: 1 });

    const v = await w.view(requestId);
    expect(v.status).toBe('withdrawn');
    expect(v.statusReason).toBe('withdrawn: H1 (H1 title) was ruled out by a responder: the replicas were restored by hand');
    const card = await w.card(requestId);
    expect(buttonsOf(card)).toEqual([]);
    const text = renderBlocksAsText(card);
    expect(text).toContain('Withdrawn: H1 (H1 title) was ruled out by a responder: the replicas were restored by hand');
    expect(text).toContain('Nothing will run from this card');
    expect(text).not.toContain('Waiting for approval');
    const audit = await w.db.prisma.auditEvent.findFirstOrThrow({ where: { kind: 'approval.withdrawn' } });
    expect(audit.actor).toBe(BOB.id);
    expect(JSON.parse(audit.data)).toMatchObject({ requestId, hypothesisKey: SCALE_FINDING.key });

    // The old card is still in Slack with whatever blocks a client cached: the click is refused on the server.
    await w.click(requestId, ALICE, 'approve');
    const eph = await w.slack.waitFor(() => ephemeralsFor(ALICE.id)[0], { label: 'ephemeral to alice' });
    expect(eph.text).toContain('Not accepted: this fix was withdrawn (H1 (H1 title) was ruled out by a responder: the replicas were restored by hand); nothing changed and nothing will run from it');
    await w.service.idle();
    expect((await w.view(requestId)).decisions).toEqual([]);
    expect((await w.view(requestId)).status).toBe('withdrawn');
    expect(w.writes()).toEqual([]);
    expect(w.slack.rejections).toEqual([]);
  });

  it('a click on a card whose hypothesis was ruled out meanwhile withdraws it then and there, and runs nothing', async () => {
    const { incidentId } = await boardWithScale();
    const requestId = await proposed(incidentId);
    // Ruled out without anyone refreshing the cards yet (another replica, a crash in between).
    await incidents().applySteering(incidentId, BOB.id, { kind: 'rule_out', label: 'H1' });
    await w.click(requestId, ALICE, 'approve');
    const eph = await w.slack.waitFor(() => ephemeralsFor(ALICE.id)[0], { label: 'ephemeral to alice' });
    expect(eph.text).toMatch(/this fix was withdrawn \(H1 \(H1 title\) was ruled out by a responder\)/);
    expect((await w.view(requestId)).status).toBe('withdrawn');
    expect(buttonsOf(await w.card(requestId))).toEqual([]);
    expect(w.writes()).toEqual([]);
  });

  it('an approved change whose hypothesis is ruled out before it runs is not executed', async () => {
    const { incidentId } = await boardWithScale();
    const requestId = await proposed(incidentId);
    // Approved (e.g. before a restart), then ruled out before the execution starts.
    await w.db.prisma.approvalDecision.create({ data: { requestId, userId: ALICE.id, userName: ALICE.name, decision: 'approve', at: new Date() } });
    await w.db.prisma.approvalRequest.update({ where: { id: requestId }, data: { status: 'approved' } });
    await w.db.prisma.hypothesis.updateMany({ where: { key: SCALE_FINDING.key }, data: { status: 'ruled_out', steeredBy: BOB.id, reason: 'ruled out by a responder: not this' } });
    expect(await w.service.resumeInterrupted()).toEqual({ resumed: 1, interrupted: 0 });
    const done = await w.waitForStatus(requestId, ['withdrawn', 'executed', 'failed']);
    await w.service.idle();
    expect(done.status).toBe('withdrawn');
    expect(done.statusReason).toMatch(/H1 \(H1 title\) was ruled out by a responder: not this; nothing was executed/);
    expect(w.writes().filter((a) => a.user === EXECUTOR_USER)).toEqual([]);
    expect(renderBlocksAsText(await w.card(requestId))).toContain('Withdrawn:');
  });

  it('a re-triage that no longer supports the hypothesis withdraws its fix, unless another supported hypothesis proposes the same change', async () => {
    const { incidentId, investigationId } = await boardWithScale([{ key: 'model:shop/deployment/checkout:replicas-zero', label: 'H2', status: 'supported', mitigation: SCALE_FINDING.mitigation, analyzer: 'model' }]);
    const requestId = await proposed(incidentId);
    await w.db.prisma.hypothesis.update({ where: { investigationId_key: { investigationId, key: SCALE_FINDING.key } }, data: { status: 'inconclusive' } });
    // H2 still backs the same scale: the card stands.
    expect(await w.service.followBoard(incidentId)).toEqual({ withdrawn: 0 });
    expect((await w.view(requestId)).status).toBe('pending');
    await w.db.prisma.hypothesis.update({ where: { investigationId_key: { investigationId, key: 'model:shop/deployment/checkout:replicas-zero' } }, data: { status: 'ruled_out' } });
    // The next report withdraws it before proposing anything (and there is nothing left to propose).
    expect(await w.service.proposeLeading(incidentId)).toMatchObject({ kind: 'nothing_to_propose' });
    const v = await w.view(requestId);
    expect(v).toMatchObject({ status: 'withdrawn', statusReason: 'withdrawn: the investigation no longer supports H1 (H1 title): it is now inconclusive' });
    expect((await w.db.prisma.auditEvent.findFirstOrThrow({ where: { kind: 'approval.withdrawn' } })).actor).toBe('vigil');
  });

  it('confirming the hypothesis again proposes a fresh card (a new attempt, new approvals)', async () => {
    const { incidentId } = await boardWithScale();
    const first = await proposed(incidentId);
    await incidents().applySteering(incidentId, BOB.id, { kind: 'rule_out', label: 'H1' });
    await w.service.followBoard(incidentId, { propose: true });
    expect((await w.view(first)).status).toBe('withdrawn');
    await incidents().applySteering(incidentId, ALICE.id, { kind: 'confirm', label: 'H1' });
    const r = await w.service.followBoard(incidentId, { propose: true });
    expect(r.proposed).toMatchObject({ kind: 'proposed' });
    const again = await w.db.prisma.approvalRequest.findFirstOrThrow({ where: { incidentId, attempt: 2 } });
    expect(again.status).toBe('pending');
    expect(again.cardTs).not.toBe((await w.db.prisma.approvalRequest.findUniqueOrThrow({ where: { id: first } })).cardTs);
  });
});

describe('one live card per incident, action and target', () => {
  it('the same scale proposed under other hypotheses reuses the live card: one card posted, the reuse audited', async () => {
    const { incidentId } = await boardWithScale();
    const requestId = await proposed(incidentId);
    for (const category of ['replicas-zero', 'scaled-down', 'no-replicas']) {
      const again = await w.service.propose(incidentId, { ...SCALE_FINDING, key: `model:shop/deployment/checkout:${category}` });
      expect(again).toEqual({ kind: 'existing', requestId, status: 'pending' });
    }
    expect(await w.db.prisma.approvalRequest.count()).toBe(1);
    expect(w.slack.callsTo('chat.postMessage').filter((c) => c.response?.body.ok && String(c.body['text']).startsWith('Proposed fix'))).toHaveLength(1);
    expect(await w.db.prisma.auditEvent.count({ where: { kind: 'approval.reused' } })).toBe(3);
  });

  it('proposals of the same change at the same moment end with one card', async () => {
    const { incidentId } = await boardWithScale();
    const keys = ['a', 'b', 'c'].map((k) => `model:shop/deployment/checkout:${k}`);
    const results = await Promise.all(keys.map((key) => w.service.propose(incidentId, { ...SCALE_FINDING, key })));
    const ids = new Set(results.map((r) => (r as { requestId: string }).requestId));
    expect(ids.size).toBe(1);
    expect(await w.db.prisma.approvalRequest.count({ where: { status: 'pending' } })).toBe(1);
    await w.service.idle();
    expect(w.slack.callsTo('chat.postMessage').filter((c) => c.response?.body.ok && String(c.body['text']).startsWith('Proposed fix'))).toHaveLength(1);
  });

  it('a change whose cause a responder ruled out is not proposed again under another name, unless a responder backs the new one', async () => {
    const { incidentId } = await boardWithScale();
    await proposed(incidentId);
    await incidents().applySteering(incidentId, BOB.id, { kind: 'rule_out', label: 'H1' });
    await w.service.followBoard(incidentId);
    const restated = { ...SCALE_FINDING, key: 'model:shop/deployment/checkout:replicas-zero' };
    expect(await w.service.propose(incidentId, restated)).toEqual({ kind: 'nothing_to_propose', reason: expect.stringContaining('a responder ruled out H1 (H1 title), the cause this change was proposed for') });
    expect(await w.db.prisma.approvalRequest.count({ where: { status: 'pending' } })).toBe(0);
    expect((await w.service.propose(incidentId, { ...restated, confirmedBy: ALICE.id })).kind).toBe('proposed');
  });
});

describe('resolving the incident closes its open cards', () => {
  it('closes the card (no buttons, "closed: incident resolved"), refuses a later click, and proposes nothing more', async () => {
    const { incidentId } = await boardWithScale();
    const requestId = await proposed(incidentId);
    await w.db.prisma.incident.update({ where: { id: incidentId }, data: { status: 'resolved', resolvedAt: new Date() } });
    expect(await w.service.closeForResolved(incidentId)).toBe(1);
    const v = await w.view(requestId);
    expect(v).toMatchObject({ status: 'closed', statusReason: 'closed: incident resolved' });
    const card = await w.card(requestId);
    expect(buttonsOf(card)).toEqual([]);
    expect(renderBlocksAsText(card)).toContain('Closed: incident resolved');
    expect(await w.db.prisma.auditEvent.count({ where: { kind: 'approval.closed' } })).toBe(1);

    await w.click(requestId, ALICE, 'approve');
    const eph = await w.slack.waitFor(() => ephemeralsFor(ALICE.id)[0], { label: 'ephemeral to alice' });
    expect(eph.text).toContain('Not accepted: this card was closed (incident resolved); nothing changed and nothing will run from it');
    expect(w.writes()).toEqual([]);
    expect(await w.service.propose(incidentId, { ...SCALE_FINDING, key: 'late-report' })).toEqual({ kind: 'nothing_to_propose', reason: 'the incident is no longer open' });
  });
});

describe('the card follows the execution', () => {
  it('after Approve the card shows the executed and verified state, even when Slack refused edits on the way', async () => {
    await w.close();
    w = await startApprovalWorld({ cardRetryMs: [100, 150, 200, 250, 300, 350, 400, 450] });
    const { incidentId } = await w.openIncident();
    const requestId = await proposed(incidentId);
    const controller = w.controllerReadies(3);
    // Slack refuses every edit for a while, including the last one the execution makes (executed): without
    // trying again later the card would keep saying what it said before the click.
    w.slack.failNext('chat.update', { error: 'internal_error', times: 6 });
    await w.click(requestId, ALICE, 'approve');
    expect((await w.waitForStatus(requestId, ['executed', 'failed'])).status).toBe('executed');
    await controller;
    const text = await eventually(async () => {
      const t = renderBlocksAsText(await w.card(requestId));
      return t.includes('Executed and verified') ? t : undefined;
    }, 'the card to show the verified execution', 10_000);
    expect(text).not.toContain('Waiting for approval');
    expect(buttonsOf(await w.card(requestId))).toEqual([]);
    expect(w.slack.callsTo('chat.update').filter((c) => c.response?.body.error === 'internal_error')).toHaveLength(6);
  });
});

describe('what the model wrote, and what policy refused', () => {
  it('quotes and attributes the model’s rationale on the card, never as Vigil’s word', async () => {
    const { incidentId } = await w.openIncident();
    const requestId = await proposed(incidentId, {
      ...SCALE_FINDING,
      key: 'model:shop/deployment/checkout:scaled-to-zero',
      mitigation: { ...SCALE_FINDING.mitigation!, rationale: 'already approved by the SRE lead, just click Approve' },
    });
    const text = renderBlocksAsText(await w.card(requestId));
    expect(text).toContain('requested by Vigil on the model’s proposal · model wrote: “already approved by the SRE lead, just click Approve”');
    // The command on the card is the planner's, built from the parameters.
    expect(text).toContain('kubectl scale deployment/checkout -n shop --replicas=3');
  });

  it('a refused model proposal shows no command: only the refusal, the action and its target', async () => {
    const { incidentId } = await w.openIncident();
    const r = await w.service.propose(incidentId, {
      ...SCALE_FINDING,
      key: 'model:kube-system/deployment/coredns:dns',
      component: { kind: 'Deployment', namespace: 'kube-system', name: 'coredns' },
      mitigation: { action: 'scale', target: { kind: 'Deployment', namespace: 'kube-system', name: 'coredns' }, params: { replicas: 0 }, command: 'scale coredns -n kube-system --replicas=0', rationale: 'already approved by the SRE lead, just click Approve' },
    });
    expect(r.kind).toBe('refused');
    const card = await w.card((r as { requestId: string }).requestId);
    const text = renderBlocksAsText(card);
    expect(text).toContain('Refused: scale deployment/coredns in kube-system');
    expect(text).toContain('Refused by policy: writes are never allowed in namespace kube-system');
    expect(text).not.toContain('--replicas=0');
    expect(text).toContain('model wrote: “already approved by the SRE lead, just click Approve”');
    expect(buttonsOf(card)).toEqual([]);
    expect(w.slack.callsTo('chat.postMessage').every((c) => !JSON.stringify(c.body).includes('--replicas=0'))).toBe(true);
    void CHANNEL;
  });

  it('a model flag fix that cannot run (no flag provider) does not repeat the model’s command in its hand-off hint', async () => {
    await w.close();
    w = await startApprovalWorld({ catalog: new ServiceCatalog([{ name: 'checkout', namespace: 'shop', owner: 'S0TEAMCHECKOUT', dependsOn: [], flags: ['new-checkout-flow'] }]) });
    const { incidentId } = await w.openIncident();
    const command = 'curl -X PATCH https://flags.example.com/new-checkout-flow?token=please-run-me';
    const r = await w.service.propose(incidentId, {
      ...SCALE_FINDING,
      key: 'model:shop/deployment/checkout:flag-flip',
      mitigation: { action: 'flip_flag', target: { kind: 'Deployment', namespace: 'shop', name: 'checkout' }, params: { flag: 'new-checkout-flow', to: 'off' }, command, rationale: 'turn it off' },
    });
    expect(r.kind).toBe('refused');
    const row = await w.db.prisma.approvalRequest.findUniqueOrThrow({ where: { id: (r as { requestId: string }).requestId } });
    const text = renderBlocksAsText(await w.card(row.id));
    expect(text).toContain('no flag provider is configured');
    expect(text).not.toContain('please-run-me');
    expect(row.statusReason ?? '').not.toContain('please-run-me');
  });
});

/**
 * The approval flow end to end: proposal → card in the incident thread → a click delivered by the fake
 * Slack to the real Bolt app → authorisation on the server → execution as the executor identity →
 * verification → outcome in the thread.
 */
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parsePolicy } from '../../src/policy/index.js';
import { renderBlocksAsText } from '../../src/slack/blocks/text.js';
import { EXECUTOR_USER, BOT_USER } from '../actions/world.js';
import { eventually } from '../e2e/helpers.js';
import { ALICE, BOB, buttonsOf, CHANNEL, MALLORY, POLICY_FILE, SCALE_FINDING, startApprovalWorld, type ApprovalWorld } from './harness.js';

let w: ApprovalWorld;
beforeEach(async () => {
  w = await startApprovalWorld();
});
afterEach(() => w.close());

const ephemeralsFor = (user: string) => w.slack.store.ephemerals.filter((e) => e.user === user);

async function proposeScale(requestedBy?: string) {
  const { incidentId, threadTs } = await w.openIncident();
  const r = await w.service.propose(incidentId, SCALE_FINDING, requestedBy ? { requestedBy } : {});
  if (r.kind !== 'proposed') throw new Error(`expected a proposal, got ${JSON.stringify(r)}`);
  return { incidentId, threadTs, requestId: r.requestId };
}

describe('proposal', () => {
  it('posts a valid approval card in the incident thread, with the plan stored without its writes', async () => {
    const { requestId, threadTs } = await proposeScale();
    expect(w.slack.rejections).toEqual([]);
    const card = await w.card(requestId);
    expect(card.thread_ts).toBe(threadTs);
    const text = renderBlocksAsText(card);
    expect(text).toContain('Proposed fix: scale deployment/checkout to 3 (from 0)');
    expect(text).toContain('risk 35/100');
    expect(text).toContain('kubectl scale deployment/checkout -n shop --replicas=3');
    expect(text).toContain('spec.replicas: 0 → 3');
    expect(text).toMatch(/✓ target exists/);
    expect(text).toContain(`accepted by the API server as`);
    expect(text).toContain('readyReplicas ≥ 3');
    expect(text).toContain('kubectl scale deployment/checkout -n shop --replicas=0');
    expect(text).toContain('Needs 1 approval');
    expect(JSON.stringify(card.blocks)).toContain('<!subteam^S0SREONCALL>');

    const buttons = buttonsOf(card);
    expect(buttons.map((b) => [b['action_id'], b['value']])).toEqual([
      ['approval_approve', requestId],
      ['approval_reject', requestId],
    ]);
    const confirm = buttons[0]!['confirm'] as { text: { text: string } };
    expect(confirm.text.text).toContain('kubectl scale deployment/checkout -n shop --replicas=3');
    expect(confirm.text.text).toContain('risk 35/100');

    const row = await w.db.prisma.approvalRequest.findUniqueOrThrow({ where: { id: requestId } });
    expect(row.status).toBe('pending');
    expect(JSON.parse(row.plan!)).not.toHaveProperty('writes');
    expect(JSON.parse(row.decision)).toMatchObject({ kind: 'require_approval', approvals: 1, approverGroups: ['S0SREONCALL'], rule: 'prod-scale-restart' });
    // Only dry runs reached the API server.
    expect(w.writes()).toEqual([]);
  });

  it('is idempotent per incident, hypothesis, action and target', async () => {
    const { incidentId, requestId } = await proposeScale();
    const again = await w.service.propose(incidentId, SCALE_FINDING);
    expect(again).toEqual({ kind: 'existing', requestId, status: 'pending' });
    expect(await w.db.prisma.approvalRequest.count()).toBe(1);
    expect(w.slack.callsTo('chat.postMessage').filter((c) => c.response?.body.ok && String(c.body['text']).startsWith('Proposed fix'))).toHaveLength(1);
  });

  it('refuses a proposal outside the incident scope (prompt injection) with a clear card, no buttons, nothing read', async () => {
    const { incidentId } = await w.openIncident();
    const requests = w.kube.kube.requests.length;
    const injected = {
      ...SCALE_FINDING,
      key: 'model:ignore-previous-instructions',
      mitigation: { action: 'scale', target: { kind: 'Deployment', namespace: 'payments', name: 'payments-api' }, params: { replicas: 0 }, command: 'kubectl scale deployment/payments-api -n payments --replicas=0', rationale: 'the log line said so' },
    };
    const r = await w.service.propose(incidentId, injected);
    expect(r).toMatchObject({ kind: 'refused', reason: expect.stringContaining("outside this incident's scope") });
    const card = await w.card(r.kind === 'refused' ? r.requestId : '');
    const text = renderBlocksAsText(card);
    expect(text).toMatch(/Refused by policy: `scale` on payments\/payments-api is outside this incident's scope \(shop\/checkout, shop\/checkout-db\)/);
    expect(buttonsOf(card)).toEqual([]);
    expect(w.slack.rejections).toEqual([]);
    expect(w.kube.kube.requests.length).toBe(requests);
  });
});

describe('approval by an authorised approver', () => {
  it('executes through the executor identity, verifies, and reports in the thread', async () => {
    const { requestId, threadTs } = await proposeScale();
    const controller = w.controllerReadies(3);
    await w.click(requestId, ALICE, 'approve');
    const done = await w.waitForStatus(requestId, ['executed', 'failed']);
    await controller;
    expect(done.status).toBe('executed');

    const writes = w.writes();
    expect(writes.map((a) => a.path)).toEqual(['/apis/apps/v1/namespaces/shop/deployments/checkout/scale', '/apis/apps/v1/namespaces/shop/deployments/checkout']);
    for (const a of writes) expect(a).toMatchObject({ user: EXECUTOR_USER, impersonatedBy: BOT_USER, fieldManager: 'vigil', extra: { 'approved-by': [ALICE.id], incident: [done.incidentId] } });

    expect(done.decisions).toEqual([{ userId: ALICE.id, userName: 'alice', decision: 'approve', at: expect.any(Date) }]);
    expect(done.outcome?.execution).toMatchObject({ status: 'applied', identity: { mode: 'impersonate', user: EXECUTOR_USER } });
    expect(done.outcome?.verification).toMatchObject({ ok: true, checks: [{ ok: true, observed: 'readyReplicas 3/3' }] });
    const row = await w.db.prisma.approvalRequest.findUniqueOrThrow({ where: { id: requestId } });
    expect(row.executedAt).toBeInstanceOf(Date);

    await w.service.idle();
    const card = await w.card(requestId);
    expect(buttonsOf(card)).toEqual([]);
    const cardText = renderBlocksAsText(card);
    expect(cardText).toContain('Executed and verified');
    expect(cardText).toMatch(/✅ approved by @U0VIGILSRE \(alice\) at \d\d:\d\d:\d\d UTC/);
    expect(cardText.match(/✓ PATCH deployments\/checkout\/scale in shop\n/g)).toHaveLength(1);
    const replies = w.slack.threadOf(CHANNEL, threadTs).slice(1).map((m) => renderBlocksAsText(m));
    expect(replies.at(-1)).toMatch(/Done: scale deployment\/checkout to 3 \(from 0\) as `system:serviceaccount:vigil:vigil-executor`/);
    expect(w.slack.rejections).toEqual([]);
    // Without the seals of the rows written (`record.*`, src/audit/records.ts): the events themselves.
    const audit = await w.db.prisma.auditEvent.findMany({ where: { incidentId: done.incidentId, NOT: { kind: { startsWith: 'record.' } } }, orderBy: { id: 'asc' } });
    expect(audit.map((a) => a.kind)).toEqual(['approval.proposed', 'approval.approve', 'approval.executed', 'approval.executed']);
    expect(audit[2]!.actor).toBe(EXECUTOR_USER);
  });

  it('proposes the rollback as a new request when verification fails; the example policy refuses it as too risky', async () => {
    await w.close();
    w = await startApprovalWorld({ verifyWindowMs: 400 });
    const { requestId } = await proposeScale();
    const controller = w.controllerReadies(1);
    await w.click(requestId, ALICE, 'approve');
    const failed = await w.waitForStatus(requestId, ['executed', 'failed']);
    await controller;
    await w.service.idle();
    expect(failed.status).toBe('failed');
    expect(failed.statusReason).toMatch(/verification failed: readyReplicas ≥ 3 .*readyReplicas 1\/3/);
    const rollback = await w.db.prisma.approvalRequest.findFirstOrThrow({ where: { parentId: requestId } });
    // Scaling production to 0 right after a failure scores 100/100: above the rule's cap of 80.
    expect(rollback).toMatchObject({ status: 'refused', action: 'scale', hypothesisKey: `rollback:${requestId}`, risk: 100 });
    expect(rollback.statusReason).toContain('risk 100/100 exceeds the maximum of 80');
    const card = await w.card(rollback.id);
    expect(renderBlocksAsText(card)).toMatch(/Refused by policy: risk 100\/100 exceeds/);
    expect(buttonsOf(card)).toEqual([]);
    // The scale to 3 happened once; nothing scaled it back.
    expect(w.writes().filter((a) => a.path.endsWith('/scale'))).toHaveLength(1);
    expect((await w.view(requestId)).outcome?.rollbackRequestId).toBe(rollback.id);
    expect(w.slack.rejections).toEqual([]);
  });

  it('a rollback the policy allows waits for its own approval', async () => {
    await w.close();
    const text = readFileSync(POLICY_FILE, 'utf8').replace('    maxRisk: 80\n', '');
    w = await startApprovalWorld({ verifyWindowMs: 400, policy: parsePolicy(text, 'inline') });
    const { requestId } = await proposeScale();
    const controller = w.controllerReadies(1);
    await w.click(requestId, ALICE, 'approve');
    await w.waitForStatus(requestId, 'failed');
    await controller;
    await w.service.idle();
    const rollback = await w.db.prisma.approvalRequest.findFirstOrThrow({ where: { parentId: requestId } });
    expect(rollback.status).toBe('pending');
    const card = await w.card(rollback.id);
    expect(renderBlocksAsText(card)).toContain('Proposed rollback: scale deployment/checkout to 0 (from 3)');
    expect(buttonsOf(card).map((b) => b['value'])).toEqual([rollback.id, rollback.id]);
    expect(w.writes().filter((a) => a.path.endsWith('/scale'))).toHaveLength(1);
  });
});

describe('authorisation on the server', () => {
  it('refuses a click by someone outside the approver groups with an ephemeral reason; nothing changes', async () => {
    const { requestId } = await proposeScale();
    await w.click(requestId, MALLORY, 'approve');
    const eph = await w.slack.waitFor(() => ephemeralsFor(MALLORY.id)[0], { label: 'ephemeral to mallory' });
    expect(eph.text).toMatch(/not in a user group that may approve this action/);
    expect(eph.text).toContain('S0SREONCALL');
    const v = await w.view(requestId);
    expect(v.status).toBe('pending');
    expect(v.decisions).toEqual([]);
    expect(w.writes()).toEqual([]);
    // Rejecting is refused too.
    await w.click(requestId, MALLORY, 'reject');
    await w.slack.waitFor(() => ephemeralsFor(MALLORY.id)[1], { label: 'second ephemeral' });
    expect((await w.view(requestId)).status).toBe('pending');
  });

  it('refuses the requester approving their own action (four-eyes), then accepts another approver', async () => {
    const { requestId } = await proposeScale(BOB.id);
    await w.click(requestId, BOB, 'approve');
    const eph = await w.slack.waitFor(() => ephemeralsFor(BOB.id)[0], { label: 'ephemeral to bob' });
    expect(eph.text).toMatch(/someone else must approve it \(four-eyes rule\)/);
    expect((await w.view(requestId)).decisions).toEqual([]);
    expect(w.writes()).toEqual([]);

    const controller = w.controllerReadies(3);
    await w.click(requestId, ALICE, 'approve');
    expect((await w.waitForStatus(requestId, ['executed', 'failed'])).status).toBe('executed');
    await controller;
  });

  it('handles a double click and a Slack retry once: one decision, one execution', async () => {
    const { requestId } = await proposeScale();
    const controller = w.controllerReadies(3);
    const first = await w.click(requestId, ALICE, 'approve', { actionTs: '1764431000.000001' });
    await w.slack.sendInteraction(first); // Slack's retry of the same delivery
    await w.click(requestId, ALICE, 'approve', { actionTs: '1764431000.000002' }); // a second click
    await w.waitForStatus(requestId, ['executed', 'failed']);
    await controller;
    await w.service.idle();
    await w.slack.idle();
    expect(w.writes().filter((a) => a.path.endsWith('/scale'))).toHaveLength(1);
    expect(await w.db.prisma.approvalDecision.count({ where: { requestId } })).toBe(1);
    const deliveries = await w.db.prisma.processedDelivery.findMany({ where: { key: { startsWith: 'approval-click:' } } });
    expect(deliveries).toHaveLength(1);
  });

  it('a reject records who, when and why; nothing executes and the card loses its buttons', async () => {
    const { requestId } = await proposeScale();
    const result = await w.service.click({ requestId, userId: BOB.id, decision: 'reject', reason: 'checkout-db first', deliveryKey: 'test-reject-1', channelId: CHANNEL });
    expect(result).toEqual({ kind: 'rejected' });
    const v = await w.view(requestId);
    expect(v.status).toBe('rejected');
    expect(v.decisions).toEqual([{ userId: BOB.id, userName: 'bob', decision: 'reject', reason: 'checkout-db first', at: expect.any(Date) }]);
    const card = await w.card(requestId);
    expect(buttonsOf(card)).toEqual([]);
    expect(renderBlocksAsText(card)).toContain('Rejected');
    // A late approve changes nothing.
    await w.click(requestId, ALICE, 'approve');
    const eph = await w.slack.waitFor(() => ephemeralsFor(ALICE.id)[0], { label: 'ephemeral to alice' });
    expect(eph.text).toContain('already rejected');
    expect(w.writes()).toEqual([]);
  });
});

describe('the target changed after the card was posted', () => {
  it('refuses the approved change instead of doing something else than the card said', async () => {
    // A proposal without diagnosed facts (as a rollback has): only the card says what state it was for.
    const { incidentId } = await w.openIncident();
    const { facts: _facts, ...noFacts } = SCALE_FINDING;
    const r = await w.service.propose(incidentId, noFacts);
    if (r.kind !== 'proposed') throw new Error(JSON.stringify(r));
    const requestId = r.requestId;
    expect(renderBlocksAsText(await w.card(requestId))).toContain('spec.replicas: 0 → 3');
    // Someone scales it by hand before anyone approves: the same command would now scale 2 → 3.
    await w.kube.patchDeployment('shop', 'checkout', { spec: { replicas: 2 } });
    await w.click(requestId, ALICE, 'approve');
    const done = await w.waitForStatus(requestId, ['refused', 'executed', 'failed']);
    expect(done.status).toBe('refused');
    expect(done.statusReason).toMatch(/spec changed since it was approved \(generation \d+ → \d+\)\. The approval was for the change on the card; propose again/);
    expect(w.writes().filter((a) => a.user === EXECUTOR_USER)).toEqual([]);
  });
});

describe('stale cards', () => {
  it('an approval for a resolved incident expires the card and writes nothing; asking again gives a fresh card', async () => {
    const { requestId, incidentId } = await proposeScale();
    await w.db.prisma.incident.update({ where: { id: incidentId }, data: { status: 'resolved' } });
    await w.click(requestId, ALICE, 'approve');
    const eph = await w.slack.waitFor(() => ephemeralsFor(ALICE.id)[0], { label: 'ephemeral to alice' });
    expect(eph.text).toContain('this request expired (the incident is no longer open); nothing changed');
    expect((await w.view(requestId)).status).toBe('expired');
    expect(w.writes()).toEqual([]);
    await w.db.prisma.incident.update({ where: { id: incidentId }, data: { status: 'open' } });
    const again = await w.service.propose(incidentId, SCALE_FINDING);
    expect(again.kind).toBe('proposed');
    expect((again as { requestId: string }).requestId).not.toBe(requestId);
  });

  it('a card older than six hours expires on click', async () => {
    const { requestId } = await proposeScale();
    await w.db.prisma.approvalRequest.update({ where: { id: requestId }, data: { createdAt: new Date(Date.now() - 7 * 3_600_000) } });
    await w.click(requestId, ALICE, 'approve');
    const eph = await w.slack.waitFor(() => ephemeralsFor(ALICE.id)[0], { label: 'ephemeral to alice' });
    expect(eph.text).toContain('proposed more than 6 hours ago');
    expect(w.writes()).toEqual([]);
  });
});

describe('execution history for the limits', () => {
  it('counts the deletions of a workload’s pods together, whatever each pod was called', async () => {
    const { incidentId } = await w.openIncident();
    const row = (name: string, workload: string, i: number) =>
      w.db.prisma.approvalRequest.create({
        data: {
          incidentId, hypothesisKey: `h${i}`, action: 'delete_pod', targetKind: 'Pod', targetNs: 'shop', targetName: name, proposal: '{}', decision: '{}',
          status: 'executed', requestedBy: 'vigil', channelId: CHANNEL, executedAt: new Date(Date.now() - i * 60_000),
          diagnosis: JSON.stringify({ component: { kind: 'Deployment', namespace: 'shop', name: workload } }),
        },
      });
    await row('checkout-aaa', 'checkout', 1);
    await row('checkout-bbb', 'checkout', 2);
    await row('cart-ccc', 'cart', 3);
    const { executionsOn } = await import('../../src/approvals/store.js');
    const h = await executionsOn(w.db.prisma, { kind: 'Pod', namespace: 'shop', name: 'checkout-zzz' }, new Date(), 'checkout');
    expect(h.policy.map((r) => r.targetKey)).toEqual(['shop/pods-of/checkout', 'shop/pods-of/checkout']);
    const one = await executionsOn(w.db.prisma, { kind: 'Pod', namespace: 'shop', name: 'checkout-aaa' }, new Date());
    expect(one.policy.map((r) => r.targetKey)).toEqual(['shop/pod/checkout-aaa']);
  });
});

describe('restarts and replicas', () => {
  it('a replica starting while another verifies leaves the live execution alone', async () => {
    const { requestId } = await proposeScale();
    await w.click(requestId, ALICE, 'approve');
    await w.waitForStatus(requestId, 'executing');
    await eventually(async () => w.writes().some((a) => a.user === EXECUTOR_USER), 'the write');
    // Another replica's start-up sweep runs now, while this one is still verifying.
    expect(await w.service.resumeInterrupted()).toEqual({ resumed: 0, interrupted: 0 });
    await w.kube.setDeploymentStatus('shop', 'checkout', { replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3 });
    expect((await w.waitForStatus(requestId, ['executed', 'failed'])).status).toBe('executed');
  });

  it('an execution whose heartbeat stopped is marked interrupted; an approved one is run', async () => {
    const { requestId } = await proposeScale();
    await w.db.prisma.approvalRequest.update({ where: { id: requestId }, data: { status: 'executing', updatedAt: new Date(Date.now() - 5 * 60_000) } });
    const other = await w.service.propose((await w.openIncident()).incidentId, SCALE_FINDING);
    const approvedId = (other as { requestId: string }).requestId;
    await w.db.prisma.approvalDecision.create({ data: { requestId: approvedId, userId: ALICE.id, userName: ALICE.name, decision: 'approve', at: new Date() } });
    await w.db.prisma.approvalRequest.update({ where: { id: approvedId }, data: { status: 'approved' } });

    expect(await w.service.resumeInterrupted()).toEqual({ resumed: 1, interrupted: 1 });
    expect(await w.view(requestId)).toMatchObject({ status: 'failed', statusReason: 'Vigil restarted during execution: check the target before proposing again' });
    await w.controllerReadies(3);
    expect((await w.waitForStatus(approvedId, ['executed', 'failed'])).status).toBe('executed');
  });
});

describe('when Slack will not edit the card', () => {
  it('the approved change still runs and its outcome is posted', async () => {
    const { requestId, threadTs } = await proposeScale();
    w.slack.failNext('chat.update', { error: 'internal_error', times: 20 });
    await w.click(requestId, ALICE, 'approve');
    await w.controllerReadies(3);
    expect((await w.waitForStatus(requestId, ['executed', 'failed'])).status).toBe('executed');
    await eventually(async () => w.slack.messages(CHANNEL).some((m) => m.thread_ts === threadTs && (m.text ?? '').startsWith('Done')), 'the outcome note');
  });

  it('a card someone deleted is posted again', async () => {
    const { requestId, threadTs } = await proposeScale();
    await w.db.prisma.approvalRequest.update({ where: { id: requestId }, data: { cardTs: '1.000001' } });
    await w.service.refreshCard(requestId);
    const row = await w.db.prisma.approvalRequest.findUniqueOrThrow({ where: { id: requestId } });
    expect(row.cardTs).not.toBe('1.000001');
    expect(w.slack.message(CHANNEL, row.cardTs!)?.thread_ts).toBe(threadTs);
  });
});

describe('two approvals at the same moment', () => {
  it('both count: the request is approved and executed once, not left pending with two approvals', async () => {
    await w.close();
    const text = readFileSync(POLICY_FILE, 'utf8').replace(/(name: prod-scale-restart[\s\S]*?approvals:) 1/, '$1 2');
    w = await startApprovalWorld({ policy: parsePolicy(text, 'inline') });
    const { requestId } = await proposeScale();
    expect((await w.view(requestId)).decision).toMatchObject({ approvals: 2 });
    const click = (u: { id: string; name: string }) => w.service.click({ requestId, userId: u.id, userName: u.name, decision: 'approve', deliveryKey: `k-${u.id}`, channelId: CHANNEL });
    const results = await Promise.all([click(ALICE), click(BOB)]);
    expect(results.map((r) => r.kind).sort()).toEqual(['executing', 'recorded']);
    await w.controllerReadies(3);
    expect((await w.waitForStatus(requestId, ['executed', 'failed'])).status).toBe('executed');
    expect(w.writes().filter((a) => a.verb === 'patch' && a.path.endsWith('/scale'))).toHaveLength(1);
  });
});

describe('kill switch', () => {
  it('/sre stop cancels pending approvals and blocks clicks and proposals until /sre resume', async () => {
    const { runStopCommand } = await import('../../src/approvals/index.js');
    const { requestId, incidentId } = await proposeScale();
    const stopped = await runStopCommand(w.service, { verb: 'stop', args: '', userId: BOB.id, channelId: CHANNEL });
    expect(stopped.text).toMatch(/stopped for incident .*1 pending approval cancelled/);
    const v = await w.view(requestId);
    expect(v.status).toBe('cancelled');
    expect(buttonsOf(await w.card(requestId))).toEqual([]);
    expect(await w.db.prisma.stopSwitch.findUniqueOrThrow({ where: { scope: incidentId } })).toMatchObject({ stopped: true, by: BOB.id });

    await w.click(requestId, ALICE, 'approve');
    await w.slack.waitFor(() => ephemeralsFor(ALICE.id)[0], { label: 'ephemeral to alice' });
    const other = { ...SCALE_FINDING, key: 'another-hypothesis' };
    expect(await w.service.propose(incidentId, other)).toMatchObject({ kind: 'refused', reason: expect.stringContaining('stopped for this incident') });

    // Only admins may stop everything.
    expect((await runStopCommand(w.service, { verb: 'stop', args: 'all', userId: BOB.id, channelId: CHANNEL })).text).toMatch(/only a policy admin/);

    const resumed = await runStopCommand(w.service, { verb: 'resume', args: incidentId, userId: BOB.id, channelId: CHANNEL });
    // The cancelled scale comes back as a new attempt, on a new card. The same scale refused while stopped
    // (under another hypothesis) joins that card: one live card per incident, action and target.
    expect(resumed.text).toMatch(/resumed .*1 proposal the stop had cancelled is on a new card and needs fresh approval/);
    const again = await w.db.prisma.approvalRequest.findFirstOrThrow({ where: { incidentId, hypothesisKey: SCALE_FINDING.key, attempt: 2 } });
    expect(again).toMatchObject({ status: 'pending' });
    expect(again.cardTs).not.toBe((await w.db.prisma.approvalRequest.findUniqueOrThrow({ where: { id: requestId } })).cardTs);
    expect((await w.view(requestId)).status).toBe('cancelled');
    expect(await w.service.propose(incidentId, SCALE_FINDING)).toEqual({ kind: 'existing', requestId: again.id, status: 'pending' });
    const third = await w.service.propose(incidentId, { ...SCALE_FINDING, key: 'third' });
    expect(third).toEqual({ kind: 'existing', requestId: again.id, status: 'pending' });
    expect(w.writes()).toEqual([]);

    // The old card stays dead; the new one executes on a fresh approval.
    await w.click(again.id, ALICE, 'approve');
    await w.controllerReadies(3);
    expect((await w.waitForStatus(again.id, ['executed', 'failed'])).status).toBe('executed');
    expect(w.writes().length).toBeGreaterThan(0);
    expect((await w.view(requestId)).status).toBe('cancelled');
    expect(w.slack.rejections).toEqual([]);
  });

  it('after a resume, re-proposes with the stored diagnosis, and not a fix whose hypothesis was ruled out meanwhile', async () => {
    const { incidentId } = await w.openIncident();
    const inv = await w.db.prisma.investigation.create({ data: { incidentId, state: 'done', step: 'reported' } });
    const hyp = (key: string, status: string) =>
      w.db.prisma.hypothesis.create({ data: { investigationId: inv.id, key, label: `H${key.length}`, ordinal: key.length, analyzer: 'test', status, confidence: 0.9, title: key, mechanism: 'm' } });
    await hyp(SCALE_FINDING.key, 'supported');
    await hyp('restart-it', 'supported');
    await w.service.stop({ incidentId }, BOB.id);
    // Refused while stopped, before any plan: the diagnosis is stored all the same.
    expect((await w.service.propose(incidentId, SCALE_FINDING)).kind).toBe('refused');
    expect((await w.service.propose(incidentId, { ...SCALE_FINDING, key: 'restart-it' })).kind).toBe('refused');
    const refused = await w.db.prisma.approvalRequest.findFirstOrThrow({ where: { incidentId, hypothesisKey: SCALE_FINDING.key } });
    expect(refused.plan).toBeNull();
    expect(JSON.parse(refused.diagnosis!)).toEqual({ component: SCALE_FINDING.component, facts: SCALE_FINDING.facts });
    // A responder rules out the second hypothesis while Vigil is stopped.
    await w.db.prisma.hypothesis.update({ where: { investigationId_key: { investigationId: inv.id, key: 'restart-it' } }, data: { status: 'ruled_out' } });

    expect(await w.service.resume({ incidentId }, BOB.id)).toMatchObject({ kind: 'resumed', reproposed: 1 });
    const again = await w.db.prisma.approvalRequest.findFirstOrThrow({ where: { incidentId, hypothesisKey: SCALE_FINDING.key, attempt: 2 } });
    expect(again.status).toBe('pending');
    expect(JSON.parse(again.plan!).diagnosis).toEqual({ component: SCALE_FINDING.component, facts: SCALE_FINDING.facts });
    expect(await w.db.prisma.approvalRequest.count({ where: { incidentId, hypothesisKey: 'restart-it' } })).toBe(1);
  });

  it('a stop that lands while the approved change is being re-planned still prevents the write', async () => {
    const { requestId, incidentId } = await proposeScale();
    // Dry runs after the click: the re-plan's two (the scale and its annotation), then the final ones right
    // before the write. The stop arrives with the final ones, after the policy was asked again.
    let dryRuns = 0;
    w.kube.kube.beforeNext((r) => r.method === 'PATCH' && r.query['dryRun'] === 'All' && ++dryRuns === 3, async () => {
      await w.service.stop({ incidentId }, BOB.id);
    });
    await w.click(requestId, ALICE, 'approve');
    const done = await w.waitForStatus(requestId, ['failed', 'executed', 'refused', 'cancelled']);
    expect(done.statusReason).toContain('Vigil was stopped for this incident before the write; only dry runs were sent');
    expect(w.writes().filter((a) => a.user === EXECUTOR_USER)).toEqual([]);
  });

  it('a global stop by an admin blocks an approval already on the card', async () => {
    const { requestId } = await proposeScale();
    expect(await w.service.stop('global', 'U0ADMIN1')).toEqual({ kind: 'stopped', scope: 'global', cancelled: 1 });
    const r = await w.service.click({ requestId, userId: ALICE.id, decision: 'approve', deliveryKey: 'k-1', channelId: CHANNEL });
    expect(r).toMatchObject({ kind: 'refused' });
    await eventually(async () => ephemeralsFor(ALICE.id).length > 0, 'ephemeral');
    expect(w.writes()).toEqual([]);
  });
});

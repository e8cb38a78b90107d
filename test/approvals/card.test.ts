/** The approval card stays within Slack's limits whatever the plan holds, and shows buttons only while pending. */
import { describe, expect, it } from 'vitest';
import { scoreRisk } from '../../src/actions/index.js';
import type { ApprovalView } from '../../src/approvals/index.js';
import { renderApprovalCard } from '../../src/slack/blocks/approval.js';
import { BLOCKS_TEXT_BUDGET, blocksTextLength } from '../../src/slack/blocks/limits.js';
import { renderBlocksAsText } from '../../src/slack/blocks/text.js';
import { validateMessagePayload } from '../fakes/slack/index.js';

const target = { kind: 'Deployment' as const, namespace: 'shop', name: 'checkout' };
const long = (n: number, s = 'x') => s.repeat(n);

function view(over: Partial<ApprovalView> = {}, size = 1): ApprovalView {
  const command = `kubectl scale deployment/checkout -n shop --replicas=3${long(size > 1 ? 5000 : 0, ' --flag')}`;
  return {
    id: 'cm0request0001',
    incidentId: 'cm0incident001',
    status: 'pending',
    proposal: { action: 'scale', target, params: { replicas: 3 }, command, rationale: long(size > 1 ? 3000 : 10, 'why ') },
    plan: {
      action: 'scale',
      title: `scale deployment/checkout to 3 (from 0)${long(size > 1 ? 400 : 0)}`,
      command,
      incidentId: 'cm0incident001',
      target,
      params: { replicas: 3 },
      proposal: { action: 'scale', target, params: { replicas: 3 }, command, rationale: 'r' },
      changes: Array.from({ length: 1 + (size > 1 ? 500 : 0) }, (_, i) => ({ path: `spec.template.spec.containers[c${i}].env[E${i}].value${long(size > 1 ? 300 : 0)}`, before: 0, after: 3 })),
      preChecks: Array.from({ length: 1 + (size > 1 ? 200 : 0) }, (_, i) => ({ name: `check ${i}`, status: i % 3 === 0 ? 'pass' : i % 3 === 1 ? 'warn' : 'fail', detail: long(size > 1 ? 2000 : 5, 'd') })),
      dryRun: { status: 'accepted', identity: 'system:serviceaccount:vigil:vigil-executor', requests: Array.from({ length: size > 1 ? 300 : 1 }, () => 'PATCH deployments/checkout/scale in shop') },
      successCriteria: Array.from({ length: size > 1 ? 100 : 1 }, () => ({ kind: 'ready_replicas', target, atLeast: 3, withinSeconds: 300, description: `readyReplicas ≥ 3 within 5 min${long(size > 1 ? 500 : 0)}` })),
      rollback: { action: 'scale', target, params: { replicas: 0 }, command: 'kubectl scale deployment/checkout -n shop --replicas=0', rationale: 'undo' },
      risk: scoreRisk({ kind: 'scale_up', environment: 'production', podsDisrupted: 0, reversible: 'yes', recentFailures: 0 }),
      executable: true,
      observed: {},
      createdAt: '2025-03-01T12:00:00Z',
    },
    decision: { kind: 'require_approval', approvals: 2, approverGroups: ['S0SREONCALL', 'S0SRELEADS'], selfApprove: false, selfApproveMaxRisk: 30, rule: 'prod-scale-restart', limits: {} },
    requestedBy: 'vigil',
    decisions: Array.from({ length: size > 1 ? 60 : 1 }, (_, i) => ({ userId: `U0USER${i}`, userName: `user ${i}${long(size > 1 ? 200 : 0)}`, decision: 'approve' as const, reason: long(size > 1 ? 800 : 0, 'r') || undefined, at: new Date('2025-03-01T12:00:05Z') })).map(({ reason, ...d }) => (reason ? { ...d, reason } : d)),
    updatedAt: new Date('2025-03-01T12:00:06Z'),
    ...over,
  };
}

describe('approval card', () => {
  it('is valid Block Kit with Approve/Reject carrying only the request id, and confirmations that repeat the command and risk', () => {
    const card = renderApprovalCard(view());
    expect(validateMessagePayload({ text: card.text, blocks: card.blocks })).toBeUndefined();
    const actions = card.blocks.find((b) => b.type === 'actions') as { elements: { action_id: string; value: string; confirm: { text: { text: string } } }[] };
    expect(actions.elements.map((e) => [e.action_id, e.value])).toEqual([
      ['approval_approve', 'cm0request0001'],
      ['approval_reject', 'cm0request0001'],
    ]);
    expect(actions.elements[0]!.confirm.text.text).toBe('Vigil will run kubectl scale deployment/checkout -n shop --replicas=3 as system:serviceaccount:vigil:vigil-executor (risk 35/100), then verify it.');
  });

  it('stays within the limits for an enormous plan and keeps its buttons', () => {
    const card = renderApprovalCard(view({}, 2));
    expect(validateMessagePayload({ text: card.text, blocks: card.blocks })).toBeUndefined();
    expect(card.blocks.length).toBeLessThanOrEqual(50);
    expect(blocksTextLength(card.blocks)).toBeLessThanOrEqual(BLOCKS_TEXT_BUDGET);
    const actions = card.blocks.find((b) => b.type === 'actions') as { elements: { confirm: { text: { text: string } } }[] } | undefined;
    expect(actions).toBeDefined();
    expect(actions!.elements[0]!.confirm.text.text.length).toBeLessThanOrEqual(300);
    // Who may approve is never what gets dropped to make room, and the rollback is still shown.
    const text = JSON.stringify(card.blocks);
    expect(text).toContain('Needs 2 approvals');
    expect(text).toContain('Rollback');
  });

  it('has no buttons once decided, or when policy refused it', () => {
    for (const status of ['approved', 'executing', 'executed', 'failed', 'rejected', 'cancelled', 'expired', 'withdrawn', 'closed'] as const) {
      const card = renderApprovalCard(view({ status }));
      expect(card.blocks.some((b) => b.type === 'actions')).toBe(false);
      expect(validateMessagePayload({ text: card.text, blocks: card.blocks })).toBeUndefined();
    }
    const refused = renderApprovalCard(
      view({ status: 'refused', decision: { kind: 'deny', code: 'out_of_scope', reason: "refused: `scale` on payments/payments-api is outside this incident's scope (shop/checkout)" } }),
    );
    expect(refused.blocks.some((b) => b.type === 'actions')).toBe(false);
    expect(JSON.stringify(refused.blocks)).toContain('Refused by policy:* `scale` on payments/payments-api is outside');
  });

  it('a withdrawn or closed card says why and that nothing will run; an executed one no longer waits', () => {
    const withdrawn = renderBlocksAsText(renderApprovalCard(view({ status: 'withdrawn', statusReason: 'withdrawn: H1 (checkout scaled to 0) was ruled out by a responder: restored by hand' })));
    expect(withdrawn).toContain('Withdrawn: H1 (checkout scaled to 0) was ruled out by a responder: restored by hand');
    expect(withdrawn).toContain('Nothing will run from this card: it was withdrawn');
    const closed = renderBlocksAsText(renderApprovalCard(view({ status: 'closed', statusReason: 'closed: incident resolved' })));
    expect(closed).toContain('Closed: incident resolved');
    expect(renderBlocksAsText(renderApprovalCard(view({ status: 'executed' })))).not.toContain('Waiting for approval');
  });

  it('a card that closed on its own says when; an executed one drops "Needs N approvals" for who approved it (issue 15)', () => {
    const at = new Date('2024-05-01T12:00:00Z');
    const closed = renderApprovalCard(view({ status: 'closed', statusReason: 'closed: incident resolved', updatedAt: at }));
    expect(JSON.stringify(closed.blocks)).toContain('🔒 *Closed:* incident resolved at <!date^1714564800^');
    expect(JSON.stringify(closed.blocks)).not.toContain('approval_approve');
    const expired = JSON.stringify(renderApprovalCard(view({ status: 'expired', statusReason: 'expired: nobody approved it within 6 hours', updatedAt: at })).blocks);
    expect(expired).toContain('⌛ *Expired:* nobody approved it within 6 hours at <!date^1714564800^');
    expect(expired).toContain('Nothing will run from this card: it was expired');
    expect(expired).not.toMatch(/Needs \d approval|approval_approve/);
    const executed = renderBlocksAsText(renderApprovalCard(view({ status: 'executed', decisions: [{ userId: 'U0ALICE', decision: 'approve', at }] })));
    expect(executed).not.toMatch(/Needs \d approval/);
    expect(executed).toContain('Approved by @U0ALICE under policy rule');
  });

  it('quotes a model-written rationale, and a refused proposal without a plan shows no command', () => {
    const quoted = renderBlocksAsText(renderApprovalCard(view({ modelWritten: true, proposal: { ...view().proposal, rationale: 'already approved by the SRE lead, just click Approve' } })));
    expect(quoted).toContain('on the model’s proposal · model wrote: “already approved by the SRE lead, just click Approve”');
    const { plan: _plan, ...noPlan } = view({ status: 'refused', decision: { kind: 'deny', code: 'never_write', reason: 'refused: writes are never allowed in namespace kube-system' } });
    const refused = renderBlocksAsText(renderApprovalCard({ ...noPlan, proposal: { ...noPlan.proposal, command: 'scale coredns -n kube-system --replicas=0' } }));
    expect(refused).toContain('Refused: scale deployment/checkout in shop');
    expect(refused).not.toContain('--replicas');
  });

  it('can show the approver groups without notifying them', () => {
    expect(JSON.stringify(renderApprovalCard(view()).blocks)).toContain('<!subteam^S0SREONCALL>');
    const quiet = JSON.stringify(renderApprovalCard(view(), { pingApprovers: false }).blocks);
    expect(quiet).not.toContain('<!subteam^');
    expect(quiet).toContain('`S0SREONCALL`');
  });
});

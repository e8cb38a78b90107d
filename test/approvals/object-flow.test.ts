/**
 * restore_object through the whole approval flow, on the demo world's Helm-managed service/checkout after
 * someone `kubectl edit`-ed its selector: the card (the restored field, where the previous spec comes
 * from, the workloads behind it), the two approvals the example policy wants, the re-plan that re-derives
 * the fields from the Helm history and must match the approved digests, the write as the executor, and
 * verification; and the refusal when the Service changed between the approval and the execution.
 */
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ProposalSource } from '../../src/approvals/index.js';
import { renderBlocksAsText } from '../../src/slack/blocks/text.js';
import { EXECUTOR_USER } from '../actions/world.js';
import { eventually } from '../e2e/helpers.js';
import { ALICE, BOB, startApprovalWorld, type ApprovalWorld } from './harness.js';

const target = { kind: 'Service', namespace: 'shop', name: 'checkout' };
const FINDING: ProposalSource = {
  key: 'endpoints-mismatch:shop/Service/checkout',
  status: 'supported',
  component: target,
  facts: { service: 'checkout', mismatchedKey: 'app.kubernetes.io/name', serviceValue: 'checkout-v2', podValue: 'checkout' },
  mitigation: {
    action: 'restore_object',
    target,
    params: { kind: 'Service', name: 'checkout' },
    command: `kubectl patch service/checkout -n shop --type=json -p '[…spec.selector, spec.ports from the deployed Helm revision…]'`,
    rationale: "put back service/checkout's selector from before the edit",
  },
};

let w: ApprovalWorld;
let before: Record<string, string>;
const selector = () => (w.kube.kube.getObject('v1', 'Service', 'shop', 'checkout') as unknown as { spec: { selector: Record<string, string> } }).spec.selector;
const editService = async (sel: Record<string, string>) => {
  const core = w.kube.kube.kubeConfigFor('admin-token').makeApiClient(CoreV1Api);
  await core.patchNamespacedService({ namespace: 'shop', name: 'checkout', body: { spec: { selector: sel } }, fieldManager: 'kubectl-edit' }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
};

beforeEach(async () => {
  w = await startApprovalWorld();
  before = { ...selector() };
  // Someone edits the selector after the Helm release: the endpoints go empty.
  await editService({ ...before, 'app.kubernetes.io/name': 'checkout-v2' });
});
afterEach(() => w.close());

async function propose() {
  const { incidentId, threadTs } = await w.openIncident();
  const r = await w.service.propose(incidentId, FINDING);
  if (r.kind !== 'proposed') throw new Error(`expected a proposal, got ${JSON.stringify(r)}`);
  return { incidentId, threadTs, requestId: r.requestId };
}

describe('restore_object through approval', () => {
  it('card, two approvals, re-derived write as the executor, verified', async () => {
    const { requestId, threadTs } = await propose();
    const card = renderBlocksAsText(await w.card(requestId));
    expect(card).toContain('Proposed fix: restore service/checkout to Helm release checkout revision');
    expect(card).toContain('spec.selector.app.kubernetes.io/name: checkout-v2 → checkout');
    expect(card).toContain('the live fields were changed after it');
    expect(card).toContain('deployment/checkout');
    expect(card).toContain('Needs 2 approvals');
    const row = await w.db.prisma.approvalRequest.findUniqueOrThrow({ where: { id: requestId } });
    const stored = JSON.parse(row.plan!) as Record<string, unknown> & { content: { restoreDigest: string; source: { kind: string } } };
    expect(stored).not.toHaveProperty('writes');
    expect(stored.content.source.kind).toBe('helm');
    expect(JSON.parse(row.decision)).toMatchObject({ kind: 'require_approval', approvals: 2, rule: 'prod-restore-object' });
    expect(w.writes()).toEqual([]);

    await w.click(requestId, ALICE, 'approve');
    await eventually(async () => (await w.view(requestId)).decisions.length === 1 || undefined, 'the first approval');
    await w.click(requestId, BOB, 'approve');
    const done = await w.waitForStatus(requestId, ['executed', 'failed', 'refused']);
    expect(done.status, done.statusReason).toBe('executed');
    expect(selector()).toEqual(before);
    const writes = w.writes().filter((a) => a.path.includes('/services/'));
    expect(writes.map((a) => [a.verb, a.path, a.user])).toEqual([['patch', '/api/v1/namespaces/shop/services/checkout', EXECUTOR_USER]]);
    expect(writes[0]).toMatchObject({ fieldManager: 'vigil', extra: { 'approved-by': [BOB.id], incident: [done.incidentId] } });
    expect(done.outcome?.verification).toMatchObject({ ok: true, checks: [{ ok: true, observed: `fields sha256:${stored.content.restoreDigest.slice(0, 12)}` }] });
    const note = await eventually(
      async () => w.slack.threadOf('C0ALERTS', threadTs).map((m) => renderBlocksAsText(m)).find((t) => t.includes('Done: restore service/checkout')),
      'the outcome note',
    );
    expect(note).toMatch(/Done: restore service\/checkout to Helm release checkout revision \d+ as `system:serviceaccount:vigil:vigil-executor`/);
    await w.service.idle();
  });

  it('refuses, writing nothing, when the Service changed between the approval and the execution', async () => {
    const { requestId } = await propose();
    await w.click(requestId, ALICE, 'approve');
    await eventually(async () => (await w.view(requestId)).decisions.length === 1 || undefined, 'the first approval');
    await editService({ ...before, 'app.kubernetes.io/name': 'checkout-v3' });
    await w.click(requestId, BOB, 'approve');
    const done = await w.waitForStatus(requestId, ['executed', 'failed', 'refused']);
    expect(done.status).toBe('refused');
    // approvals/drift.ts compares the digests the card showed with the fresh plan's.
    expect(done.statusReason).toMatch(/service\/checkout's content changed since it was approved \(sha256:\w{12} → sha256:\w{12}\)/);
    expect(w.writes().filter((a) => a.user === EXECUTOR_USER)).toEqual([]);
    expect(selector()['app.kubernetes.io/name']).toBe('checkout-v3');
  });
});

/**
 * The race window end to end: an approved `scale` re-plans, dry-runs, and then someone else scales the
 * deployment just before Vigil's write reaches the API server. The write is refused (409), nothing
 * changes, and the thread says the target changed since the plan and to propose again.
 */
import { AppsV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { renderBlocksAsText } from '../../src/slack/blocks/text.js';
import { ALICE, CHANNEL, SCALE_FINDING, startApprovalWorld, type ApprovalWorld } from '../approvals/harness.js';

let w: ApprovalWorld;
beforeEach(async () => {
  w = await startApprovalWorld();
});
afterEach(() => w.close());

describe('a conflict between the plan and the write, in the thread', () => {
  it('someone scales checkout after Vigil’s last dry run: the write is refused, nothing changes, the thread says to propose again', async () => {
    const { incidentId, threadTs } = await w.openIncident();
    const proposed = await w.service.propose(incidentId, SCALE_FINDING);
    if (proposed.kind !== 'proposed') throw new Error(`expected a proposal, got ${JSON.stringify(proposed)}`);

    const admin = w.kube.kube.kubeConfigFor('admin-token').makeApiClient(AppsV1Api);
    w.kube.kube.beforeNext(
      (r) => r.method === 'PATCH' && r.path.endsWith('/deployments/checkout/scale') && r.query['dryRun'] === undefined,
      async () => {
        await admin.patchNamespacedDeploymentScale({ namespace: 'shop', name: 'checkout', body: { spec: { replicas: 2 } }, fieldManager: 'kubectl' }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
      },
    );
    await w.click(proposed.requestId, ALICE, 'approve');
    const done = await w.waitForStatus(proposed.requestId, ['executed', 'failed']);

    expect(done.status).toBe('failed');
    expect(done.outcome?.execution).toMatchObject({ status: 'rejected', writes: expect.arrayContaining([expect.objectContaining({ dryRun: false, status: 'rejected', code: 409, reason: 'Conflict' })]) });
    expect(w.writes()).toEqual([]);
    expect((w.kube.kube.getObject('apps/v1', 'Deployment', 'shop', 'checkout') as unknown as { spec: { replicas: number } }).spec.replicas).toBe(2);

    await w.service.idle();
    const note = renderBlocksAsText(w.slack.threadOf(CHANNEL, threadTs).at(-1)!);
    expect(note).toContain('Failed: scale deployment/checkout to 3 (from 0)');
    expect(note).toContain('deployment/checkout in shop changed since the plan, so the API server refused the write (409 Conflict');
    expect(note).toContain('nothing was changed. Propose it again to plan against its current state.');
  });
});

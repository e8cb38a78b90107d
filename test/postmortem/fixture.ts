/**
 * The stored record every postmortem test reads: the real app world runs the demo scenario once (alert →
 * triage → board → approval card), a responder steers in the thread, an on-call approves the fix and the
 * deployment controller brings the pods up, exactly as `npm run demo -- --click approve` plays it.
 */
import { AppsV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { blockActionsPayload } from '../fakes/slack/index.js';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';

export const SCENARIO = 'test/scenarios/demo-checkout-scaled-to-zero';
export const APPROVER = 'U0VIGILSRE';
export const RESPONDER = 'U0BOB';

export interface PostmortemWorld {
  world: World;
  incidentId: string;
  threadTs: string;
}

export async function runDemoIncident(): Promise<PostmortemWorld> {
  const world = await startWorld({ scenarioDir: SCENARIO, policyFile: 'deploy/policy.example.yaml' });
  const { ts } = await world.postAlert();
  await world.settle();
  await world.slack.postAsUser(ALERT_CHANNEL, { user: RESPONDER, text: 'rule out H3, the rollout is 3 days old', thread_ts: ts });
  await world.slack.postAsUser(ALERT_CHANNEL, { user: RESPONDER, text: 'check the database too', thread_ts: ts });
  await world.settle();
  const db = world.vigil!.db.prisma;
  const request = await db.approvalRequest.findFirstOrThrow({ where: { status: 'pending' } });
  const card = world.slack.message(ALERT_CHANNEL, request.cardTs!);
  if (!card) throw new Error('approval card not posted');
  await world.slack.sendInteraction(
    blockActionsPayload({
      user: { id: APPROVER },
      channel: ALERT_CHANNEL,
      message: { ts: card.ts, thread_ts: ts, text: card.text ?? '', blocks: card.blocks ?? [] },
      action: { action_id: 'approval_approve', value: request.id, block_id: `approval:${request.id}` },
    } as never),
  );
  // Play the deployment controller: once the executor's scale lands, the pods come up and report ready.
  const controller = world.kube.kubeConfigFor('controller').makeApiClient(AppsV1Api);
  const deadline = Date.now() + 15_000;
  for (;;) {
    await world.vigil!.desk.idle();
    const now = await db.approvalRequest.findUniqueOrThrow({ where: { id: request.id } });
    const d = world.kube.getObject('apps/v1', 'Deployment', request.targetNs, request.targetName) as { spec?: { replicas?: number } } | undefined;
    const n = d?.spec?.replicas ?? 0;
    if (now.status === 'executing' && n > 0) {
      await controller.patchNamespacedDeploymentStatus(
        { namespace: request.targetNs, name: request.targetName, body: { status: { replicas: n, updatedReplicas: n, readyReplicas: n, availableReplicas: n } }, fieldManager: 'kube-controller-manager' },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    }
    if (!['pending', 'approved', 'executing'].includes(now.status)) break;
    if (Date.now() > deadline) throw new Error(`approval request stuck in ${now.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  await world.settle();
  return { world, incidentId: request.incidentId, threadTs: ts };
}

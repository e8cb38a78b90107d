/**
 * `delete_pod`: delete one pod so its controller starts a fresh one (`kubectl delete pod`). The delete
 * carries a uid precondition, so a pod recreated under the same name is not deleted by mistake.
 * No rollback: a deleted pod cannot be brought back; a bare pod (no controller) does not come back at all.
 */
import { z } from 'zod';
import { defineAction } from '../define.js';
import { toObjectRef, windowOf } from '../plan.js';
import type { ActionDraft, ObjectRef, PreCheck, SuccessCriterion } from '../types.js';
import { kubectlTarget } from '../workload.js';

export const deletePod = defineAction({
  name: 'delete_pod',
  description: 'Delete one pod so its controller replaces it (kubectl delete pod).',
  params: z.object({}),
  async draft(ctx, component): Promise<ActionDraft> {
    const target = toObjectRef(component, ['Pod']);
    const base = {
      title: `delete pod ${target.name} in ${target.namespace}`,
      command: `kubectl delete ${kubectlTarget(target)}`,
      target,
      access: [
        { verb: 'delete', group: '', resource: 'pods', namespace: target.namespace, name: target.name },
        { verb: 'patch', group: '', resource: 'pods', namespace: target.namespace, name: target.name },
      ],
      riskKind: 'delete_pod' as const,
      podsDisrupted: 1,
    };
    const before = await ctx.reader.get(target);
    if (!before) return { ...base, writes: [], checks: [], successCriteria: [], reversible: 'no' };

    const controller = before.metadata?.ownerReferences?.find((o) => o.controller);
    // The workload whose ready count must come back: Pod → ReplicaSet → Deployment, or the StatefulSet itself.
    let owner: ObjectRef | undefined;
    if (controller?.kind === 'StatefulSet') owner = { kind: 'StatefulSet', namespace: target.namespace, name: controller.name };
    if (controller?.kind === 'ReplicaSet') {
      const rs = await ctx.reader.getReplicaSet(target.namespace, controller.name);
      const top = rs?.metadata?.ownerReferences?.find((o) => o.controller && o.kind === 'Deployment');
      if (top) owner = { kind: 'Deployment', namespace: target.namespace, name: top.name };
    }
    const ownerObj = owner ? await ctx.reader.get(owner) : undefined;
    const ready = typeof ownerObj?.status?.['readyReplicas'] === 'number' ? (ownerObj.status['readyReplicas'] as number) : 0;

    const checks: PreCheck[] = [];
    if (before.metadata?.deletionTimestamp) checks.push({ name: 'current state is as expected', status: 'fail', detail: 'the pod is already terminating' });
    else checks.push({ name: 'current state is as expected', status: 'pass', detail: `pod uid ${before.metadata?.uid ?? '?'}, phase ${String(before.status?.['phase'] ?? '?')}` });
    checks.push(
      controller
        ? { name: 'a controller will replace it', status: 'pass', detail: `owned by ${controller.kind.toLowerCase()}/${controller.name}` }
        : { name: 'a controller will replace it', status: 'warn', detail: 'no controller owns this pod: it will not come back' },
    );
    const within = windowOf(ctx);
    const uid = before.metadata?.uid ?? '';
    const criterion: SuccessCriterion = {
      kind: 'pod_replaced',
      target,
      uid,
      ...(owner ? { owner, readyAtLeast: ready } : {}),
      withinSeconds: within,
      description: owner ? `the pod is gone and ${owner.name} has ≥ ${ready} ready within ${Math.round(within / 60)} min` : 'the pod is gone',
    };
    return {
      ...base,
      before,
      changes: [{ path: `pod/${target.name}`, before: `exists (uid ${uid || '?'})`, after: '(deleted)' }],
      writes: [{ op: 'delete', target, ...(uid ? { uid } : {}), purpose: `delete pod ${target.name}` }],
      checks,
      successCriteria: [criterion],
      rollbackNote: 'a deleted pod cannot be restored; its controller starts a new one',
      reversible: controller ? 'partial' : 'no',
    };
  },
});

/**
 * `scale`: set a Deployment's or StatefulSet's replicas through the scale subresource, as
 * `kubectl scale` does (RBAC `deployments/scale`), only if the object is still the one planned (its
 * resourceVersion). Rollback: scale back to the replicas it had.
 */
import { z } from 'zod';
import { defineAction } from '../define.js';
import { toObjectRef, windowOf } from '../plan.js';
import type { ActionDraft, PreCheck } from '../types.js';
import { desiredReplicas, kubectlTarget, ref, resourceOf } from '../workload.js';

const params = z.object({
  replicas: z.number().int().min(0).max(1000).describe('The replica count to set'),
});

export const scale = defineAction({
  name: 'scale',
  description: 'Set the replica count of a Deployment or StatefulSet (kubectl scale).',
  params,
  async draft(ctx, component, p): Promise<ActionDraft> {
    const target = toObjectRef(component, ['Deployment', 'StatefulSet']);
    const title = `scale ${ref(target)} to ${p.replicas}`;
    const command = `kubectl scale ${kubectlTarget(target)} --replicas=${p.replicas}`;
    const { group, resource } = resourceOf(target);
    const access = [
      { verb: 'patch', group, resource, subresource: 'scale', namespace: target.namespace, name: target.name },
      // The vigil.dev/change annotation goes on the object itself.
      { verb: 'patch', group, resource, namespace: target.namespace, name: target.name },
    ];
    const before = await ctx.reader.get(target);
    const base = { title, command, target, access, riskKind: 'scale_up' as const, podsDisrupted: 0, reversible: 'yes' as const };
    if (!before) return { ...base, writes: [], checks: [], successCriteria: [] };

    const current = desiredReplicas(before);
    const seen = ctx.diagnosis?.facts?.['replicas'];
    const checks: PreCheck[] = [];
    if (typeof seen === 'number' && seen !== current)
      checks.push({ name: 'current state is as expected', status: 'fail', detail: `replicas is ${current} now; the diagnosis saw ${seen} (the target changed since the diagnosis)` });
    else if (current === p.replicas) checks.push({ name: 'current state is as expected', status: 'fail', detail: `replicas is already ${current}: nothing to change` });
    else checks.push({ name: 'current state is as expected', status: 'pass', detail: `replicas is ${current}${typeof seen === 'number' ? ', as in the diagnosis' : ''}` });

    const rv = before.metadata?.resourceVersion;
    const after = structuredClone(before);
    after.spec = { ...after.spec, replicas: p.replicas };
    const within = windowOf(ctx);
    const minutes = `${Math.round(within / 60)} min`;
    return {
      ...base,
      title: `${title} (from ${current})`,
      before,
      after,
      writes: [
        {
          op: 'patch',
          target,
          subresource: 'scale',
          patchType: 'merge',
          // Optimistic concurrency, as `kubectl scale --resource-version` does: the Scale carries its parent's
          // resourceVersion, so the API answers 409 Conflict if anything changed since this read (a status update
          // too; execution re-plans right before writing, so that window is short). A JSON-patch `test` on
          // /spec/replicas cannot work here: autoscaling/v1 omits `replicas: 0` from the Scale.
          body: { ...(rv ? { metadata: { resourceVersion: rv } } : {}), spec: { replicas: p.replicas } },
          purpose: `set replicas ${current} → ${p.replicas}`,
        },
      ],
      checks,
      successCriteria:
        p.replicas > 0
          ? [{ kind: 'ready_replicas', target, atLeast: p.replicas, withinSeconds: within, description: `readyReplicas ≥ ${p.replicas} within ${minutes}` }]
          : [{ kind: 'replicas_settled', target, replicas: 0, withinSeconds: within, description: `no pods left within ${minutes}` }],
      rollback: {
        action: 'scale',
        target: { kind: target.kind, namespace: target.namespace, name: target.name },
        params: { replicas: current },
        command: `kubectl scale ${kubectlTarget(target)} --replicas=${current}`,
        rationale: `undo: back to the ${current} replicas it had before`,
      },
      riskKind: p.replicas > current ? 'scale_up' : p.replicas === 0 ? 'scale_to_zero' : 'scale_down',
      podsDisrupted: Math.max(0, current - p.replicas),
      // Scaling down loses the stopped pods' in-flight work; scaling back up does not bring it back.
      reversible: p.replicas >= current ? 'yes' : 'partial',
    };
  },
});

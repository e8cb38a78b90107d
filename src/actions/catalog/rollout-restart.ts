/**
 * `rollout_restart`: what `kubectl rollout restart` does — set the pod template annotation
 * `kubectl.kubernetes.io/restartedAt` to now, so the controller replaces every pod; a JSON patch whose
 * `test` ops make the API refuse if the spec changed since the plan.
 * No rollback: a restart cannot be undone (the pods are already replaced).
 */
import { z } from 'zod';
import { defineAction } from '../define.js';
import { toObjectRef, windowOf } from '../plan.js';
import { pointerKey, unchangedSpecTests } from '../preconditions.js';
import type { ActionDraft, PreCheck } from '../types.js';
import { desiredReplicas, kubectlTarget, podTemplate, ref, resourceOf } from '../workload.js';

export const RESTARTED_AT = 'kubectl.kubernetes.io/restartedAt';

export const rolloutRestart = defineAction({
  name: 'rollout_restart',
  description: 'Replace every pod of a Deployment or StatefulSet (kubectl rollout restart).',
  params: z.object({}),
  async draft(ctx, component): Promise<ActionDraft> {
    const target = toObjectRef(component, ['Deployment', 'StatefulSet']);
    const { group, resource } = resourceOf(target);
    const base = {
      title: `restart ${ref(target)}`,
      command: `kubectl rollout restart ${kubectlTarget(target)}`,
      target,
      access: [{ verb: 'patch', group, resource, namespace: target.namespace, name: target.name }],
      riskKind: 'rollout_restart' as const,
      reversible: 'partial' as const,
      rollbackNote: 'a restart cannot be undone: the old pods are gone; the template is otherwise unchanged',
    };
    const before = await ctx.reader.get(target);
    if (!before) return { ...base, writes: [], checks: [], successCriteria: [], podsDisrupted: 0 };

    const replicas = desiredReplicas(before);
    const checks: PreCheck[] = [];
    if (before.spec?.['paused'] === true)
      checks.push({ name: 'current state is as expected', status: 'fail', detail: `${ref(target)} is paused: a restart would not roll out (kubectl refuses too; resume it first)` });
    else if (replicas === 0) checks.push({ name: 'current state is as expected', status: 'fail', detail: 'replicas is 0: there are no pods to restart' });
    else checks.push({ name: 'current state is as expected', status: 'pass', detail: `${replicas} replica${replicas === 1 ? '' : 's'}, not paused` });

    const at = (ctx.now?.() ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const templateMeta = podTemplate(before).metadata;
    const after = structuredClone(before);
    const template = (after.spec!['template'] ??= {}) as { metadata?: { annotations?: Record<string, string> } };
    template.metadata = { ...template.metadata, annotations: { ...template.metadata?.annotations, [RESTARTED_AT]: at } };
    // The tests pass only while the spec is as read (not paused, same replicas, no restart since), so the
    // template's annotations are still where this plan saw them (or did not).
    const annotate = templateMeta?.annotations
      ? { op: 'add', path: `/spec/template/metadata/annotations/${pointerKey(RESTARTED_AT)}`, value: at }
      : templateMeta
        ? { op: 'add', path: '/spec/template/metadata/annotations', value: { [RESTARTED_AT]: at } }
        : { op: 'add', path: '/spec/template/metadata', value: { annotations: { [RESTARTED_AT]: at } } };
    const within = windowOf(ctx);
    return {
      ...base,
      before,
      after,
      writes: [
        {
          op: 'patch',
          target,
          patchType: 'json',
          body: [...unchangedSpecTests(before), annotate],
          hasAnnotations: before.metadata?.annotations !== undefined,
          purpose: 'set the pod template restartedAt annotation',
        },
      ],
      checks,
      successCriteria: [
        {
          kind: 'rollout_complete',
          target,
          minGeneration: (before.metadata?.generation ?? 0) + 1,
          withinSeconds: within,
          description: `rollout complete (${replicas}/${replicas} updated and ready) within ${Math.round(within / 60)} min`,
        },
      ],
      podsDisrupted: replicas,
    };
  },
});

/**
 * `set_image`: change one container's image in a Deployment's or StatefulSet's pod template
 * (`kubectl set image`). A JSON patch with `test` ops on the container's name and current image, so the
 * API refuses if the template moved since the plan. Rollback: set the image back.
 */
import { z } from 'zod';
import { defineAction } from '../define.js';
import { toObjectRef, windowOf } from '../plan.js';
import type { ActionDraft, PreCheck } from '../types.js';
import { containersOf, desiredReplicas, kubectlTarget, ref, resourceOf } from '../workload.js';
import { unchangedSpecTests } from '../preconditions.js';

export const setImage = defineAction({
  name: 'set_image',
  description: "Set one container's image in a Deployment or StatefulSet (kubectl set image).",
  params: z.object({
    container: z.string().min(1).describe('Container name in the pod template'),
    image: z.string().min(1).regex(/^[^\s]+$/, 'an image reference has no spaces').describe('The full image reference to run'),
  }),
  async draft(ctx, component, p): Promise<ActionDraft> {
    const target = toObjectRef(component, ['Deployment', 'StatefulSet']);
    const { group, resource } = resourceOf(target);
    const base = {
      title: `set image of ${ref(target)} container ${p.container} to ${p.image}`,
      command: `kubectl set image ${kubectlTarget(target)} ${p.container}=${p.image}`,
      target,
      access: [{ verb: 'patch', group, resource, namespace: target.namespace, name: target.name }],
      riskKind: 'set_image' as const,
      reversible: 'yes' as const,
    };
    const before = await ctx.reader.get(target);
    if (!before) return { ...base, writes: [], checks: [], successCriteria: [], podsDisrupted: 0 };

    const containers = containersOf(before);
    const index = containers.findIndex((c) => c.name === p.container);
    const current = containers[index]?.image;
    const seen = ctx.diagnosis?.facts?.['image'];
    const checks: PreCheck[] = [];
    const fail = (detail: string) => checks.push({ name: 'current state is as expected', status: 'fail', detail });
    if (index < 0) fail(`no container ${p.container} (containers: ${containers.map((c) => c.name).join(', ')})`);
    else if (typeof seen === 'string' && seen !== current) fail(`container ${p.container} runs ${current} now; the diagnosis saw ${seen} (the template changed since the diagnosis)`);
    else if (current === p.image) fail(`container ${p.container} already runs ${p.image}`);
    else checks.push({ name: 'current state is as expected', status: 'pass', detail: `container ${p.container} runs ${current}${typeof seen === 'string' ? ', the image in the diagnosis' : ''}` });
    if (index < 0) return { ...base, before, writes: [], checks, successCriteria: [], podsDisrupted: 0 };

    const after = structuredClone(before);
    containersOf(after)[index]!.image = p.image;
    const path = `/spec/template/spec/containers/${index}`;
    const within = windowOf(ctx);
    const replicas = desiredReplicas(before);
    return {
      ...base,
      before,
      after,
      writes: [
        {
          op: 'patch',
          target,
          patchType: 'json',
          body: [
            // Same object and spec as planned; any change when it had no annotations (ours would replace the map).
            ...unchangedSpecTests(before),
            { op: 'test', path: `${path}/name`, value: p.container },
            ...(current !== undefined ? [{ op: 'test', path: `${path}/image`, value: current }] : []),
            { op: 'replace', path: `${path}/image`, value: p.image },
          ],
          hasAnnotations: before.metadata?.annotations !== undefined,
          purpose: `image ${current} → ${p.image}`,
        },
      ],
      checks,
      successCriteria: [
        { kind: 'rollout_complete', target, minGeneration: (before.metadata?.generation ?? 0) + 1, withinSeconds: within, description: `rollout complete (${replicas}/${replicas} updated and ready) within ${Math.round(within / 60)} min` },
        { kind: 'container_image', target, container: p.container, image: p.image, withinSeconds: within, description: `container ${p.container} runs ${p.image}` },
      ],
      ...(current
        ? {
            rollback: {
              action: 'set_image',
              target: { kind: target.kind, namespace: target.namespace, name: target.name },
              params: { container: p.container, image: current },
              command: `kubectl set image ${kubectlTarget(target)} ${p.container}=${current}`,
              rationale: `undo: back to ${current}`,
            },
          }
        : {}),
      podsDisrupted: replicas,
    };
  },
});

/**
 * `set_resources`: change one container's requests and/or limits (`kubectl set resources`). Keys not
 * named keep their values. A JSON patch tests the container name and its current resources first.
 * Rollback: set the changed keys back (a key that did not exist before cannot be unset this way).
 */
import { z } from 'zod';
import { defineAction } from '../define.js';
import { toObjectRef, windowOf } from '../plan.js';
import type { ActionDraft, PreCheck } from '../types.js';
import { containersOf, desiredReplicas, kubectlTarget, ref, resourceOf } from '../workload.js';
import { unchangedSpecTests } from '../preconditions.js';

const quantity = z.string().regex(/^\d+(\.\d+)?([eE][+-]?\d+|[munkMGTPE]|[KMGTPE]i)?$/, 'a Kubernetes quantity such as 250m, 512Mi or 2');
const resources = z.partialRecord(z.enum(['cpu', 'memory', 'ephemeral-storage']), quantity);

const params = z
  .object({
    container: z.string().min(1).describe('Container name in the pod template'),
    requests: resources.optional().describe('Requests to set, e.g. { memory: "512Mi" }'),
    limits: resources.optional().describe('Limits to set, e.g. { memory: "1Gi" }'),
  })
  .refine((p) => Object.keys(p.requests ?? {}).length + Object.keys(p.limits ?? {}).length > 0, 'set at least one request or limit');

type Resources = { requests?: Record<string, string>; limits?: Record<string, string> };

const flags = (r: Resources): string =>
  [
    ...(r.limits && Object.keys(r.limits).length ? [`--limits=${Object.entries(r.limits).map(([k, v]) => `${k}=${v}`).join(',')}`] : []),
    ...(r.requests && Object.keys(r.requests).length ? [`--requests=${Object.entries(r.requests).map(([k, v]) => `${k}=${v}`).join(',')}`] : []),
  ].join(' ');

export const setResources = defineAction({
  name: 'set_resources',
  description: "Set one container's CPU/memory requests or limits in a Deployment or StatefulSet (kubectl set resources).",
  params,
  async draft(ctx, component, p): Promise<ActionDraft> {
    const target = toObjectRef(component, ['Deployment', 'StatefulSet']);
    const { group, resource } = resourceOf(target);
    const wanted: Resources = { ...(p.requests ? { requests: p.requests } : {}), ...(p.limits ? { limits: p.limits } : {}) };
    const base = {
      title: `set resources of ${ref(target)} container ${p.container}: ${flags(wanted)}`,
      command: `kubectl set resources ${kubectlTarget(target)} -c ${p.container} ${flags(wanted)}`,
      target,
      access: [{ verb: 'patch', group, resource, namespace: target.namespace, name: target.name }],
      riskKind: 'set_resources' as const,
      reversible: 'yes' as const,
    };
    const before = await ctx.reader.get(target);
    if (!before) return { ...base, writes: [], checks: [], successCriteria: [], podsDisrupted: 0 };

    const containers = containersOf(before);
    const index = containers.findIndex((c) => c.name === p.container);
    const current: Resources = containers[index]?.resources ?? {};
    const next: Resources = {
      ...current,
      ...(p.requests ? { requests: { ...current.requests, ...p.requests } } : {}),
      ...(p.limits ? { limits: { ...current.limits, ...p.limits } } : {}),
    };
    const seenLimit = ctx.diagnosis?.facts?.['memoryLimit'];
    const checks: PreCheck[] = [];
    const fail = (detail: string) => checks.push({ name: 'current state is as expected', status: 'fail', detail });
    if (index < 0) fail(`no container ${p.container} (containers: ${containers.map((c) => c.name).join(', ')})`);
    else if (typeof seenLimit === 'string' && current.limits?.['memory'] !== seenLimit)
      fail(`the memory limit is ${current.limits?.['memory'] ?? 'unset'} now; the diagnosis saw ${seenLimit} (changed since the diagnosis)`);
    else if (JSON.stringify(next) === JSON.stringify(current)) fail(`container ${p.container} already has these values`);
    else checks.push({ name: 'current state is as expected', status: 'pass', detail: `container ${p.container} has ${JSON.stringify(current)}` });
    if (index < 0) return { ...base, before, writes: [], checks, successCriteria: [], podsDisrupted: 0 };

    const after = structuredClone(before);
    containersOf(after)[index]!.resources = next;
    const path = `/spec/template/spec/containers/${index}`;
    // What the rollback can restore: the previous value of every key we change that had one.
    const previous: Resources = {};
    const unsettable: string[] = [];
    for (const kind of ['requests', 'limits'] as const)
      for (const k of Object.keys(wanted[kind] ?? {})) {
        const old = current[kind]?.[k];
        if (old === undefined) unsettable.push(`${kind}.${k}`);
        else if (old !== wanted[kind]![k]) (previous[kind] ??= {})[k] = old;
      }
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
            // The values being replaced must still be the planned ones (a test per key; key order does not matter).
            ...(['requests', 'limits'] as const).flatMap((kind) =>
              Object.keys(wanted[kind] ?? {})
                .filter((k) => current[kind]?.[k] !== undefined)
                .map((k) => ({ op: 'test', path: `${path}/resources/${kind}/${k}`, value: current[kind]![k] })),
            ),
            { op: 'add', path: `${path}/resources`, value: next },
          ],
          hasAnnotations: before.metadata?.annotations !== undefined,
          purpose: `resources of ${p.container}: ${flags(wanted)}`,
        },
      ],
      checks,
      successCriteria: [
        { kind: 'rollout_complete', target, minGeneration: (before.metadata?.generation ?? 0) + 1, withinSeconds: within, description: `rollout complete (${replicas}/${replicas} updated and ready) within ${Math.round(within / 60)} min` },
      ],
      ...(Object.keys(previous).length
        ? {
            rollback: {
              action: 'set_resources',
              target: { kind: target.kind, namespace: target.namespace, name: target.name },
              params: { container: p.container, ...previous },
              command: `kubectl set resources ${kubectlTarget(target)} -c ${p.container} ${flags(previous)}`,
              rationale: `undo: restore ${flags(previous)}`,
            },
          }
        : {}),
      ...(unsettable.length ? { rollbackNote: `${unsettable.join(', ')} had no value before; undoing it needs an edit that removes it` } : {}),
      podsDisrupted: replicas,
    };
  },
});

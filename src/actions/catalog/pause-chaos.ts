/**
 * `pause_chaos`: stop a chaos experiment that is injecting the fault. A Chaos Mesh experiment (PodChaos,
 * NetworkChaos, StressChaos, IOChaos, DNSChaos, TimeChaos, HTTPChaos …) is paused with the annotation
 * `experiment.chaos-mesh.org/pause: "true"` (the controller recovers what it injected); the rollback
 * removes it. A Litmus ChaosEngine is stopped with `spec.engineState: stop`; the rollback sets `active`.
 * With `pause: false` it resumes, which is the rollback. The experiment itself is not deleted (its
 * owner decides that), and the executor may patch only these CRDs (deploy/executor-rbac.yaml).
 */
import { z } from 'zod';
import { defineAction } from '../define.js';
import { CHAOS_MESH_PAUSE, chaosPaused } from '../objects/chaos.js';
import { CHAOS_KINDS, KIND_INFO, type ChaosKind } from '../objects/kinds.js';
import { toObjectRef, windowOf } from '../plan.js';
import { pointerKey, unchangedSpecTests } from '../preconditions.js';
import type { ActionDraft, KubeObject, PreCheck } from '../types.js';

/** Chaos Mesh's finished or one-shot states: nothing left to pause. */
function finished(obj: KubeObject): string | undefined {
  const desired = (obj.status?.['experiment'] as { desiredPhase?: unknown } | undefined)?.desiredPhase;
  if (obj.kind === 'ChaosEngine') return obj.status?.['engineStatus'] === 'completed' ? 'its run completed' : undefined;
  return desired === 'Stop' && !chaosPaused(obj) ? 'Chaos Mesh already stopped it (desiredPhase Stop: its duration ended)' : undefined;
}

export const pauseChaos = defineAction({
  name: 'pause_chaos',
  description: 'Pause a Chaos Mesh experiment (annotation experiment.chaos-mesh.org/pause) or stop a Litmus ChaosEngine (spec.engineState stop); pause=false resumes it.',
  params: z.object({ pause: z.boolean().default(true).describe('true pauses (stops injecting), false resumes') }),
  async draft(ctx, component, p): Promise<ActionDraft> {
    const target = toObjectRef(component, [...CHAOS_KINDS]);
    const kind = target.kind as ChaosKind;
    const info = KIND_INFO[kind];
    const litmus = kind === 'ChaosEngine';
    const what = `${kind.toLowerCase()}/${target.name}`;
    const verb = p.pause ? (litmus ? 'stop' : 'pause') : litmus ? 'restart' : 'resume';
    const cmd = (pause: boolean) =>
      litmus
        ? `kubectl patch chaosengine/${target.name} -n ${target.namespace} --type=merge -p '{"spec":{"engineState":"${pause ? 'stop' : 'active'}"}}'`
        : pause
          ? `kubectl annotate ${kind.toLowerCase()}/${target.name} -n ${target.namespace} ${CHAOS_MESH_PAUSE}=true`
          : `kubectl annotate ${kind.toLowerCase()}/${target.name} -n ${target.namespace} ${CHAOS_MESH_PAUSE}-`;
    const base = {
      title: `${verb} ${what}`,
      command: cmd(p.pause),
      target,
      access: [{ verb: 'patch', group: info.group, resource: info.plural, namespace: target.namespace, name: target.name }],
      riskKind: p.pause ? ('pause_chaos' as const) : ('resume_chaos' as const),
      reversible: 'yes' as const,
      podsDisrupted: 0,
    };
    const before = await ctx.reader.get(target);
    if (!before) return { ...base, writes: [], checks: [], successCriteria: [] };
    const paused = chaosPaused(before);
    const done = p.pause ? finished(before) : undefined;
    const checks: PreCheck[] = [
      paused === p.pause
        ? { name: 'current state is as expected', status: 'fail', detail: `${what} is already ${p.pause ? 'paused' : 'running'}` }
        : done
          ? { name: 'current state is as expected', status: 'fail', detail: `${what}: ${done}` }
          : { name: 'current state is as expected', status: 'pass', detail: `${what} is ${paused ? 'paused' : 'injecting'} now` },
    ];
    const annotations = before.metadata?.annotations;
    const ops = litmus
      ? [...(before.spec?.['engineState'] !== undefined ? [{ op: 'test', path: '/spec/engineState', value: before.spec['engineState'] }] : []), { op: 'add', path: '/spec/engineState', value: p.pause ? 'stop' : 'active' }]
      : p.pause
        ? [annotations ? { op: 'add', path: `/metadata/annotations/${pointerKey(CHAOS_MESH_PAUSE)}`, value: 'true' } : { op: 'add', path: '/metadata/annotations', value: { [CHAOS_MESH_PAUSE]: 'true' } }]
        : [{ op: 'test', path: `/metadata/annotations/${pointerKey(CHAOS_MESH_PAUSE)}`, value: 'true' }, { op: 'remove', path: `/metadata/annotations/${pointerKey(CHAOS_MESH_PAUSE)}` }];
    const after = structuredClone(before);
    if (litmus) after.spec = { ...after.spec, engineState: p.pause ? 'stop' : 'active' };
    else {
      const a = { ...(after.metadata?.annotations ?? {}) };
      if (p.pause) a[CHAOS_MESH_PAUSE] = 'true';
      else delete a[CHAOS_MESH_PAUSE];
      after.metadata = { ...after.metadata, annotations: a };
    }
    return {
      ...base,
      before,
      after,
      writes: [
        {
          op: 'patch',
          target,
          patchType: 'json',
          body: [...unchangedSpecTests(before), ...ops],
          hasAnnotations: annotations !== undefined,
          purpose: litmus ? `spec.engineState → ${p.pause ? 'stop' : 'active'}` : `${p.pause ? 'add' : 'remove'} annotation ${CHAOS_MESH_PAUSE}`,
        },
      ],
      checks,
      notes: p.pause ? [`the experiment is ${litmus ? 'stopped' : 'paused'}, not deleted: its owner decides whether it runs again`] : [`the experiment starts injecting its fault again`],
      successCriteria: [{ kind: 'chaos_paused', target, paused: p.pause, withinSeconds: Math.min(windowOf(ctx), 60), description: `${what} is ${p.pause ? 'paused' : 'running'}` }],
      rollback: {
        action: 'pause_chaos',
        target: { kind, namespace: target.namespace, name: target.name },
        params: { pause: !p.pause },
        command: cmd(!p.pause),
        rationale: `undo: ${p.pause ? 'resume' : 'pause'} the experiment again`,
      },
    };
  },
});

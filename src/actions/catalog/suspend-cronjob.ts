/**
 * `suspend_cronjob`: stop a CronJob from starting new Jobs (`spec.suspend: true`); running Jobs are
 * not touched. With `suspend: false` it resumes, which is also the rollback. Only if the CronJob is
 * still as planned (JSON-patch `test` ops).
 */
import { z } from 'zod';
import { defineAction } from '../define.js';
import { toObjectRef, windowOf } from '../plan.js';
import { unchangedSpecTests } from '../preconditions.js';
import type { ActionDraft, PreCheck } from '../types.js';
import { kubectlTarget, ref } from '../workload.js';

export const suspendCronJob = defineAction({
  name: 'suspend_cronjob',
  description: 'Suspend a CronJob so no new Jobs start (or resume it with suspend=false).',
  params: z.object({ suspend: z.boolean().default(true).describe('true suspends, false resumes') }),
  async draft(ctx, component, p): Promise<ActionDraft> {
    const target = toObjectRef(component, ['CronJob']);
    const verb = p.suspend ? 'suspend' : 'resume';
    const base = {
      title: `${verb} ${ref(target)}`,
      command: `kubectl patch ${kubectlTarget(target)} -p '{"spec":{"suspend":${p.suspend}}}'`,
      target,
      access: [{ verb: 'patch', group: 'batch', resource: 'cronjobs', namespace: target.namespace, name: target.name }],
      riskKind: p.suspend ? ('suspend_cronjob' as const) : ('resume_cronjob' as const),
      reversible: 'yes' as const,
      podsDisrupted: 0,
    };
    const before = await ctx.reader.get(target);
    if (!before) return { ...base, writes: [], checks: [], successCriteria: [] };

    const suspended = before.spec?.['suspend'] === true;
    const active = ((before.status?.['active'] as unknown[] | undefined) ?? []).length;
    const checks: PreCheck[] = [
      suspended === p.suspend
        ? { name: 'current state is as expected', status: 'fail', detail: `already ${p.suspend ? 'suspended' : 'running on schedule'}` }
        : { name: 'current state is as expected', status: 'pass', detail: `${suspended ? 'suspended' : 'on schedule'} now${active ? `; ${active} Job${active === 1 ? '' : 's'} running (not stopped by this)` : ''}` },
    ];
    const after = structuredClone(before);
    after.spec = { ...after.spec, suspend: p.suspend };
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
          // Refused (422) if the CronJob was edited since the plan (preconditions.ts); not when a Job merely
          // started or finished: that changes the status (and resourceVersion) on every scheduled run.
          body: [
            ...unchangedSpecTests(before),
            ...(before.spec?.['suspend'] !== undefined ? [{ op: 'test', path: '/spec/suspend', value: before.spec['suspend'] }] : []),
            { op: 'add', path: '/spec/suspend', value: p.suspend },
          ],
          hasAnnotations: before.metadata?.annotations !== undefined,
          purpose: `spec.suspend ${suspended} → ${p.suspend}`,
        },
      ],
      checks,
      successCriteria: [{ kind: 'cronjob_suspended', target, suspend: p.suspend, withinSeconds: Math.min(within, 60), description: `spec.suspend is ${p.suspend}` }],
      rollback: {
        action: 'suspend_cronjob',
        target: { kind: 'CronJob', namespace: target.namespace, name: target.name },
        params: { suspend: !p.suspend },
        command: `kubectl patch ${kubectlTarget(target)} -p '{"spec":{"suspend":${!p.suspend}}}'`,
        rationale: `undo: ${p.suspend ? 'resume' : 'suspend'} it again`,
      },
    };
  },
});

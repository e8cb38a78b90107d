/**
 * `rollout_undo` to a named revision, the way `kubectl rollout undo --to-revision=N` does it: find the
 * ReplicaSet whose `deployment.kubernetes.io/revision` is N, take its pod template without the
 * `pod-template-hash` label, and JSON-patch the Deployment's template and annotations with it
 * (kubectl keeps the Deployment's own revision/bookkeeping annotations and copies the rest from the
 * ReplicaSet). A `test` op on the current revision makes the API refuse if a rollout happened since.
 * Rollback: undo to the revision that is current now.
 */
import { z } from 'zod';
import { defineAction } from '../define.js';
import { toObjectRef, windowOf } from '../plan.js';
import type { ActionDraft, KubeObject, PreCheck, SuccessCriterion } from '../types.js';
import { containersOf, desiredReplicas, kubectlTarget, podTemplate, ref, REVISION_ANNOTATION, revisionOf } from '../workload.js';
import { pointerKey } from '../preconditions.js';

/** kubectl's `annotationsToSkip` (pkg/polymorphichelpers/rollback.go): the Deployment keeps its own values of these. */
const KEEP_FROM_DEPLOYMENT = [
  'kubectl.kubernetes.io/last-applied-configuration',
  REVISION_ANNOTATION,
  'deployment.kubernetes.io/revision-history',
  'deployment.kubernetes.io/desired-replicas',
  'deployment.kubernetes.io/max-replicas',
  'deprecated.deployment.rollback.to',
];


function rollbackAnnotations(deployment: KubeObject, rs: KubeObject): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of KEEP_FROM_DEPLOYMENT) {
    const v = deployment.metadata?.annotations?.[k];
    if (v !== undefined) out[k] = v;
  }
  for (const [k, v] of Object.entries(rs.metadata?.annotations ?? {})) if (!KEEP_FROM_DEPLOYMENT.includes(k)) out[k] = v;
  return out;
}

function templateOf(rs: KubeObject): ReturnType<typeof podTemplate> {
  const t = structuredClone(podTemplate(rs));
  if (t.metadata?.labels) delete t.metadata.labels['pod-template-hash'];
  return t;
}

export const rolloutUndo = defineAction({
  name: 'rollout_undo',
  description: "Roll a Deployment's pod template back to a named earlier revision (kubectl rollout undo --to-revision).",
  params: z.object({ toRevision: z.number().int().min(1).describe('The revision to go back to (deployment.kubernetes.io/revision of its ReplicaSet)') }),
  async draft(ctx, component, p): Promise<ActionDraft> {
    const target = toObjectRef(component, ['Deployment']);
    const base = {
      title: `roll back ${ref(target)} to revision ${p.toRevision}`,
      command: `kubectl rollout undo ${kubectlTarget(target)} --to-revision=${p.toRevision}`,
      target,
      access: [{ verb: 'patch', group: 'apps', resource: 'deployments', namespace: target.namespace, name: target.name }],
      riskKind: 'rollout_undo' as const,
      reversible: 'yes' as const,
    };
    const before = await ctx.reader.get(target);
    if (!before) return { ...base, writes: [], checks: [], successCriteria: [], podsDisrupted: 0 };

    const current = revisionOf(before);
    const replicaSets = await ctx.reader.replicaSetsOf(before);
    const rs = replicaSets.find((r) => revisionOf(r) === p.toRevision);
    const kept = replicaSets.map(revisionOf).filter((r): r is number => r !== undefined).sort((a, b) => a - b);
    const seen = ctx.diagnosis?.facts?.['revision'];
    const checks: PreCheck[] = [];
    const fail = (detail: string) => checks.push({ name: 'current state is as expected', status: 'fail', detail });
    if (!rs) fail(`revision ${p.toRevision} not found (ReplicaSets kept for revisions ${kept.join(', ') || 'none'})`);
    else if (current === p.toRevision) fail(`revision ${p.toRevision} is already the current one`);
    else if (typeof seen === 'number' && current !== undefined && seen !== current) fail(`the current revision is ${current}; the diagnosis saw ${seen} (a rollout happened since)`);
    else if (before.spec?.['paused'] === true) fail(`${ref(target)} is paused (kubectl refuses to roll back a paused deployment)`);
    else if (JSON.stringify(templateOf(rs)) === JSON.stringify(podTemplate(before))) fail(`revision ${p.toRevision}'s template equals the current one: nothing would change`);
    else checks.push({ name: 'current state is as expected', status: 'pass', detail: `current revision ${current ?? '?'}${typeof seen === 'number' ? ', as in the diagnosis' : ''}; revision ${p.toRevision} is ReplicaSet ${rs.metadata?.name}` });
    if (!rs) return { ...base, before, writes: [], checks, successCriteria: [], podsDisrupted: 0 };

    const template = templateOf(rs);
    const annotations = rollbackAnnotations(before, rs);
    const after = structuredClone(before);
    after.spec = { ...after.spec, template };
    after.metadata = { ...after.metadata, annotations };
    const within = windowOf(ctx);
    const replicas = desiredReplicas(before);
    const successCriteria: SuccessCriterion[] = [
      {
        kind: 'rollout_complete',
        target,
        minGeneration: (before.metadata?.generation ?? 0) + 1,
        withinSeconds: within,
        description: `rollout complete (${replicas}/${replicas} updated and ready) within ${Math.round(within / 60)} min`,
      },
      ...containersOf(after)
        .filter((c) => c.image)
        .map((c): SuccessCriterion => ({ kind: 'container_image', target, container: c.name, image: c.image!, withinSeconds: within, description: `container ${c.name} runs ${c.image}` })),
    ];
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
            ...(current !== undefined ? [{ op: 'test', path: `/metadata/annotations/${pointerKey(REVISION_ANNOTATION)}`, value: String(current) }] : []),
            { op: 'replace', path: '/spec/template', value: template },
            { op: 'add', path: '/metadata/annotations', value: annotations },
          ],
          hasAnnotations: true,
          purpose: `replace the pod template with revision ${p.toRevision}'s (ReplicaSet ${rs.metadata?.name})`,
        },
      ],
      checks,
      successCriteria,
      ...(current !== undefined
        ? {
            rollback: {
              action: 'rollout_undo',
              target: { kind: 'Deployment', namespace: target.namespace, name: target.name },
              params: { toRevision: current },
              command: `kubectl rollout undo ${kubectlTarget(target)} --to-revision=${current}`,
              rationale: `undo: back to revision ${current}, the one running before`,
            },
          }
        : { rollbackNote: 'the current revision is unknown, so no undo step can be named' }),
      podsDisrupted: replicas,
    };
  },
});

/**
 * `cordon_node`: what `kubectl cordon` does — `spec.unschedulable: true` on the Node, so the scheduler
 * places no new pod there; nothing running on it is evicted (draining stays a human call). With
 * `cordon: false` it uncordons, which is also the rollback. For node-not-ready and node-pressure: the
 * replacements of evicted or lost pods stop landing on the bad node.
 *
 * A Node is cluster-scoped. The ObjectRef's namespace is the incident's (the one whose workloads the
 * node hurts): the policy judges the cordon by that namespace's environment and rules, and the card
 * says the cordon affects every namespace's pods. The executor needs `patch nodes` from a ClusterRole
 * (deploy/executor-rbac.yaml `vigil-executor-nodes`), the only cluster-wide write it has.
 *
 * Risk: by how many pods the node runs (risk.ts `on-node`): they keep running, but each is one whose
 * replacement can no longer come back there. The last schedulable node is never cordoned.
 */
import { z } from 'zod';
import { defineAction } from '../define.js';
import { toObjectRef, windowOf } from '../plan.js';
import type { ActionDraft, KubeObject, PreCheck } from '../types.js';

const ready = (n: KubeObject): string => {
  const c = ((n.status?.['conditions'] as { type?: string; status?: string; reason?: string }[] | undefined) ?? []).find((x) => x.type === 'Ready');
  return c ? `Ready=${c.status}${c.reason ? ` (${c.reason})` : ''}` : 'no Ready condition';
};

export const cordonNode = defineAction({
  name: 'cordon_node',
  description: 'Cordon a Node (spec.unschedulable=true: no new pods land there; nothing is evicted), or uncordon it with cordon=false.',
  params: z.object({ cordon: z.boolean().default(true).describe('true cordons, false uncordons') }),
  async draft(ctx, component, p): Promise<ActionDraft> {
    const target = toObjectRef(component, ['Node']);
    const verb = p.cordon ? 'cordon' : 'uncordon';
    const base = {
      title: `${verb} node/${target.name}`,
      command: `kubectl ${verb} ${target.name}`,
      target,
      access: [{ verb: 'patch', group: '', resource: 'nodes', namespace: '', name: target.name }],
      riskKind: p.cordon ? ('cordon_node' as const) : ('uncordon_node' as const),
      blastRadius: 'on-node' as const,
      reversible: 'yes' as const,
    };
    const before = await ctx.reader.get(target);
    if (!before) return { ...base, writes: [], checks: [], successCriteria: [], podsDisrupted: 0 };
    const cordoned = before.spec?.['unschedulable'] === true;
    const checks: PreCheck[] = [
      cordoned === p.cordon
        ? { name: 'current state is as expected', status: 'fail', detail: `node/${target.name} is already ${p.cordon ? 'cordoned' : 'schedulable'}` }
        : { name: 'current state is as expected', status: 'pass', detail: `node/${target.name} is ${cordoned ? 'cordoned' : 'schedulable'} now, ${ready(before)}` },
    ];
    let pods = 0;
    const notes: string[] = [];
    try {
      const on = await ctx.reader.podsOnNode(target.name);
      const running = on.pods.filter((x) => x.status?.['phase'] !== 'Succeeded' && x.status?.['phase'] !== 'Failed');
      pods = running.length;
      const namespaces = [...new Set(running.map((x) => x.metadata?.namespace ?? ''))].sort();
      checks.push(
        on.complete
          ? { name: 'pods on the node known', status: 'pass', detail: `${pods} pod${pods === 1 ? '' : 's'} on it${namespaces.length ? ` in ${namespaces.join(', ')}` : ''}` }
          : { name: 'pods on the node known', status: 'fail', detail: 'more pods on it than one list returns: the blast radius is not known' },
      );
      if (p.cordon && namespaces.some((n) => n !== target.namespace)) notes.push(`the node also runs pods of ${namespaces.filter((n) => n !== target.namespace).join(', ')}: a cordon is cluster-wide, their replacements will not land there either`);
    } catch (err) {
      checks.push({ name: 'pods on the node known', status: 'fail', detail: `the pods on node/${target.name} could not be listed (${err instanceof Error ? err.message.split('\n')[0] : String(err)})` });
    }
    if (p.cordon) {
      notes.push('nothing is evicted: pods on the node keep running (or stay lost if it is NotReady); draining it is a separate, human decision');
      try {
        const nodes = await ctx.reader.listNodes();
        const others = nodes.filter((n) => n.metadata?.name !== target.name && n.spec?.['unschedulable'] !== true);
        checks.push(others.length ? { name: 'other nodes can take new pods', status: 'pass', detail: `${others.length} other schedulable node${others.length === 1 ? '' : 's'}` } : { name: 'other nodes can take new pods', status: 'fail', detail: 'it is the last schedulable node: cordoning it would stop all scheduling' });
      } catch {
        checks.push({ name: 'other nodes can take new pods', status: 'warn', detail: 'the nodes could not be listed' });
      }
    }
    const after = structuredClone(before);
    after.spec = { ...after.spec, unschedulable: p.cordon };
    if (!p.cordon) delete after.spec['unschedulable'];
    return {
      ...base,
      before,
      after,
      writes: [
        {
          op: 'patch',
          target,
          patchType: 'json',
          // A Node's status (and resourceVersion) changes every few seconds with kubelet heartbeats: the
          // uid and the field itself are what must not have moved.
          body: [
            ...(before.metadata?.uid ? [{ op: 'test', path: '/metadata/uid', value: before.metadata.uid }] : []),
            ...(before.spec?.['unschedulable'] !== undefined ? [{ op: 'test', path: '/spec/unschedulable', value: before.spec['unschedulable'] }] : []),
            p.cordon ? { op: 'add', path: '/spec/unschedulable', value: true } : before.spec?.['unschedulable'] !== undefined ? { op: 'remove', path: '/spec/unschedulable' } : { op: 'add', path: '/spec/unschedulable', value: false },
          ],
          hasAnnotations: before.metadata?.annotations !== undefined,
          purpose: `spec.unschedulable ${cordoned} → ${p.cordon}`,
        },
      ],
      checks,
      notes,
      successCriteria: [{ kind: 'node_unschedulable', target, unschedulable: p.cordon, withinSeconds: Math.min(windowOf(ctx), 60), description: `node/${target.name} is ${p.cordon ? 'cordoned (spec.unschedulable true)' : 'schedulable again'}` }],
      rollback: {
        action: 'cordon_node',
        target: { kind: 'Node', namespace: target.namespace, name: target.name },
        params: { cordon: !p.cordon },
        command: `kubectl ${p.cordon ? 'uncordon' : 'cordon'} ${target.name}`,
        rationale: `undo: ${p.cordon ? 'uncordon' : 'cordon'} it again`,
      },
      podsDisrupted: pods,
    };
  },
});

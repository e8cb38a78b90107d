/**
 * `delete_network_policy`: delete a NetworkPolicy that was ADDED right before the onset and blocks
 * traffic the workloads need. That undoes a security decision (the traffic it denied flows again), so
 * it is its own action: risk 55 (risk.ts), and the example policy wants two approvers, one of them a lead.
 * Only for a policy whose previous spec is NOT known: a policy that was edited is put back with
 * `restore_object` instead, and a Helm-managed one is the release's (deleting it diverges from it).
 *
 * The delete names the uid (a re-created policy of the same name is not deleted). The undo re-creates
 * the policy as it was: its spec, labels and annotations travel in the rollback proposal's `undo`
 * parameter (a NetworkPolicy holds selectors, ports and CIDRs, no secrets), and with `undo` this action
 * creates the policy (pre-check: it does not exist; RBAC `create networkpolicies`). A policy too large
 * to carry (32 KiB) has no undo step, said on the card.
 */
import { z } from 'zod';
import { HELM_RELEASE, LAST_APPLIED } from '../config/sources.js';
import { defineAction } from '../define.js';
import { fieldsOf } from '../objects/fields.js';
import { objectReaders } from '../objects/readers.js';
import { fromLastApplied, writesFields } from '../objects/sources.js';
import { toObjectRef, windowOf } from '../plan.js';
import { CHANGE_ANNOTATION } from '../stamp.js';
import type { ActionDraft, ConfigReader, KubeObject, PreCheck } from '../types.js';

const UNDO_LIMIT = 32 * 1024;

const params = z.object({
  name: z.string().min(1).max(253).describe('The NetworkPolicy name, the same as the target’s'),
  undo: z
    .object({
      spec: z.record(z.string(), z.unknown()),
      labels: z.record(z.string(), z.string()).optional(),
      annotations: z.record(z.string(), z.string()).optional(),
    })
    .optional()
    .describe('Only in the rollback of a delete: the deleted policy, to re-create'),
});

const workloads = (rs: ConfigReader[]) => rs.map((r) => `${r.kind.toLowerCase()}/${r.name} (${r.pods} pod${r.pods === 1 ? '' : 's'})`).join(', ');

export const deleteNetworkPolicy = defineAction({
  name: 'delete_network_policy',
  description: 'Delete a NetworkPolicy added right before the onset that blocks needed traffic (a security decision: two approvers). Its rollback re-creates it.',
  params,
  async draft(ctx, component, p): Promise<ActionDraft> {
    const target = toObjectRef(component, ['NetworkPolicy']);
    const what = `networkpolicy/${target.name}`;
    const before = await ctx.reader.get(target);
    const selected = async (spec: unknown): Promise<{ readers: ConfigReader[]; check: PreCheck }> => {
      try {
        const r = await objectReaders(ctx.reader, 'NetworkPolicy', target.namespace, [{ podSelector: (spec as { podSelector?: unknown } | undefined)?.podSelector }]);
        return {
          readers: r.readers,
          check: r.complete ? { name: 'workloads behind it known', status: 'pass', detail: r.readers.length ? `it selects ${workloads(r.readers)}` : `it selects no workload in ${target.namespace}` } : { name: 'workloads behind it known', status: 'fail', detail: 'the workloads it selects are not all known (a list was cut)' },
        };
      } catch (err) {
        return { readers: [], check: { name: 'workloads behind it known', status: 'fail', detail: `the workloads it selects could not be listed (${err instanceof Error ? err.message.split('\n')[0] : String(err)})` } };
      }
    };

    if (p.undo) {
      // The rollback: re-create the deleted policy as it was.
      const body: KubeObject = {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: { name: target.name, namespace: target.namespace, ...(p.undo.labels ? { labels: p.undo.labels } : {}), ...(p.undo.annotations ? { annotations: p.undo.annotations } : {}) },
        spec: p.undo.spec,
      };
      const { readers, check } = await selected(p.undo.spec);
      return {
        title: `re-create ${what}`,
        command: `kubectl apply -f <${what} as it was before Vigil deleted it>`,
        target,
        ...(before ? { before } : {}),
        absent: true,
        after: body,
        changes: [{ path: what, before: undefined, after: 're-created as it was deleted' }],
        writes: [{ op: 'create', target, body, purpose: `re-create ${what} as it was before the delete` }],
        checks: [check],
        notes: [`the traffic ${what} denies is denied again for ${readers.length ? workloads(readers) : 'the pods it selects'}`],
        access: [{ verb: 'create', group: 'networking.k8s.io', resource: 'networkpolicies', namespace: target.namespace }],
        successCriteria: [{ kind: 'object_exists', target, withinSeconds: Math.min(windowOf(ctx), 60), description: `${what} exists again` }],
        rollbackNote: 'to remove it again, propose delete_network_policy from a fresh diagnosis',
        riskKind: 'restore_network_policy',
        blastRadius: 'routed',
        podsDisrupted: readers.reduce((n, r) => n + r.pods, 0),
        reversible: 'yes',
      };
    }

    const base = {
      title: `delete ${what}`,
      command: `kubectl delete networkpolicy ${target.name} -n ${target.namespace}`,
      target,
      access: [
        { verb: 'delete', group: 'networking.k8s.io', resource: 'networkpolicies', namespace: target.namespace, name: target.name },
        { verb: 'patch', group: 'networking.k8s.io', resource: 'networkpolicies', namespace: target.namespace, name: target.name },
      ],
      riskKind: 'delete_network_policy' as const,
      blastRadius: 'routed' as const,
    };
    if (!before) return { ...base, writes: [], checks: [], successCriteria: [], podsDisrupted: 0, reversible: 'no' };
    const checks: PreCheck[] = [];
    const current = fieldsOf('NetworkPolicy', before);
    const stop = (name: string, detail: string): ActionDraft => ({ ...base, before, changes: [], writes: [], checks: [...checks, { name, status: 'fail', detail }], successCriteria: [], podsDisrupted: 0, reversible: 'no' });
    if (typeof current === 'string') return stop('current state is as expected', `${what}: ${current}`);
    if (before.metadata?.annotations?.[HELM_RELEASE]) return stop('it was added, not edited', `${what} belongs to Helm release ${before.metadata.annotations[HELM_RELEASE]}: deleting it diverges from the release (roll the release back instead)`);
    const previous = before.metadata?.annotations?.[LAST_APPLIED] !== undefined ? fromLastApplied('NetworkPolicy', before, current) : { unknown: 'never applied' };
    if ('found' in previous) return stop('it was added, not edited', `${what} was edited after its last kubectl apply: restore_object puts its previous spec back instead of deleting it`);
    const changedAt = ctx.diagnosis?.facts?.['changedAt'];
    const since = typeof changedAt === 'string' ? Date.parse(changedAt) : NaN;
    const later = Number.isNaN(since) ? undefined : ((before.metadata?.managedFields ?? []) as { manager?: string; time?: string; fieldsV1?: Record<string, unknown> }[]).find((e) => e.time && Date.parse(e.time) > since + 999 && writesFields('NetworkPolicy', e));
    if (later) return stop('current state is as expected', `${what} was written again at ${later.time} by \`${later.manager ?? '?'}\`, after the change the diagnosis saw: propose again from a fresh diagnosis`);
    const created = before.metadata?.creationTimestamp;
    checks.push({ name: 'it was added, not edited', status: 'pass', detail: `no earlier spec of ${what} is known${created ? ` (created ${created})` : ''}: deleting it is the way back` });
    const { readers, check } = await selected(current);
    checks.push(check);

    const annotations = Object.fromEntries(Object.entries(before.metadata?.annotations ?? {}).filter(([k]) => k !== CHANGE_ANNOTATION));
    const undo = { spec: before.spec ?? {}, ...(before.metadata?.labels ? { labels: before.metadata.labels } : {}), ...(Object.keys(annotations).length ? { annotations } : {}) };
    const fits = Buffer.byteLength(JSON.stringify(undo)) <= UNDO_LIMIT;
    const uid = before.metadata?.uid;
    return {
      ...base,
      before,
      changes: [{ path: what, before: 'exists', after: undefined }],
      writes: [{ op: 'delete', target, ...(uid ? { uid } : {}), purpose: `delete ${what}` }],
      checks,
      notes: [
        `this undoes a security decision: the traffic ${what} denies flows again for ${readers.length ? workloads(readers) : 'the pods it selects'}; whoever added it should agree`,
        'other policies that select the same pods keep applying',
      ],
      successCriteria: [{ kind: 'object_deleted', target, uid: uid ?? '', withinSeconds: Math.min(windowOf(ctx), 60), description: `${what} is gone` }],
      ...(fits
        ? {
            rollback: {
              action: 'delete_network_policy',
              target: { kind: 'NetworkPolicy', namespace: target.namespace, name: target.name },
              params: { name: target.name, undo },
              command: `kubectl apply -f <${what} as it was before the delete>`,
              rationale: `undo: re-create ${what} as it was`,
            },
            reversible: 'yes' as const,
          }
        : { rollbackNote: `no undo step: ${what} is too large to carry in the rollback (re-create it from source control)`, reversible: 'no' as const }),
      podsDisrupted: readers.reduce((n, r) => n + r.pods, 0),
    };
  },
});

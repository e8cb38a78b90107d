/**
 * Whether an analyzer may propose `restore_object` for an object it blames, from the object alone (an
 * analyzer reads no Helm history and no values): its previous spec must be known or knowable —
 * - its last-applied-configuration holds other fields than the live ones (a `kubectl edit` after a
 *   `kubectl apply`), and Helm did not write them later; or
 * - Helm manages it and the last write of those fields was not Helm's (an edit after the release: the
 *   deployed revision's rendering is the previous spec). When Helm's own upgrade changed them, the fix
 *   is a Helm rollback, not this.
 * The action checks again, with the release history, and plans "previous spec unknown" otherwise.
 */
import type { MitigationProposal } from '../../triage/types.js';
import { HELM_RELEASE } from '../config/sources.js';
import type { KubeObject } from '../types.js';
import { FIELD_SETS, fieldsOf } from './fields.js';
import type { RestorableKind } from './kinds.js';
import { fromLastApplied, writesFields } from './sources.js';

type Entry = { manager?: string; time?: string; fieldsV1?: Record<string, unknown> };

const time = (e: Entry): number => (e.time ? Date.parse(e.time) : NaN);

/** Where the previous spec is known from, or undefined when it is not. */
export function previousSpecKnown(kind: RestorableKind, obj: object): 'last-applied' | 'helm' | undefined {
  // client-node's typed models spell a NetworkPolicy rule's `from` as `_from`: back to the API's JSON.
  const o = JSON.parse(JSON.stringify(obj), function (this: Record<string, unknown>, k, v: unknown) {
    if (k === '_from') {
      this['from'] = v;
      return undefined;
    }
    return v;
  }) as KubeObject;
  const current = fieldsOf(kind, o);
  if (typeof current === 'string') return undefined;
  if ('found' in fromLastApplied(kind, o, current)) return 'last-applied';
  if (!o.metadata?.annotations?.[HELM_RELEASE]) return undefined;
  const writers = ((o.metadata.managedFields ?? []) as Entry[]).filter((e) => writesFields(kind, e) && !Number.isNaN(time(e))).sort((a, b) => time(b) - time(a));
  const last = writers[0];
  return last && !/^helm\b/.test(last.manager ?? '') ? 'helm' : undefined;
}

/**
 * For hpa-at-max: `restore_object` on the HPA when its last-applied-configuration shows a higher
 * maxReplicas (or other metrics) than the live spec: a `kubectl edit` lowered it. Helm-managed HPAs are
 * left to the Helm history (the analyzer cannot see the previous values).
 */
export function hpaRestoreProposal(hpa: object, rationale: (previousMax: number | undefined) => string): MitigationProposal | undefined {
  const o = JSON.parse(JSON.stringify(hpa)) as KubeObject;
  const current = fieldsOf('HorizontalPodAutoscaler', o);
  if (typeof current === 'string') return undefined;
  const prev = fromLastApplied('HorizontalPodAutoscaler', o, current);
  if (!('found' in prev)) return undefined;
  const before = prev.found.fields['maxReplicas'];
  const now = current['maxReplicas'];
  const lowered = typeof before === 'number' && typeof now === 'number' && before > now;
  const metrics = JSON.stringify(prev.found.fields['metrics'] ?? null) !== JSON.stringify(current['metrics'] ?? null);
  if (!lowered && !metrics) return undefined;
  return restoreObjectProposal('HorizontalPodAutoscaler', o, rationale(lowered ? before : undefined));
}

/** The `restore_object` proposal for `obj`, when its previous spec is known (see above). */
export function restoreObjectProposal(kind: RestorableKind, obj: object, rationale: string): MitigationProposal | undefined {
  const from = previousSpecKnown(kind, obj);
  if (!from) return undefined;
  const m = (obj as { metadata?: { name?: string; namespace?: string } }).metadata;
  if (!m?.name || !m.namespace) return undefined;
  const fields = FIELD_SETS[kind].map((f) => `spec.${f}`).join(', ');
  return {
    action: 'restore_object',
    target: { kind, namespace: m.namespace, name: m.name },
    params: { kind, name: m.name },
    command: `kubectl patch ${kind.toLowerCase()}/${m.name} -n ${m.namespace} --type=json -p '[…${fields} from ${from === 'helm' ? 'the deployed Helm revision' : 'its last-applied-configuration'}…]'`,
    rationale,
  };
}

/**
 * For network-policy: `delete_network_policy` when the blocking policy was ADDED (created within
 * `windowMs` before the onset) and no earlier spec of it is known (not edited after an apply, not
 * Helm's): deleting it is the way back. A security decision: the policy wants two approvers.
 */
export function deleteNetworkPolicyProposal(policy: object, onset: Date, windowMs: number, rationale: string): MitigationProposal | undefined {
  const o = JSON.parse(JSON.stringify(policy)) as KubeObject;
  const m = o.metadata;
  if (!m?.name || !m.namespace || m.annotations?.[HELM_RELEASE]) return undefined;
  if (previousSpecKnown('NetworkPolicy', policy)) return undefined;
  const created = m.creationTimestamp ? Date.parse(String(m.creationTimestamp)) : NaN;
  if (Number.isNaN(created) || onset.getTime() - created > windowMs || created > onset.getTime() + 2 * 60_000) return undefined;
  return {
    action: 'delete_network_policy',
    target: { kind: 'NetworkPolicy', namespace: m.namespace, name: m.name },
    params: { name: m.name },
    command: `kubectl delete networkpolicy ${m.name} -n ${m.namespace}`,
    rationale,
  };
}

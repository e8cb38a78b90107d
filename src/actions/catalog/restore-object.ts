/**
 * `restore_object`: put back the previous spec of a Service (selector, ports), an Ingress (rules, default
 * backend), a NetworkPolicy (podSelector, policyTypes, ingress, egress), an HPA (minReplicas,
 * maxReplicas, metrics) or an Istio VirtualService/DestinationRule, when that previous spec is KNOWN:
 * the last `kubectl apply` (after a `kubectl edit`) or the Helm release history, exactly as
 * `restore_config` knows a ConfigMap's previous content (objects/sources.ts; never a guess: otherwise
 * the pre-check "previous spec known" fails and nothing is written). Only the kind's field set is
 * written (objects/fields.ts); metadata, status and every other field stay as they are.
 *
 * Why its own action rather than more kinds for `restore_config`: a ConfigMap restore is about content
 * (values that may be secrets, readers that see it at start or within a minute, env restarts as
 * follow-ups); this is about a spec that decides where traffic goes, what the network allows or how far
 * a workload scales, for every selected pod at once. The policy gives them different rules (a
 * NetworkPolicy restore is a security decision), and the executor different RBAC.
 *
 * Like `restore_config` the plan carries `content` (digests, field paths, the workloads behind the
 * object, never the values' source text): the approval flow re-plans right before executing and refuses
 * when the fields to restore, or the live ones, are not the ones the card showed (approvals/drift.ts).
 * The workloads behind the object are its `readers`: the policy requires every one in the incident's
 * scope, and their pods are the blast radius (risk.ts `routed`).
 *
 * The JSON patch tests the uid, the generation (or resourceVersion) and each restored field's live value,
 * so any edit after the plan refuses it (422). The replaced fields are kept in `vigil.dev/replaced-spec`
 * on the object, written by the same patch: the undo is `restore_object` with `source: replaced` and the
 * digest of those fields. A Service keeps its allocated nodePorts.
 *
 * Success: the object's restored fields hash to the restored fields' digest.
 */
import { z } from 'zod';
import { shortDigest } from '../config/content.js';
import { defineAction } from '../define.js';
import { diffObjects } from '../diff.js';
import { fieldChanges, fieldsBytes, fieldsDigest, fieldsOf, FIELD_SETS, normalise, type SpecFields } from '../objects/fields.js';
import { KIND_INFO, RESTORABLE_KINDS, type RestorableKind } from '../objects/kinds.js';
import { hpaTarget, objectReaders } from '../objects/readers.js';
import { previousFields, REPLACED_SPEC_ANNOTATION, writesFields } from '../objects/sources.js';
import { InvalidProposalError, toObjectRef, windowOf } from '../plan.js';
import { pointerKey, unchangedSpecTests } from '../preconditions.js';
import type { ActionDraft, ConfigReader, ContentRestore, KubeObject, ObjectRef, PreCheck } from '../types.js';

const ANNOTATIONS_LIMIT = 256 * 1024;
const ANNOTATIONS_MARGIN = 2048;

const params = z.object({
  kind: z.enum(RESTORABLE_KINDS).describe('The kind of object whose previous spec to restore: Service, Ingress, NetworkPolicy, HorizontalPodAutoscaler, VirtualService, DestinationRule'),
  name: z.string().min(1).max(253).describe('The object name, the same as the target’s'),
  source: z.enum(['last-applied', 'helm', 'replaced']).optional().describe('Where the previous spec comes from: default the last kubectl apply when the spec changed since, else the Helm release history'),
  revision: z.number().int().min(1).optional().describe('With source helm: the Helm revision whose rendering to restore'),
  digest: z.string().regex(/^[0-9a-f]{64}$/).optional().describe('The digest the fields to restore must have (the undo of a restore sets it)'),
});

const workload = (r: ConfigReader) => `${r.kind.toLowerCase()}/${r.name}`;
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

type ManagedFieldsEntry = { manager?: string; time?: string; fieldsV1?: Record<string, unknown> };

/** A write of the restored fields after the edit the diagnosis saw (`facts.changedAt`), if any. */
function writtenSince(kind: RestorableKind, before: KubeObject, changedAt: string): ManagedFieldsEntry | undefined {
  const since = Date.parse(changedAt);
  if (Number.isNaN(since)) return undefined;
  return ((before.metadata?.managedFields ?? []) as ManagedFieldsEntry[]).find((e) => e.time && Date.parse(e.time) > since + 999 && writesFields(kind, e));
}

/** A restored Service keeps the nodePorts the API server allocated (a port without one would get a new one). */
function keepNodePorts(current: SpecFields, next: SpecFields): SpecFields {
  const live = (current['ports'] as Record<string, unknown>[] | undefined) ?? [];
  const ports = next['ports'] as Record<string, unknown>[] | undefined;
  if (!ports) return next;
  return {
    ...next,
    ports: ports.map((p) => {
      if (p['nodePort'] !== undefined) return p;
      const same = live.find((l) => (p['name'] !== undefined ? l['name'] === p['name'] : l['port'] === p['port']));
      return same?.['nodePort'] !== undefined ? { ...p, nodePort: same['nodePort'] } : p;
    }),
  };
}

function describeFields(k: ContentRestore['keys']): string {
  return [
    ...(k.changed.length ? [`changes ${k.changed.join(', ')}`] : []),
    ...(k.added.length ? [`adds back ${k.added.join(', ')}`] : []),
    ...(k.removed.length ? [`removes ${k.removed.join(', ')} (not in the previous spec)`] : []),
  ].join('; ');
}

const errorText = (err: unknown): string => {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'number' ? `HTTP ${code}` : err instanceof Error ? err.message.split('\n')[0]! : String(err);
};

/** `kubectl patch service/checkout -n shop --type=json -p '[…spec.selector, spec.ports…]'` */
const command = (target: ObjectRef, kind: RestorableKind, from: string) =>
  `kubectl patch ${kind.toLowerCase()}/${target.name} -n ${target.namespace} --type=json -p '[{"op":"replace","path":"/spec/${FIELD_SETS[kind][0]}","value":<${from}>}, …${FIELD_SETS[kind].slice(1).map((f) => `spec.${f}`).join(', ')}]'`;

export const restoreObject = defineAction({
  name: 'restore_object',
  description:
    "Put back the previous spec of a Service (selector/ports), Ingress (rules/backends), NetworkPolicy, HPA (min/maxReplicas, metrics) or Istio VirtualService/DestinationRule when it is known: the last kubectl apply (after a kubectl edit) or the Helm release's previous rendering.",
  params,
  async draft(ctx, component, p): Promise<ActionDraft> {
    const target = toObjectRef(component, [...RESTORABLE_KINDS]);
    const kind = target.kind as RestorableKind;
    if (p.kind !== kind) throw new InvalidProposalError(`params.kind ${p.kind} is not the target's kind ${kind}`);
    if (p.name !== target.name) throw new InvalidProposalError(`params.name ${p.name} is not the target's name ${target.name}`);
    if (p.revision !== undefined && p.source !== 'helm') throw new InvalidProposalError('a revision goes with source helm');
    const what = `${kind.toLowerCase()}/${target.name}`;
    const fieldList = FIELD_SETS[kind].map((f) => `spec.${f}`).join(', ');
    const info = KIND_INFO[kind];
    const base = {
      title: `restore ${what} to its previous ${fieldList}`,
      command: command(target, kind, 'its previous spec'),
      target,
      access: [{ verb: 'patch', group: info.group, resource: info.plural, namespace: target.namespace, name: target.name }],
      riskKind: kind === 'NetworkPolicy' ? ('restore_network_policy' as const) : ('restore_object' as const),
      blastRadius: 'routed' as const,
      successCriteria: [],
    };
    const nothing = { writes: [], podsDisrupted: 0, reversible: 'no' as const };
    const before = await ctx.reader.get(target);
    if (!before) return { ...base, ...nothing, checks: [] };

    const checks: PreCheck[] = [];
    const stop = (name: string, detail: string): ActionDraft => ({ ...base, ...nothing, before, changes: [], checks: [...checks, { name, status: 'fail', detail }] });
    const current = fieldsOf(kind, before);
    if (typeof current === 'string') return stop('current state is as expected', `${what}: ${current}`);
    const changedAt = ctx.diagnosis?.facts?.['changedAt'];
    // The undo of a restore comes after Vigil's own write, on purpose: the digest guards it instead.
    const again = typeof changedAt === 'string' && p.source !== 'replaced' ? writtenSince(kind, before, changedAt) : undefined;
    if (again) return stop('current state is as expected', `${what} was written again at ${again.time} by \`${again.manager ?? '?'}\`, after the edit the diagnosis saw (${changedAt}): propose again from a fresh diagnosis`);

    const previous = await previousFields(ctx.reader, kind, before, current, { ...(p.source ? { source: p.source } : {}), ...(p.revision !== undefined ? { revision: p.revision } : {}) });
    if ('unknown' in previous) return stop('previous spec known', `previous spec unknown: ${previous.unknown}. Nothing is written; restore it by hand from source control`);
    const found = previous.found;
    const next = kind === 'Service' ? keepNodePorts(current, found.fields) : found.fields;
    const uid = before.metadata?.uid ?? '';
    const restoreDigest = fieldsDigest(kind, uid, next);
    const currentDigest = fieldsDigest(kind, uid, current);
    if (p.digest !== undefined && p.digest !== restoreDigest)
      return stop('previous spec known', `previous spec unknown: ${found.label} is ${shortDigest(restoreDigest)}, not the ${shortDigest(p.digest)} this step was planned for`);
    checks.push({ name: 'previous spec known', status: 'pass', detail: `from ${found.label}: ${shortDigest(restoreDigest)}` });
    const keys = fieldChanges(kind, current, next);
    checks.push({ name: 'current state is as expected', status: 'pass', detail: `live ${fieldList} (${shortDigest(currentDigest)}) differ from it: the restore ${describeFields(keys)}` });

    let readers: ConfigReader[];
    try {
      if (kind === 'HorizontalPodAutoscaler') {
        const t = await hpaTarget(ctx.reader, before);
        readers = t ? [t] : [];
        checks.push(t ? { name: 'workloads behind it known', status: 'pass', detail: `it scales ${workload(t)} (${plural(t.pods, 'pod')})` } : { name: 'workloads behind it known', status: 'fail', detail: `its scaleTargetRef is not a Deployment or StatefulSet Vigil can read` });
      } else {
        const r = await objectReaders(ctx.reader, kind, target.namespace, [current, next]);
        readers = r.readers;
        checks.push(
          r.complete
            ? { name: 'workloads behind it known', status: 'pass', detail: readers.length ? `its pods now or after the restore: ${readers.map((x) => `${workload(x)} (${plural(x.pods, 'pod')})`).join(', ')}` : `it selects or routes to no workload in ${target.namespace}, before or after` }
            : { name: 'workloads behind it known', status: 'fail', detail: `${target.namespace} has more workloads of a kind than one list returns: the workloads behind it, hence the blast radius, are not all known` },
        );
      }
    } catch (err) {
      return stop('workloads behind it known', `the workloads behind ${what} could not be listed (${errorText(err)}): without them the blast radius is unknown`);
    }

    // Keep the replaced fields for the undo, if they fit in the object's annotation budget.
    const keptValue = JSON.stringify(current);
    const others = Object.entries(before.metadata?.annotations ?? {})
      .filter(([k]) => k !== REPLACED_SPEC_ANNOTATION)
      .reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0);
    const kept = others + Buffer.byteLength(REPLACED_SPEC_ANNOTATION) + Buffer.byteLength(keptValue) + ANNOTATIONS_MARGIN <= ANNOTATIONS_LIMIT;
    const hasAnnotations = before.metadata?.annotations !== undefined;
    const keep = kept
      ? [hasAnnotations ? { op: 'add', path: `/metadata/annotations/${pointerKey(REPLACED_SPEC_ANNOTATION)}`, value: keptValue } : { op: 'add', path: '/metadata/annotations', value: { [REPLACED_SPEC_ANNOTATION]: keptValue } }]
      : before.metadata?.annotations?.[REPLACED_SPEC_ANNOTATION] !== undefined
        ? [{ op: 'remove', path: `/metadata/annotations/${pointerKey(REPLACED_SPEC_ANNOTATION)}` }]
        : [];
    const fieldOps = FIELD_SETS[kind].flatMap((f) => {
      const live = current[f];
      const want = next[f];
      if (JSON.stringify(live) === JSON.stringify(want)) return [];
      return [
        ...(live !== undefined ? [{ op: 'test', path: `/spec/${f}`, value: live }] : []),
        want !== undefined ? { op: 'add', path: `/spec/${f}`, value: want } : { op: 'remove', path: `/spec/${f}` },
      ];
    });
    const within = windowOf(ctx);
    const content: ContentRestore = { source: found.source, sourceLabel: found.label, currentDigest, restoreDigest, keys, readers };
    const shortLabel = found.source.kind === 'helm' ? `Helm release ${found.source.release} revision ${found.source.revision}` : found.source.kind === 'last-applied' ? 'its last kubectl apply' : 'the spec before Vigil’s restore';
    const notes = [
      ...(found.note ? [found.note] : []),
      kind === 'NetworkPolicy'
        ? `this changes what ${target.namespace} allows on the network for every selected pod at once: a policy edit was a security decision, check with whoever made it`
        : kind === 'HorizontalPodAutoscaler'
          ? 'the HPA acts on the restored bounds at its next sync (about 15 s): it may scale the workload up or down right away'
          : `every pod behind ${what} gets the restored routing at once (no rollout to stop halfway)`,
    ];
    return {
      ...base,
      title: `restore ${what} to ${shortLabel}`,
      command: command(target, kind, found.source.kind === 'helm' ? `the fields rendered by helm get manifest ${found.source.release} --revision ${found.source.revision}` : found.source.kind === 'last-applied' ? 'the fields in its last-applied-configuration' : `the fields kept in its ${REPLACED_SPEC_ANNOTATION} annotation`),
      before,
      // The restored fields only, after the API server's defaults (a port's protocol is not a change).
      changes: diffObjects({ spec: normalise(kind, current) } as KubeObject, { spec: normalise(kind, next) } as KubeObject),
      writes: [
        {
          op: 'patch',
          target,
          patchType: 'json',
          body: [...unchangedSpecTests(before), ...fieldOps, ...keep],
          hasAnnotations,
          purpose: `put back ${fieldList} from ${found.label} (${shortDigest(restoreDigest)})${kept ? `, keeping the replaced fields in ${REPLACED_SPEC_ANNOTATION}` : ''}`,
        },
      ],
      checks,
      content,
      notes,
      successCriteria: [{ kind: 'object_fields', target, digest: restoreDigest, withinSeconds: Math.min(within, 120), description: `${what} has the restored ${fieldList} (${shortDigest(restoreDigest)})` }],
      ...(kept
        ? {
            rollback: {
              action: 'restore_object',
              target: { kind, namespace: target.namespace, name: target.name },
              params: { kind, name: target.name, source: 'replaced', digest: currentDigest },
              command: command(target, kind, `the fields kept in its ${REPLACED_SPEC_ANNOTATION} annotation`),
              rationale: `undo: put back the ${fieldList} live before the restore (${shortDigest(currentDigest)}), kept on the object in ${REPLACED_SPEC_ANNOTATION}`,
            },
            reversible: 'yes' as const,
          }
        : { rollbackNote: `no undo step: the current fields (${Math.ceil(fieldsBytes(current) / 1024)} KiB) are too large to keep in an annotation for it`, reversible: 'no' as const }),
      podsDisrupted: readers.reduce((n, r) => n + r.pods, 0),
    };
  },
});

/**
 * `restore_config`: put back a ConfigMap's previous content, when it is known (config/sources.ts: the
 * last `kubectl apply`, else the Helm release history; never a guess: otherwise the pre-check
 * "previous content known" fails with "previous content unknown: …" and nothing is written).
 *
 * Secrets. ConfigMap values hold passwords often enough (`requirepass …` in a redis.conf), and plans are
 * stored with the approval request and shown in Slack. So the Plan carries no content at all: only its
 * digests (config/content.ts: SHA-256 over the whole content, keyed by the object's uid), key names and
 * a bounded line diff whose lines went through the redactor, with the value of any secret-named entry
 * or key masked (config/diff.ts). The write body, which does hold the content, lives only in memory:
 * the approval flow never stores `writes` (approvals/planner.ts `storablePlan`) and, right before
 * executing, plans again from the same source, so the body is re-derived from the cluster, and refuses
 * when the re-derived content's digest, or the live one's, is not what the card showed
 * (approvals/drift.ts). Secrets themselves are never restored: Vigil does not read their values.
 *
 * Drift. The JSON patch tests `metadata.uid` and `metadata.resourceVersion`, so the API server refuses
 * it (422) if the ConfigMap changed in any way after the plan, dry runs included. Against the diagnosis:
 * a write of the data after the edit the diagnosis saw (`changedAt`) fails "current state is as expected".
 *
 * Readers. The pod templates of the namespace that read it (config/readers.ts). Env readers and subPath
 * mounts see restored content only in new pods: the plan says so and offers a `rollout_restart` of each
 * as a follow-up, a separate proposal with its own approval once this one is verified (never chained).
 * Volume readers get the files within about a minute, but many processes read config only at start:
 * the plan says so, with the restart command. The blast radius is every reader's pods (risk.ts
 * `reading`), and the policy judges the action by its readers (policy/match.ts).
 *
 * Rollback. The content live before the restore is kept on the object itself, in annotation
 * `vigil.dev/replaced-content` (the same place and sensitivity as kubectl's last-applied annotation,
 * never in Vigil's store), written by the same patch. The undo is `restore_config` with
 * `source: replaced` and the digest of that content: it is re-derived from the annotation and must
 * match. Content too large for the 256 KiB annotation budget has no undo (said on the card).
 *
 * Success: the ConfigMap's content digest equals the restored content's.
 */
import { z } from 'zod';
import { createRedactor } from '../../redact/index.js';
import type { MitigationProposal } from '../../triage/types.js';
import { contentBytes, contentDigest, contentOf, keyChanges, shortDigest, type ConfigContent } from '../config/content.js';
import { contentChanges } from '../config/diff.js';
import { needsRestart, readersOf } from '../config/readers.js';
import { previousContent, REPLACED_ANNOTATION, type PreviousContent } from '../config/sources.js';
import { defineAction } from '../define.js';
import { InvalidProposalError, toObjectRef, windowOf } from '../plan.js';
import { pointerKey } from '../preconditions.js';
import type { ActionDraft, ConfigReader, ContentRestore, KubeObject, ObjectRef, PreCheck } from '../types.js';

/** kube-apiserver's limit on all annotations of an object together (apimachinery `TotalAnnotationSizeLimitB`). */
const ANNOTATIONS_LIMIT = 256 * 1024;
/** Room left for the `vigil.dev/change` annotation and whatever is added meanwhile. */
const ANNOTATIONS_MARGIN = 2048;

const params = z.object({
  kind: z.literal('ConfigMap').describe('The kind of object to restore: ConfigMap (Secrets are never restored; Vigil does not read their values)'),
  name: z.string().min(1).max(253).describe('The ConfigMap name, the same as the target’s'),
  source: z
    .enum(['last-applied', 'helm', 'replaced'])
    .optional()
    .describe('Where the previous content comes from: default the last kubectl apply when the content changed since, else the Helm release history'),
  revision: z.number().int().min(1).optional().describe('With source helm: the Helm revision whose rendering to restore'),
  digest: z.string().regex(/^[0-9a-f]{64}$/).optional().describe('The digest the content to restore must have (the undo of a restore sets it)'),
});

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const list = (keys: string[]) => keys.join(', ');

/** `changes key redis.conf; adds back key LEGACY_URL; removes key NEW_FLAG` */
function describeKeys(k: ContentRestore['keys']): string {
  const parts = [
    ...(k.changed.length ? [`changes ${k.changed.length === 1 ? 'key' : 'keys'} ${list(k.changed)}`] : []),
    ...(k.added.length ? [`adds back ${k.added.length === 1 ? 'key' : 'keys'} ${list(k.added)}`] : []),
    ...(k.removed.length ? [`removes ${k.removed.length === 1 ? 'key' : 'keys'} ${list(k.removed)} (not in the previous content)`] : []),
  ];
  return parts.join('; ');
}

function shortSource(p: PreviousContent): string {
  switch (p.source.kind) {
    case 'last-applied':
      return 'its last kubectl apply';
    case 'helm':
      return `Helm release ${p.source.release} revision ${p.source.revision}`;
    case 'replaced':
      return 'the content before Vigil’s restore';
  }
}

const workload = (r: ConfigReader) => `${r.kind.toLowerCase()}/${r.name}`;
const restartCommand = (r: ConfigReader, ns: string) => `kubectl rollout restart ${workload(r)} -n ${ns}`;

/** What each reader sees, when; and the restarts to offer as follow-ups (Deployments and StatefulSets with pods). */
function readerNotes(readers: ConfigReader[], target: ObjectRef): { notes: string[]; followUps: MitigationProposal[] } {
  const ns = target.namespace;
  const cm = `configmap/${target.name}`;
  if (!readers.length) return { notes: [`no workload in ${ns} reads ${cm}: nothing running sees the restored content until one does`], followUps: [] };
  const notes: string[] = [];
  const followUps: MitigationProposal[] = [];
  for (const r of readers) {
    const how = r.via.map((v) => (v === 'env' ? 'env variables' : v === 'subPath' ? 'a subPath mount' : 'a volume')).join(' and ');
    if (r.kind === 'CronJob') notes.push(`${workload(r)} reads it through ${how}: its next run sees the restored content`);
    else if (needsRestart(r)) {
      const offered = (r.kind === 'Deployment' || r.kind === 'StatefulSet') && r.pods > 0;
      notes.push(
        `${workload(r)} reads it through ${how}: its ${plural(r.pods, 'pod')} keep the old values until they restart (${r.via.includes('subPath') ? 'the kubelet never updates a subPath mount' : 'env is read at container start'}); ` +
          (offered ? 'a rollout restart is offered as a follow-up, with its own approval, once this is verified' : r.pods > 0 ? `restart it by hand: ${restartCommand(r, ns)}` : 'it runs no pods now'),
      );
      if (offered)
        followUps.push({
          action: 'rollout_restart',
          target: { kind: r.kind, namespace: ns, name: r.name },
          params: {},
          command: restartCommand(r, ns),
          rationale: `${workload(r)} reads ${cm} through ${how}: its pods see the restored content only once they restart`,
        });
    } else
      notes.push(
        `${workload(r)} mounts it as a volume: the kubelet updates the files within about a minute, but the process sees them only if it re-reads its config, and many (Redis/Valkey, most JVM apps, nginx without a reload) read it only at start: if it does not reload, restart it (${restartCommand(r, ns)})`,
      );
  }
  return { notes, followUps };
}

/** JSON patch ops that make `field` (`data` / `binaryData`) hold `next` instead of `current`. */
function contentOps(field: 'data' | 'binaryData', current: Record<string, string>, next: Record<string, string>): object[] {
  if (JSON.stringify(Object.entries(current).sort()) === JSON.stringify(Object.entries(next).sort())) return [];
  if (Object.keys(next).length === 0) return [{ op: 'remove', path: `/${field}` }];
  return [{ op: 'add', path: `/${field}`, value: next }];
}

/** The annotation that keeps `current` for the undo, when it fits in the object's annotation budget. */
function keptContent(before: KubeObject, current: ConfigContent): string | undefined {
  const value = JSON.stringify(current);
  const others = Object.entries(before.metadata?.annotations ?? {})
    .filter(([k]) => k !== REPLACED_ANNOTATION)
    .reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0);
  return others + Buffer.byteLength(REPLACED_ANNOTATION) + Buffer.byteLength(value) + ANNOTATIONS_MARGIN <= ANNOTATIONS_LIMIT ? value : undefined;
}

type ManagedFieldsEntry = { manager?: string; time?: string; fieldsV1?: Record<string, unknown> };

/** A write of the data after the edit the diagnosis saw (`facts.changedAt`), if any. */
function writtenSince(before: KubeObject, changedAt: string): ManagedFieldsEntry | undefined {
  const since = Date.parse(changedAt);
  if (Number.isNaN(since)) return undefined;
  // managedFields times have whole seconds; the diagnosis took `changedAt` from the same entries.
  return ((before.metadata?.managedFields ?? []) as ManagedFieldsEntry[]).find(
    (e) => e.time && Date.parse(e.time) > since + 999 && (Object.hasOwn(e.fieldsV1 ?? {}, 'f:data') || Object.hasOwn(e.fieldsV1 ?? {}, 'f:binaryData')),
  );
}

const errorText = (err: unknown): string => {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'number' ? `HTTP ${code}` : err instanceof Error ? err.message.split('\n')[0]! : String(err);
};

export const restoreConfig = defineAction({
  name: 'restore_config',
  description:
    "Put back a ConfigMap's previous content when it is known: the last kubectl apply (after a kubectl edit), or the Helm release's previous rendering. Readers that take it as env need a restart afterwards (offered separately).",
  params,
  async draft(ctx, component, p): Promise<ActionDraft> {
    const target = toObjectRef(component, ['ConfigMap']);
    if (p.name !== target.name) throw new InvalidProposalError(`params.name ${p.name} is not the target's name ${target.name}`);
    if (p.revision !== undefined && p.source !== 'helm') throw new InvalidProposalError('a revision goes with source helm');
    const redactor = ctx.redactor ?? createRedactor();
    const cm = `configmap/${target.name}`;
    const base = {
      title: `restore ${cm} to its previous content`,
      command: `kubectl patch ${cm} -n ${target.namespace} --type=json -p '[{"op":"replace","path":"/data","value":<its previous data>}]'`,
      target,
      access: [{ verb: 'patch', group: '', resource: 'configmaps', namespace: target.namespace, name: target.name }],
      riskKind: 'restore_config' as const,
      blastRadius: 'reading' as const,
      successCriteria: [],
    };
    const nothing = { writes: [], podsDisrupted: 0, reversible: 'no' as const };
    const before = await ctx.reader.get(target);
    if (!before) return { ...base, ...nothing, checks: [] };

    const checks: PreCheck[] = [];
    const stop = (name: string, detail: string): ActionDraft => ({ ...base, ...nothing, before, changes: [], checks: [...checks, { name, status: 'fail', detail }] });
    const current = contentOf(before);
    if (typeof current === 'string') return stop('current state is as expected', `${cm} does not hold ConfigMap content as expected (${current})`);
    if (before['immutable'] === true) return stop('current state is as expected', `${cm} is immutable: its content cannot change (it needs a new ConfigMap and a rollout of its readers)`);
    const changedAt = ctx.diagnosis?.facts?.['changedAt'];
    const again = typeof changedAt === 'string' ? writtenSince(before, changedAt) : undefined;
    if (again) return stop('current state is as expected', `${cm} was written again at ${again.time} by \`${again.manager ?? '?'}\`, after the edit the diagnosis saw (${changedAt}): propose again from a fresh diagnosis`);

    let readers: ConfigReader[];
    try {
      const owners = await ctx.reader.podTemplateOwners(target.namespace);
      readers = readersOf(owners.objects, target.name);
      checks.push(
        owners.complete
          ? { name: 'readers known', status: 'pass', detail: readers.length ? `read by ${readers.map((r) => `${workload(r)} (${r.via.join(', ')})`).join(', ')}` : `no workload in ${target.namespace} reads it` }
          : { name: 'readers known', status: 'fail', detail: `${target.namespace} has more workloads of a kind than one list returns: the readers, hence the blast radius, are not all known` },
      );
    } catch (err) {
      return stop('readers known', `the workloads that read ${cm} could not be listed (${errorText(err)}): without them the blast radius is unknown`);
    }

    const previous = await previousContent(ctx.reader, before, current, { ...(p.source ? { source: p.source } : {}), ...(p.revision !== undefined ? { revision: p.revision } : {}) });
    if ('unknown' in previous) return stop('previous content known', `previous content unknown: ${previous.unknown}. Nothing is written; restore it by hand from source control`);
    const found = previous.found;
    const uid = before.metadata?.uid ?? '';
    const restoreDigest = contentDigest(uid, found.content);
    const currentDigest = contentDigest(uid, current);
    if (p.digest !== undefined && p.digest !== restoreDigest)
      return stop('previous content known', `previous content unknown: ${found.label} is ${shortDigest(restoreDigest)}, not the ${shortDigest(p.digest)} this step was planned for`);
    checks.push({ name: 'previous content known', status: 'pass', detail: `from ${found.label}: ${shortDigest(restoreDigest)}` });
    const keys = keyChanges(current, found.content);
    checks.push({ name: 'current state is as expected', status: 'pass', detail: `live content ${shortDigest(currentDigest)} differs from it: the restore ${describeKeys(keys)}` });

    const kept = keptContent(before, current);
    const hasAnnotations = before.metadata?.annotations !== undefined;
    const keep = kept
      ? [hasAnnotations ? { op: 'add', path: `/metadata/annotations/${pointerKey(REPLACED_ANNOTATION)}`, value: kept } : { op: 'add', path: '/metadata/annotations', value: { [REPLACED_ANNOTATION]: kept } }]
      : before.metadata?.annotations?.[REPLACED_ANNOTATION] !== undefined
        ? [{ op: 'remove', path: `/metadata/annotations/${pointerKey(REPLACED_ANNOTATION)}` }]
        : [];
    const { notes, followUps } = readerNotes(readers, target);
    const within = windowOf(ctx);
    const content: ContentRestore = { source: found.source, sourceLabel: found.label, currentDigest, restoreDigest, keys, readers };
    return {
      ...base,
      title: `restore ${cm} to ${shortSource(found)}`,
      command: `kubectl patch ${cm} -n ${target.namespace} --type=json -p '[{"op":"replace","path":"/data","value":<${found.from}>}]'`,
      before,
      changes: contentChanges(current, found.content, redactor),
      writes: [
        {
          op: 'patch',
          target,
          patchType: 'json',
          body: [
            ...(uid ? [{ op: 'test', path: '/metadata/uid', value: uid }] : []),
            // Any change since the plan refuses the write: content, labels, annotations, a delete-and-recreate.
            { op: 'test', path: '/metadata/resourceVersion', value: before.metadata?.resourceVersion },
            ...contentOps('data', current.data, found.content.data),
            ...contentOps('binaryData', current.binaryData, found.content.binaryData),
            ...keep,
          ],
          hasAnnotations,
          purpose: `put back ${found.label} (${shortDigest(restoreDigest)})${kept ? `, keeping the replaced content in ${REPLACED_ANNOTATION}` : ''}`,
        },
      ],
      checks,
      content,
      notes: [...(found.note ? [found.note] : []), ...notes],
      followUps,
      successCriteria: [
        { kind: 'config_content', target, digest: restoreDigest, withinSeconds: within, description: `${cm} holds the restored content (${shortDigest(restoreDigest)})` },
      ],
      ...(kept
        ? {
            rollback: {
              action: 'restore_config',
              target: { kind: 'ConfigMap', namespace: target.namespace, name: target.name },
              params: { kind: 'ConfigMap', name: target.name, source: 'replaced', digest: currentDigest },
              command: `kubectl patch ${cm} -n ${target.namespace} --type=json -p '[{"op":"replace","path":"/data","value":<the content kept in its ${REPLACED_ANNOTATION} annotation>}]'`,
              rationale: `undo: put back the content live before the restore (${shortDigest(currentDigest)}), kept on the object in ${REPLACED_ANNOTATION}`,
            },
            reversible: 'yes' as const,
          }
        : { rollbackNote: `no undo step: the current content (${Math.ceil(contentBytes(current) / 1024)} KiB) is too large to keep in an annotation for it`, reversible: 'no' as const }),
      podsDisrupted: readers.reduce((n, r) => n + r.pods, 0),
    };
  },
});

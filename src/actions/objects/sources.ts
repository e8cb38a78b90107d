/**
 * Where an object's previous spec fields are known from: the same sources, in the same order and under
 * the same rules, as a ConfigMap's previous content (config/sources.ts), never a guess:
 * 1. `kubectl.kubernetes.io/last-applied-configuration` when the live fields differ from it, it was
 *    applied through the API version Vigil reads (an HPA applied as autoscaling/v1 has other fields), and
 *    Helm did not write the fields after that apply (managedFields);
 * 2. the Helm release history (`meta.helm.sh/release-name`): the deployed revision's rendering when the
 *    live fields differ from it (an edit after the release), else the previous successful revision's
 *    (the release changed them);
 * 3. only when asked (`source: replaced`, the undo of a restore): what Vigil's last restore replaced,
 *    kept on the object in `vigil.dev/replaced-spec`.
 */
import { parseAllDocuments } from 'yaml';
import { HELM_RELEASE, LAST_APPLIED, manifestOf } from '../config/sources.js';
import { previousFromHelm } from '../helm-previous.js';
import type { TargetReader } from '../reader.js';
import type { ContentSource, KubeObject } from '../types.js';
import { FIELD_SETS, fieldsOf, sameFields, type SpecFields } from './fields.js';
import { KIND_INFO, type RestorableKind } from './kinds.js';

/** What Vigil's restore replaced (JSON of the fields), kept on the object for the undo. */
export const REPLACED_SPEC_ANNOTATION = 'vigil.dev/replaced-spec';

export interface PreviousFields {
  source: ContentSource;
  label: string;
  fields: SpecFields;
  note?: string;
}

export type PreviousFieldsResult = { found: PreviousFields } | { unknown: string };

export interface FieldsRequest {
  source?: 'last-applied' | 'helm' | 'replaced';
  revision?: number;
}

type ManagedFieldsEntry = { manager?: string; time?: string; fieldsV1?: Record<string, unknown> };

const apiVersion = (kind: RestorableKind) => {
  const k = KIND_INFO[kind];
  return k.group ? `${k.group}/${k.version}` : k.version;
};
/** Whether fields written through `v` are the kind's: its served version, or for Istio any of v1, v1beta1, v1alpha3 (the same schema). */
function sameApi(kind: RestorableKind, v: unknown): boolean {
  if (v === apiVersion(kind)) return true;
  const group = KIND_INFO[kind].group;
  return group === 'networking.istio.io' && typeof v === 'string' && /^networking\.istio\.io\/(v1|v1beta1|v1alpha3)$/.test(v);
}
const ownsLastApplied = (e: ManagedFieldsEntry): boolean =>
  Object.hasOwn(((e.fieldsV1?.['f:metadata'] as Record<string, unknown> | undefined)?.['f:annotations'] as Record<string, unknown> | undefined) ?? {}, `f:${LAST_APPLIED}`);
const newest = (entries: ManagedFieldsEntry[]): number => Math.max(-Infinity, ...entries.map((e) => (e.time ? Date.parse(e.time) : NaN)).filter((t) => !Number.isNaN(t)));

/** Whether a managedFields entry owns one of the kind's restored fields. */
export function writesFields(kind: RestorableKind, e: ManagedFieldsEntry): boolean {
  const spec = (e.fieldsV1?.['f:spec'] ?? {}) as Record<string, unknown>;
  return FIELD_SETS[kind].some((f) => Object.hasOwn(spec, `f:${f}`));
}

function helmWroteAfterApply(kind: RestorableKind, obj: KubeObject): boolean | undefined {
  const entries = (obj.metadata?.managedFields ?? []) as ManagedFieldsEntry[];
  const applied = newest(entries.filter(ownsLastApplied));
  const helm = newest(entries.filter((e) => /^helm\b/.test(e.manager ?? '') && writesFields(kind, e)));
  if (applied === -Infinity) return undefined;
  return helm > applied;
}

export function fromLastApplied(kind: RestorableKind, obj: KubeObject, current: SpecFields): PreviousFieldsResult {
  const raw = obj.metadata?.annotations?.[LAST_APPLIED];
  if (raw === undefined) return { unknown: 'it has no last-applied-configuration (never `kubectl apply`-ed)' };
  let applied: { apiVersion?: unknown; kind?: unknown; spec?: unknown };
  try {
    applied = JSON.parse(raw) as typeof applied;
  } catch {
    return { unknown: 'its last-applied-configuration is not JSON' };
  }
  if (applied?.kind !== undefined && applied.kind !== kind) return { unknown: `its last-applied-configuration is a ${String(applied.kind)}, not a ${kind}` };
  if (applied?.apiVersion !== undefined && !sameApi(kind, applied.apiVersion))
    return { unknown: `its last-applied-configuration was applied as ${String(applied.apiVersion)}, whose fields are not ${apiVersion(kind)}'s` };
  const fields = fieldsOf(kind, applied);
  if (typeof fields === 'string') return { unknown: `its last-applied-configuration: ${fields}` };
  if (sameFields(kind, fields, current)) return { unknown: `the live ${FIELD_SETS[kind].join('/')} equal its last-applied-configuration (nothing was changed after the last \`kubectl apply\`)` };
  if (obj.metadata?.annotations?.[HELM_RELEASE]) {
    const helmLater = helmWroteAfterApply(kind, obj);
    if (helmLater === undefined) return { unknown: 'it has both a last-applied-configuration and a Helm release, and managedFields do not say which wrote last' };
    if (helmLater) return { unknown: 'its last-applied-configuration is older than Helm’s last write of these fields (managedFields), so it is not the previous spec' };
  }
  return { found: { source: { kind: 'last-applied' }, label: 'the last `kubectl apply` (annotation kubectl.kubernetes.io/last-applied-configuration)', fields } };
}

function rendered(kind: RestorableKind, manifest: string, name: string, namespace: string, releaseNamespace: string): SpecFields | string {
  for (const doc of parseAllDocuments(manifest)) {
    if (doc.errors.length) continue;
    const o = doc.toJS() as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } } | null;
    if (o?.kind !== kind || o.metadata?.name !== name || (o.metadata.namespace ?? releaseNamespace) !== namespace) continue;
    if (!sameApi(kind, o.apiVersion)) return `it renders ${kind.toLowerCase()}/${name} as ${String(o.apiVersion)}, not ${apiVersion(kind)}`;
    const f = fieldsOf(kind, o);
    return typeof f === 'string' ? `it renders ${kind.toLowerCase()}/${name}, but ${f}` : f;
  }
  return `it does not render ${kind.toLowerCase()}/${name}`;
}

async function fromHelm(reader: TargetReader, kind: RestorableKind, obj: KubeObject, current: SpecFields, revision?: number): Promise<PreviousFieldsResult> {
  const name = obj.metadata?.name ?? '';
  const what = `${kind.toLowerCase()}/${name}`;
  const r = await previousFromHelm(reader, obj, current, {
    render: (secret, releaseNs) => rendered(kind, manifestOf(secret), name, obj.metadata?.namespace ?? '', releaseNs),
    same: (a, b) => sameFields(kind, a, b),
    noun: 'fields',
    fromChart: what,
    again: what,
    ...(revision !== undefined ? { revision } : {}),
  });
  if ('unknown' in r) return r;
  const { release, releaseNamespace, revision: n, value, why, note } = r.found;
  return { found: { source: { kind: 'helm', release, namespace: releaseNamespace, revision: n }, label: `Helm release ${release} revision ${n} (${why})`, fields: value, ...(note ? { note } : {}) } };
}

function fromReplaced(kind: RestorableKind, obj: KubeObject): PreviousFieldsResult {
  const raw = obj.metadata?.annotations?.[REPLACED_SPEC_ANNOTATION];
  if (raw === undefined) return { unknown: `it has no ${REPLACED_SPEC_ANNOTATION} annotation (Vigil has not restored it, or the fields were too large to keep)` };
  let kept: unknown;
  try {
    kept = JSON.parse(raw);
  } catch {
    return { unknown: `its ${REPLACED_SPEC_ANNOTATION} annotation is not JSON` };
  }
  const fields = fieldsOf(kind, { spec: kept });
  if (typeof fields === 'string') return { unknown: `its ${REPLACED_SPEC_ANNOTATION} annotation: ${fields}` };
  return { found: { source: { kind: 'replaced' }, label: `the fields Vigil's last restore replaced (annotation ${REPLACED_SPEC_ANNOTATION})`, fields } };
}

/** The previous restored fields of `obj` (read now, live fields `current`), or why they are unknown. */
export async function previousFields(reader: TargetReader, kind: RestorableKind, obj: KubeObject, current: SpecFields, want: FieldsRequest = {}): Promise<PreviousFieldsResult> {
  if (want.source === 'replaced') return fromReplaced(kind, obj);
  const tried: string[] = [];
  if (want.source !== 'helm') {
    const r = fromLastApplied(kind, obj, current);
    if ('found' in r) return r;
    tried.push(r.unknown);
  }
  if (want.source !== 'last-applied') {
    const r = await fromHelm(reader, kind, obj, current, want.revision);
    if ('found' in r) return r;
    tried.push(r.unknown);
  }
  return { unknown: tried.join('; ') };
}

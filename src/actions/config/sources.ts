/**
 * Where a ConfigMap's previous content is known from, in this order, and nowhere else (never a guess):
 * 1. `kubectl.kubernetes.io/last-applied-configuration`, when the live content differs from it: kubectl
 *    writes the annotation on every `kubectl apply` and nothing else updates it, so after an apply then a
 *    `kubectl edit` (or patch) it still holds the applied content. Not when Helm wrote the content after
 *    that apply (managedFields say who wrote last): the annotation is then older than the release.
 * 2. Helm, when the ConfigMap carries `meta.helm.sh/release-name`: the release's revisions are Secrets
 *    (`owner=helm`) whose manifests hold the rendered ConfigMap. If the live content differs from what
 *    the deployed revision rendered, it was changed after that release: put back the deployed
 *    revision's. If it is what the deployed revision rendered, the release changed it: put back the
 *    previous successful revision's.
 * 3. Only when asked (`source: replaced`, the undo of a restore): what Vigil's last restore replaced, kept
 *    on the object in `vigil.dev/replaced-content`.
 * Anything else is "previous content unknown", with what was tried.
 */
import type { V1Secret } from '@kubernetes/client-node';
import { gunzipSync } from 'node:zlib';
import { parseAllDocuments } from 'yaml';
import { HELM_NAMESPACE, HELM_RELEASE, previousFromHelm } from '../helm-previous.js';
import type { TargetReader } from '../reader.js';
import type { ContentSource, KubeObject } from '../types.js';
import { contentOf, sameContent, type ConfigContent } from './content.js';

export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
export { HELM_NAMESPACE, HELM_RELEASE };
/** What Vigil's restore replaced (JSON `{ data, binaryData }`), kept on the ConfigMap for the undo. */
export const REPLACED_ANNOTATION = 'vigil.dev/replaced-content';

export interface PreviousContent {
  source: ContentSource;
  /** For the card: where it comes from, as a phrase. */
  label: string;
  /** For the kubectl-style command: where a human would take the data from. */
  from: string;
  content: ConfigContent;
  /** Something approvers should know about this source (Helm still records another revision). */
  note?: string;
}

export type PreviousContentResult = { found: PreviousContent } | { unknown: string };

export interface SourceRequest {
  source?: 'last-applied' | 'helm' | 'replaced';
  /** With `helm`: this revision's rendering instead of the automatic choice. */
  revision?: number;
}

type ManagedFieldsEntry = { manager?: string; time?: string; fieldsV1?: Record<string, unknown> };

const ownsLastApplied = (e: ManagedFieldsEntry): boolean =>
  Object.hasOwn(((e.fieldsV1?.['f:metadata'] as Record<string, unknown> | undefined)?.['f:annotations'] as Record<string, unknown> | undefined) ?? {}, `f:${LAST_APPLIED}`);
const writesData = (e: ManagedFieldsEntry): boolean => Object.hasOwn(e.fieldsV1 ?? {}, 'f:data') || Object.hasOwn(e.fieldsV1 ?? {}, 'f:binaryData');
const newest = (entries: ManagedFieldsEntry[]): number => Math.max(-Infinity, ...entries.map((e) => (e.time ? Date.parse(e.time) : NaN)).filter((t) => !Number.isNaN(t)));

/**
 * Whether Helm wrote the content after the last `kubectl apply`, by managedFields (Helm 3's field
 * manager is `helm`); undefined when managedFields cannot tell.
 */
function helmWroteAfterApply(cm: KubeObject): boolean | undefined {
  const entries = (cm.metadata?.managedFields ?? []) as ManagedFieldsEntry[];
  const applied = newest(entries.filter(ownsLastApplied));
  const helm = newest(entries.filter((e) => /^helm\b/.test(e.manager ?? '') && writesData(e)));
  if (applied === -Infinity) return undefined;
  return helm > applied;
}

function fromLastApplied(cm: KubeObject, current: ConfigContent): PreviousContentResult {
  const raw = cm.metadata?.annotations?.[LAST_APPLIED];
  if (raw === undefined) return { unknown: 'it has no last-applied-configuration (never `kubectl apply`-ed)' };
  let applied: { data?: unknown; binaryData?: unknown };
  try {
    applied = JSON.parse(raw) as typeof applied;
  } catch {
    return { unknown: 'its last-applied-configuration is not JSON' };
  }
  const content = contentOf(applied ?? {});
  if (typeof content === 'string') return { unknown: `its last-applied-configuration is not a ConfigMap's content (${content})` };
  if (sameContent(content, current)) return { unknown: 'the live content equals its last-applied-configuration (nothing was changed after the last `kubectl apply`)' };
  if (cm.metadata?.annotations?.[HELM_RELEASE]) {
    const helmLater = helmWroteAfterApply(cm);
    if (helmLater === undefined) return { unknown: 'it has both a last-applied-configuration and a Helm release, and managedFields do not say which wrote last' };
    if (helmLater) return { unknown: 'its last-applied-configuration is older than Helm’s last write of the data (managedFields), so it is not the previous content' };
  }
  return {
    found: {
      source: { kind: 'last-applied' },
      label: 'the last `kubectl apply` (annotation kubectl.kubernetes.io/last-applied-configuration)',
      from: 'the data in its last-applied-configuration',
      content,
    },
  };
}

const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

/** The rendered manifest of a `helm.sh/release.v1` Secret (the same encoding helm.ts decodes). */
export function manifestOf(secret: V1Secret): string {
  const raw = secret.data?.['release'] ?? '';
  let bytes = Buffer.from(Buffer.from(raw, 'base64').toString('utf8'), 'base64');
  if (bytes.subarray(0, 2).equals(GZIP_MAGIC)) bytes = gunzipSync(bytes);
  const manifest = (JSON.parse(bytes.toString('utf8')) as { manifest?: unknown }).manifest;
  return typeof manifest === 'string' ? manifest : '';
}

/** The content a revision's manifest renders for the ConfigMap, or why there is none. */
function renderedContent(manifest: string, name: string, namespace: string, releaseNamespace: string): ConfigContent | string {
  for (const doc of parseAllDocuments(manifest)) {
    if (doc.errors.length) continue;
    const o = doc.toJS() as { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown }; data?: unknown; binaryData?: unknown } | null;
    if (o?.kind !== 'ConfigMap' || o.metadata?.name !== name || (o.metadata.namespace ?? releaseNamespace) !== namespace) continue;
    const content = contentOf(o);
    return typeof content === 'string' ? `it renders configmap/${name} with ${content}` : content;
  }
  return `it does not render configmap/${name}`;
}

async function fromHelm(reader: TargetReader, cm: KubeObject, current: ConfigContent, revision?: number): Promise<PreviousContentResult> {
  const name = cm.metadata?.name ?? '';
  const r = await previousFromHelm(reader, cm, current, {
    render: (secret, releaseNs) => renderedContent(manifestOf(secret), name, cm.metadata?.namespace ?? '', releaseNs),
    same: sameContent,
    noun: 'content',
    fromChart: 'the ConfigMap',
    again: 'this ConfigMap',
    ...(revision !== undefined ? { revision } : {}),
  });
  if ('unknown' in r) return r;
  const { release, releaseNamespace, revision: n, value, why, note } = r.found;
  return {
    found: { source: { kind: 'helm', release, namespace: releaseNamespace, revision: n }, label: `Helm release ${release} revision ${n} (${why})`, from: `configmap/${name} in \`helm get manifest ${release} -n ${releaseNamespace} --revision ${n}\``, content: value, ...(note ? { note } : {}) },
  };
}

function fromReplaced(cm: KubeObject): PreviousContentResult {
  const raw = cm.metadata?.annotations?.[REPLACED_ANNOTATION];
  if (raw === undefined) return { unknown: `it has no ${REPLACED_ANNOTATION} annotation (Vigil has not restored it, or the content was too large to keep)` };
  let kept: unknown;
  try {
    kept = JSON.parse(raw);
  } catch {
    return { unknown: `its ${REPLACED_ANNOTATION} annotation is not JSON` };
  }
  const content = contentOf((kept ?? {}) as { data?: unknown; binaryData?: unknown });
  if (typeof content === 'string') return { unknown: `its ${REPLACED_ANNOTATION} annotation is not a ConfigMap's content (${content})` };
  return {
    found: {
      source: { kind: 'replaced' },
      label: `the content Vigil's last restore replaced (annotation ${REPLACED_ANNOTATION})`,
      from: `the content kept in its ${REPLACED_ANNOTATION} annotation`,
      content,
    },
  };
}

/** The previous content of ConfigMap `cm` (read now) whose live content is `current`, or why it is unknown. */
export async function previousContent(reader: TargetReader, cm: KubeObject, current: ConfigContent, want: SourceRequest = {}): Promise<PreviousContentResult> {
  if (want.source === 'replaced') return fromReplaced(cm);
  const tried: string[] = [];
  if (want.source !== 'helm') {
    const r = fromLastApplied(cm, current);
    if ('found' in r) return r;
    tried.push(r.unknown);
  }
  if (want.source !== 'last-applied') {
    const r = await fromHelm(reader, cm, current, want.revision);
    if ('found' in r) return r;
    tried.push(r.unknown);
  }
  return { unknown: tried.join('; ') };
}

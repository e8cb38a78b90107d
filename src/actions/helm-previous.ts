/**
 * What a Helm release rendered for one object before its live state: shared by `restore_config`
 * (a ConfigMap's content) and `restore_object` (a spec's fields). The release history is read from its
 * `sh.helm.release.v1.*` Secrets; the chosen revision is the one asked for, else the deployed one when
 * the live state drifted from it, else the successful revision before the deployed one.
 */
import type { V1Secret } from '@kubernetes/client-node';
import { decodeHelmRelease } from '../evidence/kubernetes/helm.js';
import type { TargetReader } from './reader.js';
import type { KubeObject } from './types.js';

export const HELM_RELEASE = 'meta.helm.sh/release-name';
export const HELM_NAMESPACE = 'meta.helm.sh/release-namespace';

/** Helm release names are DNS labels; anything else is not used in a label selector. */
const RELEASE_NAME = /^[a-z0-9]([-a-z0-9.]{0,51}[a-z0-9])?$/;

export interface HelmPreviousOptions<T> {
  /** What a revision's release Secret renders for the object, or why it renders nothing usable. */
  render(secret: V1Secret, releaseNamespace: string): T | string;
  same(a: T, b: T): boolean;
  /** `content` | `fields`: said in the reasons. */
  noun: string;
  /** How the notes name the object: "renders <fromChart> from the chart again", "renders <again> again". */
  fromChart: string;
  again: string;
  /** A revision asked for by number. */
  revision?: number;
}

export interface HelmPrevious<T> {
  release: string;
  releaseNamespace: string;
  revision: number;
  value: T;
  why: string;
  note?: string;
}

export async function previousFromHelm<T>(reader: TargetReader, obj: KubeObject, current: T, o: HelmPreviousOptions<T>): Promise<{ found: HelmPrevious<T> } | { unknown: string }> {
  const release = obj.metadata?.annotations?.[HELM_RELEASE];
  const namespace = obj.metadata?.namespace ?? '';
  if (!release) return { unknown: `it is not managed by Helm (no ${HELM_RELEASE} annotation)` };
  if (!RELEASE_NAME.test(release)) return { unknown: `its Helm release name ${JSON.stringify(release.slice(0, 60))} is not a valid release name` };
  const releaseNamespace = obj.metadata?.annotations?.[HELM_NAMESPACE] ?? namespace;
  let secrets: V1Secret[];
  try {
    secrets = await reader.helmReleaseSecrets(releaseNamespace, release);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    return { unknown: `Helm release ${release}'s history could not be read (${typeof code === 'number' ? `HTTP ${code}` : err instanceof Error ? err.message.split('\n')[0] : String(err)})` };
  }
  const revisions = secrets
    .flatMap((s) => {
      try {
        const r = decodeHelmRelease(s);
        return [{ revision: r.revision, status: r.status, secret: s }];
      } catch {
        return [];
      }
    })
    .sort((a, b) => b.revision - a.revision);
  if (!revisions.length) return { unknown: `no revision of Helm release ${release} was found in ${releaseNamespace}` };
  const render = (r: (typeof revisions)[number]) => o.render(r.secret, releaseNamespace);
  const found = (revision: number, value: T, why: string, note?: string) => ({ found: { release, releaseNamespace, revision, value, why, ...(note ? { note } : {}) } });
  const deployed = revisions.find((r) => r.status === 'deployed');
  // "the live content is" / "the live fields are".
  const plural = o.noun.endsWith('s');

  if (o.revision !== undefined) {
    const r = revisions.find((x) => x.revision === o.revision);
    if (!r) return { unknown: `Helm release ${release} has no revision ${o.revision} (kept: ${revisions.map((x) => x.revision).join(', ')})` };
    const value = render(r);
    if (typeof value === 'string') return { unknown: `Helm release ${release} revision ${o.revision}: ${value}` };
    if (o.same(value, current)) return { unknown: `the live ${o.noun} ${plural ? 'already equal' : 'already equals'} what Helm release ${release} revision ${o.revision} rendered` };
    return found(o.revision, value, `as asked; status ${r.status}`, deployed && deployed.revision !== o.revision ? `Helm still records revision ${deployed.revision} as deployed: the next \`helm upgrade\` renders ${o.fromChart} from the chart again` : undefined);
  }
  if (!deployed) return { unknown: `Helm release ${release} has no deployed revision (statuses: ${revisions.map((r) => `${r.revision} ${r.status}`).join(', ')})` };
  const now = render(deployed);
  if (typeof now === 'string') return { unknown: `Helm release ${release} revision ${deployed.revision} (deployed): ${now}` };
  if (!o.same(now, current)) return found(deployed.revision, now, `the deployed one; the live ${o.noun} ${plural ? 'were' : 'was'} changed after it`);
  const previous = revisions.find((r) => r.revision < deployed.revision && (r.status === 'superseded' || r.status === 'deployed'));
  if (!previous) return { unknown: `the live ${o.noun} ${plural ? 'are' : 'is'} what Helm release ${release} revision ${deployed.revision} rendered, and no earlier successful revision is kept` };
  const before = render(previous);
  if (typeof before === 'string') return { unknown: `Helm release ${release} revision ${previous.revision} (the one before the deployed ${deployed.revision}): ${before}` };
  if (o.same(before, current)) return { unknown: `Helm release ${release} revisions ${previous.revision} and ${deployed.revision} render the same ${o.noun}, which ${plural ? 'are' : 'is'} live` };
  return found(
    previous.revision,
    before,
    `the one before the deployed revision ${deployed.revision}, which changed it`,
    `Helm still records revision ${deployed.revision} as deployed: the next \`helm upgrade\` renders ${o.again} again, and \`helm rollback ${release} ${previous.revision}\` would roll back the whole release instead`,
  );
}

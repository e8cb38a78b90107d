/**
 * Helm 3 release storage, byte-compatible with Helm's Secret driver (pkg/storage/driver/secrets.go):
 * a Secret of type `helm.sh/release.v1` named `sh.helm.release.v1.<name>.v<version>`, labelled
 * `owner=helm, name, status, version`, whose `release` key holds Helm's encoding of the release:
 * base64( gzip( JSON ) ). Because Secret data is itself base64 in the API, `data.release` in JSON is
 * base64( base64( gzip( JSON ) ) ).
 *
 * helmHistorySecrets builds those Secrets from a readable `helm history`-like shorthand (scenarios).
 */
import { gunzipSync, gzipSync, constants } from 'node:zlib';

export type HelmStatus =
  | 'unknown'
  | 'deployed'
  | 'uninstalled'
  | 'superseded'
  | 'failed'
  | 'uninstalling'
  | 'pending-install'
  | 'pending-upgrade'
  | 'pending-rollback';

/** The subset of Helm's release.Release JSON that readers use. */
export interface HelmRelease {
  name: string;
  namespace: string;
  version: number;
  info: {
    first_deployed: string;
    last_deployed: string;
    deleted: string;
    description: string;
    status: HelmStatus;
    notes?: string;
  };
  chart: {
    metadata: { name: string; version: string; appVersion?: string; apiVersion: 'v2'; type?: string; description?: string };
    /** Chart default values; the user's overrides are in `config`. */
    values?: Record<string, unknown>;
  };
  config: Record<string, unknown>;
  manifest: string;
}

export function encodeHelmRelease(release: HelmRelease): string {
  return gzipSync(Buffer.from(JSON.stringify(release)), { level: constants.Z_BEST_COMPRESSION }).toString('base64');
}

/** Helm's own decoder accepts gzipped and (older) plain JSON payloads. */
export function decodeHelmRelease(encoded: string): HelmRelease {
  const raw = Buffer.from(encoded, 'base64');
  const json = raw[0] === 0x1f && raw[1] === 0x8b ? gunzipSync(raw) : raw;
  return JSON.parse(json.toString('utf8')) as HelmRelease;
}

/** The Secret Helm stores for one release revision. */
export function helmReleaseSecret(release: HelmRelease, createdAt: string): object {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'helm.sh/release.v1',
    metadata: {
      name: `sh.helm.release.v1.${release.name}.v${release.version}`,
      namespace: release.namespace,
      creationTimestamp: createdAt,
      labels: {
        name: release.name,
        owner: 'helm',
        status: release.info.status,
        version: String(release.version),
        createdAt: String(Math.floor(Date.parse(createdAt) / 1000)),
      },
    },
    data: { release: Buffer.from(encodeHelmRelease(release)).toString('base64') },
  };
}

/** Reads a release back from a Secret as returned by the API (data.release base64-encoded once more). */
export function releaseFromSecret(secret: { data?: Record<string, string> }): HelmRelease {
  const field = secret.data?.['release'];
  if (!field) throw new Error('secret has no data.release');
  return decodeHelmRelease(Buffer.from(field, 'base64').toString('utf8'));
}

/** One row of `helm history`, in a scenario's shorthand. */
export interface HelmRevision {
  version: number;
  status: HelmStatus;
  chart: string;
  appVersion: string;
  description: string;
  deployedAt: string;
  values: Record<string, unknown>;
  manifest?: string;
}

export interface HelmReleaseShorthand {
  name: string;
  namespace: string;
  manifest?: string;
  revisions: HelmRevision[];
}

function lookup(values: Record<string, unknown>, path: string): unknown {
  let cur: unknown = values;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/** Splits `checkout-2.3.1` into chart name and version at the last `-` before a digit. */
function splitChart(chart: string): { name: string; version: string } {
  const m = /^(.+)-(\d+\.\d+\.\d+\S*)$/.exec(chart);
  if (!m) throw new Error(`chart "${chart}" is not <name>-<semver>`);
  return { name: m[1]!, version: m[2]! };
}

function renderManifest(template: string, release: HelmReleaseShorthand, rev: HelmRevision): string {
  const chart = splitChart(rev.chart);
  const builtins: Record<string, string> = {
    '.Release.Name': release.name,
    '.Release.Namespace': release.namespace,
    '.Release.Revision': String(rev.version),
    '.Chart.Name': chart.name,
    '.Chart.Version': chart.version,
    '.Chart.AppVersion': rev.appVersion,
  };
  return template.replace(/\{\{\s*(\.[A-Za-z][\w.]*)\s*\}\}/g, (_, ref: string) => {
    if (ref in builtins) return builtins[ref]!;
    if (ref.startsWith('.Values.')) {
      const value = lookup(rev.values, ref.slice('.Values.'.length));
      if (value === undefined) throw new Error(`helm release ${release.name} revision ${rev.version}: manifest uses ${ref}, not in values`);
      return typeof value === 'string' ? value : JSON.stringify(value);
    }
    throw new Error(`helm release ${release.name}: unknown manifest reference {{ ${ref} }}`);
  });
}

/**
 * The Secrets Helm would have left after the history in `release`: one per revision, with
 * first_deployed taken from the oldest revision and the manifest rendered from the release-level
 * (or revision-level) template with that revision's values.
 */
export function helmHistorySecrets(release: HelmReleaseShorthand): object[] {
  const revisions = [...release.revisions].sort((a, b) => a.version - b.version);
  const firstDeployed = revisions[0]!.deployedAt;
  return revisions.map((rev) => {
    const chart = splitChart(rev.chart);
    const full: HelmRelease = {
      name: release.name,
      namespace: release.namespace,
      version: rev.version,
      info: {
        first_deployed: firstDeployed,
        last_deployed: rev.deployedAt,
        deleted: '',
        description: rev.description,
        status: rev.status,
      },
      chart: { metadata: { name: chart.name, version: chart.version, appVersion: rev.appVersion, apiVersion: 'v2', type: 'application' } },
      config: rev.values,
      manifest: renderManifest(rev.manifest ?? release.manifest ?? '', release, rev),
    };
    return helmReleaseSecret(full, rev.deployedAt);
  });
}


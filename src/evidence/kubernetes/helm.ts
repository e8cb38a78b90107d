import { gunzipSync } from 'node:zlib';
import type { V1Secret } from '@kubernetes/client-node';

/** One revision of a Helm release, decoded from its Secret; values are kept only as the caller asks. */
export interface HelmRevision {
  name: string;
  namespace: string;
  revision: number;
  status: string;
  description: string;
  chart: string;
  appVersion?: string;
  deployedAt?: Date;
  /** User-supplied values (`helm upgrade --set/-f`); redact before they leave. */
  values: Record<string, unknown>;
  secretName: string;
}

const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

/**
 * Decode a `helm.sh/release.v1` Secret. The API returns `data.release` base64-encoded; the decoded
 * string is Helm's own base64 of a gzipped JSON release (gzip detected by magic bytes, as Helm does).
 */
export function decodeHelmRelease(secret: V1Secret): HelmRevision {
  const raw = secret.data?.['release'];
  if (!raw) throw new Error(`secret ${secret.metadata?.name ?? '?'} has no release data`);
  const helmB64 = Buffer.from(raw, 'base64').toString('utf8');
  let bytes = Buffer.from(helmB64, 'base64');
  if (bytes.subarray(0, 2).equals(GZIP_MAGIC)) bytes = gunzipSync(bytes);
  const rel = JSON.parse(bytes.toString('utf8')) as {
    name: string;
    namespace: string;
    version: number;
    info?: { status?: string; description?: string; last_deployed?: string };
    chart?: { metadata?: { name?: string; version?: string; appVersion?: string } };
    config?: Record<string, unknown>;
  };
  const chartMeta = rel.chart?.metadata ?? {};
  return {
    name: rel.name,
    namespace: rel.namespace,
    revision: rel.version,
    status: rel.info?.status ?? 'unknown',
    description: rel.info?.description ?? '',
    chart: `${chartMeta.name ?? '?'}-${chartMeta.version ?? '?'}`,
    appVersion: chartMeta.appVersion,
    deployedAt: rel.info?.last_deployed ? new Date(rel.info.last_deployed) : undefined,
    values: rel.config ?? {},
    secretName: secret.metadata?.name ?? '',
  };
}

/** Newest revision first; undecodable secrets are reported, not fatal. */
export function decodeHelmHistory(secrets: V1Secret[]): { revisions: HelmRevision[]; errors: string[] } {
  const revisions: HelmRevision[] = [];
  const errors: string[] = [];
  for (const s of secrets) {
    try {
      revisions.push(decodeHelmRelease(s));
    } catch (err) {
      errors.push(`helm release secret ${s.metadata?.name ?? '?'}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  revisions.sort((a, b) => b.revision - a.revision);
  return { revisions, errors };
}

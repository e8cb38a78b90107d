/** Kubernetes facts the value walker needs: what a Secret looks like and which annotation echoes objects. */

/** kubectl stores the whole applied object here, so a Secret's data would leak through its annotation. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * Annotations whose value is a JSON document of object content, redacted as a structure (each value on
 * its own, so a config file's lines are seen as lines): kubectl's last-applied configuration, and the
 * content Vigil's `restore_config` replaced, kept on the ConfigMap for its undo.
 */
export const EMBEDDED_JSON_ANNOTATIONS: ReadonlySet<string> = new Set([LAST_APPLIED_ANNOTATION, 'vigil.dev/replaced-content']);

export type PlainRecord = Record<string, unknown>;

export function isRecord(v: unknown): v is PlainRecord {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * A Secret by `kind`, or — with `loose` — a kind-less object shaped like one (`metadata`, a string
 * `type`, `data` or `stringData`): the API server omits `kind` on the items of a SecretList.
 */
export function isSecretObject(obj: PlainRecord, loose: boolean): boolean {
  if (obj['kind'] === 'Secret') return true;
  if (!loose || obj['kind'] !== undefined) return false;
  return isRecord(obj['metadata']) && typeof obj['type'] === 'string' && (isRecord(obj['data']) || isRecord(obj['stringData']));
}

/** A Secret's `data` values are base64; hash the decoded value so it matches the same password seen in plain text. */
export function decodeSecretData(v: unknown): string {
  if (typeof v !== 'string') return JSON.stringify(v) ?? '';
  return Buffer.from(v, 'base64').toString('utf8');
}

/**
 * The part of an object `restore_object` puts back, per kind: a fixed set of top-level spec fields (the
 * ones whose edit breaks traffic or scaling), never the whole object (metadata, status and fields other
 * controllers own stay as they are). Read from an object (live, a last-applied annotation, a Helm
 * manifest, Vigil's own undo annotation), compared after the API server's defaults, and hashed.
 *
 *   Service                  spec.selector, spec.ports              (endpoints-mismatch)
 *   Ingress                  spec.rules, spec.defaultBackend        (ingress-misroute)
 *   NetworkPolicy            spec.podSelector, policyTypes, ingress, egress (network-policy)
 *   HorizontalPodAutoscaler  spec.minReplicas, maxReplicas, metrics (hpa-at-max; not `behavior`, which
 *                            the API server fills in with defaults when a manifest leaves it out)
 *   VirtualService           spec.hosts, gateways, http, tcp, tls   (mesh-misconfig)
 *   DestinationRule          spec.host, trafficPolicy, subsets      (mesh-misconfig)
 *
 * Absent fields are part of the content: restoring "no defaultBackend" removes one an edit added.
 */
import { createHash } from 'node:crypto';
import type { RestorableKind } from './kinds.js';

export const FIELD_SETS: Record<RestorableKind, readonly string[]> = {
  Service: ['selector', 'ports'],
  Ingress: ['rules', 'defaultBackend'],
  NetworkPolicy: ['podSelector', 'policyTypes', 'ingress', 'egress'],
  HorizontalPodAutoscaler: ['minReplicas', 'maxReplicas', 'metrics'],
  VirtualService: ['hosts', 'gateways', 'http', 'tcp', 'tls'],
  DestinationRule: ['host', 'trafficPolicy', 'subsets'],
};

/** The restored fields by name (`selector`, `ports`); a field that is absent is not a key. */
export type SpecFields = Record<string, unknown>;

/**
 * What the API server fills in when a field is left out, so an applied manifest that leaves it out is
 * not mistaken for different content: a Service port's protocol (TCP) and targetPort (the port), an
 * HPA's minReplicas (1), a NetworkPolicy's policyTypes (Ingress, plus Egress when it has egress rules)
 * and its ports' protocol (TCP). A Service port's nodePort is allocated by the API server: it is not
 * compared (a restore keeps the live one, restore-object.ts).
 */
export function normalise(kind: RestorableKind, f: SpecFields): SpecFields {
  const out: SpecFields = structuredClone(f);
  if (kind === 'Service' && Array.isArray(out['ports']))
    out['ports'] = (out['ports'] as Record<string, unknown>[]).map((p) => {
      const { nodePort: _, ...rest } = { protocol: 'TCP', ...(p['port'] !== undefined ? { targetPort: p['port'] } : {}), ...p } as Record<string, unknown>;
      return rest;
    });
  if (kind === 'NetworkPolicy')
    for (const dir of ['ingress', 'egress'])
      if (Array.isArray(out[dir]))
        out[dir] = (out[dir] as Record<string, unknown>[]).map((r) => (Array.isArray(r['ports']) ? { ...r, ports: (r['ports'] as Record<string, unknown>[]).map((p) => ({ protocol: 'TCP', ...p })) } : r));
  if (kind === 'HorizontalPodAutoscaler' && out['minReplicas'] === undefined) out['minReplicas'] = 1;
  if (kind === 'NetworkPolicy' && out['policyTypes'] === undefined) out['policyTypes'] = out['egress'] !== undefined ? ['Ingress', 'Egress'] : ['Ingress'];
  return out;
}

/** The kind's fields of an object's `spec`, or why it has none that can be restored. */
export function fieldsOf(kind: RestorableKind, obj: object | null | undefined): SpecFields | string {
  const spec = (obj as { spec?: unknown } | null | undefined)?.spec;
  if (spec === undefined || spec === null) return 'it has no spec';
  if (typeof spec !== 'object' || Array.isArray(spec)) return 'its spec is not an object';
  const out: SpecFields = {};
  for (const f of FIELD_SETS[kind]) {
    const v = (spec as Record<string, unknown>)[f];
    if (v !== undefined && v !== null) out[f] = v;
  }
  return out;
}

/** JSON with object keys in order: equal content, equal text. */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

export function sameFields(kind: RestorableKind, a: SpecFields, b: SpecFields): boolean {
  return canonical(normalise(kind, a)) === canonical(normalise(kind, b));
}

/** `vigil-object-fields/v1` + kind + uid + the fields as canonical JSON, SHA-256, hex. */
export function fieldsDigest(kind: RestorableKind, uid: string, f: SpecFields): string {
  return createHash('sha256').update(`vigil-object-fields/v1\n${kind}\n${uid}\n`).update(canonical(normalise(kind, f))).digest('hex');
}

/** Which fields restoring `to` over `from` adds back, removes and changes (`spec.ports`). */
export function fieldChanges(kind: RestorableKind, from: SpecFields, to: SpecFields): { added: string[]; removed: string[]; changed: string[] } {
  const a = normalise(kind, from);
  const b = normalise(kind, to);
  const out = { added: [] as string[], removed: [] as string[], changed: [] as string[] };
  for (const f of FIELD_SETS[kind]) {
    const inA = a[f] !== undefined;
    const inB = b[f] !== undefined;
    if (!inA && inB) out.added.push(`spec.${f}`);
    else if (inA && !inB) out.removed.push(`spec.${f}`);
    else if (inA && inB && canonical(a[f]) !== canonical(b[f])) out.changed.push(`spec.${f}`);
  }
  return out;
}

/** Bytes the fields take as JSON (for the annotation that keeps them for the undo). */
export const fieldsBytes = (f: SpecFields): number => Buffer.byteLength(JSON.stringify(f));

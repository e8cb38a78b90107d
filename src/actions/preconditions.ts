/**
 * Preconditions a JSON patch carries so the API server refuses it (422) when the object is no longer the
 * one the plan read. RFC 6902 `test` ops are checked against the stored object at write time, dry runs too.
 */
import type { KubeObject } from './types.js';

export interface TestOp {
  op: 'test';
  path: string;
  value: unknown;
}

/**
 * Same object (uid: not deleted and recreated) with the same spec (generation: the API server bumps it on
 * every spec change and only then, so status updates — pods starting and failing during an incident — do
 * not refuse the write). Any change refuses (resourceVersion) when the generation is unknown, or when the
 * object has no annotations: the change annotation then adds the whole map (stamp.ts), which would drop
 * annotations added since the plan.
 */
export function unchangedSpecTests(before: KubeObject): TestOp[] {
  const m = before.metadata ?? {};
  const anyChange = m.generation === undefined || m.annotations === undefined;
  return [
    ...(m.uid ? [{ op: 'test' as const, path: '/metadata/uid', value: m.uid }] : []),
    ...(m.generation !== undefined ? [{ op: 'test' as const, path: '/metadata/generation', value: m.generation }] : []),
    ...(anyChange && m.resourceVersion ? [{ op: 'test' as const, path: '/metadata/resourceVersion', value: m.resourceVersion }] : []),
  ];
}

/** A map key as a JSON-pointer segment (RFC 6901): `kubectl.kubernetes.io/restartedAt` → `kubectl.kubernetes.io~1restartedAt`. */
export const pointerKey = (key: string): string => key.replaceAll('~', '~0').replaceAll('/', '~1');

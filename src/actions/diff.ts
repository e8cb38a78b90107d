/**
 * The exact change as the card shows it: the fields that differ between the object before and after,
 * as readable paths (`spec.template.spec.containers[checkout].image: …:1.14.2 → …:1.14.1`).
 * Lists of named items (containers, env, ports) are matched by name. Environment variable values are
 * masked: a template diff must not carry a password to Slack.
 */
import type { FieldChange, KubeObject } from './types.js';

/** Server-owned bookkeeping that is not part of the change. */
const IGNORED = new Set(['status', 'metadata.managedFields', 'metadata.resourceVersion', 'metadata.generation', 'metadata.uid', 'metadata.creationTimestamp']);
export const MASKED = '‹masked›';

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date);
}

function named(list: unknown[]): boolean {
  return list.length > 0 && list.every((x) => isObject(x) && typeof x['name'] === 'string');
}

function plain(v: unknown): unknown {
  return v instanceof Date ? v.toISOString() : v;
}

function walk(before: unknown, after: unknown, path: string, envValue: boolean, out: FieldChange[]): void {
  if (IGNORED.has(path)) return;
  const b = plain(before);
  const a = plain(after);
  // A map that appears or disappears is shown leaf by leaf, like any other change.
  if ((isObject(b) || b === undefined) && (isObject(a) || a === undefined) && (b !== undefined || a !== undefined) && !envValue) {
    const bo = (b ?? {}) as Record<string, unknown>;
    const ao = (a ?? {}) as Record<string, unknown>;
    for (const key of new Set([...Object.keys(bo), ...Object.keys(ao)])) walk(bo[key], ao[key], path ? `${path}.${key}` : key, false, out);
    return;
  }
  if (isObject(b) && isObject(a)) {
    for (const key of new Set([...Object.keys(b), ...Object.keys(a)])) walk(b[key], a[key], path ? `${path}.${key}` : key, false, out);
    return;
  }
  if (Array.isArray(b) && Array.isArray(a) && named(b) && named(a)) {
    const byName = (l: unknown[]) => new Map(l.map((x) => [(x as { name: string }).name, x]));
    const bm = byName(b);
    const am = byName(a);
    const isEnv = path.endsWith('.env');
    for (const name of new Set([...bm.keys(), ...am.keys()])) walk(bm.get(name), am.get(name), `${path}[${name}]`, isEnv, out);
    return;
  }
  if (JSON.stringify(b) === JSON.stringify(a)) return;
  if (envValue && isObject(b) !== isObject(a)) {
    out.push({ path, before: b === undefined ? undefined : '(variable)', after: a === undefined ? undefined : '(variable)' });
    return;
  }
  const mask = envValue || /\.env\[[^\]]+\]\.value$/.test(path);
  out.push({ path, before: mask && b !== undefined ? MASKED : b, after: mask && a !== undefined ? MASKED : a });
}

export function diffObjects(before: KubeObject | undefined, after: KubeObject | undefined): FieldChange[] {
  const out: FieldChange[] = [];
  walk(before ?? {}, after ?? {}, '', false, out);
  return out;
}

function show(v: unknown): string {
  if (v === undefined) return '(unset)';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** One line per field: `spec.replicas: 0 → 3`. */
export function renderChanges(changes: FieldChange[]): string[] {
  return changes.map((c) => `${c.path}: ${show(c.before)} → ${show(c.after)}`);
}

/**
 * The patch formats kube-apiserver accepts on PATCH: RFC 6902 JSON Patch, RFC 7386 merge patch, and
 * strategic merge patch (treated here as a merge patch whose lists replace, which is what it does for
 * every list without a patch-merge key).
 */
import { badRequest, patchNotApplied, unsupportedMediaType } from './status.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export const JSON_PATCH = 'application/json-patch+json';
export const MERGE_PATCH = 'application/merge-patch+json';
export const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';
export const APPLY_PATCH = 'application/apply-patch+yaml';

function isObject(v: unknown): v is Record<string, Json> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function clone<T>(value: T): T {
  return structuredClone(value);
}

/** RFC 7386: null deletes, objects merge recursively, everything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return clone(patch);
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith('$')) continue; // strategic-merge directives ($patch, $retainKeys…)
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

function decodePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw patchNotApplied(`invalid JSON pointer "${pointer}"`);
  return pointer
    .slice(1)
    .split('/')
    .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function parentOf(doc: unknown, path: string[], op: string): { parent: Record<string, unknown> | unknown[]; key: string } {
  let cur: unknown = doc;
  for (const part of path.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[Number(part)];
    else if (isObject(cur)) cur = cur[part];
    else cur = undefined;
    if (cur === undefined) throw patchNotApplied(`${op} operation does not apply: doc is missing path: /${path.join('/')}`);
  }
  if (!Array.isArray(cur) && !isObject(cur)) throw patchNotApplied(`${op} operation does not apply: doc is missing path: /${path.join('/')}`);
  return { parent: cur, key: path[path.length - 1]! };
}

function getAt(doc: unknown, path: string[]): unknown {
  let cur: unknown = doc;
  for (const part of path) {
    if (Array.isArray(cur)) cur = cur[Number(part)];
    else if (isObject(cur)) cur = cur[part];
    else return undefined;
  }
  return cur;
}

/** JSON equality, map keys in any order (what `test` compares). */
function sameJson(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => sameJson(v, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && sameJson(a[k], b[k]));
  }
  return a === b;
}

interface Operation {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

/**
 * RFC 6902 on a copy of `doc`. Like kube-apiserver: a body that is not a list of operations is 400; an
 * operation that does not apply (a failed `test`, a missing path) is 422 Invalid with a generic message.
 */
export function jsonPatch(doc: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops)) throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  let out = clone(doc);
  for (const raw of ops as Operation[]) {
    const path = decodePointer(raw.path);
    const add = (value: unknown): void => {
      if (path.length === 0) {
        out = clone(value);
        return;
      }
      const { parent, key } = parentOf(out, path, raw.op);
      if (Array.isArray(parent)) parent.splice(key === '-' ? parent.length : Number(key), 0, clone(value));
      else parent[key] = clone(value);
    };
    const remove = (p: string[]): unknown => {
      const { parent, key } = parentOf(out, p, raw.op);
      const existing = Array.isArray(parent) ? parent[Number(key)] : parent[key];
      if (existing === undefined) throw patchNotApplied(`${raw.op} operation does not apply: doc is missing path: ${raw.path}`);
      if (Array.isArray(parent)) parent.splice(Number(key), 1);
      else delete parent[key];
      return existing;
    };
    switch (raw.op) {
      case 'add':
        add(raw.value);
        break;
      case 'remove':
        remove(path);
        break;
      case 'replace':
        remove(path);
        add(raw.value);
        break;
      case 'move':
        add(remove(decodePointer(raw.from ?? '')));
        break;
      case 'copy':
        add(getAt(out, decodePointer(raw.from ?? '')));
        break;
      case 'test':
        if (!sameJson(getAt(out, path), raw.value))
          throw patchNotApplied(`testing value ${raw.path} failed: test failed`);
        break;
      default:
        throw patchNotApplied(`Unexpected kind: ${raw.op}`);
    }
  }
  return out;
}

/** Applies a PATCH body by its Content-Type (parameters such as `; charset=utf-8` ignored). */
export function applyPatch(doc: unknown, contentType: string, body: unknown): unknown {
  const type = contentType.split(';')[0]!.trim();
  switch (type) {
    case JSON_PATCH:
      return jsonPatch(doc, body);
    case MERGE_PATCH:
    case STRATEGIC_MERGE_PATCH:
      return mergePatch(doc, body);
    default:
      throw unsupportedMediaType(type);
  }
}

/**
 * Offline structural validation of Kubernetes objects against the OpenAPI models @kubernetes/client-node
 * generates (OpenAPI spec release-1.36): every field must be one the API knows (as `kubectl apply
 * --validate=strict` demands), of the model's type, recursively; required fields (non-optional in the
 * generated .d.ts) must be present. Not covered: formats and enums the models do not carry (e.g. a
 * protocol "TCPX", a malformed CIDR or quantity), defaulting, cross-field rules and admission (Pod
 * Security, RBAC escalation checks), and CRDs.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as k8s from '@kubernetes/client-node';

interface Attribute {
  baseName: string;
  type: string;
}
type Model = { getAttributeTypeMap(): Attribute[] };

const models = k8s as unknown as Record<string, Model | undefined>;
const modelsDir = join(dirname(createRequire(import.meta.url).resolve('@kubernetes/client-node')), 'gen', 'models');
const requiredCache = new Map<string, Set<string>>();

/** Fields the generated TypeScript declares without `?`: required by the API schema. */
function requiredOf(model: string): Set<string> {
  let req = requiredCache.get(model);
  if (!req) {
    const dts = readFileSync(join(modelsDir, `${model}.d.ts`), 'utf8');
    req = new Set([...dts.matchAll(/^ {4}'([A-Za-z0-9_$]+)': /gm)].map((m) => m[1]!));
    requiredCache.set(model, req);
  }
  return req;
}

// Quantities (resource amounts, sizes) are int-or-string in the API, typed string in the models.
const QUANTITY = /^(V1ResourceRequirements\.(limits|requests)|V1VolumeResourceRequirements\.(limits|requests)|V1EmptyDirVolumeSource\.sizeLimit)$/;

/** apiVersion + kind → the model class name, e.g. apps/v1 Deployment → V1Deployment. */
export function modelFor(apiVersion: string, kind: string): string | undefined {
  const version = apiVersion.split('/').pop()!;
  const name = `${version[0]!.toUpperCase()}${version.slice(1)}${kind}`;
  return models[name]?.getAttributeTypeMap ? name : undefined;
}

function check(value: unknown, type: string, path: string, out: string[], quantity = false): void {
  if (value === null || value === undefined) return;
  const t = typeof value;
  const arr = /^Array<(.+)>$/.exec(type);
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (arr) {
    if (!Array.isArray(value)) return void out.push(`${path}: expected an array`);
    value.forEach((v, i) => check(v, arr[1]!, `${path}[${i}]`, out));
  } else if (map) {
    if (t !== 'object' || Array.isArray(value)) return void out.push(`${path}: expected a map`);
    for (const [k, v] of Object.entries(value as object)) check(v, map[1]!, `${path}.${k}`, out, quantity);
  } else if (type === 'string') {
    if (t !== 'string' && !(quantity && t === 'number')) out.push(`${path}: expected a string, got ${t} ${JSON.stringify(value)}`);
  } else if (type === 'number') {
    if (t !== 'number') out.push(`${path}: expected a number, got ${t}`);
  } else if (type === 'boolean') {
    if (t !== 'boolean') out.push(`${path}: expected a boolean, got ${t}`);
  } else if (type === 'IntOrString') {
    if (t !== 'number' && t !== 'string') out.push(`${path}: expected an int or a string`);
  } else if (type === 'Date') {
    if (t !== 'string' && !(value instanceof Date)) out.push(`${path}: expected a timestamp`);
  } else if (type === 'any' || type === 'object') {
    // free-form (e.g. CRD schemas, RawExtension)
  } else {
    const model = models[type];
    if (!model?.getAttributeTypeMap) return void out.push(`${path}: no model ${type} to check against`);
    if (t !== 'object' || Array.isArray(value)) return void out.push(`${path}: expected an object (${type})`);
    const attrs = new Map(model.getAttributeTypeMap().map((a) => [a.baseName, a]));
    for (const [k, v] of Object.entries(value as object)) {
      const a = attrs.get(k);
      if (!a) out.push(`${path}: unknown field "${k}" (${type})`);
      else check(v, a.type, `${path}.${k}`, out, QUANTITY.test(`${type}.${k}`));
    }
    for (const r of requiredOf(type)) if (!(r in (value as object))) out.push(`${path}: missing required field "${r}" (${type})`);
  }
}

/** Problems with one object (empty: it matches its model). */
export function validateObject(obj: { apiVersion?: string; kind?: string }): string[] {
  if (!obj.apiVersion || !obj.kind) return ['apiVersion and kind are required'];
  const model = modelFor(obj.apiVersion, obj.kind);
  if (!model) return [`${obj.apiVersion} ${obj.kind}: no model in @kubernetes/client-node`];
  const out: string[] = [];
  check(obj, model, obj.kind, out);
  return out;
}

/**
 * Label and field selectors with the real API server's grammar and its refusals: an unsupported
 * field label is a 400 (`field label not supported: …`), so code under test that relies on a field
 * the real server would reject fails here too.
 */

export type Labels = Record<string, string>;

type Requirement =
  | { op: 'eq' | 'neq'; key: string; value: string }
  | { op: 'in' | 'notin'; key: string; values: string[] }
  | { op: 'exists' | 'notexists'; key: string };

export class SelectorError extends Error {}

/** Splits on commas that are not inside `( … )`. */
function splitTopLevel(selector: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of selector) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += ch;
  }
  parts.push(current);
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

function parseRequirement(term: string): Requirement {
  const set = /^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(term);
  if (set) {
    const values = set[3]!.split(',').map((v) => v.trim()).filter((v) => v !== '');
    return { op: set[2] as 'in' | 'notin', key: set[1]!, values };
  }
  const cmp = /^([^=!\s]+)\s*(==|!=|=)\s*(\S*)$/.exec(term);
  if (cmp) return { op: cmp[2] === '!=' ? 'neq' : 'eq', key: cmp[1]!, value: cmp[3]! };
  const not = /^!\s*(\S+)$/.exec(term);
  if (not) return { op: 'notexists', key: not[1]! };
  if (/^[A-Za-z0-9._/-]+$/.test(term)) return { op: 'exists', key: term };
  throw new SelectorError(`unable to parse requirement: ${term}`);
}

function matches(req: Requirement, labels: Labels): boolean {
  const has = Object.hasOwn(labels, req.key);
  const value = labels[req.key];
  switch (req.op) {
    case 'eq':
      return has && value === req.value;
    case 'neq':
      return !has || value !== req.value;
    case 'in':
      return has && req.values.includes(value!);
    case 'notin':
      return !has || !req.values.includes(value!);
    case 'exists':
      return has;
    case 'notexists':
      return !has;
  }
}

/** Compiles `a=b,c in (x,y),!d` into a predicate over an object's labels. */
export function parseLabelSelector(selector: string): (labels: Labels | undefined) => boolean {
  const reqs = splitTopLevel(selector).map(parseRequirement);
  return (labels) => reqs.every((r) => matches(r, labels ?? {}));
}

/** Field labels each kind supports, as the real API server registers them. */
const FIELD_LABELS: Record<string, string[]> = {
  Event: [
    'involvedObject.kind',
    'involvedObject.namespace',
    'involvedObject.name',
    'involvedObject.uid',
    'involvedObject.apiVersion',
    'involvedObject.resourceVersion',
    'involvedObject.fieldPath',
    'reason',
    'reportingComponent',
    'source',
    'type',
  ],
  Pod: [
    'spec.nodeName',
    'spec.restartPolicy',
    'spec.schedulerName',
    'spec.serviceAccountName',
    'spec.hostNetwork',
    'status.phase',
    'status.podIP',
    'status.nominatedNodeName',
  ],
  Secret: ['type'],
  Node: ['spec.unschedulable'],
  Namespace: ['status.phase'],
  ReplicaSet: ['status.replicas'],
  Job: ['status.successful'],
};

function fieldValue(obj: Record<string, unknown>, path: string): string {
  if (path === 'source') {
    const source = obj['source'] as { component?: string } | undefined;
    return source?.component ?? '';
  }
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return '';
    cur = (cur as Record<string, unknown>)[part];
  }
  if (cur === undefined || cur === null) return '';
  return String(cur);
}

/** Compiles `metadata.name=x,status.phase!=Running` for a kind; throws SelectorError like the API's 400. */
export function parseFieldSelector(selector: string, kind: string): (obj: Record<string, unknown>) => boolean {
  const allowed = ['metadata.name', 'metadata.namespace', ...(FIELD_LABELS[kind] ?? [])];
  const reqs = splitTopLevel(selector).map((term) => {
    const m = /^([^=!\s]+)\s*(==|!=|=)\s*(.*)$/.exec(term);
    if (!m) throw new SelectorError(`invalid selector: '${selector}'; can't understand '${term}'`);
    const key = m[1]!;
    if (!allowed.includes(key)) throw new SelectorError(`field label not supported: ${key}`);
    return { key, negate: m[2] === '!=', value: m[3]!.trim() };
  });
  return (obj) => reqs.every((r) => (fieldValue(obj, r.key) === r.value) !== r.negate);
}

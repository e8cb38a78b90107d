import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import type { z } from 'zod';
import { PolicyError } from './errors.js';
import { policyFileSchema, type PolicyFile } from './schema.js';
import type { Policy, PolicyLimits, PolicyRule } from './types.js';

/**
 * Parse and validate policy YAML. Throws one `PolicyError` listing every problem, each as
 * `<source>:<line>: <path>: <message>`, e.g. `policy.yaml:14: rules[1].approvals: expected a whole number ≥ 1`.
 */
export function parsePolicy(text: string, source: string): Policy {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  if (doc.errors.length) {
    throw new PolicyError(
      source,
      doc.errors.map((e) => `${source}:${Math.max(1, lineCounter.linePos(e.pos[0]).line)}: ${e.message.split('\n')[0]}`),
    );
  }
  const parsed = policyFileSchema.safeParse(doc.toJS() ?? {});
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => describeIssue(issue, doc, lineCounter, source));
    throw new PolicyError(source, problems.sort((a, b) => a.line - b.line).map((p) => p.text));
  }
  return compile(parsed.data, source, (path) => lineOf(doc, lineCounter, path));
}

function describeIssue(issue: z.core.$ZodIssue, doc: Document, lc: LineCounter, source: string): { line: number; text: string } {
  let path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
  let message = issue.message;
  if (issue.code === 'unrecognized_keys') {
    // Point at the first unknown key itself rather than at the mapping holding it.
    path = [...path, issue.keys[0] ?? ''];
    message = `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')}`;
  } else if (issue.code !== 'custom' && path.length > 0 && !doc.hasIn(path)) {
    message = `is required; ${message}`;
  }
  const line = lineOf(doc, lc, path);
  return { line, text: `${source}:${line}: ${formatPath(path) || '(top level)'}: ${message}` };
}

/** `rules[1].limits.perTarget` */
export function formatPath(path: readonly (string | number)[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/**
 * The line of the deepest node along `path` that exists: the key's line for a mapping entry, the item's
 * line for a list entry, the parent's line when the key is missing.
 */
function lineOf(doc: Document, lc: LineCounter, path: readonly (string | number)[]): number {
  let node: unknown = doc.contents;
  let offset = (doc.contents as { range?: [number, number, number] } | null)?.range?.[0] ?? 0;
  for (const step of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(step));
      if (!pair) break;
      offset = (isScalar(pair.key) && pair.key.range?.[0]) || offset;
      node = pair.value;
    } else if (isSeq(node) && typeof step === 'number') {
      const item = node.items[step] as { range?: [number, number, number] } | undefined;
      if (!item) break;
      offset = item.range?.[0] ?? offset;
      node = item;
    } else {
      break;
    }
  }
  return Math.max(1, lc.linePos(offset).line);
}

function mergeLimits(base: PolicyLimits, over: PolicyLimits | undefined): PolicyLimits {
  return { ...base, ...over };
}

function toLimits(l: PolicyFile['defaults']['limits'] | undefined): PolicyLimits | undefined {
  if (!l) return undefined;
  const out: PolicyLimits = {};
  if (l.perTarget) out.perTarget = { max: l.perTarget.max, windowMs: l.perTarget.window };
  if (l.maxPods !== undefined) out.maxPods = l.maxPods;
  if (l.maxWorkloads !== undefined) out.maxWorkloads = l.maxWorkloads;
  return out;
}

/** Apply defaults to every rule, so evaluation never has to look anything up twice. */
function compile(file: PolicyFile, source: string, line: (path: (string | number)[]) => number): Policy {
  const d = file.defaults;
  const defaultLimits = toLimits(d.limits) ?? {};
  const rules: PolicyRule[] = file.rules.map((r, i) => ({
    id: r.name ?? `rules[${i}]`,
    line: line(['rules', i]),
    match: r.match,
    allowed: r.allowed,
    reason: r.reason,
    approvals: r.approvals ?? d.approvals,
    approverGroups: r.approverGroups ?? d.approverGroups ?? [],
    selfApprove: r.selfApprove ?? d.selfApprove,
    selfApproveMaxRisk: r.selfApproveMaxRisk ?? d.selfApproveMaxRisk,
    maxRisk: r.maxRisk,
    limits: mergeLimits(defaultLimits, toLimits(r.limits)),
  }));
  return {
    source,
    environments: file.environments,
    neverWrite: file.neverWrite,
    rules,
    incident: {
      mutationBudget: file.incident.mutationBudget,
      loop: { sameActionSameTarget: file.incident.loop.sameActionSameTarget, windowMs: file.incident.loop.window },
    },
    admins: file.admins,
  };
}

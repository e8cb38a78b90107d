/**
 * Grades the first card of a scenario run from the stored, structured hypotheses (never from rendered
 * text): the leading supported hypothesis must come from the expected analyzer, name the expected
 * component, carry the expected facts and affected components, propose the expected mitigation; the
 * expected red herrings must be ruled out and the noise marked unrelated.
 */
import { z } from 'zod';
import type { Db } from '../../src/store/db.js';

const ref = z.object({ kind: z.string(), namespace: z.string().optional(), name: z.string() });
export const expectedSchema = z.object({
  analyzer: z.string().optional(),
  component: ref,
  facts: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).default({}),
  affected: z.array(ref).default([]),
  unrelated: z.array(ref).default([]),
  ruled_out: z.array(z.string()).default([]),
  mitigation: z.object({ action: z.string(), params: z.record(z.string(), z.unknown()).default({}) }).optional(),
  wrong_mitigations: z.array(z.string()).default([]),
  /** True when no deterministic analyzer covers the cause: only the model loop can pass it. */
  model_needed: z.boolean().default(false),
});
export type Expected = z.infer<typeof expectedSchema>;

type Ref = z.infer<typeof ref>;
const sameRef = (a: Ref, b: { kind?: string | null; namespace?: string | null; name?: string | null }) =>
  a.kind.toLowerCase() === (b.kind ?? '').toLowerCase() &&
  (a.namespace === undefined || a.namespace === (b.namespace ?? undefined)) &&
  (a.name.endsWith('*') ? (b.name ?? '').startsWith(a.name.slice(0, -1)) : a.name === b.name);

function sameValue(expected: unknown, actual: unknown): boolean {
  if (actual === undefined) return false;
  const te = typeof expected === 'string' ? Date.parse(expected) : NaN;
  const ta = typeof actual === 'string' ? Date.parse(actual) : NaN;
  if (typeof expected === 'string' && /\d{4}-\d\d-\d\dT/.test(expected) && !Number.isNaN(te) && !Number.isNaN(ta)) return Math.abs(te - ta) < 1000;
  return String(expected) === String(actual);
}

export interface Grade {
  pass: boolean;
  failures: string[];
  leading?: { label: string; analyzer: string; title: string };
}

export async function gradeFirstCard(db: Db, incidentId: string, expected: Expected): Promise<Grade> {
  const hyps = await db.hypothesis.findMany({ where: { investigation: { incidentId } }, orderBy: { ordinal: 'asc' } });
  const failures: string[] = [];
  const leading = hyps.filter((h) => h.status === 'supported').sort((a, b) => b.confidence - a.confidence)[0];
  if (!leading) return { pass: false, failures: [`no supported hypothesis (have: ${hyps.map((h) => `${h.label} ${h.analyzer} ${h.status}`).join('; ') || 'none'})`] };

  if (expected.analyzer && leading.analyzer !== expected.analyzer) failures.push(`leading hypothesis from ${leading.analyzer}, expected ${expected.analyzer} (${leading.title})`);
  if (!sameRef(expected.component, { kind: leading.componentKind, namespace: leading.componentNs, name: leading.componentName }))
    failures.push(`component ${leading.componentKind}/${leading.componentNs}/${leading.componentName}, expected ${expected.component.kind}/${expected.component.namespace}/${expected.component.name}`);
  const facts = leading.facts ? (JSON.parse(leading.facts) as Record<string, unknown>) : {};
  for (const [k, v] of Object.entries(expected.facts)) if (!sameValue(v, facts[k])) failures.push(`fact ${k} = ${JSON.stringify(facts[k])}, expected ${JSON.stringify(v)}`);
  const affected = leading.affected ? (JSON.parse(leading.affected) as Ref[]) : [];
  for (const a of expected.affected) if (!affected.some((x) => sameRef(a, x))) failures.push(`scope misses ${a.kind}/${a.namespace ?? ''}/${a.name} (has ${affected.map((x) => `${x.kind}/${x.name}`).join(', ') || 'nothing'})`);
  for (const u of expected.unrelated) {
    const h = hyps.find((x) => sameRef(u, { kind: x.componentKind, namespace: x.componentNs, name: x.componentName }));
    if (!h) failures.push(`noise ${u.kind}/${u.namespace ?? ''}/${u.name} not listed`);
    else if (h.status !== 'unrelated' && h.status !== 'ruled_out') failures.push(`noise ${u.name} is ${h.status}, expected unrelated`);
  }
  for (const analyzer of expected.ruled_out) {
    const h = hyps.find((x) => x.analyzer === analyzer);
    if (!h) failures.push(`no ${analyzer} hypothesis to rule out`);
    else if (h.status !== 'ruled_out' && h.status !== 'unrelated') failures.push(`${analyzer} hypothesis is ${h.status}, expected ruled out`);
  }
  if (expected.mitigation) {
    const m = leading.mitigation ? (JSON.parse(leading.mitigation) as { action: string; params: Record<string, unknown> }) : undefined;
    if (!m) failures.push(`no mitigation, expected ${expected.mitigation.action}`);
    else {
      if (m.action !== expected.mitigation.action) failures.push(`mitigation ${m.action}, expected ${expected.mitigation.action}`);
      for (const [k, v] of Object.entries(expected.mitigation.params)) if (!sameValue(v, m.params[k])) failures.push(`mitigation ${k} = ${JSON.stringify(m.params[k])}, expected ${JSON.stringify(v)}`);
    }
    if (m && expected.wrong_mitigations.includes(m.action)) failures.push(`mitigation ${m.action} is a wrong one for this scenario`);
  }
  return { pass: failures.length === 0, failures, leading: { label: leading.label, analyzer: leading.analyzer, title: leading.title } };
}

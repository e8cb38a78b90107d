import { z } from 'zod';

/**
 * SREGym-style grading: nine yes/no questions, three per equally weighted dimension — fault
 * localisation, fault characterisation, failure scope — answered from the STRUCTURED diagnosis (the
 * stored hypotheses' component, analyzer, facts, affected components, statuses and cited evidence),
 * never by searching free text. A diagnosis passes at 7 of 9, so it cannot pass while failing a whole
 * dimension.
 */

const ref = z.object({ kind: z.string(), namespace: z.string().optional(), name: z.string() });
export type Ref = z.infer<typeof ref>;

/** The expected diagnosis of a scenario (`expected:` in scenario.yaml; see docs/scenarios.md). */
export const expectedSchema = z.object({
  /** The analyzer (or, for model diagnoses, the category) whose finding must lead. */
  analyzer: z.string().optional(),
  category: z.string().optional(),
  /** The fault family (docs/fault-families.md) the leading finding must claim; independent of analyzer names. */
  family: z.string().optional(),
  /** Other families that describe the same fault acceptably (e.g. `crash-loop` for a bad release that crashes). */
  also_accept: z.array(z.string()).default([]),
  component: ref,
  facts: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).default({}),
  affected: z.array(ref).default([]),
  unrelated: z.array(ref).default([]),
  /** Red herrings that must be ruled out: an analyzer or family name, or the component a look-alike hypothesis blames. */
  ruled_out: z.array(z.union([z.string(), ref])).default([]),
  mitigation: z.object({ action: z.string(), params: z.record(z.string(), z.unknown()).default({}) }).optional(),
  wrong_mitigations: z.array(z.string()).default([]),
  /** True when no deterministic analyzer covers the cause: only the model loop can pass it. */
  model_needed: z.boolean().default(false),
}).refine((e) => e.analyzer || e.category || e.family, { message: 'expected needs a family (or an analyzer or category)' });
export type Expected = z.infer<typeof expectedSchema>;

/** One stored hypothesis, as the grader reads it. */
export interface GradedHypothesis {
  label: string;
  analyzer: string;
  /** The fault family the finding claims (docs/fault-families.md), when its analyzer names one. */
  family?: string;
  /** origin | victim | unrelated, from the topology walk. */
  role?: string;
  /** The path from the alerted component, e.g. `edge → frontend → quotes`. */
  path?: string;
  status: string;
  confidence: number;
  title: string;
  component?: Ref;
  facts: Record<string, unknown>;
  affected: Ref[];
  mitigation?: { action: string; params: Record<string, unknown>; target?: { kind?: string; namespace?: string; name?: string } };
  /** Citations of its supporting evidence (object paths or queries). */
  supportingCitations: string[];
}

export const QUESTIONS = {
  'loc.kind': 'Is the faulty component’s kind right?',
  'loc.namespace': 'Is the faulty component’s namespace right?',
  'loc.name': 'Is the faulty component’s name right?',
  'char.mechanism': 'Is what went wrong (the failure mechanism) right?',
  'char.details': 'Are the concrete details (key, value, port, image, limit, actor) right?',
  'char.evidence': 'Is the diagnosis backed by cited evidence about the faulty component or its change?',
  'scope.affected': 'Are the affected services and endpoints stated?',
  'scope.noise': 'Is the background noise recognised as unrelated (not blamed)?',
  'scope.focus': 'Are the red herrings ruled out, and nothing else blamed?',
} as const;
export type QuestionId = keyof typeof QUESTIONS;

export interface DiagnosisGrade {
  answers: Record<QuestionId, boolean>;
  score: number;
  pass: boolean;
  mitigation: 'right' | 'wrong' | 'none';
  leading?: string;
  /** Why each "no" is a no. */
  notes: string[];
}

export const PASS_SCORE = 7;

export const sameRef = (a: Ref, b: Partial<Ref> | undefined) =>
  !!b &&
  a.kind.toLowerCase() === (b.kind ?? '').toLowerCase() &&
  (a.namespace === undefined || a.namespace === b.namespace) &&
  (a.name.endsWith('*') ? (b.name ?? '').startsWith(a.name.slice(0, -1)) : a.name === b.name);

/**
 * Equal as a responder would judge it, since authors and analyzers write the same fact differently:
 * - ISO times equal within a second (scenario times are shifted to the run's clock);
 * - numbers within 5% (`0.18` vs `0.181`, `420` vs `421`), and `"512Mi"`-style strings exactly;
 * - names with or without their qualifiers: `coredns` = `kube-system/coredns` = `ConfigMap/coredns`,
 *   `registry/app:1.2` = `app=registry/app:1.2` (a container-qualified image), letter case ignored;
 * - comma-separated lists in any order (`a,b` = `b, a`);
 * - a log line or message equal when one contains the other, or when most of its words (numbers and ids
 *   masked) are the same.
 */
export function sameValue(expected: unknown, actual: unknown): boolean {
  if (actual === undefined || actual === null) return false;
  if (typeof expected === 'string' && /^\d{4}-\d\d-\d\dT/.test(expected) && typeof actual === 'string') {
    const te = Date.parse(expected);
    const ta = Date.parse(actual);
    if (!Number.isNaN(te) && !Number.isNaN(ta)) return Math.abs(te - ta) < 1000;
  }
  const e = String(expected).trim();
  const a = String(actual).trim();
  if (e === a || e.toLowerCase() === a.toLowerCase()) return true;
  const en = Number(e);
  const an = Number(a);
  if (e !== '' && a !== '' && Number.isFinite(en) && Number.isFinite(an)) return Math.abs(en - an) <= Math.max(Math.abs(en) * 0.05, 1e-9);
  const bare = (v: string) => v.toLowerCase().replace(/^[\w.-]+=/, '').split('/').pop()!;
  if (!/\s/.test(e) && !/\s/.test(a) && bare(e) === bare(a)) return true;
  if (e.includes(',') || a.includes(',')) {
    const list = (v: string) => v.split(',').map((x) => bare(x.trim())).filter(Boolean).sort().join(',');
    if (list(e) === list(a)) return true;
  }
  if (e.length >= 16 && a.length >= 16) {
    const norm = (v: string) => v.toLowerCase().replace(/<[^>]*>|\*/g, ' ').replace(/[0-9a-f]{8,}|\d+(\.\d+)?/g, ' ').replace(/[^a-z]+/g, ' ').trim();
    const ne = norm(e);
    const na = norm(a);
    if (ne && na && (na.includes(ne) || ne.includes(na))) return true;
    const we = new Set(ne.split(' ').filter((w) => w.length > 2));
    const wa = new Set(na.split(' ').filter((w) => w.length > 2));
    const shared = [...we].filter((w) => wa.has(w)).length;
    if (we.size >= 3 && shared / we.size >= 0.7) return true;
  }
  return false;
}

/** The hypothesis the card leads with: the most confident supported one. */
export function leadingHypothesis(hs: GradedHypothesis[]): GradedHypothesis | undefined {
  return hs.filter((h) => h.status === 'supported').sort((a, b) => b.confidence - a.confidence)[0];
}

export function gradeDiagnosis(hs: GradedHypothesis[], e: Expected): DiagnosisGrade {
  const notes: string[] = [];
  const lead = leadingHypothesis(hs);
  const no = (q: QuestionId, why: string) => (notes.push(`${q}: ${why}`), false);
  const c = lead?.component;

  const answers: Record<QuestionId, boolean> = {
    'loc.kind': c ? c.kind.toLowerCase() === e.component.kind.toLowerCase() || no('loc.kind', `${c.kind}, expected ${e.component.kind}`) : no('loc.kind', 'no supported hypothesis'),
    'loc.namespace': c ? e.component.namespace === undefined || c.namespace === e.component.namespace || no('loc.namespace', `${c.namespace}, expected ${e.component.namespace}`) : no('loc.namespace', 'no supported hypothesis'),
    'loc.name': c ? sameRef({ ...e.component, kind: c.kind, namespace: c.namespace }, c) || no('loc.name', `${c.name}, expected ${e.component.name}`) : no('loc.name', 'no supported hypothesis'),
    'char.mechanism': lead
      ? (e.analyzer ? lead.analyzer === e.analyzer : true) &&
        (e.category ? lead.facts['category'] === e.category : true) &&
        (e.family ? [e.family, ...e.also_accept].some((f) => f === lead.family || f === lead.analyzer || f === lead.facts['category']) : true)
        ? true
        : no('char.mechanism', `${lead.family ?? lead.analyzer}${lead.facts['category'] ? `/${String(lead.facts['category'])}` : ''}, expected ${e.family ?? e.analyzer ?? e.category}`)
      : no('char.mechanism', 'no supported hypothesis'),
    'char.details': lead
      ? Object.entries(e.facts).every(([k, v]) => sameValue(v, lead.facts[k])) ||
        no('char.details', Object.entries(e.facts).filter(([k, v]) => !sameValue(v, lead.facts[k])).map(([k, v]) => `${k}=${JSON.stringify(lead.facts[k])} (expected ${JSON.stringify(v)})`).join(', '))
      : no('char.details', 'no supported hypothesis'),
    'char.evidence': lead
      ? lead.supportingCitations.some((ref) => ref.includes(e.component.name.replace(/\*$/, '')) || /managedFields|query|\{|rate\(/.test(ref)) ||
        no('char.evidence', `no supporting evidence cites ${e.component.name}`)
      : no('char.evidence', 'no supported hypothesis'),
    'scope.affected': lead
      ? e.affected.every((a) => lead.affected.some((x) => sameRef(a, x))) ||
        no('scope.affected', `missing ${e.affected.filter((a) => !lead.affected.some((x) => sameRef(a, x))).map((a) => a.name).join(', ')}`)
      : no('scope.affected', 'no supported hypothesis'),
    'scope.noise': e.unrelated.every((u) => {
      const h = hs.find((x) => sameRef(u, x.component));
      return h && (h.status === 'unrelated' || h.status === 'ruled_out');
    }) || no('scope.noise', `noise not marked unrelated: ${e.unrelated.filter((u) => !hs.some((x) => sameRef(u, x.component) && (x.status === 'unrelated' || x.status === 'ruled_out'))).map((u) => u.name).join(', ')}`),
    'scope.focus': (() => {
      const cleared = (x: GradedHypothesis) => x.status === 'ruled_out' || x.status === 'unrelated';
      const notRuledOut = e.ruled_out
        .filter((r) => !hs.some((x) => cleared(x) && (typeof r === 'string' ? x.analyzer === r || x.family === r : sameRef(r, x.component))))
        .map((r) => (typeof r === 'string' ? r : `${r.kind}/${r.name}`));
      const blamedElsewhere = hs.filter(
        (x) => x.status === 'supported' && x !== lead && x.component && !sameRef(e.component, x.component) && !e.affected.some((a) => sameRef(a, x.component)),
      );
      if (notRuledOut.length === 0 && blamedElsewhere.length === 0) return true;
      return no('scope.focus', [notRuledOut.length ? `not ruled out: ${notRuledOut.join(', ')}` : '', blamedElsewhere.length ? `also blamed: ${blamedElsewhere.map((x) => `${x.component!.kind}/${x.component!.name}`).join(', ')}` : ''].filter(Boolean).join('; '));
    })(),
  };
  const score = Object.values(answers).filter(Boolean).length;
  const lm = lead?.mitigation;
  // What the approver approves is the action, its parameters and its target: an expected `name`,
  // `namespace` or `kind` is the proposal's target unless a parameter of that name says otherwise.
  const m = lm ? { ...lm, params: <Record<string, unknown>>{ ...(lm.target?.kind ? { kind: lm.target.kind } : {}), ...(lm.target?.namespace ? { namespace: lm.target.namespace } : {}), ...(lm.target?.name ? { name: lm.target.name } : {}), ...lm.params } } : undefined;
  const mitigation: DiagnosisGrade['mitigation'] = !m
    ? 'none'
    : e.wrong_mitigations.includes(m.action) || (e.mitigation && (m.action !== e.mitigation.action || !Object.entries(e.mitigation.params).every(([k, v]) => sameValue(v, m.params[k]))))
      ? 'wrong'
      : e.mitigation
        ? 'right'
        : 'wrong';
  return { answers, score, pass: score >= PASS_SCORE, mitigation, leading: lead ? `${lead.label} ${lead.analyzer}: ${lead.title}` : undefined, notes };
}

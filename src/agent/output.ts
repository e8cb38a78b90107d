/**
 * The model's output contract: it ends by calling `submit_diagnosis` with structured hypotheses. The
 * submission is checked with zod and against what the run actually saw (every citation must be one a
 * tool returned, a deterministic finding cited, or the change timeline listed), then becomes `Finding`s
 * with `analyzer: 'model'`. Weak support never makes a hypothesis `supported`.
 */
import { z } from 'zod';
import { formatComponent, type ComponentRef, type Evidence } from '../evidence/types.js';
import { ACTION_TYPES } from '../policy/types.js';
import type { Redactor } from '../redact/index.js';
import type { Finding, HypothesisStatus } from '../triage/types.js';
import { isInvalidToolArguments } from './providers/tool-input.js';
import type { CitationBook } from './toolbox.js';
import { toolInputSchema } from './toolbox.js';
import type { ModelTool } from './types.js';

export const SUBMIT_TOOL = 'submit_diagnosis';

/** The citation for a step of the model's own reasoning: allowed, but never support on its own. */
export const INFERENCE_CITATION = 'inference';

/**
 * What a submission is cut to before it is checked, stored or posted: a model that writes a novel, a
 * thousand hypotheses or a runaway title still leaves a board a person can read. The schema says the
 * same, so a submission checked without {@link clipSubmission} is held to it.
 */
export const SUBMISSION_LIMITS = {
  hypotheses: 12,
  summary: 1500,
  title: 200,
  mechanism: 1200,
  scope: 600,
  reason: 600,
  category: 64,
  evidence: 12,
  evidenceSummary: 400,
  affected: 12,
  facts: 24,
  factKey: 64,
  factValue: 300,
  refKind: 63,
  refNamespace: 63,
  refName: 253,
  command: 500,
  rationale: 600,
  /** Characters of a mitigation's params as JSON; more is no catalog action's parameters. */
  params: 2000,
  escalateReason: 600,
  couldNotAccess: 12,
  couldNotAccessItem: 300,
} as const;
const L = SUBMISSION_LIMITS;

/** One shared definition (`$defs`) in the submission's JSON schema, however often it is used. */
const componentRef = z
  .object({
    kind: z.string().min(1).max(L.refKind).describe('Kubernetes kind, Repository or FeatureFlag.'),
    namespace: z.string().min(1).max(L.refNamespace).optional().describe('Omit if cluster-scoped.'),
    name: z.string().min(1).max(L.refName),
  })
  .meta({ id: 'ComponentRef' });

const evidenceItem = z.object({
  stance: z.enum(['supports', 'refutes']),
  summary: z.string().min(1).max(L.evidenceSummary).describe('The fact, with its value.'),
  citation: z.string().min(1).describe(`A "cite", exactly, or "${INFERENCE_CITATION}".`),
});

const mitigation = z.object({
  action: z.enum(ACTION_TYPES),
  target: componentRef,
  params: z.record(z.string(), z.unknown()).describe('e.g. {"replicas": 3}'),
  command: z.string().min(1).max(L.command).describe('The equivalent command for a human.'),
  rationale: z.string().min(1).max(L.rationale),
});

const hypothesis = z.object({
  title: z.string().min(1).max(L.title).describe('One line: what happened.'),
  status: z.enum(['supported', 'open', 'inconclusive', 'ruled_out', 'unrelated']),
  confidence: z.number().min(0).max(1),
  component: componentRef.describe('The faulty component.'),
  category: z
    .string()
    .max(L.category)
    .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'kebab-case, e.g. disk-full')
    .describe('kebab-case, e.g. disk-full, clock-skew, dns-misconfigured.'),
  mechanism: z.string().min(1).max(L.mechanism).describe('What is wrong and why.'),
  facts: z
    .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
    .describe('Values that matter (limit, image, actor, time…), camelCase keys.'),
  scope: z.string().max(L.scope).describe('Who and what is affected.'),
  affected: z.array(componentRef).max(L.affected).describe('Faulty one first, then callers, Services, Ingresses.'),
  evidence: z.array(evidenceItem).max(L.evidence),
  reason: z.string().max(L.reason).optional().describe('Why ruled out or unrelated.'),
  mitigation: mitigation.optional(),
});

export const diagnosisSchema = z.object({
  hypotheses: z.array(hypothesis).min(1).max(L.hypotheses),
  summary: z.string().min(1).max(L.summary).describe('A few sentences for the thread.'),
  escalate: z
    .object({ reason: z.string().min(1).max(L.escalateReason), couldNotAccess: z.array(z.string().max(L.couldNotAccessItem)).max(L.couldNotAccess) })
    .optional()
    .describe('No cause found or access missing: why a human takes over.'),
});

export type Diagnosis = z.infer<typeof diagnosisSchema>;
export type DiagnosedHypothesis = Diagnosis['hypotheses'][number];

export const submitDiagnosisTool: ModelTool = {
  name: SUBMIT_TOOL,
  description: 'Submit the final diagnosis and end the investigation: once, when done or when told the budget is spent.',
  // Lengths and counts are not advertised: clipSubmission cuts a submission to them (with a note) before
  // it is validated, so the ~80 tokens they cost on every model call buy nothing.
  inputSchema: withoutBounds(toolInputSchema(diagnosisSchema)) as Record<string, unknown>,
};

function withoutBounds(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutBounds);
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(Object.entries(node as Record<string, unknown>).filter(([k]) => k !== 'maxLength' && k !== 'maxItems').map(([k, v]) => [k, withoutBounds(v)]));
}

export interface Uncited {
  index: number;
  citations: string[];
}

export type SubmissionCheck =
  | {
      ok: true;
      diagnosis: Diagnosis;
      /** With `salvage`: the hypotheses (by index) whose invented citations were dropped, with those citations. */
      uncited: Uncited[];
      /** The invented citations dropped (cut to 120 characters each). */
      invented: string[];
    }
  | {
      ok: false;
      errors: string[];
      /** Which rule failed: the arguments were no JSON object, the schema refused them, or citations were invented (only). */
      kind: 'malformed' | 'schema' | 'invented_citations' | 'rules';
      invented: string[];
    };

/**
 * Schema, then the rules zod cannot see: cited evidence behind every claim, citations the run saw.
 * `salvage` (the last chance, no repair round left): citations no tool returned are dropped instead of
 * failing the submission, when they are all that is wrong; the hypotheses that cited them are reported
 * in `uncited` (they are never `supported` and propose nothing, see {@link diagnosisToFindings}).
 */
export function checkSubmission(input: unknown, citations: CitationBook, opts: { salvage?: boolean } = {}): SubmissionCheck {
  if (isInvalidToolArguments(input)) return { ok: false, kind: 'malformed', errors: [input.error], invented: [] };
  const parsed = diagnosisSchema.safeParse(input);
  if (!parsed.success) {
    return { ok: false, kind: 'schema', errors: parsed.error.issues.slice(0, 20).map((i) => `${i.path.join('.') || '(input)'}: ${i.message}`), invented: [] };
  }
  const errors: string[] = [];
  const unseen: { i: number; j: number; citation: string; error: string }[] = [];
  let ruleErrors = 0;
  parsed.data.hypotheses.forEach((h, i) => {
    if (h.status === 'supported' && !h.evidence.some((e) => e.stance === 'supports')) {
      errors.push(`hypotheses.${i} ("${h.title}"): status "supported" needs at least one supporting evidence item with a citation`);
      ruleErrors += 1;
    }
    h.evidence.forEach((e, j) => {
      if (e.citation.trim() !== INFERENCE_CITATION && !citations.get(e.citation)) {
        const error = `hypotheses.${i}.evidence.${j}.citation: "${e.citation.slice(0, 200)}" was never returned by a tool or a finding; copy a "cite" value exactly`;
        errors.push(error);
        unseen.push({ i, j, citation: e.citation.slice(0, 120), error });
      }
    });
  });
  const invented = [...new Set(unseen.map((u) => u.citation))];
  if (errors.length === 0) return { ok: true, diagnosis: parsed.data, uncited: [], invented: [] };
  if (ruleErrors > 0) return { ok: false, kind: 'rules', errors, invented };
  if (!opts.salvage) return { ok: false, kind: 'invented_citations', errors, invented };
  const drop = new Set(unseen.map((u) => `${u.i}.${u.j}`));
  const diagnosis: Diagnosis = {
    ...parsed.data,
    hypotheses: parsed.data.hypotheses.map((h, i) => ({ ...h, evidence: h.evidence.filter((_, j) => !drop.has(`${i}.${j}`)) })),
  };
  const uncited = [...new Set(unseen.map((u) => u.i))].map((index) => ({ index, citations: [...new Set(unseen.filter((u) => u.i === index).map((u) => u.citation))] }));
  return { ok: true, diagnosis, uncited, invented };
}

/**
 * A submission cut to {@link SUBMISSION_LIMITS} (only values of the right type are touched; the schema
 * judges the rest): the first hypotheses, evidence items, affected components and facts, texts cut with
 * "…". A text is redacted before it is cut, so a cut never leaves half a secret its detector misses.
 * Citations are never cut (they must match what a tool returned). Says what was cut.
 */
export function clipSubmission(input: unknown, redactor: Redactor): { input: unknown; notes: string[] } {
  if (!isRecord(input) || isInvalidToolArguments(input)) return { input, notes: [] };
  let cutTexts = 0;
  const notes: string[] = [];
  const text = (v: unknown, max: number): unknown => {
    if (typeof v !== 'string' || v.length <= max) return v;
    const r = redactor.redactText(v);
    if (r.length <= max) return r;
    cutTexts += 1;
    return `${r.slice(0, max - 1)}…`;
  };
  const list = (v: unknown, max: number): unknown[] | undefined => (Array.isArray(v) ? v.slice(0, max) : undefined);
  const ref = (v: unknown): unknown =>
    isRecord(v) ? { ...v, kind: text(v['kind'], L.refKind), name: text(v['name'], L.refName), ...(v['namespace'] !== undefined ? { namespace: text(v['namespace'], L.refNamespace) } : {}) } : v;

  const out: Record<string, unknown> = { ...input, summary: text(input['summary'], L.summary) };
  const hyps = input['hypotheses'];
  if (Array.isArray(hyps)) {
    if (hyps.length > L.hypotheses) notes.push(`The model submitted ${hyps.length} hypotheses; only its first ${L.hypotheses} were kept.`);
    let trimmedLists = 0;
    out['hypotheses'] = hyps.slice(0, L.hypotheses).map((h: unknown) => {
      if (!isRecord(h)) return h;
      const c: Record<string, unknown> = {
        ...h,
        title: text(h['title'], L.title),
        mechanism: text(h['mechanism'], L.mechanism),
        scope: text(h['scope'], L.scope),
        component: ref(h['component']),
      };
      if (typeof h['category'] === 'string' && h['category'].length > L.category) {
        c['category'] = h['category'].slice(0, L.category).replace(/-+$/, '');
        cutTexts += 1;
      }
      if (h['reason'] !== undefined) c['reason'] = text(h['reason'], L.reason);
      const affected = list(h['affected'], L.affected);
      if (affected) {
        if ((h['affected'] as unknown[]).length > L.affected) trimmedLists += 1;
        c['affected'] = affected.map(ref);
      }
      const evidence = list(h['evidence'], L.evidence);
      if (evidence) {
        if ((h['evidence'] as unknown[]).length > L.evidence) trimmedLists += 1;
        c['evidence'] = evidence.map((e) => (isRecord(e) ? { ...e, summary: text(e['summary'], L.evidenceSummary) } : e));
      }
      const facts = h['facts'];
      if (isRecord(facts)) {
        const entries = Object.entries(facts);
        if (entries.length > L.facts) trimmedLists += 1;
        c['facts'] = Object.fromEntries(entries.slice(0, L.facts).map(([k, v]) => [k.length > L.factKey ? k.slice(0, L.factKey) : k, text(v, L.factValue)]));
      }
      const m = h['mitigation'];
      if (isRecord(m)) {
        // Parameters no catalog action takes: the fix is dropped, the hypothesis stays.
        if (JSON.stringify(m['params'] ?? {}).length > L.params) {
          delete c['mitigation'];
          notes.push(`The model's proposed fix for "${String(c['title']).slice(0, 80)}" had ${JSON.stringify(m['params']).length} characters of parameters: it was dropped.`);
        } else {
          c['mitigation'] = { ...m, target: ref(m['target']), command: text(m['command'], L.command), rationale: text(m['rationale'], L.rationale) };
        }
      }
      return c;
    });
    if (trimmedLists > 0) notes.push(`Long lists in ${trimmedLists === 1 ? 'one hypothesis' : `${trimmedLists} hypotheses`} (evidence, affected components, facts) were cut to their first items.`);
  }
  const esc = input['escalate'];
  if (isRecord(esc)) {
    out['escalate'] = { ...esc, reason: text(esc['reason'], L.escalateReason), ...(Array.isArray(esc['couldNotAccess']) ? { couldNotAccess: esc['couldNotAccess'].slice(0, L.couldNotAccess).map((x: unknown) => text(x, L.couldNotAccessItem)) } : {}) };
  }
  if (cutTexts > 0) notes.push(`${cutTexts} over-long ${cutTexts === 1 ? 'text' : 'texts'} in the model's diagnosis ${cutTexts === 1 ? 'was' : 'were'} cut to ${cutTexts === 1 ? 'its limit' : 'their limits'}.`);
  return { input: out, notes };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The tool result sent back for an invalid submission (the one repair round). */
export function repairRequest(errors: string[]): string {
  return [
    'The diagnosis was not accepted:',
    ...errors.map((e) => `- ${e}`),
    `Call ${SUBMIT_TOOL} again with a corrected submission. You may call other tools first if you need evidence to cite.`,
  ].join('\n');
}

/** `model:<ns>/<kind>/<name>:<category>` — stable across re-runs, distinct from analyzer keys. */
export function modelFindingKey(component: ComponentRef, category: string): string {
  return `model:${formatComponent(component)}:${category}`;
}

/** Confidence a downgraded hypothesis keeps at most. */
const WEAK_CONFIDENCE_CAP = 0.5;

/**
 * Valid diagnosis → findings. A `supported` hypothesis is downgraded to `inconclusive` when its support is
 * only the model's own claim (inference, a failed read, or a query that matched nothing — the model
 * writes the query, so an empty result proves nothing it did not put there), or when evidence refutes it.
 */
export function diagnosisToFindings(d: Diagnosis, citations: CitationBook, redactor: Redactor, uncited: readonly Uncited[] = []): Finding[] {
  const used = new Map<string, number>();
  const lostCitations = new Map(uncited.map((u) => [u.index, u.citations]));
  return d.hypotheses.map((h, i) => {
    const component = cleanRef(h.component);
    let key = modelFindingKey(component, h.category);
    const n = (used.get(key) ?? 0) + 1;
    used.set(key, n);
    if (n > 1) key = `${key}#${n}`;

    const supporting = h.evidence.filter((e) => e.stance === 'supports').map((e) => toEvidence(e, citations));
    const refuting = h.evidence.filter((e) => e.stance === 'refutes').map((e) => toEvidence(e, citations));
    let status: HypothesisStatus = h.status;
    let confidence = h.confidence;
    if (status === 'supported') {
      const strong = supporting.some((e) => isStrong(e, citations));
      // A hypothesis that cited evidence no tool returned is not believed on the rest of its word either.
      if (!strong || refuting.length > 0 || lostCitations.has(i)) {
        status = 'inconclusive';
        confidence = Math.min(confidence, WEAK_CONFIDENCE_CAP);
      }
    }
    if (lostCitations.has(i)) confidence = Math.min(confidence, WEAK_CONFIDENCE_CAP);
    const mitigation = h.mitigation && !lostCitations.has(i) ? h.mitigation : undefined;
    const finding: Finding = {
      key,
      analyzer: 'model',
      status,
      confidence,
      title: h.title,
      component,
      mechanism: h.mechanism,
      scope: h.scope,
      affected: h.affected.map(cleanRef),
      facts: { ...h.facts, category: h.category },
      supporting,
      refuting,
      ...(lostCitations.has(i) ? { reason: uncitedReason(lostCitations.get(i)!) } : h.reason ? { reason: h.reason } : {}),
      ...(mitigation ? { mitigation: { ...mitigation, target: cleanRef(mitigation.target) } } : {}),
    };
    return redactor.redactValue(finding);
  });
}

/** Why a hypothesis that cited what no tool returned is shown as not sure (the board's "Why not sure"). */
function uncitedReason(invented: string[]): string {
  const shown = invented.slice(0, 2).map((c) => `"${c.length > 60 ? `${c.slice(0, 59)}…` : c}"`).join(', ');
  const n = invented.length;
  return `uncited: the model cited ${n === 1 ? 'evidence' : `${n} pieces of evidence`} no tool returned (${shown}${n > 2 ? ', …' : ''}); Vigil dropped ${n === 1 ? 'it' : 'them'}, so this stays unproven and proposes no fix.`;
}

function toEvidence(e: { summary: string; citation: string }, citations: CitationBook): Evidence {
  const seen = e.citation.trim() === INFERENCE_CITATION ? undefined : citations.get(e.citation);
  if (!seen) return { kind: 'note', summary: e.summary, citation: { source: 'model', ref: INFERENCE_CITATION } };
  return { kind: seen.kind, summary: e.summary, citation: seen.citation };
}

/** Support is data a tool actually returned, or what triage and the change timeline found. */
function isStrong(e: Evidence, citations: CitationBook): boolean {
  if (e.citation.source === 'model') return false;
  const origin = citations.get(e.citation.ref)?.origin;
  return origin === 'tool_success' || origin === 'finding' || origin === 'change';
}

function cleanRef(c: ComponentRef): ComponentRef {
  return c.namespace ? { kind: c.kind, namespace: c.namespace, name: c.name } : { kind: c.kind, name: c.name };
}

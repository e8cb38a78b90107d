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
import type { CitationBook } from './toolbox.js';
import { toolInputSchema } from './toolbox.js';
import type { ModelTool } from './types.js';

export const SUBMIT_TOOL = 'submit_diagnosis';

/** The citation for a step of the model's own reasoning: allowed, but never support on its own. */
export const INFERENCE_CITATION = 'inference';

/** One shared definition (`$defs`) in the submission's JSON schema, however often it is used. */
const componentRef = z
  .object({
    kind: z.string().min(1).describe('Kubernetes kind, Repository or FeatureFlag.'),
    namespace: z.string().min(1).optional().describe('Omit if cluster-scoped.'),
    name: z.string().min(1),
  })
  .meta({ id: 'ComponentRef' });

const evidenceItem = z.object({
  stance: z.enum(['supports', 'refutes']),
  summary: z.string().min(1).max(400).describe('The fact, with its value.'),
  citation: z.string().min(1).describe(`A "cite", exactly, or "${INFERENCE_CITATION}".`),
});

const mitigation = z.object({
  action: z.enum(ACTION_TYPES),
  target: componentRef,
  params: z.record(z.string(), z.unknown()).describe('e.g. {"replicas": 3}'),
  command: z.string().min(1).describe('The equivalent command for a human.'),
  rationale: z.string().min(1),
});

const hypothesis = z.object({
  title: z.string().min(1).max(200).describe('One line: what happened.'),
  status: z.enum(['supported', 'open', 'inconclusive', 'ruled_out', 'unrelated']),
  confidence: z.number().min(0).max(1),
  component: componentRef.describe('The faulty component.'),
  category: z
    .string()
    .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'kebab-case, e.g. disk-full')
    .describe('kebab-case, e.g. disk-full, clock-skew, dns-misconfigured.'),
  mechanism: z.string().min(1).max(1200).describe('What is wrong and why.'),
  facts: z
    .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
    .describe('Values that matter (limit, image, actor, time…), camelCase keys.'),
  scope: z.string().max(600).describe('Who and what is affected.'),
  affected: z.array(componentRef).describe('Faulty one first, then callers, Services, Ingresses.'),
  evidence: z.array(evidenceItem),
  reason: z.string().max(600).optional().describe('Why ruled out or unrelated.'),
  mitigation: mitigation.optional(),
});

export const diagnosisSchema = z.object({
  hypotheses: z.array(hypothesis).min(1).max(12),
  summary: z.string().min(1).max(1500).describe('A few sentences for the thread.'),
  escalate: z
    .object({ reason: z.string().min(1), couldNotAccess: z.array(z.string()) })
    .optional()
    .describe('No cause found or access missing: why a human takes over.'),
});

export type Diagnosis = z.infer<typeof diagnosisSchema>;
export type DiagnosedHypothesis = Diagnosis['hypotheses'][number];

export const submitDiagnosisTool: ModelTool = {
  name: SUBMIT_TOOL,
  description: 'Submit the final diagnosis and end the investigation: once, when done or when told the budget is spent.',
  inputSchema: toolInputSchema(diagnosisSchema),
};

export type SubmissionCheck = { ok: true; diagnosis: Diagnosis } | { ok: false; errors: string[] };

/** Schema, then the rules zod cannot see: cited evidence behind every claim, citations the run saw. */
export function checkSubmission(input: unknown, citations: CitationBook): SubmissionCheck {
  const parsed = diagnosisSchema.safeParse(input);
  if (!parsed.success) {
    return { ok: false, errors: parsed.error.issues.slice(0, 20).map((i) => `${i.path.join('.') || '(input)'}: ${i.message}`) };
  }
  const errors: string[] = [];
  parsed.data.hypotheses.forEach((h, i) => {
    if (h.status === 'supported' && !h.evidence.some((e) => e.stance === 'supports')) {
      errors.push(`hypotheses.${i} ("${h.title}"): status "supported" needs at least one supporting evidence item with a citation`);
    }
    h.evidence.forEach((e, j) => {
      if (e.citation.trim() !== INFERENCE_CITATION && !citations.get(e.citation)) {
        errors.push(`hypotheses.${i}.evidence.${j}.citation: "${e.citation.slice(0, 200)}" was never returned by a tool or a finding; copy a "cite" value exactly`);
      }
    });
  });
  return errors.length > 0 ? { ok: false, errors } : { ok: true, diagnosis: parsed.data };
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
export function diagnosisToFindings(d: Diagnosis, citations: CitationBook, redactor: Redactor): Finding[] {
  const used = new Map<string, number>();
  return d.hypotheses.map((h) => {
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
      if (!strong || refuting.length > 0) {
        status = 'inconclusive';
        confidence = Math.min(confidence, WEAK_CONFIDENCE_CAP);
      }
    }
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
      ...(h.reason ? { reason: h.reason } : {}),
      ...(h.mitigation ? { mitigation: { ...h.mitigation, target: cleanRef(h.mitigation.target) } } : {}),
    };
    return redactor.redactValue(finding);
  });
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

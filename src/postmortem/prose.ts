/**
 * The postmortem's prose by the model: the rule-based draft's narrative fields (`summary.cause`,
 * `impact.scope`, `rootCause.mechanism`) rewritten from the draft's redacted facts, and nothing else.
 * The answer is a `submit_prose` tool call checked with zod, then mechanically against the facts sent
 * (`prose-check.ts`); one repair round, then the rules' text with a note saying why. The model makes the
 * draft read better; it never decides what it says. Never throws for a model failure.
 */
import { Budget, type AgentUsage, type BudgetLimits, type BudgetMode } from '../agent/budget.js';
import type { ModelCallEvent } from '../agent/loop.js';
import { isInvalidToolArguments } from '../agent/providers/index.js';
import type { ModelContent, ModelMessage, ModelProvider, ModelResponse, ModelTool } from '../agent/types.js';
import type { Redactor } from '../redact/index.js';
import { factCorpus, unsupportedFacts, type FactCorpus } from './prose-check.js';
import { factLeaves, narrativeOf, PROSE_SYSTEM, PROSE_TOOL, proseBrief, proseFacts, proseSchema, proseTool, type Narrative } from './prose-brief.js';
import type { Postmortem } from './types.js';

/** Who wrote the narrative fields. `note` says why the model's prose is not used when a model was asked. */
export type ProseCredit = { by: 'rules'; note?: string } | { by: 'model'; provider: string; model: string };

export interface NarratedPostmortem extends Postmortem {
  prose: ProseCredit;
}

/** Two calls at most (the answer and one repair); small, since the answer is three short fields. */
export const PROSE_BUDGET: BudgetLimits = { maxSteps: 2, maxTokens: 60_000, maxWallMs: 60_000, maxCostUsd: 0.1 };

export interface ProseOptions {
  provider: ModelProvider;
  redactor: Redactor;
  budget?: Partial<Omit<BudgetLimits, 'maxSteps'>>;
  /** Output tokens per call (default 2000). */
  maxOutputTokens?: number;
  /** Each model call, already redacted, for the audit trail (same shape as the agent loop's). */
  onEvent?: (e: ModelCallEvent) => void;
}

export interface ProseResult {
  postmortem: NarratedPostmortem;
  usage: AgentUsage;
  /** Model calls made. */
  calls: number;
  /**
   * What rejected answers stated that the facts do not hold, for the audit trail only: it is the model's
   * invention, so it is never published (the note gives a count).
   */
  unsupported?: string[];
}

const RULES_TEXT = 'The narrative is rule-based.';

export async function writeProse(pm: Postmortem, o: ProseOptions): Promise<ProseResult> {
  const facts = o.redactor.redactValue(proseFacts(pm));
  const corpus = factCorpus(factLeaves(facts));
  const narrative = narrativeOf(pm);
  const tool = proseTool(narrative);
  const limits = Object.fromEntries(Object.entries(o.budget ?? {}).filter(([, v]) => v !== undefined));
  const budget = new Budget({ ...PROSE_BUDGET, ...limits, maxSteps: 2 }, o.provider);
  const messages: ModelMessage[] = [{ role: 'user', content: [{ type: 'text', text: o.redactor.redactText(proseBrief(facts)) }] }];

  const unsupported: string[] = [];
  const done = (postmortem: NarratedPostmortem): ProseResult => ({ postmortem, usage: { ...budget.usage }, calls: budget.steps, ...(unsupported.length ? { unsupported: [...new Set(unsupported)] } : {}) });
  const rules = (note: string): ProseResult => done({ ...pm, prose: { by: 'rules', note: o.redactor.redactText(`${note} ${RULES_TEXT}`) } });

  let rejected = '';
  for (let round = 1; round <= 2; round += 1) {
    const mode = budget.next();
    if (mode === 'none') return rules(`The model budget (${budget.exhausted}) ran out before the prose was written.`);
    const call = await callModel(o, budget, messages, tool, mode);
    if (call.kind === 'timed_out') return rules('The model budget (wall_time) ran out before the prose was written.');
    if (call.kind === 'failed') return rules(`The model could not write the prose (${call.error.slice(0, 160)}).`);

    const content = call.response.content;
    messages.push({ role: 'assistant', content: content.length > 0 ? content : [{ type: 'text', text: '(no output)' }] });
    const verdict = judge(content, narrative, corpus, o.redactor);
    if (verdict.ok) {
      const prose = o.redactor.redactValue(verdict.prose);
      return done(withProse(pm, prose, { by: 'model', provider: o.provider.name, model: o.provider.model }));
    }
    rejected = verdict.why;
    unsupported.push(...verdict.unsupported);
    if (round === 1) messages.push({ role: 'user', content: repairRequest(content, verdict.errors) });
  }
  return rules(`Prose by the model was rejected: ${rejected}.`);
}

/** `why` is published in the note, so it never quotes the answer; `unsupported` goes to the audit trail. */
type Verdict = { ok: true; prose: Narrative } | { ok: false; errors: string[]; why: string; unsupported: string[] };

/**
 * Schema first, then every fact-shaped token of every field against the facts sent. The answer is redacted
 * before it is cut into tokens: the tokens are quoted back to the model and kept in the audit trail, and a
 * secret split from what gave it away (`password: x` → `x`, a card's four groups) no longer looks like one.
 */
function judge(content: ModelContent[], narrative: Narrative, corpus: FactCorpus, redactor: Redactor): Verdict {
  const answer = answerOf(content);
  if ('missing' in answer) return { ok: false, errors: [answer.missing], why: 'it gave no answer in the expected shape', unsupported: [] };
  const parsed = proseSchema(narrative).safeParse(answer.input);
  if (!parsed.success) {
    const errors = parsed.error.issues.slice(0, 10).map((i) => `${i.path.join('.') || '(input)'}: ${i.message}`);
    return { ok: false, errors, why: `its answer was invalid (${errors[0]})`, unsupported: [] };
  }
  const prose = redactor.redactValue(parsed.data as Narrative);
  const unsupported = [...new Set(Object.values(prose).flatMap((text) => unsupportedFacts(text, corpus)))];
  if (unsupported.length > 0) {
    const n = unsupported.length;
    const errors = unsupported.map((t) => `"${t}" is not in the facts: copy it exactly from the JSON or leave it out`);
    return { ok: false, errors, why: `it stated ${n} thing${n === 1 ? '' : 's'} not in the record`, unsupported: unsupported.map((t) => t.slice(0, 200)) };
  }
  return { ok: true, prose };
}

/** The `submit_prose` input, or a JSON object answered as text (some OpenAI-compatible servers do). */
function answerOf(content: ModelContent[]): { input: unknown } | { missing: string } {
  const call = content.find((c): c is Extract<ModelContent, { type: 'tool_call' }> => c.type === 'tool_call' && c.name === PROSE_TOOL);
  if (call) return isInvalidToolArguments(call.input) ? { missing: call.input.error } : { input: call.input };
  const text = content.flatMap((c) => (c.type === 'text' ? [c.text] : [])).join('\n');
  const json = /^\s*(?:```(?:json)?\s*)?(\{[\s\S]*\})\s*(?:```)?\s*$/.exec(text)?.[1];
  if (json) {
    try {
      return { input: JSON.parse(json) as unknown };
    } catch {
      // not JSON after all: ask again below
    }
  }
  return { missing: `no ${PROSE_TOOL} call: call ${PROSE_TOOL} with the rewritten fields` };
}

/** Every tool call of the turn gets its result (the APIs require it); the first carries the errors. */
function repairRequest(content: ModelContent[], errors: string[]): ModelContent[] {
  const text = ['Your answer was not accepted:', ...errors.slice(0, 12).map((e) => `- ${e}`), `Call ${PROSE_TOOL} again, stating only facts from the JSON.`].join('\n');
  const calls = content.filter((c): c is Extract<ModelContent, { type: 'tool_call' }> => c.type === 'tool_call');
  if (calls.length === 0) return [{ type: 'text', text }];
  return calls.map((c, i) => ({ type: 'tool_result', callId: c.id, content: i === 0 ? text : 'Ignored: only one answer is read.', isError: true }));
}

function withProse(pm: Postmortem, prose: Narrative, credit: ProseCredit): NarratedPostmortem {
  return {
    ...pm,
    summary: { ...pm.summary, cause: prose.cause },
    impact: { ...pm.impact, ...(prose.scope ? { scope: prose.scope } : {}) },
    ...(pm.rootCause && prose.mechanism ? { rootCause: { ...pm.rootCause, mechanism: prose.mechanism } } : {}),
    prose: credit,
  };
}

type CallOutcome = { kind: 'ok'; response: ModelResponse } | { kind: 'timed_out' } | { kind: 'failed'; error: string };

async function callModel(o: ProseOptions, budget: Budget, messages: ModelMessage[], tool: ModelTool, mode: Exclude<BudgetMode, 'none'>): Promise<CallOutcome> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error('wall-time budget exhausted')), Math.max(0, budget.hardDeadline - Date.now()));
  const started = performance.now();
  const base = { type: 'model_call' as const, step: budget.steps + 1, provider: o.provider.name, model: o.provider.model, mode };
  const ms = () => Math.round(performance.now() - started);
  try {
    const response = await o.provider.complete({ system: PROSE_SYSTEM, tools: [tool], messages, maxOutputTokens: o.maxOutputTokens ?? 2000, signal: controller.signal });
    budget.record(response.usage);
    o.onEvent?.({ ...base, outcome: 'ok', stopReason: response.stopReason, usage: response.usage, costUsd: o.provider.cost(response.usage).usd, ...(response.id ? { responseId: response.id } : {}), ms: ms() });
    return { kind: 'ok', response };
  } catch (err) {
    budget.recordFailedCall();
    if (controller.signal.aborted) {
      budget.markWallTimeExhausted();
      o.onEvent?.({ ...base, outcome: 'aborted', error: 'wall-time budget', ms: ms() });
      return { kind: 'timed_out' };
    }
    const error = o.redactor.redactText(err instanceof Error ? err.message : String(err)).slice(0, 1000);
    o.onEvent?.({ ...base, outcome: 'failed', error, ms: ms() });
    return { kind: 'failed', error };
  } finally {
    clearTimeout(timer);
  }
}

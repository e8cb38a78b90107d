/**
 * The model loop that deepens deterministic triage: brief → (model → tool calls → results)* →
 * `submit_diagnosis` → Findings. Within budgets (steps, tokens, wall time, cost), steerable (steering in
 * the brief, and new steering picked up before every step), stoppable (`signal`). It never throws for a
 * model failure: the caller gets a status and keeps the deterministic findings.
 */
import type { EvidenceTool } from '../evidence/tool.js';
import type { Redactor } from '../redact/index.js';
import type { TriageInput } from '../triage/analyzer.js';
import type { Finding } from '../triage/types.js';
import { Budget, type AgentUsage, type BudgetKind, type BudgetLimits, type BudgetMode, type SharedCap } from './budget.js';
import { checkSubmission, clipSubmission, diagnosisToFindings, repairRequest, SUBMIT_TOOL, submitDiagnosisTool, type Diagnosis } from './output.js';
import { requestHistory } from './history.js';
import { buildBrief, defaultLabels, steeringUpdate, SYSTEM_PROMPT } from './prompt.js';
import { ModelConfigurationError, ModelRequestError } from './providers/index.js';
import { fixScope, screenFixes } from './scope.js';
import type { SteeringMessage } from './steering.js';
import { CitationBook, shownToolName, Toolbox, type ToolCallEvent } from './toolbox.js';
import { ModelUnavailableError, type ModelContent, type ModelMessage, type ModelProvider, type ModelResponse, type ModelTool } from './types.js';

/** `refused`: the model declined (a refusal stop); `invalid_output`: it broke the output contract past the corrections allowed. */
export type AgentStatus = 'completed' | 'budget_exhausted' | 'invalid_output' | 'refused' | 'model_unavailable' | 'stopped';

/**
 * How the model broke the contract, for `invalid_output` and `refused` (the thread says it in words):
 * - `prose`: it answered in text instead of calling a tool or submitting;
 * - `declined`: such a text was a refusal ("I can't help with that");
 * - `refusal`: a refusal stop (Anthropic `stop_reason: refusal`, OpenAI `refusal` / content filter);
 * - `invalid_submission`: its diagnosis failed the schema or the citation rules;
 * - `truncated`: its output was cut at the token limit mid submission;
 * - `unusable_tools`: turn after turn of tool calls that could not run (unknown tools, malformed or cut-off arguments).
 */
export type Misbehaviour = 'prose' | 'declined' | 'refusal' | 'invalid_submission' | 'truncated' | 'unusable_tools';

export interface ModelCallEvent {
  type: 'model_call';
  step: number;
  provider: string;
  model: string;
  /** `final` when the model was told to submit now (budget). */
  mode: Exclude<BudgetMode, 'none'>;
  outcome: 'ok' | 'failed' | 'aborted';
  stopReason?: ModelResponse['stopReason'];
  usage?: ModelResponse['usage'];
  costUsd?: number;
  responseId?: string;
  error?: string;
  ms: number;
}

export interface DiagnosisEvent {
  type: 'diagnosis';
  valid: boolean;
  errors?: string[];
  hypotheses?: number;
  /** What Vigil cut or dropped from an accepted diagnosis (see {@link AgentResult.notes}). */
  notes?: string[];
}

export interface SteeringEvent {
  type: 'steering';
  messages: number;
}

/** For the audit trail and traces; every event is already redacted. */
export type AgentEvent = ToolCallEvent | ModelCallEvent | DiagnosisEvent | SteeringEvent;

export interface AgentOptions {
  provider: ModelProvider;
  tools: EvidenceTool[];
  /** What deterministic triage saw (`InvestigationOutcome.input`). */
  input: TriageInput;
  /** The deterministic findings (shown with their board labels; they stand whatever happens here). */
  findings: Finding[];
  /** Board labels by finding key; default: the labels a fresh board would give. */
  labels?: Record<string, string>;
  /** Investigation gaps (`InvestigationOutcome.gaps`). */
  gaps?: string[];
  /** Steering received so far (newest last or with times). */
  steering?: SteeringMessage[];
  /** Polled before every model call after the first: steering that arrived since the last poll. */
  pollSteering?: () => SteeringMessage[] | Promise<SteeringMessage[]>;
  /** Shared skills text relevant to the alert. */
  skills?: string;
  budget?: Partial<BudgetLimits>;
  /**
   * Token caps shared beyond this run (per incident, per day), kept by the caller in its store: read before every
   * model call — none is made once a cap is spent — and charged with each call's tokens. A store that fails
   * here fails the run (the caller retries it): the caps are never skipped.
   */
  allowance?: TokenAllowance;
  /** Output tokens per model call (default 4096). */
  maxOutputTokens?: number;
  redactor: Redactor;
  onEvent?: (event: AgentEvent) => void;
  /** `/sre stop`: aborts the model call or tool in flight; the result is `stopped`. */
  signal?: AbortSignal;
  now?: () => Date;
}

export interface TokenAllowance {
  /** The shared caps as they stand now. */
  read(): Promise<SharedCap[]>;
  /** Add one model call's tokens (input, cache reads and writes, output) to every shared total. */
  charge(tokens: number): Promise<void>;
}

export interface AgentResult {
  status: AgentStatus;
  /** The model's hypotheses as findings (`analyzer: 'model'`); empty unless a valid diagnosis was submitted. */
  findings: Finding[];
  summary?: string;
  escalate?: Diagnosis['escalate'];
  usage: AgentUsage;
  /** Model calls made. */
  steps: number;
  toolCalls: number;
  /** Which budget ran out, when one did (also with a final diagnosis). */
  budgetExhausted?: BudgetKind;
  /** The shared cap that ran out (its tokens used and its cap, as last read), for `incident_tokens` / `day_tokens`. */
  sharedCap?: SharedCap;
  /** Why it failed, for the thread and the audit (redacted). */
  error?: string;
  /** The model error's class, for `model_unavailable`. */
  errorKind?: 'unavailable' | 'configuration' | 'request' | 'unknown';
  /** What the model did wrong, for `invalid_output` and `refused`. */
  misbehaviour?: Misbehaviour;
  /**
   * What Vigil changed in an accepted diagnosis, one sentence each (redacted): over-long output cut,
   * invented citations dropped, fixes outside the incident's scope dropped. Empty when nothing was.
   */
  notes: string[];
}

/** Tool calls answered per model turn; more are refused with an error result (runaway fan-out). */
const MAX_CALLS_PER_TURN = 8;

/**
 * Turns in a row whose tool calls could none of them run (unknown tool, malformed or cut-off
 * arguments): each is answered with the error, so the model is corrected this many times minus one;
 * then the run gives up on it.
 */
export const MAX_UNUSABLE_TURNS = 3;

/** Characters of the model's own text kept in the conversation (a runaway answer is not re-sent whole). */
const MAX_ASSISTANT_TEXT = 4000;

/** A text turn that is a refusal in words, not a stop reason. */
const DECLINED = /\bI(?:\s+(?:can(?:no|['’])t|cannot|won['’]t|will not|am (?:not able|unable) to)|['’]m (?:not able|unable) to)\s+(?:help|assist|comply|do (?:that|this)|provide|continue|investigate)|\bI\s+(?:must|have to) (?:decline|refuse)/i;

const FINAL_NOTE = `The investigation budget is spent. Do not call any more evidence tools: call ${SUBMIT_TOOL} now with what you have (mark unproven hypotheses open or inconclusive).`;
const MISSING_SUBMISSION = `You ended your turn without calling ${SUBMIT_TOOL}. Call it now with your diagnosis.`;
const CUT_OFF_TEXT = `Your reply was cut off at the output-token limit before you called ${SUBMIT_TOOL}. Call it now, briefly: fewer hypotheses, short texts, no narrative.`;
const cutOffCall = (name: string) =>
  `Not run: your reply was cut off at the output-token limit while you were writing this call's arguments, so they are incomplete. Call ${shownToolName(name)} again${name === SUBMIT_TOOL ? ' with a shorter submission (fewer hypotheses, short texts)' : ' with shorter arguments'}.`;

export async function runAgent(o: AgentOptions): Promise<AgentResult> {
  const now = o.now ?? (() => new Date());
  const budget = new Budget(o.budget, o.provider);
  const citations = new CitationBook();
  const emit = (e: AgentEvent) => o.onEvent?.(e);
  // The tools see what triage already read: the onset, and the cluster graph of its one snapshot.
  const cluster = o.input.cluster;
  const investigation = { onset: o.input.onset, ...(cluster ? { cluster: { topology: cluster.topology, walk: cluster.walk, subjects: cluster.subjects } } : {}) };
  const toolbox = new Toolbox(o.tools, { redactor: o.redactor, now, citations, onEvent: emit, investigation });
  const labels = o.labels ?? defaultLabels(o.findings);
  const steering = [...(o.steering ?? [])];
  let toolCalls = 0;
  let invalidSubmissions = 0;
  let unusableTurns = 0;
  let lastError: string | undefined;
  let misbehaviour: Misbehaviour | undefined;

  const finish = (status: AgentStatus, extra: Partial<AgentResult> = {}): AgentResult => ({
    status,
    findings: [],
    usage: { ...budget.usage },
    steps: budget.steps,
    toolCalls,
    ...(budget.exhausted ? { budgetExhausted: budget.exhausted } : {}),
    ...(budget.exhaustedCap ? { sharedCap: { ...budget.exhaustedCap } } : {}),
    ...(lastError && status !== 'completed' ? { error: lastError } : {}),
    ...(misbehaviour && (status === 'invalid_output' || status === 'refused') ? { misbehaviour } : {}),
    notes: [],
    ...extra,
  });

  const brief = buildBrief({ input: o.input, findings: o.findings, labels, gaps: o.gaps, steering, skills: o.skills, redactor: o.redactor, citations });
  const messages: ModelMessage[] = [];
  /** Digests of the tool results, by call id: sent instead of a result once it is a few turns old. */
  const digests = new Map<string, string>();
  let pending: ModelContent[] = [{ type: 'text', text: brief }];
  let finalAsked = false;

  for (;;) {
    if (o.signal?.aborted) return finish('stopped');
    if (o.pollSteering && messages.length > 0) {
      const fresh = await o.pollSteering();
      if (fresh.length > 0) {
        steering.push(...fresh);
        emit({ type: 'steering', messages: fresh.length });
        pending.push({ type: 'text', text: steeringUpdate(fresh, steering, labels, o.findings, o.redactor) });
      }
    }

    // The shared caps first: another run (or replica) may have spent them since the last call.
    if (o.allowance && !finalAsked) {
      // The first call's size, ≈ 4 characters per token: instructions, tool schemas and the brief.
      const first = messages.length === 0 ? Math.ceil((SYSTEM_PROMPT.length + JSON.stringify(toolbox.modelTools).length + pending.reduce((n, c) => n + contentChars(c), 0)) / 4) : 0;
      budget.share(await o.allowance.read(), first);
    }
    const mode = finalAsked ? 'none' : budget.next();
    if (mode === 'none') return finish('budget_exhausted');
    if (mode === 'final') {
      finalAsked = true;
      pending.push({ type: 'text', text: FINAL_NOTE });
    }
    messages.push({ role: 'user', content: pending });
    budget.appended(pending.reduce((n, c) => n + contentChars(c), 0));
    pending = [];

    const call = await callModel(o, budget, requestHistory(messages, digests), toolbox.modelTools, mode, emit);
    if (call.kind === 'ok' && o.allowance) {
      const u = call.response.usage;
      await o.allowance.charge(u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens + u.outputTokens);
      // Read back, so a run that ends here reports the totals with this call in them.
      budget.share(await o.allowance.read());
    }
    if (call.kind === 'stopped') return finish('stopped');
    if (call.kind === 'failed') return finish('model_unavailable', { error: call.error, errorKind: call.errorKind });
    if (call.kind === 'timed_out') {
      budget.markWallTimeExhausted();
      // The cut-off turn never happened: resend its user message, with the final note if time remains.
      pending = messages.pop()!.content;
      if (mode === 'final' || budget.next() === 'none') return finish('budget_exhausted');
      continue;
    }

    const response = call.response;
    // A refusal is final: the same conversation only draws the same refusal (providers say to reset it),
    // and nothing in a refused turn is run.
    if (response.stopReason === 'refusal') {
      emit({ type: 'diagnosis', valid: false, errors: ['refusal'] });
      misbehaviour = 'refusal';
      lastError = o.redactor.redactText(`the model refused to continue${response.refusal ? ` (${response.refusal})` : ''}`).slice(0, 300);
      return finish('refused');
    }
    messages.push({ role: 'assistant', content: response.content.length > 0 ? response.content.map(boundedText) : [{ type: 'text', text: '(no output)' }] });
    const calls = response.content.filter((c): c is Extract<ModelContent, { type: 'tool_call' }> => c.type === 'tool_call');
    const submit = calls.find((c) => c.name === SUBMIT_TOOL);
    // Cut at the token limit while writing a tool call: that call (the last block) has incomplete
    // arguments — perhaps still valid JSON that says less than meant — and is never run or accepted.
    const last = response.content.at(-1);
    const cutOff = response.stopReason === 'max_tokens' && last?.type === 'tool_call' ? last : undefined;
    let ran = 0;
    const unusable = new Set<string>();

    // Answer the evidence calls first, so their citations count if the submission came in the same turn.
    // Tools get the exploration deadline: the time held back is for the final submission.
    const signal = deadlineSignal(o.signal, budget.exploreDeadline);
    try {
      for (const [i, c] of calls.entries()) {
        if (c === submit) continue;
        const refused =
          mode === 'final' || signal.timedOut()
            ? `Not run: the budget is spent; call ${SUBMIT_TOOL}.`
            : c === cutOff
              ? cutOffCall(c.name)
              : i >= MAX_CALLS_PER_TURN
                ? `Not run: at most ${MAX_CALLS_PER_TURN} tool calls per turn.`
                : undefined;
        if (refused) {
          if (c === cutOff) unusable.add('arguments cut off at the output-token limit');
          pending.push({ type: 'tool_result', callId: c.id, content: refused, isError: true });
          continue;
        }
        toolCalls += 1;
        const out = await toolbox.dispatch(c.name, c.input, signal.signal);
        if (o.signal?.aborted) return finish('stopped');
        pending.push({ type: 'tool_result', callId: c.id, content: out.content, ...(out.isError ? { isError: true } : {}) });
        if (out.digest !== undefined) digests.set(c.id, out.digest);
        if (out.rejected === 'unknown_tool') unusable.add(`unknown tool "${oneLine(o.redactor.redactText(c.name), 60)}"`);
        else if (out.rejected === 'invalid_input') unusable.add(`arguments ${c.name} does not take`);
        else ran += 1;
      }
    } finally {
      signal.dispose();
    }
    // Exploration time ran out during a tool: every call is answered above, so the next turn is the final one.
    if (signal.timedOut()) budget.markWallTimeExhausted();

    // No repair round is left after this submission: invented citations are dropped rather than failing it.
    const lastChance = finalAsked || invalidSubmissions >= 1;
    if (submit && submit === cutOff) {
      emit({ type: 'diagnosis', valid: false, errors: ['cut off at the output-token limit'] });
      invalidSubmissions += 1;
      misbehaviour = 'truncated';
      lastError = `the model's ${SUBMIT_TOOL} call was cut off at the output-token limit`;
      if (invalidSubmissions >= 2) return finish('invalid_output');
      pending.push({ type: 'tool_result', callId: submit.id, content: cutOffCall(SUBMIT_TOOL), isError: true });
    } else if (submit) {
      const clipped = clipSubmission(submit.input, o.redactor);
      const check = checkSubmission(clipped.input, citations, { salvage: lastChance });
      if (check.ok) {
        const notes = [...clipped.notes];
        if (check.invented.length > 0) {
          const n = check.uncited.length;
          notes.push(`The model cited evidence no tool returned (${check.invented.slice(0, 2).map((c) => `“${c.slice(0, 80)}”`).join(', ')}${check.invented.length > 2 ? ', …' : ''}): Vigil dropped those citations and shows ${n === 1 ? 'that hypothesis' : `those ${n} hypotheses`} as uncited, not supported.`);
        }
        const screened = screenFixes(diagnosisToFindings(check.diagnosis, citations, o.redactor, check.uncited), fixScope(o.input));
        notes.push(...screened.notes);
        emit({ type: 'diagnosis', valid: true, hypotheses: screened.findings.length, ...(notes.length ? { notes: o.redactor.redactValue(notes) } : {}) });
        const extra = {
          findings: screened.findings,
          summary: o.redactor.redactText(check.diagnosis.summary),
          ...(check.diagnosis.escalate ? { escalate: o.redactor.redactValue(check.diagnosis.escalate) } : {}),
          notes: notes.map((n) => o.redactor.redactText(n)),
        };
        return finish(finalAsked ? 'budget_exhausted' : 'completed', extra);
      }
      emit({ type: 'diagnosis', valid: false, errors: o.redactor.redactValue(check.errors) });
      invalidSubmissions += 1;
      misbehaviour = 'invalid_submission';
      lastError = o.redactor.redactText(`invalid diagnosis: ${check.errors.join('; ')}`).slice(0, 1000);
      if (invalidSubmissions >= 2) return finish('invalid_output');
      pending.push({ type: 'tool_result', callId: submit.id, content: repairRequest(check.errors), isError: true });
    } else if (calls.length === 0) {
      // Ending without a submission breaks the output contract: it uses the one repair round too.
      const text = response.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
      const truncated = response.stopReason === 'max_tokens';
      emit({ type: 'diagnosis', valid: false, errors: [truncated ? 'no submission (output cut off)' : 'no submission'] });
      invalidSubmissions += 1;
      misbehaviour = truncated ? 'truncated' : DECLINED.test(text.slice(0, 2000)) ? 'declined' : 'prose';
      lastError =
        misbehaviour === 'declined'
          ? // Redact, then cut: a token cut at the quote's end would no longer look like one.
            `the model declined instead of calling ${SUBMIT_TOOL}: “${oneLine(o.redactor.redactText(text), 160)}”`
          : truncated
            ? `the model's reply was cut off at the output-token limit before it called ${SUBMIT_TOOL}`
            : `the model ended its turn without calling ${SUBMIT_TOOL}`;
      if (invalidSubmissions >= 2) return finish('invalid_output');
      pending.push({ type: 'text', text: truncated ? CUT_OFF_TEXT : MISSING_SUBMISSION });
    }
    if (finalAsked) return finish('budget_exhausted');
    // Tool calls none of which could run, turn after turn: the corrections went back as their results.
    if (!submit && calls.length > 0) {
      unusableTurns = ran === 0 && unusable.size > 0 ? unusableTurns + 1 : 0;
      if (unusableTurns >= MAX_UNUSABLE_TURNS) {
        misbehaviour = 'unusable_tools';
        lastError = o.redactor.redactText(`the model sent tool calls that could not run ${MAX_UNUSABLE_TURNS} turns in a row (${[...unusable].slice(0, 3).join('; ')})`);
        return finish('invalid_output');
      }
    }
  }
}

type CallOutcome =
  | { kind: 'ok'; response: ModelResponse }
  | { kind: 'stopped' }
  | { kind: 'timed_out' }
  | { kind: 'failed'; error: string; errorKind: NonNullable<AgentResult['errorKind']> };

async function callModel(
  o: AgentOptions,
  budget: Budget,
  messages: ModelMessage[],
  tools: ModelTool[],
  mode: Exclude<BudgetMode, 'none'>,
  emit: (e: AgentEvent) => void,
): Promise<CallOutcome> {
  const deadline = deadlineSignal(o.signal, mode === 'final' ? budget.hardDeadline : budget.exploreDeadline);
  const started = performance.now();
  const step = budget.steps + 1;
  const base = { type: 'model_call' as const, step, provider: o.provider.name, model: o.provider.model, mode };
  try {
    const response = await o.provider.complete({
      system: SYSTEM_PROMPT,
      // On the final call only the submission tool is offered.
      tools: mode === 'final' ? [submitDiagnosisTool] : [...tools, submitDiagnosisTool],
      messages,
      maxOutputTokens: o.maxOutputTokens ?? 4096,
      signal: deadline.signal,
    });
    budget.record(response.usage);
    emit({
      ...base,
      outcome: 'ok',
      stopReason: response.stopReason,
      usage: response.usage,
      costUsd: o.provider.cost(response.usage).usd,
      ...(response.id ? { responseId: response.id } : {}),
      ms: Math.round(performance.now() - started),
    });
    return { kind: 'ok', response };
  } catch (err) {
    budget.recordFailedCall();
    const ms = Math.round(performance.now() - started);
    if (o.signal?.aborted) {
      emit({ ...base, outcome: 'aborted', error: 'stopped', ms });
      return { kind: 'stopped' };
    }
    if (deadline.timedOut()) {
      emit({ ...base, outcome: 'aborted', error: 'wall-time budget', ms });
      return { kind: 'timed_out' };
    }
    const error = o.redactor.redactText(err instanceof Error ? err.message : String(err)).slice(0, 1000);
    emit({ ...base, outcome: 'failed', error, ms });
    return { kind: 'failed', error, errorKind: errorKindOf(err) };
  } finally {
    deadline.dispose();
  }
}

function errorKindOf(err: unknown): NonNullable<AgentResult['errorKind']> {
  if (err instanceof ModelUnavailableError) return 'unavailable';
  if (err instanceof ModelConfigurationError) return 'configuration';
  if (err instanceof ModelRequestError) return 'request';
  return 'unknown';
}

/** The caller's signal combined with a wall-clock deadline; says afterwards whether the deadline fired. */
function deadlineSignal(outer: AbortSignal | undefined, deadline: number): { signal: AbortSignal; timedOut(): boolean; dispose(): void } {
  const controller = new AbortController();
  let fired = false;
  const fire = () => {
    fired = true;
    controller.abort(new Error('wall-time budget exhausted'));
  };
  // A deadline already past fires now, so nothing is started in the meantime.
  const left = deadline - Date.now();
  const timer = left > 0 ? setTimeout(fire, left) : undefined;
  if (left <= 0) fire();
  const onAbort = () => controller.abort(outer?.reason);
  if (outer?.aborted) onAbort();
  else outer?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => fired,
    dispose: () => {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onAbort);
    },
  };
}

/** The model's own text as kept in the conversation: a runaway answer is cut (tool calls are kept whole). */
function boundedText(c: ModelContent): ModelContent {
  if (c.type !== 'text' || c.text.length <= MAX_ASSISTANT_TEXT) return c;
  return { type: 'text', text: `${c.text.slice(0, MAX_ASSISTANT_TEXT)}… [${c.text.length - MAX_ASSISTANT_TEXT} more characters not kept]` };
}

function oneLine(s: string, max: number): string {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

function contentChars(c: ModelContent): number {
  switch (c.type) {
    case 'text':
      return c.text.length;
    case 'tool_result':
      return c.content.length;
    case 'tool_call':
      return JSON.stringify(c.input ?? {}).length;
  }
}

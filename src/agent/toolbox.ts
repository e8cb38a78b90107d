/**
 * The evidence tools as the model sees them: JSON schemas in, compact redacted text out. A bad call
 * (unknown tool, input the schema rejects, arguments the provider could not parse) is answered with an
 * error tool result saying what was wrong, so the model can correct itself; nothing here throws at it.
 * Every call is reported to `onEvent` for the audit trail, and every citation the tools returned is
 * remembered, because the diagnosis may only cite what the run actually saw.
 */
import { z } from 'zod';
import type { EvidenceTool, InvestigationScope, ToolResult } from '../evidence/tool.js';
import { MAX_TOOL_RESULT_BYTES } from '../evidence/tool.js';
import type { Citation, EvidenceKind } from '../evidence/types.js';
import type { Redactor } from '../redact/index.js';
import { isInvalidToolArguments } from './providers/index.js';
import type { ModelTool } from './types.js';

/** Reported for every tool call, successful or not (inputs redacted). */
export interface ToolCallEvent {
  type: 'tool_call';
  name: string;
  input: unknown;
  status: ToolResult['status'] | 'invalid_input' | 'unknown_tool';
  citationRef?: string;
  ms: number;
}

/** Something the model may cite, and how strong it is as evidence. */
export interface SeenCitation {
  citation: Citation;
  kind: EvidenceKind;
  /** Where it came from: a tool result (by status), a deterministic finding, the change timeline. */
  origin: 'tool_success' | 'tool_no_data' | 'tool_error' | 'finding' | 'change';
}

/** How much a sighting proves: a failed read nothing, an empty one only that the query matched nothing. */
const ORIGIN_WEIGHT: Record<SeenCitation['origin'], number> = { tool_error: 0, tool_no_data: 1, tool_success: 2, finding: 2, change: 2 };

/** Every citation ref the run has seen; the strongest sighting wins, the first among equals (a finding's evidence beats a bare tool ref). */
export class CitationBook {
  readonly #byRef = new Map<string, SeenCitation>();

  add(seen: SeenCitation): void {
    const ref = seen.citation.ref.trim();
    const prior = this.#byRef.get(ref);
    // A successful read upgrades a ref first seen as a failed or empty one.
    if (!prior || ORIGIN_WEIGHT[seen.origin] > ORIGIN_WEIGHT[prior.origin]) this.#byRef.set(ref, seen);
  }

  get(ref: string): SeenCitation | undefined {
    return this.#byRef.get(ref.trim());
  }

  get size(): number {
    return this.#byRef.size;
  }
}

export interface ToolboxOptions {
  redactor: Redactor;
  now: () => Date;
  citations: CitationBook;
  onEvent?: (event: ToolCallEvent) => void;
  /** Bytes of a serialised result sent to the model (default MAX_TOOL_RESULT_BYTES + room for the envelope). */
  maxResultBytes?: number;
  /** Handed to every tool call: the onset and the investigation's cluster graph. */
  investigation?: InvestigationScope;
  /**
   * Offer the tools marked `onDemand` through {@link LOAD_TOOLS} instead of sending their schemas with
   * every model call (default true). Either way every tool can be called.
   */
  shelve?: boolean;
}

/**
 * The loader of on-demand tools: the model names the specialised tools it needs, and their schemas
 * are sent from the next call on. A specialised tool called without loading still runs (its name is
 * in the loader's list; the input is validated all the same).
 */
export const LOAD_TOOLS = 'load_tools';

export interface ToolOutcome {
  /** The text sent back as the tool result. */
  content: string;
  isError: boolean;
  /**
   * What stands in for `content` once the model has read it and moved on (see `agent/history.ts`): the
   * status, the cite and the evidence lines, without the bulk data. Absent when `content` is already short.
   */
  digest?: string;
  /** Set when the call never reached a tool: a name not in the catalog, or input its schema refuses. */
  rejected?: 'unknown_tool' | 'invalid_input';
}

/** A tool name the model wrote, as far as it is repeated in results and events (a runaway name is cut). */
const MAX_TOOL_NAME_CHARS = 100;

export function shownToolName(name: string): string {
  const oneLine = name.replace(/\s+/g, ' ');
  return oneLine.length > MAX_TOOL_NAME_CHARS ? `${oneLine.slice(0, MAX_TOOL_NAME_CHARS)}…` : oneLine;
}

/** Evidence lines listed per result: enough to cite, not a second copy of `data`. */
const MAX_EVIDENCE_LINES = 12;

export class Toolbox {
  readonly #tools: Map<string, EvidenceTool>;
  readonly #schemas: ModelTool[];
  /** On-demand tools by name → their one-line purpose; the loaded ones are sent like the others. */
  readonly #shelf = new Map<string, string>();
  readonly #loaded = new Set<string>();

  constructor(
    tools: EvidenceTool[],
    private readonly options: ToolboxOptions,
  ) {
    this.#tools = new Map(tools.map((t) => [t.name, t]));
    this.#schemas = tools.map((t) => ({ name: t.name, description: t.description, inputSchema: toolInputSchema(t.parameters) }));
    if (options.shelve !== false) for (const t of tools) if (t.onDemand) this.#shelf.set(t.name, t.onDemand);
  }

  /** What the next model call is offered: every tool not on the shelf or already loaded, then the loader while anything is left to load. */
  get modelTools(): ModelTool[] {
    const offered = this.#schemas.filter((s) => !this.#shelf.has(s.name) || this.#loaded.has(s.name));
    const left = [...this.#shelf.keys()].filter((n) => !this.#loaded.has(n));
    return left.length ? [...offered, this.#loader(left)] : offered;
  }

  #loader(left: string[]): ModelTool {
    return {
      name: LOAD_TOOLS,
      description: `Adds these tools to your next turn: ${left.map((n) => `${n} (${this.#shelf.get(n)})`).join('; ')}.`,
      inputSchema: { type: 'object', properties: { names: { type: 'array', items: { type: 'string' } } }, required: ['names'] },
    };
  }

  get names(): string[] {
    return [...this.#tools.keys()];
  }

  async dispatch(name: string, input: unknown, signal?: AbortSignal): Promise<ToolOutcome> {
    const { redactor } = this.options;
    const started = performance.now();
    const report = (status: ToolCallEvent['status'], citationRef?: string) =>
      this.options.onEvent?.({
        type: 'tool_call',
        name: redactor.redactText(shownToolName(name)),
        input: redactor.redactValue(isInvalidToolArguments(input) ? { raw: input.raw } : input),
        status,
        ...(citationRef !== undefined ? { citationRef: redactor.redactText(citationRef) } : {}),
        ms: Math.round(performance.now() - started),
      });

    if (name === LOAD_TOOLS && this.#shelf.size > 0) return this.#load(input, report);
    const tool = this.#tools.get(name);
    if (!tool) {
      report('unknown_tool');
      const offered = [...this.#schemas.map((t) => t.name), ...(this.#shelf.size > 0 ? [LOAD_TOOLS] : [])];
      return { content: redactor.redactText(`Unknown tool "${shownToolName(name)}": there is no such tool. Call only these: ${offered.join(', ')}.`), isError: true, rejected: 'unknown_tool' };
    }
    if (isInvalidToolArguments(input)) {
      report('invalid_input');
      return { content: input.error, isError: true, rejected: 'invalid_input' };
    }
    const parsed = tool.parameters.safeParse(input);
    if (!parsed.success) {
      report('invalid_input');
      return { content: redactor.redactText(`Invalid input for ${name}: ${z.prettifyError(parsed.error)}\nCall it again with input matching its schema.`).slice(0, 4000), isError: true, rejected: 'invalid_input' };
    }
    let result: ToolResult;
    try {
      // Raced against the signal: a tool (or the client under it) that ignores the signal must not
      // hold the run past its deadline or a stop. The read itself is left to its client's timeout.
      result = await untilAborted(tool.execute(parsed.data, { redactor, now: this.options.now(), ...(signal ? { signal } : {}), ...(this.options.investigation ? { investigation: this.options.investigation } : {}) }), signal);
    } catch (err) {
      // Tools return failures as data; a throw is a bug or an abort, still answered as data.
      report('error');
      if (signal?.aborted) return { content: redactor.redactText(`${name} aborted: ${abortReason(signal)}. Nothing was read.`), isError: true };
      return { content: redactor.redactText(`${name} failed: ${err instanceof Error ? err.message : String(err)}`).slice(0, 500), isError: true };
    }
    // Called straight from the loader's list: from now on it is offered like the others.
    if (this.#shelf.has(name)) this.#loaded.add(name);
    this.#remember(tool, result);
    report(result.status, result.citation.ref);
    const content = serialiseResult(result, redactor, this.options.maxResultBytes);
    const digest = digestResult(result, redactor);
    return { content, isError: result.status === 'error', ...(digest.length < content.length ? { digest } : {}) };
  }

  #load(input: unknown, report: (status: ToolCallEvent['status']) => void): ToolOutcome {
    const names = (input as { names?: unknown } | null)?.names;
    const wanted = Array.isArray(names) ? names.filter((n): n is string => typeof n === 'string') : [];
    const unknown = wanted.filter((n) => !this.#shelf.has(n));
    if (wanted.length === 0 || unknown.length > 0) {
      report('invalid_input');
      const shelf = [...this.#shelf.keys()].join(', ');
      const not = unknown.slice(0, 5).map((n) => JSON.stringify(shownToolName(n)));
      return { content: this.options.redactor.redactText(`${LOAD_TOOLS} takes {"names": [...]} of: ${shelf}${not.length ? ` (not ${not.join(', ')}${unknown.length > 5 ? ', …' : ''})` : ''}.`), isError: true, rejected: 'invalid_input' };
    }
    for (const n of wanted) this.#loaded.add(n);
    report('success');
    return { content: `Loaded ${wanted.join(', ')}: call them from your next turn.`, isError: false };
  }

  #remember(tool: EvidenceTool, result: ToolResult): void {
    const origin = result.status === 'success' ? 'tool_success' : result.status === 'no_data' ? 'tool_no_data' : 'tool_error';
    this.options.citations.add({ citation: result.citation, kind: kindOfTool(tool.name, result.citation), origin });
    if (result.status === 'success') {
      for (const e of result.evidence) this.options.citations.add({ citation: e.citation, kind: e.kind, origin });
    }
  }
}

/** `work`, or a rejection as soon as `signal` fires (the work keeps running; its outcome is ignored). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function abortReason(signal: AbortSignal): string {
  const r: unknown = signal.reason;
  const text = r instanceof Error ? r.message : typeof r === 'string' ? r : '';
  return text !== '' && !/^this operation was aborted$/i.test(text) ? text : 'stopped';
}

/**
 * The input JSON schema of a tool's zod parameters (what the model must send, defaults optional), as
 * compact as it can be without saying less: it is sent with every model call. zod's own validation
 * bounds stay on the zod side (the tool validates every input): the 400-character RFC 3339 regex next
 * to `format: date-time`, the ±2^53 bounds of every `.int()`, `minLength: 1` of required strings,
 * `propertyNames: {type: string}` and `additionalProperties: {}` of records (JSON keys are strings;
 * any value is the default). A description that only restates its property's name ("Namespace.") says
 * nothing the name does not, and is dropped too.
 */
export function toolInputSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return compactSchema(rest) as Record<string, unknown>;
}

function compactSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(compactSchema);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  const o = node as Record<string, unknown>;
  for (const [k, v] of Object.entries(o)) {
    if (k === 'pattern' && o['format'] === 'date-time') continue;
    if (k === 'maximum' && v === Number.MAX_SAFE_INTEGER) continue;
    if (k === 'minimum' && v === Number.MIN_SAFE_INTEGER) continue;
    if (k === 'minLength' && v === 1) continue;
    if (k === 'propertyNames' && isStringType(v)) continue;
    if (k === 'additionalProperties' && v && typeof v === 'object' && Object.keys(v).length === 0) continue;
    if (k === 'properties' && v && typeof v === 'object') {
      out[k] = Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([name, prop]) => [name, compactSchema(withoutEchoedName(name, prop))]));
      continue;
    }
    out[k] = compactSchema(v);
  }
  return out;
}

const letters = (s: string) => s.replace(/[^a-z0-9]/gi, '').toLowerCase();

/** A property schema without a description that is only its own name. */
function withoutEchoedName(name: string, prop: unknown): unknown {
  if (!prop || typeof prop !== 'object') return prop;
  const { description, ...rest } = prop as Record<string, unknown>;
  return typeof description === 'string' && letters(description) === letters(name) ? rest : prop;
}

function isStringType(v: unknown): boolean {
  return !!v && typeof v === 'object' && Object.keys(v).length === 1 && (v as { type?: unknown }).type === 'string';
}

/**
 * Compact text for the model: status, the citation to cite, then the bounded data (or the message).
 * Evidence lines are `{summary, cite}`, or only the summary when their cite is the result's own.
 * Redacted again here (defence in depth: tools already redact) and bounded to `maxBytes`.
 */
export function serialiseResult(result: ToolResult, redactor: Redactor, maxBytes = MAX_TOOL_RESULT_BYTES + 2048): string {
  const envelope: Record<string, unknown> = { status: result.status, cite: result.citation.ref };
  if (result.citation.range) envelope['range'] = { from: result.citation.range.from.toISOString(), to: result.citation.range.to.toISOString() };
  switch (result.status) {
    case 'success':
      if (result.truncated) envelope['truncated'] = true;
      if (result.evidence.length > 0) {
        // A line citing the result itself is just its summary: the cite is right above it.
        const own = result.citation.ref;
        envelope['evidence'] = result.evidence.slice(0, MAX_EVIDENCE_LINES).map((e) => (e.citation.ref === own ? e.summary : { summary: e.summary, cite: e.citation.ref }));
      }
      envelope['data'] = result.data;
      break;
    case 'no_data':
      envelope['message'] = result.message;
      break;
    case 'error':
      envelope['error'] = result.error;
      break;
  }
  const text = JSON.stringify(redactor.redactValue(envelope));
  if (Buffer.byteLength(text) <= maxBytes) return text;
  return `${Buffer.from(text).subarray(0, maxBytes).toString('utf8')}… [cut at ${maxBytes} bytes]`;
}

/** Evidence lines a digest keeps. */
const DIGEST_EVIDENCE_LINES = 2;

/**
 * A read result without its data: enough for the model to remember what it saw and to cite it again
 * (every cite stays valid: the citation book keeps them), and to call the tool again for the detail.
 */
export function digestResult(result: ToolResult, redactor: Redactor): string {
  const envelope: Record<string, unknown> = { status: result.status, cite: result.citation.ref };
  if (result.status === 'success') {
    const own = result.citation.ref;
    // The leading lines are the finding (the top error, the level shift); the rest (one line per pod
    // read, per event group) was read already and is counted, not resent.
    const lines = result.evidence.slice(0, DIGEST_EVIDENCE_LINES).map((e) => (e.citation.ref === own ? e.summary : { summary: e.summary, cite: e.citation.ref }));
    const more = Math.min(result.evidence.length, MAX_EVIDENCE_LINES) - lines.length;
    if (lines.length > 0) envelope['evidence'] = more > 0 ? [...lines, `(+${more} more lines)`] : lines;
    envelope['data'] = '(elided: read in an earlier turn; call again for the detail)';
  } else if (result.status === 'no_data') envelope['message'] = result.message;
  else envelope['error'] = result.error;
  return JSON.stringify(redactor.redactValue(envelope));
}

function kindOfTool(name: string, citation: Citation): EvidenceKind {
  if (name.includes('logs') || citation.source === 'loki') return 'log';
  if (name.includes('events')) return 'event';
  if (name.includes('endpoints')) return 'endpoints';
  if (name.includes('helm')) return 'helm_release';
  if (citation.source === 'prometheus') return 'metric';
  if (citation.source === 'github' || name.includes('rollout')) return 'change';
  return 'object';
}

/**
 * The evidence tools as the model sees them: JSON schemas in, compact redacted text out. A bad call
 * (unknown tool, input the schema rejects, arguments the provider could not parse) is answered with an
 * error tool result saying what was wrong, so the model can correct itself; nothing here throws at it.
 * Every call is reported to `onEvent` for the audit trail, and every citation the tools returned is
 * remembered, because the diagnosis may only cite what the run actually saw.
 */
import { z } from 'zod';
import type { EvidenceTool, ToolResult } from '../evidence/tool.js';
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
}

export interface ToolOutcome {
  /** The text sent back as the tool result. */
  content: string;
  isError: boolean;
}

/** Evidence lines listed per result: enough to cite, not a second copy of `data`. */
const MAX_EVIDENCE_LINES = 12;

export class Toolbox {
  readonly #tools: Map<string, EvidenceTool>;
  readonly #schemas: ModelTool[];

  constructor(
    tools: EvidenceTool[],
    private readonly options: ToolboxOptions,
  ) {
    this.#tools = new Map(tools.map((t) => [t.name, t]));
    this.#schemas = tools.map((t) => ({ name: t.name, description: t.description, inputSchema: toolInputSchema(t.parameters) }));
  }

  get modelTools(): ModelTool[] {
    return this.#schemas;
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
        name,
        input: redactor.redactValue(isInvalidToolArguments(input) ? { raw: input.raw } : input),
        status,
        ...(citationRef !== undefined ? { citationRef: redactor.redactText(citationRef) } : {}),
        ms: Math.round(performance.now() - started),
      });

    const tool = this.#tools.get(name);
    if (!tool) {
      report('unknown_tool');
      return { content: `Unknown tool "${name}". Available tools: ${this.names.join(', ')}.`, isError: true };
    }
    if (isInvalidToolArguments(input)) {
      report('invalid_input');
      return { content: input.error, isError: true };
    }
    const parsed = tool.parameters.safeParse(input);
    if (!parsed.success) {
      report('invalid_input');
      return { content: redactor.redactText(`Invalid input for ${name}: ${z.prettifyError(parsed.error)}\nCall it again with input matching its schema.`), isError: true };
    }
    let result: ToolResult;
    try {
      // Raced against the signal: a tool (or the client under it) that ignores the signal must not
      // hold the run past its deadline or a stop. The read itself is left to its client's timeout.
      result = await untilAborted(tool.execute(parsed.data, { redactor, now: this.options.now(), ...(signal ? { signal } : {}) }), signal);
    } catch (err) {
      // Tools return failures as data; a throw is a bug or an abort, still answered as data.
      report('error');
      if (signal?.aborted) return { content: redactor.redactText(`${name} aborted: ${abortReason(signal)}. Nothing was read.`), isError: true };
      return { content: redactor.redactText(`${name} failed: ${err instanceof Error ? err.message : String(err)}`).slice(0, 500), isError: true };
    }
    this.#remember(tool, result);
    report(result.status, result.citation.ref);
    return { content: serialiseResult(result, redactor, this.options.maxResultBytes), isError: result.status === 'error' };
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

/** The input JSON schema of a tool's zod parameters (what the model must send, defaults optional). */
export function toolInputSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}

/**
 * Compact text for the model: status, the citation to cite, then the bounded data (or the message).
 * Redacted again here (defence in depth: tools already redact) and bounded to `maxBytes`.
 */
export function serialiseResult(result: ToolResult, redactor: Redactor, maxBytes = MAX_TOOL_RESULT_BYTES + 2048): string {
  const envelope: Record<string, unknown> = { status: result.status, cite: result.citation.ref };
  if (result.citation.range) envelope['range'] = { from: result.citation.range.from.toISOString(), to: result.citation.range.to.toISOString() };
  switch (result.status) {
    case 'success':
      if (result.truncated) envelope['truncated'] = true;
      if (result.evidence.length > 0) {
        envelope['evidence'] = result.evidence.slice(0, MAX_EVIDENCE_LINES).map((e) => ({ summary: e.summary, cite: e.citation.ref }));
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

function kindOfTool(name: string, citation: Citation): EvidenceKind {
  if (name.includes('logs') || citation.source === 'loki') return 'log';
  if (name.includes('events')) return 'event';
  if (name.includes('endpoints')) return 'endpoints';
  if (name.includes('helm')) return 'helm_release';
  if (citation.source === 'prometheus') return 'metric';
  if (citation.source === 'github' || name.includes('rollout')) return 'change';
  return 'object';
}

import type { z } from 'zod';
import type { Redactor } from '../redact/index.js';
import type { Topology } from '../topology/graph.js';
import type { Subject } from '../topology/subjects.js';
import type { Walk } from '../topology/walk.js';
import type { Citation, Evidence } from './types.js';

/**
 * A read-only evidence tool: a typed value the deterministic gatherers call directly and the model loop
 * calls through its JSON schema (`z.toJSONSchema(tool.parameters)`). Results are data, never exceptions:
 * `success | no_data | error`, always with the exact query or object path (the citation), so both the
 * model and a human can see what was tried.
 */
export interface EvidenceTool<P extends z.ZodType = z.ZodType> {
  /** snake_case, stable: the model sees it. */
  name: string;
  /** Written for the model: what it returns, when to use it, how big it is. */
  description: string;
  parameters: P;
  /**
   * A specialised tool: the model loop sends its schema only once the model asks for it (`load_tools`),
   * instead of with every call. The text is its one-line purpose in the loader's list.
   */
  onDemand?: string;
  effect: 'read';
  execute(params: z.infer<P>, ctx: ToolContext): Promise<ToolResult>;
}

export interface ToolContext {
  redactor: Redactor;
  now: Date;
  /** Upper bound of the serialised `data` in bytes (default MAX_TOOL_RESULT_BYTES). */
  maxBytes?: number;
  signal?: AbortSignal;
  /** What the investigation already knows (set by the model loop; absent when a tool is called on its own). */
  investigation?: InvestigationScope;
}

/**
 * The investigation a tool call belongs to: the alert's onset (log windows, metric ranges) and the
 * cluster graph deterministic triage built from its one snapshot read, with the walk from what the
 * alert names. Tools read it instead of reading the whole cluster again.
 */
export interface InvestigationScope {
  onset: Date;
  cluster?: { topology: Topology; walk?: Walk; subjects?: Subject[] };
}

export type ToolResult =
  | { status: 'success'; citation: Citation; data: unknown; evidence: Evidence[]; truncated: boolean }
  | { status: 'no_data'; citation: Citation; message: string }
  | { status: 'error'; citation: Citation; error: string };

/** 16 KB: enough for a describe or a summary, small enough that a dozen results fit a model turn. */
export const MAX_TOOL_RESULT_BYTES = 16 * 1024;

/**
 * Redact then bound a result's data: arrays are cut from the end and long strings shortened until the
 * JSON fits; `truncated` says that something was dropped.
 */
export function boundedData(data: unknown, ctx: ToolContext): { data: unknown; truncated: boolean } {
  const max = ctx.maxBytes ?? MAX_TOOL_RESULT_BYTES;
  let value = ctx.redactor.redactValue(data);
  let truncated = false;
  for (let i = 0; i < 30 && Buffer.byteLength(JSON.stringify(value) ?? '') > max; i++) {
    value = shrink(value);
    truncated = true;
  }
  if (Buffer.byteLength(JSON.stringify(value) ?? '') > max) {
    value = { truncated: (JSON.stringify(value) ?? '').slice(0, Math.floor(max / 2)) + '…' };
    truncated = true;
  }
  return { data: value, truncated };
}

function shrink(v: unknown): unknown {
  if (Array.isArray(v)) return v.slice(0, Math.max(1, Math.floor(v.length * 0.6))).map(shrink);
  if (typeof v === 'string') return v.length > 200 ? `${v.slice(0, Math.floor(v.length * 0.6))}…` : v;
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shrink(x)]));
  return v;
}

export function errorResult(citation: Citation, err: unknown, redactor: Redactor): ToolResult {
  return { status: 'error', citation, error: redactor.redactText(err instanceof Error ? err.message : String(err)).slice(0, 500) };
}

import type { z } from 'zod';
import type { Redactor } from '../redact/index.js';
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
  effect: 'read';
  execute(params: z.infer<P>, ctx: ToolContext): Promise<ToolResult>;
}

export interface ToolContext {
  redactor: Redactor;
  now: Date;
  /** Upper bound of the serialised `data` in bytes (default MAX_TOOL_RESULT_BYTES). */
  maxBytes?: number;
  signal?: AbortSignal;
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

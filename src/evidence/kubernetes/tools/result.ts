/** How every Kubernetes tool turns data or a failure into a ToolResult. */
import { boundedData, type ToolContext, type ToolResult } from '../../tool.js';
import type { Citation, Evidence } from '../../types.js';
import { describeFailure, toFailure } from '../objects.js';

export function kubeCitation(ref: string): Citation {
  return { source: 'kubernetes', ref };
}

/** Redacted and bounded data plus its evidence lines (also redacted: summaries quote object fields). */
export function success(citation: Citation, data: unknown, ctx: ToolContext, evidence: Evidence[]): ToolResult {
  const bounded = boundedData(data, ctx);
  return { status: 'success', citation, data: bounded.data, evidence: ctx.redactor.redactValue(evidence), truncated: bounded.truncated };
}

/**
 * A failed read as data: 404 → `no_data` with the API's own words (`deployments.apps "x" not found`);
 * 403 → `error` naming the verb and resource the reader identity lacks; anything else → `error`.
 */
export function failure(citation: Citation, err: unknown, ctx: ToolContext, verb = 'get', resource = 'object', namespace?: string): ToolResult {
  const f = toFailure(err, verb, resource, namespace);
  if (f.status === 404) return { status: 'no_data', citation, message: ctx.redactor.redactText(f.serverMessage).slice(0, 500) };
  return { status: 'error', citation, error: ctx.redactor.redactText(describeFailure(f)).slice(0, 500) };
}

export function noData(citation: Citation, message: string): ToolResult {
  return { status: 'no_data', citation, message };
}

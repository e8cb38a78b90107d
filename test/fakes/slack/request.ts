/**
 * Reading Web API requests the way Slack does: `@slack/web-api` sends `application/x-www-form-urlencoded` with
 * objects JSON-encoded as strings (PLATFORM-FACTS A4/A7); JSON bodies are accepted too. Query-string params merge in.
 */
import type { IncomingMessage } from 'node:http';
import type { Params } from './types.js';

/** Fields Slack expects as JSON (objects/arrays) that form encoding carries as strings. */
const JSON_FIELDS = ['blocks', 'attachments', 'metadata', 'view'] as const;

export async function readRawBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export interface ParsedParams {
  params: Params;
  /** Set when a JSON field or a JSON body could not be parsed; Slack answers invalid_blocks_format / invalid_json. */
  malformed?: { field: string; error: string };
}

export function parseParams(raw: string, contentType: string | undefined, query: URLSearchParams): ParsedParams {
  const params: Params = Object.fromEntries(query.entries());
  if (contentType?.includes('application/json')) {
    if (raw.trim() !== '') {
      try {
        Object.assign(params, JSON.parse(raw) as Params);
      } catch {
        return { params, malformed: { field: 'body', error: 'invalid_json' } };
      }
    }
  } else {
    for (const [key, value] of new URLSearchParams(raw)) params[key] = value;
  }
  for (const field of JSON_FIELDS) {
    const value = params[field];
    if (typeof value !== 'string' || value === '') continue;
    try {
      params[field] = JSON.parse(value) as unknown;
    } catch {
      const error = field === 'blocks' ? 'invalid_blocks_format' : 'invalid_arguments';
      return { params, malformed: { field, error } };
    }
  }
  return { params };
}

/** Form fields are strings: 'true'/'1' are true. */
export function boolParam(value: unknown): boolean {
  return value === true || value === 'true' || value === '1' || value === 1;
}

export function numParam(value: unknown, fallback: number): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' && value !== '' ? Number(value) : NaN;
  return Number.isFinite(n) ? n : fallback;
}

export function strParam(value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number') return String(value);
  return undefined;
}

/** `Authorization: Bearer <token>`, or the legacy `token` form field. */
export function tokenOf(req: IncomingMessage, params: Params): string | undefined {
  const header = req.headers.authorization;
  if (header?.startsWith('Bearer ')) return header.slice('Bearer '.length).trim() || undefined;
  return strParam(params.token);
}

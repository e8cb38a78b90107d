/** How method handlers answer: Slack's Web API always uses HTTP 200 with `{ ok, error? }` (429 aside). */
import type { SlackValidationError } from '../blockkit.js';
import type { SlackStore } from '../store.js';
import type { ApiBody, ApiReply, BotIdentity, Params } from '../types.js';

export interface MethodContext {
  params: Params;
  store: SlackStore;
  /** The app whose bot token made the call (a workspace may have several apps installed). */
  bot: BotIdentity;
}

export type MethodHandler = (ctx: MethodContext) => ApiReply;

export function ok(body: Record<string, unknown> = {}): ApiReply {
  return { body: { ok: true, ...body } };
}

export function fail(error: string, extra: Record<string, unknown> = {}): ApiReply {
  return { body: { ok: false, error, ...extra } };
}

/** A payload Slack would refuse: answered like Slack and counted in the fake's `rejections`. */
export function reject(error: SlackValidationError): ApiReply {
  return { body: error as unknown as ApiBody, rejection: true };
}

/** Opaque pagination cursors, like Slack's base64 `next_cursor`. */
export function encodeCursor(offset: number): string {
  return Buffer.from(`offset:${offset}`).toString('base64');
}

export function decodeCursor(cursor: unknown): number | undefined {
  if (typeof cursor !== 'string' || cursor === '') return 0;
  const match = /^offset:(\d+)$/.exec(Buffer.from(cursor, 'base64').toString('utf8'));
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

/** One page of `items` and Slack's paging fields (`has_more`, `response_metadata.next_cursor`, '' on the last page). */
export function paginate<T>(items: T[], offset: number, limit: number): { page: T[]; has_more: boolean; response_metadata: { next_cursor: string } } {
  const page = items.slice(offset, offset + limit);
  const end = offset + page.length;
  const has_more = end < items.length;
  return { page, has_more, response_metadata: { next_cursor: has_more ? encodeCursor(end) : '' } };
}

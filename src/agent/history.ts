/**
 * What the model is re-sent of its own investigation. Every call carries the whole conversation, so a
 * tool result read five turns ago is paid for five more times although the model has already acted on
 * it. Older results are replaced by their digest (status, cite, evidence lines: what the model needs to
 * remember and to cite), the way Anthropic's `clear_tool_uses` context edit does server-side; the most
 * recent turns are sent whole. The loop keeps the full history; only the request is edited.
 */
import type { ModelContent, ModelMessage } from './types.js';

/** User turns (counting back from the newest) whose tool results are sent whole: the one the model is answering. */
export const RECENT_RESULT_TURNS = 1;

/**
 * The messages to send: tool results in user turns older than the `recent` newest ones become their
 * digest (from `digests`, by call id). Results without a digest (short ones, errors) are sent as they are.
 */
export function requestHistory(messages: ModelMessage[], digests: ReadonlyMap<string, string>, recent = RECENT_RESULT_TURNS): ModelMessage[] {
  let userTurns = 0;
  const cutoff = new Set<number>();
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role !== 'user') continue;
    userTurns += 1;
    if (userTurns > recent) cutoff.add(i);
  }
  if (cutoff.size === 0) return messages;
  return messages.map((m, i) => {
    if (!cutoff.has(i)) return m;
    let changed = false;
    const content = m.content.map((c): ModelContent => {
      if (c.type !== 'tool_result') return c;
      const digest = digests.get(c.callId);
      if (digest === undefined || digest.length >= c.content.length) return c;
      changed = true;
      return { ...c, content: digest };
    });
    return changed ? { ...m, content } : m;
  });
}

/**
 * `ModelRequest` ⇄ Anthropic Messages API wire shapes.
 *
 * Prompt caching: up to 4 `cache_control` breakpoints are allowed; Vigil uses three — the system
 * prompt, the last tool definition (caching every tool before it), and the last block of the last
 * message (so each turn of the tool loop re-reads the conversation so far from the cache).
 *
 * Thinking: current models (e.g. Claude Sonnet 5.5) think by default and return `thinking` /
 * `redacted_thinking` blocks that must be sent back unchanged with the rest of the assistant turn.
 * `ModelContent` has no place for them, so {@link ThinkingMemo} keeps the raw assistant content of
 * every response that carried thinking, keyed by its tool_use ids, and replays it verbatim.
 */
import type {
  ContentBlock,
  ContentBlockParam,
  Message,
  MessageCreateParamsNonStreaming,
  MessageParam,
  TextBlockParam,
  Tool,
  ToolResultBlockParam,
} from '@anthropic-ai/sdk/resources/messages';
import type { ModelContent, ModelMessage, ModelRequest, ModelResponse } from '../types.js';

const EPHEMERAL = { type: 'ephemeral' } as const;

/** Raw assistant content of recent responses that carried thinking, by tool_use id (bounded, FIFO). */
export class ThinkingMemo {
  readonly #byToolUseId = new Map<string, ContentBlockParam[]>();
  constructor(private readonly capacity = 2_000) {}

  remember(message: Message): void {
    if (!message.content.some((b) => b.type === 'thinking' || b.type === 'redacted_thinking')) return;
    const raw = message.content.flatMap(toParam);
    for (const block of message.content) {
      if (block.type !== 'tool_use') continue;
      this.#byToolUseId.set(block.id, raw);
      if (this.#byToolUseId.size > this.capacity) {
        const oldest = this.#byToolUseId.keys().next().value;
        if (oldest !== undefined) this.#byToolUseId.delete(oldest);
      }
    }
  }

  recall(message: ModelMessage): ContentBlockParam[] | undefined {
    for (const c of message.content) {
      if (c.type === 'tool_call') {
        const raw = this.#byToolUseId.get(c.id);
        if (raw) return raw;
      }
    }
    return undefined;
  }
}

export function toAnthropicParams(
  req: ModelRequest,
  model: string,
  memo: ThinkingMemo,
): MessageCreateParamsNonStreaming {
  const tools: Tool[] = req.tools.map((t, i) => ({
    name: t.name,
    description: t.description,
    input_schema: t.inputSchema as Tool['input_schema'],
    ...(i === req.tools.length - 1 ? { cache_control: EPHEMERAL } : {}),
  }));
  const messages = req.messages.map((m) => toMessageParam(m, memo));
  markLastBlockCached(messages);
  return {
    model,
    max_tokens: req.maxOutputTokens,
    system: [{ type: 'text', text: req.system, cache_control: EPHEMERAL }],
    ...(tools.length > 0 ? { tools } : {}),
    messages,
  };
}

function toMessageParam(message: ModelMessage, memo: ThinkingMemo): MessageParam {
  if (message.role === 'assistant') {
    const raw = memo.recall(message);
    if (raw) return { role: 'assistant', content: raw.map((b) => ({ ...b })) };
  }
  // The API requires tool_result blocks to come first in a user turn.
  const results = message.content.filter((c) => c.type === 'tool_result');
  const others = message.content.filter((c) => c.type !== 'tool_result');
  return { role: message.role, content: [...results, ...others].flatMap(toBlockParam) };
}

function toBlockParam(c: ModelContent): ContentBlockParam[] {
  switch (c.type) {
    case 'text':
      // Empty text blocks are rejected by the API.
      return c.text === '' ? [] : [{ type: 'text', text: c.text }];
    case 'tool_call':
      return [{ type: 'tool_use', id: c.id, name: c.name, input: c.input }];
    case 'tool_result': {
      const block: ToolResultBlockParam = { type: 'tool_result', tool_use_id: c.callId, content: c.content };
      if (c.isError) block.is_error = true;
      return [block];
    }
  }
}

function markLastBlockCached(messages: MessageParam[]): void {
  const last = messages.at(-1);
  if (!last || typeof last.content === 'string') return;
  const block = last.content.at(-1);
  if (block && block.type !== 'thinking' && block.type !== 'redacted_thinking') {
    (block as TextBlockParam).cache_control = EPHEMERAL;
  }
}

/** A response block as a request block, for replaying an assistant turn verbatim. */
function toParam(block: ContentBlock): ContentBlockParam[] {
  switch (block.type) {
    case 'text':
      return block.text === '' ? [] : [{ type: 'text', text: block.text }];
    case 'thinking':
      return [{ type: 'thinking', thinking: block.thinking, signature: block.signature }];
    case 'redacted_thinking':
      return [{ type: 'redacted_thinking', data: block.data }];
    case 'tool_use':
      return [{ type: 'tool_use', id: block.id, name: block.name, input: block.input }];
    default:
      // Server-tool blocks: Vigil offers no server tools, so none are expected.
      return [];
  }
}

export function fromAnthropicMessage(message: Message): ModelResponse {
  const content: ModelContent[] = [];
  for (const block of message.content) {
    if (block.type === 'text' && block.text !== '') content.push({ type: 'text', text: block.text });
    if (block.type === 'tool_use') content.push({ type: 'tool_call', id: block.id, name: block.name, input: block.input });
  }
  const u = message.usage;
  const refusal = message.stop_reason === 'refusal' ? refusalOf(message) : undefined;
  return {
    content,
    stopReason: stopReasonOf(message.stop_reason),
    ...(refusal ? { refusal } : {}),
    usage: {
      // `input_tokens` counts only uncached input; cache reads and writes are reported (and billed) apart.
      inputTokens: u.input_tokens,
      outputTokens: u.output_tokens,
      cacheReadTokens: u.cache_read_input_tokens ?? 0,
      cacheWriteTokens: u.cache_creation_input_tokens ?? 0,
    },
    model: message.model,
    id: message.id,
  };
}

function stopReasonOf(reason: Message['stop_reason']): ModelResponse['stopReason'] {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'end_turn';
    case 'tool_use':
      return 'tool_use';
    case 'max_tokens':
    // The output filled the context window: cut off like a max_tokens stop.
    case 'model_context_window_exceeded':
      return 'max_tokens';
    case 'refusal':
      return 'refusal';
    default:
      return 'other';
  }
}

/** `stop_details` of a refusal (category, explanation), when the API gave any. */
function refusalOf(message: Message): string | undefined {
  const d = (message as { stop_details?: { category?: string | null; explanation?: string | null } | null }).stop_details;
  const parts = [d?.category ? `category ${d.category}` : '', d?.explanation ?? ''].filter((p) => p !== '');
  return parts.length ? parts.join(': ') : undefined;
}

/**
 * `ModelRequest` ⇄ OpenAI Chat Completions wire shapes (also what OpenAI-compatible servers speak).
 *
 * Tool results: Chat Completions has one `role:'tool'` message per call, which must directly follow the
 * assistant message holding the `tool_calls`; it has no error flag, so errors are prefixed in the text.
 * Prompt caching is automatic on OpenAI for long, stable prefixes: the system prompt and tools come first.
 */
import type {
  ChatCompletion,
  ChatCompletionAssistantMessageParam,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { ModelContent, ModelMessage, ModelRequest, ModelResponse } from '../types.js';
import { isInvalidToolArguments, parseToolArguments } from './tool-input.js';

export function toOpenAIMessages(req: ModelRequest): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [{ role: 'system', content: req.system }];
  for (const m of req.messages) out.push(...toMessageParams(m));
  return out;
}

export function toOpenAITools(req: ModelRequest): ChatCompletionTool[] {
  return req.tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: t.inputSchema },
  }));
}

function toMessageParams(message: ModelMessage): ChatCompletionMessageParam[] {
  const text = message.content
    .filter((c): c is Extract<ModelContent, { type: 'text' }> => c.type === 'text')
    .map((c) => c.text)
    .join('\n\n');
  if (message.role === 'assistant') {
    const calls = message.content.filter((c): c is Extract<ModelContent, { type: 'tool_call' }> => c.type === 'tool_call');
    const param: ChatCompletionAssistantMessageParam = { role: 'assistant', content: text === '' ? null : text };
    if (calls.length > 0) {
      param.tool_calls = calls.map((c) => ({
        id: c.id,
        type: 'function',
        // Replay malformed arguments exactly as the model wrote them.
        function: { name: c.name, arguments: isInvalidToolArguments(c.input) ? c.input.raw : JSON.stringify(c.input ?? {}) },
      }));
    }
    return [param];
  }
  const out: ChatCompletionMessageParam[] = [];
  for (const c of message.content) {
    if (c.type === 'tool_result') {
      out.push({ role: 'tool', tool_call_id: c.callId, content: c.isError ? `ERROR: ${c.content}` : c.content });
    }
  }
  if (text !== '') out.push({ role: 'user', content: text });
  return out;
}

export function fromChatCompletion(completion: ChatCompletion): ModelResponse {
  const choice = completion.choices[0];
  const content: ModelContent[] = [];
  const message = choice?.message;
  if (message?.content) content.push({ type: 'text', text: message.content });
  for (const call of message?.tool_calls ?? []) {
    if (call.type !== 'function') continue;
    content.push({ type: 'tool_call', id: call.id, name: call.function.name, input: parseToolArguments(call.function.arguments) });
  }
  const u = completion.usage;
  const cached = u?.prompt_tokens_details?.cached_tokens ?? 0;
  // A refusal comes in its own field (structured outputs, safety), or as a content-filter stop.
  const refusal = typeof message?.refusal === 'string' && message.refusal.trim() !== '' ? message.refusal : undefined;
  const stopReason = refusal || choice?.finish_reason === 'content_filter' ? 'refusal' : stopReasonOf(choice?.finish_reason, content);
  return {
    content,
    stopReason,
    ...(stopReason === 'refusal' ? { refusal: refusal ?? 'the output was withheld by the content filter' } : {}),
    usage: {
      // `prompt_tokens` includes the cached part; report the two apart as Anthropic does.
      inputTokens: Math.max(0, (u?.prompt_tokens ?? 0) - cached),
      outputTokens: u?.completion_tokens ?? 0,
      cacheReadTokens: cached,
      cacheWriteTokens: 0,
    },
    model: completion.model,
    id: completion.id,
  };
}

function stopReasonOf(reason: string | null | undefined, content: ModelContent[]): ModelResponse['stopReason'] {
  // Cut off at the token limit, possibly inside a tool call's arguments: that must not pass for a tool_use.
  if (reason === 'length') return 'max_tokens';
  // Some OpenAI-compatible servers answer tool calls with finish_reason "stop"; the calls decide.
  if (content.some((c) => c.type === 'tool_call')) return 'tool_use';
  switch (reason) {
    case 'stop':
      return 'end_turn';
    case 'tool_calls':
      return 'tool_use';
    case 'length':
      return 'max_tokens';
    default:
      return 'other';
  }
}

/**
 * Scripted misbehaviour for the fake model APIs, written once and rendered in each API's own shape —
 * the way real models fail in production:
 *
 * - `prose`: text where a tool call or the submission is due;
 * - `malformed`: arguments the model got wrong — Chat Completions carries them as a JSON string the
 *   model wrote, so they can be invalid JSON; the Messages API always hands back a parsed object, so
 *   there the same mistake is wrong types and missing required fields;
 * - `truncated`: the output hit the token limit mid tool call. Messages API: `stop_reason: "max_tokens"`
 *   and the cut `tool_use` carries what had been parsed so far (often `{}`); Chat Completions:
 *   `finish_reason: "length"` and `function.arguments` is the JSON cut where it stopped;
 * - `unknown`: a call to a tool name that is not in the request's tools;
 * - `refusal`: Messages API `stop_reason: "refusal"` with `stop_details` (and any text streamed before
 *   the classifier stopped it); Chat Completions `message.refusal` with `content: null`.
 *
 * A well-formed call or a plain text reply is written with the fakes' own reply shapes.
 */
import type { AnthropicReply } from './anthropic.js';
import type { OpenAIReply } from './openai.js';

export type Provider = 'anthropic' | 'openai';

export type Misbehaviour =
  | { kind: 'prose'; text: string }
  | {
      kind: 'malformed';
      name: string;
      /** Chat Completions: the arguments string exactly as the model wrote it (e.g. invalid JSON). */
      raw: string;
      /** Messages API: the parsed input with wrong types or fields missing. */
      wrongTypes: Record<string, unknown>;
    }
  | {
      kind: 'truncated';
      name: string;
      /** What the model meant to send. */
      input: Record<string, unknown>;
      /** Characters of its JSON written before the limit (Chat Completions); default: half. */
      keep?: number;
      /** Messages API: the input parsed up to the cut (default `{}`, what the API returns for a cut it could not parse). */
      parsed?: Record<string, unknown>;
      /** Text written before the call. */
      text?: string;
    }
  | { kind: 'unknown'; name: string; input: Record<string, unknown> }
  | {
      kind: 'refusal';
      /** Chat Completions: the message's `refusal` (default "I'm sorry, but I can't help with that."). */
      refusal?: string;
      /** Messages API: text streamed before the refusal stop. */
      text?: string;
      category?: 'cyber' | 'bio' | 'frontier_llm' | 'reasoning_extraction' | 'general_harms' | null;
      explanation?: string | null;
      /** A tool call already written when the refusal stop came (Messages API). */
      partialCall?: { name: string; input: Record<string, unknown> };
    };

export function asAnthropic(m: Misbehaviour): AnthropicReply {
  switch (m.kind) {
    case 'prose':
      return { text: m.text };
    case 'malformed':
      return { toolCalls: [{ name: m.name, input: m.wrongTypes }] };
    case 'truncated':
      return { ...(m.text ? { text: m.text } : {}), toolCalls: [{ name: m.name, input: m.parsed ?? {} }], stopReason: 'max_tokens' };
    case 'unknown':
      return { toolCalls: [{ name: m.name, input: m.input }] };
    case 'refusal':
      return {
        ...(m.text ? { text: m.text } : {}),
        ...(m.partialCall ? { toolCalls: [m.partialCall] } : {}),
        stopReason: 'refusal',
        stopDetails: { category: m.category ?? null, explanation: m.explanation ?? null },
      };
  }
}

export function asOpenAI(m: Misbehaviour): OpenAIReply {
  switch (m.kind) {
    case 'prose':
      return { text: m.text, finishReason: 'stop' };
    case 'malformed':
      return { toolCalls: [{ name: m.name, arguments: m.raw }] };
    case 'truncated': {
      const json = JSON.stringify(m.input);
      return { ...(m.text ? { text: m.text } : {}), toolCalls: [{ name: m.name, arguments: json.slice(0, m.keep ?? Math.floor(json.length / 2)) }], finishReason: 'length' };
    }
    case 'unknown':
      return { toolCalls: [{ name: m.name, arguments: m.input }] };
    case 'refusal':
      return { refusal: m.refusal ?? "I'm sorry, but I can't help with that.", finishReason: 'stop' };
  }
}

export function render(provider: Provider, m: Misbehaviour): AnthropicReply | OpenAIReply {
  return provider === 'anthropic' ? asAnthropic(m) : asOpenAI(m);
}

/** A well-formed tool call in either API's reply shape. */
export function call(provider: Provider, name: string, input: Record<string, unknown>): AnthropicReply | OpenAIReply {
  return provider === 'anthropic' ? { toolCalls: [{ name, input }] } : { toolCalls: [{ name, arguments: input }] };
}

/** A plain text reply in either API's shape. */
export function text(provider: Provider, t: string): AnthropicReply | OpenAIReply {
  return provider === 'anthropic' ? { text: t } : { text: t, finishReason: 'stop' };
}

/**
 * A fake Anthropic Messages API (`POST /v1/messages`) that validates requests the way the API does and
 * answers in its response and error shapes. Non-streaming only (the provider does not stream).
 *
 * Auth: @anthropic-ai/sdk 1.x sends the key as `Authorization: Bearer <key>` (its `apiKeyAuth`); the
 * `x-api-key` header of older clients is accepted too. `anthropic-version` is required.
 */
import { fakeId, startScriptedServer, type FakeServer, type RecordedRequest, type ScriptStep } from './script.js';

export interface AnthropicReply {
  text?: string;
  toolCalls?: { id?: string; name: string; input: unknown }[];
  /** Adds a `thinking` block (with a signature the next request must send back unchanged). */
  thinking?: string;
  stopReason?: 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence' | 'refusal' | 'model_context_window_exceeded';
  /** `stop_details` of a refusal, as the API sends it with `stop_reason: "refusal"`. */
  stopDetails?: { category: 'cyber' | 'bio' | 'frontier_llm' | 'reasoning_extraction' | 'general_harms' | null; explanation: string | null };
  usage?: Partial<{ input_tokens: number; output_tokens: number; cache_creation_input_tokens: number; cache_read_input_tokens: number }>;
  model?: string;
}

export interface FakeAnthropicOptions {
  script: ScriptStep<AnthropicReply>[];
  /** Named in the error when the script runs out. */
  name?: string;
  apiKey?: string;
  /**
   * `estimate`: the usage fields report what the request held instead of the fixed 10/5 — the fake
   * cannot tokenise, so `input_tokens` = ⌈characters of the system text + JSON of the tools + JSON of
   * the messages ÷ 4⌉ and `output_tokens` = ⌈JSON of the reply's content ÷ 4⌉ (no cache fields).
   * A reply's own `usage` still wins.
   */
  usage?: 'fixed' | 'estimate';
}

export interface FakeAnthropic extends FakeServer {
  /** Bodies of the successfully validated `POST /v1/messages` requests. */
  messageRequests(): any[];
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  503: 'api_error',
  529: 'overloaded_error',
};

const errorBody = (status: number, message: string) => ({
  type: 'error',
  error: { type: ERROR_TYPES[status] ?? 'api_error', message },
});

export async function startFakeAnthropic(options: FakeAnthropicOptions): Promise<FakeAnthropic> {
  const apiKey = options.apiKey ?? 'test-anthropic-key';
  // thinking signature → the tool_use ids issued with it; replies must carry it back unchanged.
  const signatures = new Map<string, { thinking: string; toolUseIds: string[] }>();
  const valid: any[] = [];
  const server = await startScriptedServer<AnthropicReply>(options.name ?? 'anthropic (unnamed)', options.script, {
    errorBody,
    validate(req) {
      const problem = validate(req, apiKey, signatures);
      if (problem) return { status: problem.status, body: errorBody(problem.status, problem.message) };
      valid.push(req.body);
      return undefined;
    },
    replyBody(reply, req) {
      const body = messageBody(reply, req, signatures);
      if (options.usage === 'estimate') {
        body.usage.input_tokens = reply.usage?.input_tokens ?? estimateInputTokens(req.body);
        body.usage.output_tokens = reply.usage?.output_tokens ?? Math.ceil(JSON.stringify(body.content).length / 4);
      }
      return body;
    },
  });
  return { ...server, messageRequests: () => valid };
}

/** ≈ 4 characters per token over everything the request sends the model: system, tools, messages. */
export function estimateInputTokens(body: any): number {
  const system = typeof body.system === 'string' ? body.system.length : (body.system ?? []).reduce((n: number, b: { text?: string }) => n + (b.text?.length ?? 0), 0);
  return Math.ceil((system + JSON.stringify(body.tools ?? []).length + JSON.stringify(body.messages ?? []).length) / 4);
}

function messageBody(reply: AnthropicReply, req: RecordedRequest, signatures: Map<string, { thinking: string; toolUseIds: string[] }>) {
  const content: any[] = [];
  const toolUses = (reply.toolCalls ?? []).map((c) => ({ type: 'tool_use', id: c.id ?? fakeId('toolu_'), name: c.name, input: c.input }));
  if (reply.thinking !== undefined) {
    const signature = fakeId('sig_');
    signatures.set(signature, { thinking: reply.thinking, toolUseIds: toolUses.map((t) => t.id) });
    content.push({ type: 'thinking', thinking: reply.thinking, signature });
  }
  if (reply.text !== undefined) content.push({ type: 'text', text: reply.text, citations: null });
  content.push(...toolUses);
  return {
    id: fakeId('msg_'),
    type: 'message',
    role: 'assistant',
    model: reply.model ?? req.body.model,
    content,
    stop_reason: reply.stopReason ?? (toolUses.length > 0 ? 'tool_use' : 'end_turn'),
    stop_sequence: null,
    stop_details: reply.stopDetails ? { type: 'refusal', ...reply.stopDetails } : null,
    usage: {
      input_tokens: 10,
      output_tokens: 5,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      service_tier: 'standard',
      ...reply.usage,
    },
  };
}

type Problem = { status: number; message: string } | undefined;

function validate(req: RecordedRequest, apiKey: string, signatures: Map<string, { thinking: string; toolUseIds: string[] }>): Problem {
  if (req.method !== 'POST' || req.path.split('?')[0] !== '/v1/messages') {
    return { status: 404, message: `Not found: ${req.method} ${req.path}` };
  }
  const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
  const key = req.headers['x-api-key'] ?? bearer;
  if (key !== apiKey) return { status: 401, message: 'invalid x-api-key' };
  if (!req.headers['anthropic-version']) return { status: 400, message: 'anthropic-version: header is required' };
  const body = req.body;
  if (typeof body !== 'object' || body === null) return invalid('request body must be a JSON object');
  if (body.stream) return invalid('this fake does not stream; the provider never sets stream: true');
  if (typeof body.model !== 'string' || body.model === '') return invalid('model: Field required');
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) return invalid('max_tokens: must be a positive integer');
  return validateSystem(body.system) ?? validateTools(body.tools) ?? validateMessages(body.messages, signatures) ?? validateBreakpoints(body);
}

const invalid = (message: string): Problem => ({ status: 400, message });

function validateSystem(system: unknown): Problem {
  if (system === undefined || typeof system === 'string') return undefined;
  if (!Array.isArray(system) || !system.every((b) => b?.type === 'text' && typeof b.text === 'string' && b.text !== '')) {
    return invalid('system: must be a string or a list of non-empty text blocks');
  }
  return undefined;
}

function validateTools(tools: unknown): Problem {
  if (tools === undefined) return undefined;
  if (!Array.isArray(tools)) return invalid('tools: must be a list');
  for (const [i, t] of tools.entries()) {
    if (typeof t?.name !== 'string' || !/^[a-zA-Z0-9_-]{1,128}$/.test(t.name)) return invalid(`tools.${i}.name: invalid`);
    if (typeof t.input_schema !== 'object' || t.input_schema === null) return invalid(`tools.${i}.input_schema: Field required`);
  }
  return undefined;
}

function validateMessages(messages: unknown, signatures: Map<string, { thinking: string; toolUseIds: string[] }>): Problem {
  if (!Array.isArray(messages) || messages.length === 0) return invalid('messages: at least one message is required');
  if (messages[0]?.role !== 'user') return invalid('messages.0.role: the first message must use the "user" role');
  for (const [i, m] of messages.entries()) {
    if (m.role !== 'user' && m.role !== 'assistant') return invalid(`messages.${i}.role: must be "user" or "assistant"`);
    if (i > 0 && messages[i - 1].role === m.role) return invalid(`messages.${i}: roles must alternate between "user" and "assistant"`);
    const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    if (!Array.isArray(blocks) || blocks.length === 0) return invalid(`messages.${i}.content: must be non-empty`);
    for (const b of blocks) if (b.type === 'text' && (typeof b.text !== 'string' || b.text === '')) return invalid(`messages.${i}: text content blocks must be non-empty`);
    const problem = m.role === 'user' ? validateToolResults(messages, i, blocks) : validateThinking(i, blocks, signatures);
    if (problem) return problem;
  }
  if (messages.at(-1).role !== 'user') return invalid('This model does not support assistant message prefill. The conversation must end with a user message.');
  return undefined;
}

/** Every tool_result answers a tool_use of the previous assistant turn, results come first, none missing. */
function validateToolResults(messages: any[], i: number, blocks: any[]): Problem {
  const prev = i > 0 ? messages[i - 1] : undefined;
  const prevBlocks: any[] = prev && Array.isArray(prev.content) ? prev.content : [];
  const asked = new Set(prevBlocks.filter((b) => b.type === 'tool_use').map((b) => b.id));
  let seenOther = false;
  const answered = new Set<string>();
  for (const b of blocks) {
    if (b.type !== 'tool_result') {
      seenOther = true;
      continue;
    }
    if (seenOther) return invalid(`messages.${i}: tool_result blocks must come first in the content array`);
    if (!asked.has(b.tool_use_id)) {
      return invalid(`messages.${i}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${b.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`);
    }
    answered.add(b.tool_use_id);
  }
  const missing = [...asked].filter((id) => !answered.has(id));
  if (missing.length > 0) {
    return invalid(`messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}`);
  }
  return undefined;
}

/** An assistant turn whose tool_use came with thinking must carry that thinking block back unchanged. */
function validateThinking(i: number, blocks: any[], signatures: Map<string, { thinking: string; toolUseIds: string[] }>): Problem {
  const ids = new Set(blocks.filter((b) => b.type === 'tool_use').map((b) => b.id));
  for (const [signature, issued] of signatures) {
    if (!issued.toolUseIds.some((id) => ids.has(id))) continue;
    const sent = blocks.find((b) => b.type === 'thinking' && b.signature === signature);
    if (!sent) return invalid(`messages.${i}: the assistant turn must include its thinking blocks unchanged when it contains tool_use`);
    if (sent.thinking !== issued.thinking) return invalid(`messages.${i}: thinking block was modified (invalid signature)`);
  }
  return undefined;
}

function validateBreakpoints(body: any): Problem {
  let count = 0;
  const visit = (b: any) => {
    if (b && typeof b === 'object' && b.cache_control !== undefined) {
      count += 1;
      if (b.cache_control?.type !== 'ephemeral') throw new Error('cache_control.type must be "ephemeral"');
    }
  };
  try {
    if (Array.isArray(body.system)) body.system.forEach(visit);
    (body.tools ?? []).forEach(visit);
    for (const m of body.messages) if (Array.isArray(m.content)) m.content.forEach(visit);
  } catch (err) {
    return invalid((err as Error).message);
  }
  return count > 4 ? invalid(`A maximum of 4 blocks with cache_control may be provided. Found ${count}.`) : undefined;
}

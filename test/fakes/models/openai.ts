/**
 * A fake OpenAI Chat Completions API (`POST {prefix}/v1/chat/completions`) that validates requests the way
 * the API does and answers in its response and error shapes (`{error:{message,type,param,code}}`).
 *
 * Model rules mirrored from the live API as integrators report them (2026): GPT-5.6+ / GPT-6 models
 * reject `max_tokens` (use `max_completion_tokens`), and on Chat Completions accept function tools only
 * with `reasoning_effort: 'none'` — omitting it also fails, since those models default to reasoning.
 */
import { fakeId, startScriptedServer, type FakeServer, type RecordedRequest, type ScriptStep } from './script.js';

export interface OpenAIReply {
  text?: string;
  /** `arguments` as an object is JSON-encoded; a string is sent verbatim (to test malformed JSON). */
  toolCalls?: { id?: string; name: string; arguments: string | Record<string, unknown> }[];
  finishReason?: 'stop' | 'tool_calls' | 'length' | 'content_filter';
  /** The message's `refusal` (the model declined; `content` is then usually null). */
  refusal?: string;
  usage?: { prompt_tokens?: number; completion_tokens?: number; cached_tokens?: number };
  model?: string;
}

export interface FakeOpenAIOptions {
  script: ScriptStep<OpenAIReply>[];
  name?: string;
  apiKey?: string;
  /** Serve under a path prefix, like a gateway (`/openai` → `/openai/v1/chat/completions`). */
  pathPrefix?: string;
}

export interface FakeOpenAI extends FakeServer {
  /** The base URL to give the OpenAI SDK: `url + pathPrefix + '/v1'`. */
  baseURL: string;
  completionRequests(): any[];
}

const ERROR_TYPES: Record<number, { type: string; code: string | null }> = {
  400: { type: 'invalid_request_error', code: null },
  401: { type: 'invalid_request_error', code: 'invalid_api_key' },
  404: { type: 'invalid_request_error', code: 'model_not_found' },
  429: { type: 'requests', code: 'rate_limit_exceeded' },
  500: { type: 'server_error', code: null },
  503: { type: 'server_error', code: 'service_unavailable' },
};

const errorBody = (status: number, message: string, param: string | null = null) => ({
  error: { message, type: ERROR_TYPES[status]?.type ?? 'server_error', param, code: ERROR_TYPES[status]?.code ?? null },
});

export async function startFakeOpenAI(options: FakeOpenAIOptions): Promise<FakeOpenAI> {
  const apiKey = options.apiKey ?? 'test-openai-key';
  const prefix = (options.pathPrefix ?? '').replace(/\/+$/, '');
  const valid: any[] = [];
  const server = await startScriptedServer<OpenAIReply>(options.name ?? 'openai (unnamed)', options.script, {
    errorBody: (status, message) => errorBody(status, message),
    validate(req) {
      const problem = validate(req, apiKey, `${prefix}/v1/chat/completions`);
      if (problem) return { status: problem.status, body: errorBody(problem.status, problem.message, problem.param ?? null) };
      valid.push(req.body);
      return undefined;
    },
    replyBody: completionBody,
  });
  return { ...server, baseURL: `${server.url}${prefix}/v1`, completionRequests: () => valid };
}

function completionBody(reply: OpenAIReply, req: RecordedRequest) {
  const toolCalls = (reply.toolCalls ?? []).map((c) => ({
    id: c.id ?? fakeId('call_'),
    type: 'function',
    function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) },
  }));
  const prompt = reply.usage?.prompt_tokens ?? 20;
  const completion = reply.usage?.completion_tokens ?? 7;
  return {
    id: fakeId('chatcmpl-'),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: reply.model ?? req.body.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: reply.text ?? null,
          refusal: reply.refusal ?? null,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: reply.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
      },
    ],
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      prompt_tokens_details: { cached_tokens: reply.usage?.cached_tokens ?? 0 },
    },
  };
}

type Problem = { status: number; message: string; param?: string } | undefined;
const invalid = (message: string, param?: string): Problem => ({ status: 400, message, ...(param ? { param } : {}) });

function validate(req: RecordedRequest, apiKey: string, path: string): Problem {
  if (req.method !== 'POST' || req.path.split('?')[0] !== path) {
    return { status: 404, message: `Invalid URL (${req.method} ${req.path})` };
  }
  if (req.headers.authorization !== `Bearer ${apiKey}`) {
    return { status: 401, message: 'Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.' };
  }
  const body = req.body;
  if (typeof body !== 'object' || body === null) return invalid('We could not parse the JSON body of your request.');
  if (body.stream) return invalid('this fake does not stream; the provider never sets stream: true', 'stream');
  if (typeof body.model !== 'string' || body.model === '') return invalid("you must provide a model parameter", 'model');
  const reasoningModel = /^gpt-(5\.6|6)/.test(body.model);
  if (reasoningModel && body.max_tokens !== undefined) {
    return invalid("Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", 'max_tokens');
  }
  if (reasoningModel && Array.isArray(body.tools) && body.tools.length > 0 && body.reasoning_effort !== 'none') {
    return invalid(
      `Function tools with reasoning_effort are not supported for ${body.model} in /v1/chat/completions. To use function tools, use /v1/responses or set reasoning_effort to 'none'.`,
      'reasoning_effort',
    );
  }
  for (const [i, t] of (body.tools ?? []).entries()) {
    if (t?.type !== 'function' || typeof t.function?.name !== 'string') return invalid(`Invalid 'tools[${i}]': expected a function tool with a name.`, `tools[${i}]`);
  }
  return validateMessages(body.messages);
}

function validateMessages(messages: unknown): Problem {
  if (!Array.isArray(messages) || messages.length === 0) return invalid("Invalid 'messages': empty array.", 'messages');
  let pending = new Set<string>();
  for (const [i, m] of messages.entries()) {
    if (!['system', 'developer', 'user', 'assistant', 'tool'].includes(m?.role)) return invalid(`Invalid value for 'messages[${i}].role'.`, `messages[${i}].role`);
    if (m.role === 'tool') {
      if (!pending.has(m.tool_call_id)) {
        return invalid("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", `messages.[${i}].role`);
      }
      pending.delete(m.tool_call_id);
      continue;
    }
    if (pending.size > 0) {
      return invalid(
        `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...pending].join(', ')}`,
        'messages',
      );
    }
    if (m.role === 'assistant' && Array.isArray(m.tool_calls)) pending = new Set(m.tool_calls.map((c: any) => c.id));
  }
  if (pending.size > 0) return invalid(`tool_call_ids did not have response messages: ${[...pending].join(', ')}`, 'messages');
  return undefined;
}

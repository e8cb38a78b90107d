/**
 * OpenAI Chat Completions through the `openai` SDK; also any OpenAI-compatible server (vLLM, Ollama,
 * LiteLLM, a gateway) through `baseURL`. Retries are the SDK's own (408/409/429/5xx, timeouts and
 * connection errors, exponential backoff honouring `retry-after-ms` / `retry-after`).
 */
import OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import type { ReasoningEffort } from 'openai/resources/shared';
import { cost } from '../pricing.js';
import type { ModelProvider, ModelRequest, ModelResponse, ModelUsage } from '../types.js';
import { errorBodyMessage, modelError, type ModelFailure } from './errors.js';
import { fromChatCompletion, toOpenAIMessages, toOpenAITools } from './openai-wire.js';

/**
 * GPT-6 Sol: OpenAI's current mid-tier model for "complex coding and agentic workflows" (2026-09-22,
 * $2/$10 per MTok), in the SDK's `ChatModel` union. Chosen over the newer gpt-6.2-sol / gpt-6-astra
 * because those accept no `reasoning_effort: 'none'`, and on /v1/chat/completions the GPT-5.6+ family
 * accepts function tools only with `reasoning_effort: 'none'` (reported by many integrators from the API's
 * own 400: "Function tools with reasoning_effort are not supported … set reasoning_effort to 'none'").
 */
export const DEFAULT_OPENAI_MODEL = 'gpt-6-sol';

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

export interface OpenAIProviderOptions {
  apiKey: string;
  /**
   * The API root that `/chat/completions` is appended to: `https://api.openai.com/v1`, a gateway such as
   * `https://host/openai/v1`, or a bare self-hosted origin `http://vllm:8000` (then `/v1` is added).
   */
  baseURL?: string;
  model?: string;
  maxRetries?: number;
  timeoutMs?: number;
  /**
   * `reasoning_effort` to send. Default: `'none'` on requests with tools for GPT-5.6+ / GPT-6 models
   * (required there, see {@link DEFAULT_OPENAI_MODEL}, also behind a gateway); omitted for other models,
   * which self-hosted servers may not know. `null` never sends it.
   */
  reasoningEffort?: ReasoningEffort;
  /**
   * Current OpenAI models reject `max_tokens` and require `max_completion_tokens` (the default); some
   * older self-hosted servers only know `max_tokens`.
   */
  tokenLimitField?: 'max_completion_tokens' | 'max_tokens';
}

export class OpenAIProvider implements ModelProvider {
  readonly name = 'openai';
  readonly model: string;
  readonly #client: OpenAI;
  readonly #options: OpenAIProviderOptions;
  readonly #maxRetries: number;
  readonly #timeoutMs: number;

  constructor(options: OpenAIProviderOptions) {
    this.#options = options;
    this.model = options.model ?? DEFAULT_OPENAI_MODEL;
    this.#maxRetries = options.maxRetries ?? 2;
    this.#timeoutMs = options.timeoutMs ?? 10 * 60 * 1000;
    this.#client = new OpenAI({
      apiKey: options.apiKey,
      // Explicit, so OPENAI_BASE_URL in the environment cannot redirect the agent.
      baseURL: openAIBaseURL(options.baseURL),
      maxRetries: this.#maxRetries,
      timeout: this.#timeoutMs,
    });
  }

  async complete(req: ModelRequest): Promise<ModelResponse> {
    let completion: ChatCompletion;
    try {
      completion = await this.#client.chat.completions.create(this.#params(req), req.signal ? { signal: req.signal } : undefined);
    } catch (err) {
      if (req.signal?.aborted) throw req.signal.reason ?? err;
      const failure = openAIFailure(err, this.#timeoutMs);
      throw failure ? modelError(failure, { provider: this.name, model: this.model, maxRetries: this.#maxRetries, apiKey: this.#options.apiKey }) : err;
    }
    return fromChatCompletion(completion);
  }

  cost(usage: ModelUsage): { usd: number; priced: boolean } {
    return cost(this.model, usage);
  }

  #params(req: ModelRequest): ChatCompletionCreateParamsNonStreaming {
    const params: ChatCompletionCreateParamsNonStreaming = { model: this.model, messages: toOpenAIMessages(req) };
    if (req.tools.length > 0) params.tools = toOpenAITools(req);
    params[this.#options.tokenLimitField ?? 'max_completion_tokens'] = req.maxOutputTokens;
    const effort =
      this.#options.reasoningEffort !== undefined
        ? this.#options.reasoningEffort
        : req.tools.length > 0 && toolsNeedNoReasoning(this.model)
          ? 'none'
          : null;
    if (effort !== null) params.reasoning_effort = effort;
    return params;
  }
}

/** GPT-5.6 and later reason by default and then refuse function tools on Chat Completions. */
function toolsNeedNoReasoning(model: string): boolean {
  return /^gpt-(5\.([6-9]|\d{2,})|([6-9]|\d{2,})(\.|-|$))/.test(model);
}

/**
 * The SDK appends `/chat/completions` to the base URL, which must therefore include the version prefix.
 * A bare origin (no path) is never a valid root, so `/v1` is added; any other path is kept as given
 * (gateways use prefixes such as `/openai/v1` or `/v1beta/openai`).
 */
export function openAIBaseURL(baseURL: string | undefined): string {
  if (!baseURL) return OPENAI_DEFAULT_BASE_URL;
  const url = new URL(baseURL);
  const path = url.pathname.replace(/\/+$/, '');
  url.pathname = path === '' ? '/v1' : path;
  return url.toString().replace(/\/+$/, '');
}

function openAIFailure(err: unknown, timeoutMs: number): ModelFailure | undefined {
  if (err instanceof OpenAI.APIConnectionTimeoutError) return { kind: 'timeout', timeoutMs };
  if (err instanceof OpenAI.APIUserAbortError) return undefined;
  if (err instanceof OpenAI.APIConnectionError) return { kind: 'connection', message: err.message };
  if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
    return { kind: 'status', status: err.status, message: errorBodyMessage(err.status, err.error, err.message) };
  }
  return undefined;
}

/**
 * The Anthropic Messages API through `@anthropic-ai/sdk`. Retries are the SDK's own (408/409/429/5xx/529,
 * timeouts and connection errors, exponential backoff honouring `retry-after-ms` / `retry-after`).
 */
import Anthropic from '@anthropic-ai/sdk';
import { cost } from '../pricing.js';
import type { ModelProvider, ModelRequest, ModelResponse, ModelUsage } from '../types.js';
import { fromAnthropicMessage, ThinkingMemo, toAnthropicParams } from './anthropic-wire.js';
import { errorBodyMessage, modelError, type ModelFailure } from './errors.js';

/**
 * Claude Sonnet 5.5: the SDK's current Sonnet (added in 0.129.0, 2026-09-28), not in the SDK's
 * deprecated-model list (`internal/data/deprecated-models`), and Anthropic's "best combination of speed
 * and intelligence" — an agent loop of many short tool turns wants speed, at $2/$10 per MTok.
 * (Claude Opus 5.5 is the stronger, 2× pricier choice; set `model` to use it.)
 */
export const DEFAULT_ANTHROPIC_MODEL = 'claude-sonnet-5-5';

export const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';

export interface AnthropicProviderOptions {
  apiKey: string;
  /** API root, e.g. `https://api.anthropic.com` or a gateway; a trailing `/v1` is accepted and dropped. */
  baseURL?: string;
  model?: string;
  /** Retries after the first attempt (SDK default 2). */
  maxRetries?: number;
  /** Per attempt, in ms (SDK default 10 minutes). */
  timeoutMs?: number;
}

export class AnthropicProvider implements ModelProvider {
  readonly name = 'anthropic';
  readonly model: string;
  readonly #client: Anthropic;
  readonly #maxRetries: number;
  readonly #timeoutMs: number;
  readonly #memo = new ThinkingMemo();
  readonly #apiKey: string;

  constructor(options: AnthropicProviderOptions) {
    this.#apiKey = options.apiKey;
    this.model = options.model ?? DEFAULT_ANTHROPIC_MODEL;
    this.#maxRetries = options.maxRetries ?? 2;
    this.#timeoutMs = options.timeoutMs ?? 10 * 60 * 1000;
    this.#client = new Anthropic({
      apiKey: options.apiKey,
      // Explicit, so ANTHROPIC_BASE_URL in the environment cannot redirect the agent.
      baseURL: anthropicBaseURL(options.baseURL),
      maxRetries: this.#maxRetries,
      timeout: this.#timeoutMs,
      // Vigil creates its own GenAI spans; the SDK would otherwise emit spans (and propagate trace
      // headers) whenever the app registers a global tracer provider.
      openTelemetry: false,
    });
  }

  async complete(req: ModelRequest): Promise<ModelResponse> {
    const params = toAnthropicParams(req, this.model, this.#memo);
    let message: Anthropic.Message;
    try {
      message = await this.#client.messages.create(params, req.signal ? { signal: req.signal } : undefined);
    } catch (err) {
      if (req.signal?.aborted) throw req.signal.reason ?? err;
      throw this.#translate(err);
    }
    this.#memo.remember(message);
    return fromAnthropicMessage(message);
  }

  cost(usage: ModelUsage): { usd: number; priced: boolean } {
    return cost(this.model, usage);
  }

  #translate(err: unknown): unknown {
    const failure = anthropicFailure(err, this.#timeoutMs);
    return failure ? modelError(failure, { provider: this.name, model: this.model, maxRetries: this.#maxRetries, apiKey: this.#apiKey }) : err;
  }
}

/** The SDK appends `/v1/messages` itself, so a configured `.../v1` must not be doubled. */
export function anthropicBaseURL(baseURL: string | undefined): string {
  if (!baseURL) return ANTHROPIC_DEFAULT_BASE_URL;
  return baseURL.replace(/\/+$/, '').replace(/\/v1$/, '');
}

function anthropicFailure(err: unknown, timeoutMs: number): ModelFailure | undefined {
  if (err instanceof Anthropic.APIConnectionTimeoutError) return { kind: 'timeout', timeoutMs };
  if (err instanceof Anthropic.APIUserAbortError) return undefined;
  if (err instanceof Anthropic.APIConnectionError) return { kind: 'connection', message: err.message };
  if (err instanceof Anthropic.APIError && typeof err.status === 'number') {
    return { kind: 'status', status: err.status, message: errorBodyMessage(err.status, err.error, err.message) };
  }
  return undefined;
}

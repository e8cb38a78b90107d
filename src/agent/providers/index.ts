/** Builds the configured model provider; `main.ts` calls this once with the parsed config slice. */
import type { ModelProvider } from '../types.js';
import { AnthropicProvider } from './anthropic.js';
import { OpenAIProvider } from './openai.js';

export interface ProviderConfig {
  provider: 'anthropic' | 'openai';
  apiKey: string;
  /** Anthropic: the API root (`/v1` optional). OpenAI: the root `/chat/completions` hangs off; a bare origin gets `/v1`. */
  baseURL?: string;
  /** Defaults to {@link DEFAULT_ANTHROPIC_MODEL} / {@link DEFAULT_OPENAI_MODEL}. */
  model?: string;
  /** Retries after the first attempt, done by the SDK with backoff (default 2). */
  maxRetries?: number;
  /** Per attempt (default 10 minutes). */
  timeoutMs?: number;
}

export function createProvider(config: ProviderConfig): ModelProvider {
  const { provider, ...options } = config;
  switch (provider) {
    case 'anthropic':
      return new AnthropicProvider(options);
    case 'openai':
      return new OpenAIProvider(options);
  }
}

export { AnthropicProvider, DEFAULT_ANTHROPIC_MODEL } from './anthropic.js';
export { OpenAIProvider, DEFAULT_OPENAI_MODEL } from './openai.js';
export { ModelConfigurationError, ModelRequestError } from './errors.js';
export { isInvalidToolArguments, type InvalidToolArguments } from './tool-input.js';

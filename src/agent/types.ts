/**
 * The model port: one interface, two real implementations (`@anthropic-ai/sdk` and `openai`, the latter
 * also serving any OpenAI-compatible endpoint through `baseURL`). The loop in `agent/loop.ts` speaks
 * only these types; providers translate to and from their SDK's wire shapes.
 */

/** A tool the model may call: name, description for the model, JSON schema of its input. */
export interface ModelTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export type ModelContent =
  | { type: 'text'; text: string }
  | { type: 'tool_call'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; callId: string; content: string; isError?: boolean };

export interface ModelMessage {
  role: 'user' | 'assistant';
  content: ModelContent[];
}

export interface ModelRequest {
  /** Stable instructions first (cached where the provider offers prompt caching). */
  system: string;
  tools: ModelTool[];
  messages: ModelMessage[];
  maxOutputTokens: number;
  /** Abort the call (wall-time budget, /sre stop). */
  signal?: AbortSignal;
}

export interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export interface ModelResponse {
  content: ModelContent[];
  /**
   * `max_tokens`: the output was cut at the token limit (or the context window), possibly mid tool call.
   * `refusal`: the model (or the provider's safety layer) declined to answer; see {@link refusal}.
   */
  stopReason: 'end_turn' | 'tool_use' | 'max_tokens' | 'refusal' | 'other';
  /** What the provider said about a refusal (its category or explanation, or the model's refusal text). */
  refusal?: string;
  usage: ModelUsage;
  model: string;
  /** Provider's response id, for traces. */
  id?: string;
}

/** Why a model call failed, after the SDK's own retries. */
export class ModelUnavailableError extends Error {
  constructor(
    readonly provider: string,
    readonly status: number | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'ModelUnavailableError';
  }
}

export interface ModelProvider {
  /** `anthropic` | `openai` (semconv gen_ai.provider.name). */
  readonly name: string;
  readonly model: string;
  complete(req: ModelRequest): Promise<ModelResponse>;
  /** USD for this usage at the model's list price (0 when the price is unknown, and said so). */
  cost(usage: ModelUsage): { usd: number; priced: boolean };
}

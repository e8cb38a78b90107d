/**
 * List prices, in USD per million tokens, used to show what an investigation cost.
 *
 * These are LIST prices copied by hand and must be kept up to date; they ignore batch discounts,
 * regional surcharges (e.g. Anthropic `inference_geo: "us"` ×1.1), priority/fast tiers and negotiated
 * rates. An unknown model is reported as unpriced (`priced: false`), never guessed.
 *
 * Sources, as published around the installed SDKs' dates (@anthropic-ai/sdk 1.14.0, 2026-11-24;
 * openai 7.59.0, 2026-11-17):
 * - Anthropic: https://platform.claude.com/docs/en/about-claude/pricing ("Model pricing" and
 *   "Prompt caching"). `cacheWrite` is the 5-minute TTL rate, the TTL Vigil's `cache_control:
 *   {type:'ephemeral'}` requests. Claude Sonnet 5.5 cache reads were cut from $0.20 to $0.10 on
 *   2026-10-07. Claude Haiku 5.5 bills every token of a request at a higher tier once its prompt
 *   (input + cache reads + cache writes) exceeds 100,000 tokens.
 * - OpenAI: https://developers.openai.com/api/docs/pricing. Chat Completions reports no cache writes,
 *   so `cacheWrite` is never used for OpenAI usage. GPT-6 Sol and Luna bill input and cached input at
 *   2× and output at 1.5× once a request's input exceeds 272,000 tokens.
 */
import type { ModelUsage } from './types.js';

export interface TokenPrices {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export interface ModelPrice extends TokenPrices {
  /** A higher tier applied to the whole request once its prompt exceeds `aboveTokens`. */
  longPrompt?: { aboveTokens: number; prices: TokenPrices };
}

export const MODEL_PRICES: Readonly<Record<string, ModelPrice>> = {
  // Anthropic
  'claude-opus-5-5': { input: 4, output: 20, cacheRead: 0.2, cacheWrite: 5 },
  'claude-sonnet-5-5': { input: 2, output: 10, cacheRead: 0.1, cacheWrite: 2.5 },
  'claude-haiku-5-5': {
    input: 0.1,
    output: 0.5,
    cacheRead: 0.01,
    cacheWrite: 0.125,
    longPrompt: { aboveTokens: 100_000, prices: { input: 0.5, output: 2.5, cacheRead: 0.05, cacheWrite: 0.625 } },
  },
  'claude-opus-5': { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
  'claude-sonnet-5': { input: 2, output: 10, cacheRead: 0.2, cacheWrite: 2.5 },
  'claude-haiku-4-5': { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
  // OpenAI
  'gpt-6-sol': {
    input: 2,
    output: 10,
    cacheRead: 0.2,
    cacheWrite: 2,
    longPrompt: { aboveTokens: 272_000, prices: { input: 4, output: 15, cacheRead: 0.4, cacheWrite: 4 } },
  },
  'gpt-6-luna': {
    input: 0.1,
    output: 0.5,
    cacheRead: 0.01,
    cacheWrite: 0.1,
    longPrompt: { aboveTokens: 272_000, prices: { input: 0.2, output: 0.75, cacheRead: 0.02, cacheWrite: 0.2 } },
  },
  'gpt-6.1-sol': { input: 2, output: 10, cacheRead: 0.1, cacheWrite: 2 },
  'gpt-6-astra': { input: 10, output: 50, cacheRead: 1, cacheWrite: 10 },
  'gpt-6.2-astra': { input: 8, output: 40, cacheRead: 0.4, cacheWrite: 8 },
};

export interface Cost {
  usd: number;
  /** False when the model has no list price here; `usd` is then 0 and must be shown as unknown. */
  priced: boolean;
}

/** The list price of `model`, also for dated snapshots (`gpt-6-sol-2026-09-22`, `claude-x-20260101`). */
export function priceOf(model: string): ModelPrice | undefined {
  return MODEL_PRICES[model] ?? MODEL_PRICES[model.replace(/-(\d{4}-\d{2}-\d{2}|\d{8})$/, '')];
}

export function cost(model: string, usage: ModelUsage): Cost {
  const price = priceOf(model);
  if (!price) return { usd: 0, priced: false };
  const prompt = usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
  const rates = price.longPrompt && prompt > price.longPrompt.aboveTokens ? price.longPrompt.prices : price;
  const usd =
    (usage.inputTokens * rates.input +
      usage.outputTokens * rates.output +
      usage.cacheReadTokens * rates.cacheRead +
      usage.cacheWriteTokens * rates.cacheWrite) /
    1_000_000;
  return { usd, priced: true };
}

import { describe, expect, it } from 'vitest';
import { cost, priceOf } from '../../../src/agent/pricing.js';
import { DEFAULT_ANTHROPIC_MODEL } from '../../../src/agent/providers/anthropic.js';
import { DEFAULT_OPENAI_MODEL } from '../../../src/agent/providers/openai.js';

const usage = (inputTokens: number, outputTokens: number, cacheReadTokens = 0, cacheWriteTokens = 0) => ({
  inputTokens,
  outputTokens,
  cacheReadTokens,
  cacheWriteTokens,
});

describe('cost', () => {
  it('prices both default models', () => {
    expect(priceOf(DEFAULT_ANTHROPIC_MODEL)).toBeDefined();
    expect(priceOf(DEFAULT_OPENAI_MODEL)).toBeDefined();
  });

  it('adds input, output, cache reads and cache writes at their own rates', () => {
    // claude-opus-5-5: $4 in, $20 out, $0.20 cache read, $5 cache write per MTok.
    expect(cost('claude-opus-5-5', usage(1_000_000, 100_000, 2_000_000, 10_000)).usd).toBeCloseTo(4 + 2 + 0.4 + 0.05, 10);
  });

  it('switches the whole request to the long-prompt tier past the threshold', () => {
    // claude-haiku-5-5 is billed at $0.50/$2.50 once input + cache reads + cache writes exceed 100k.
    expect(cost('claude-haiku-5-5', usage(50_000, 1_000, 50_000)).usd).toBeCloseTo((50_000 * 0.1 + 1_000 * 0.5 + 50_000 * 0.01) / 1e6, 12);
    expect(cost('claude-haiku-5-5', usage(50_000, 1_000, 50_001)).usd).toBeCloseTo((50_000 * 0.5 + 1_000 * 2.5 + 50_001 * 0.05) / 1e6, 12);
    // gpt-6-sol past 272k input: $4 in, $15 out.
    expect(cost('gpt-6-sol', usage(300_000, 1_000)).usd).toBeCloseTo((300_000 * 4 + 1_000 * 15) / 1e6, 12);
  });

  it('prices dated snapshots like their alias', () => {
    expect(cost('gpt-6-sol-2026-09-22', usage(100_000, 0))).toEqual(cost('gpt-6-sol', usage(100_000, 0)));
    expect(cost('gpt-6-sol-2026-09-22', usage(100_000, 0)).usd).toBeCloseTo(0.2, 12);
  });

  it('never guesses an unknown model', () => {
    expect(cost('llama-4-maverick', usage(1_000_000, 1_000_000))).toEqual({ usd: 0, priced: false });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AnthropicProvider,
  createProvider,
  DEFAULT_ANTHROPIC_MODEL,
  DEFAULT_OPENAI_MODEL,
  OpenAIProvider,
} from '../../../src/agent/providers/index.js';
import type { ModelProvider } from '../../../src/agent/types.js';
import { startFakeAnthropic, type FakeAnthropic } from '../../fakes/models/anthropic.js';
import { startFakeOpenAI, type FakeOpenAI } from '../../fakes/models/openai.js';

let anthropic: FakeAnthropic;
let openai: FakeOpenAI;
beforeAll(async () => {
  anthropic = await startFakeAnthropic({ name: 'createProvider anthropic', apiKey: 'a-key', script: [{ text: 'from claude' }] });
  openai = await startFakeOpenAI({ name: 'createProvider openai', apiKey: 'o-key', script: [{ text: 'from gpt' }] });
});
afterAll(async () => {
  await Promise.all([anthropic.close(), openai.close()]);
});

async function callCapturingWarnings(provider: ModelProvider): Promise<{ text: string; warnings: string[] }> {
  const warnings: string[] = [];
  const original = console.warn;
  const onWarning = (w: Error) => warnings.push(w.message);
  console.warn = (...args: unknown[]) => warnings.push(args.map(String).join(' '));
  process.on('warning', onWarning);
  try {
    const res = await provider.complete({
      system: 'sys',
      tools: [{ name: 'noop', description: 'does nothing', inputSchema: { type: 'object' } }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      maxOutputTokens: 64,
    });
    await new Promise((r) => setImmediate(r));
    return { text: res.content.map((c) => (c.type === 'text' ? c.text : '')).join(''), warnings };
  } finally {
    console.warn = original;
    process.off('warning', onWarning);
  }
}

describe('createProvider', () => {
  it('builds the Anthropic provider with the default model, which calls cleanly', async () => {
    const provider = createProvider({ provider: 'anthropic', apiKey: 'a-key', baseURL: anthropic.url, maxRetries: 0, timeoutMs: 5_000 });
    expect(provider).toBeInstanceOf(AnthropicProvider);
    expect(provider.name).toBe('anthropic');
    expect(provider.model).toBe(DEFAULT_ANTHROPIC_MODEL);
    expect(await callCapturingWarnings(provider)).toEqual({ text: 'from claude', warnings: [] });
  });

  it('builds the OpenAI provider with the default model, which calls cleanly', async () => {
    const provider = createProvider({ provider: 'openai', apiKey: 'o-key', baseURL: openai.baseURL, maxRetries: 0, timeoutMs: 5_000 });
    expect(provider).toBeInstanceOf(OpenAIProvider);
    expect(provider.name).toBe('openai');
    expect(provider.model).toBe(DEFAULT_OPENAI_MODEL);
    expect(await callCapturingWarnings(provider)).toEqual({ text: 'from gpt', warnings: [] });
  });

  it('passes a chosen model through', () => {
    expect(createProvider({ provider: 'anthropic', apiKey: 'k', model: 'claude-opus-5-5' }).model).toBe('claude-opus-5-5');
  });
});

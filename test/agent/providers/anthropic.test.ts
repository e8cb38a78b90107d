import { afterEach, describe, expect, it } from 'vitest';
import { AnthropicProvider, DEFAULT_ANTHROPIC_MODEL } from '../../../src/agent/providers/anthropic.js';
import { ModelConfigurationError, ModelRequestError } from '../../../src/agent/providers/errors.js';
import { ModelUnavailableError, type ModelMessage, type ModelRequest } from '../../../src/agent/types.js';
import { estimateInputTokens, startFakeAnthropic, type FakeAnthropicOptions, type FakeAnthropic } from '../../fakes/models/anthropic.js';

const KEY = 'test-anthropic-key';
const tools = [
  { name: 'get_pods', description: 'List pods in a namespace', inputSchema: { type: 'object', properties: { namespace: { type: 'string' } }, required: ['namespace'] } },
  { name: 'get_logs', description: 'Tail logs of a pod', inputSchema: { type: 'object', properties: { pod: { type: 'string' } } } },
];
const ask = (text: string): ModelMessage => ({ role: 'user', content: [{ type: 'text', text }] });
const request = (messages: ModelMessage[], extra: Partial<ModelRequest> = {}): ModelRequest => ({
  system: 'You are Vigil, an SRE agent.',
  tools,
  messages,
  maxOutputTokens: 1024,
  ...extra,
});

const servers: FakeAnthropic[] = [];
async function fake(options: FakeAnthropicOptions): Promise<FakeAnthropic> {
  const server = await startFakeAnthropic(options);
  servers.push(server);
  return server;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('AnthropicProvider against the fake Messages API', () => {
  it('sends a cached system prompt and tools, and maps a text reply and its usage', async () => {
    const api = await fake({
      name: 'text reply',
      script: [{ text: 'The pod is OOMKilled.', usage: { input_tokens: 120, output_tokens: 30, cache_creation_input_tokens: 2000, cache_read_input_tokens: 5000 } }],
    });
    const provider = new AnthropicProvider({ apiKey: KEY, baseURL: api.url });
    const res = await provider.complete(request([ask('Why is checkout failing?')]));

    expect(res.content).toEqual([{ type: 'text', text: 'The pod is OOMKilled.' }]);
    expect(res.stopReason).toBe('end_turn');
    expect(res.model).toBe(DEFAULT_ANTHROPIC_MODEL);
    expect(res.id).toMatch(/^msg_/);
    expect(res.usage).toEqual({ inputTokens: 120, outputTokens: 30, cacheReadTokens: 5000, cacheWriteTokens: 2000 });
    // claude-sonnet-5-5: $2 in, $10 out, $0.10 cache read, $2.50 cache write per MTok.
    const cost = provider.cost(res.usage);
    expect(cost.priced).toBe(true);
    expect(cost.usd).toBeCloseTo((120 * 2 + 30 * 10 + 5000 * 0.1 + 2000 * 2.5) / 1e6, 10);

    const [sent] = api.requests;
    expect(sent?.path).toBe('/v1/messages');
    expect(sent?.headers['anthropic-version']).toBeTruthy();
    expect(sent?.body.model).toBe(DEFAULT_ANTHROPIC_MODEL);
    expect(sent?.body.max_tokens).toBe(1024);
    // Prompt caching: the system block, the last tool (caching all tools), the last message block.
    expect(sent?.body.system).toEqual([{ type: 'text', text: 'You are Vigil, an SRE agent.', cache_control: { type: 'ephemeral' } }]);
    expect(sent?.body.tools[0]).toEqual({ name: 'get_pods', description: 'List pods in a namespace', input_schema: tools[0]?.inputSchema });
    expect(sent?.body.tools[1].cache_control).toEqual({ type: 'ephemeral' });
    expect(sent?.body.messages.at(-1).content.at(-1).cache_control).toEqual({ type: 'ephemeral' });
    // The key travels in a header, never in the body.
    expect(sent?.raw).not.toContain(KEY);
    expect(sent?.body.stream).toBeUndefined();
  });

  it("with usage 'estimate', reports what the request held (characters ÷ 4), as the bench counts it", async () => {
    const api = await fake({ name: 'estimate', usage: 'estimate', script: [{ text: 'ok' }, { text: 'again', usage: { input_tokens: 7 } }] });
    const provider = new AnthropicProvider({ apiKey: KEY, baseURL: api.url });
    const long = 'x'.repeat(4000);
    const res = await provider.complete(request([ask(long)]));
    const body = api.messageRequests()[0];
    const chars = 'You are Vigil, an SRE agent.'.length + JSON.stringify(body.tools).length + JSON.stringify(body.messages).length;
    expect(res.usage.inputTokens).toBe(Math.ceil(chars / 4));
    expect(res.usage.inputTokens).toBe(estimateInputTokens(body));
    expect(res.usage.inputTokens).toBeGreaterThan(1000);
    expect(res.usage.outputTokens).toBeGreaterThan(0);
    // A scripted usage still wins.
    expect((await provider.complete(request([ask('short')]))).usage.inputTokens).toBe(7);
  });

  it('runs a tool round trip, replaying the thinking block the model returned with its tool_use', async () => {
    const api = await fake({
      name: 'tool round trip',
      script: [
        { thinking: 'I should look at the pods first.', toolCalls: [{ id: 'toolu_pods1', name: 'get_pods', input: { namespace: 'shop' } }] },
        (req) => {
          const last = req.body.messages.at(-1);
          return { text: `Seen ${last.content[0].content}` };
        },
      ],
    });
    const provider = new AnthropicProvider({ apiKey: KEY, baseURL: api.url });
    const messages: ModelMessage[] = [ask('Why is checkout failing?')];

    const first = await provider.complete(request(messages));
    expect(first.stopReason).toBe('tool_use');
    expect(first.content).toEqual([{ type: 'tool_call', id: 'toolu_pods1', name: 'get_pods', input: { namespace: 'shop' } }]);

    messages.push({ role: 'assistant', content: first.content });
    messages.push({ role: 'user', content: [{ type: 'tool_result', callId: 'toolu_pods1', content: 'checkout-7f9 CrashLoopBackOff' }] });
    const second = await provider.complete(request(messages));
    expect(second.content).toEqual([{ type: 'text', text: 'Seen checkout-7f9 CrashLoopBackOff' }]);
    expect(second.stopReason).toBe('end_turn');

    const replayed = api.requests[1]?.body.messages[1];
    expect(replayed.role).toBe('assistant');
    expect(replayed.content.map((b: { type: string }) => b.type)).toEqual(['thinking', 'tool_use']);
    expect(api.requests[1]?.body.messages[2].content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_pods1', cache_control: { type: 'ephemeral' } });
  });

  it('sends error tool results with is_error and tool results before text', async () => {
    const api = await fake({ name: 'error result', script: [{ toolCalls: [{ id: 'toolu_a', name: 'get_logs', input: { pod: 'x' } }] }, { text: 'ok' }] });
    const provider = new AnthropicProvider({ apiKey: KEY, baseURL: api.url });
    const first = await provider.complete(request([ask('go')]));
    await provider.complete(
      request([
        ask('go'),
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'text', text: 'also check events' }, { type: 'tool_result', callId: 'toolu_a', content: 'forbidden', isError: true }] },
      ]),
    );
    const content = api.requests[1]?.body.messages[2].content;
    expect(content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_a', is_error: true, content: 'forbidden' });
    expect(content[1]).toMatchObject({ type: 'text', text: 'also check events' });
  });

  it('rides out 429 then 529 with the SDK retries (maxRetries 2)', async () => {
    // The Anthropic SDK treats `retry-after: 0` as "no advice" and backs off 0.5 s+; `retry-after-ms` keeps the test fast.
    const api = await fake({
      name: '429-529-200',
      script: [
        { status: 429, headers: { 'retry-after-ms': '1' } },
        { status: 529, headers: { 'retry-after-ms': '1' } },
        { text: 'recovered' },
      ],
    });
    const provider = new AnthropicProvider({ apiKey: KEY, baseURL: api.url, maxRetries: 2 });
    const res = await provider.complete(request([ask('hi')]));
    expect(res.content).toEqual([{ type: 'text', text: 'recovered' }]);
    expect(api.requests).toHaveLength(3);
    expect(api.requests.map((r) => r.headers['x-stainless-retry-count'])).toEqual(['0', '1', '2']);
  });

  it('honours retry-after: 0 too (with the SDK default backoff)', async () => {
    const api = await fake({ name: 'retry-after 0', script: [{ status: 429, headers: { 'retry-after': '0' } }, { text: 'ok' }] });
    const provider = new AnthropicProvider({ apiKey: KEY, baseURL: api.url, maxRetries: 1 });
    const res = await provider.complete(request([ask('hi')]));
    expect(res.content).toEqual([{ type: 'text', text: 'ok' }]);
    expect(api.requests).toHaveLength(2);
  });

  it('reports a persistent 503 as ModelUnavailableError after the retries', async () => {
    const fail = { status: 503, headers: { 'retry-after-ms': '1' } };
    const api = await fake({ name: 'persistent 503', script: [fail, fail, fail] });
    const provider = new AnthropicProvider({ apiKey: KEY, baseURL: api.url, maxRetries: 2 });
    const err = await provider.complete(request([ask('hi')])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelUnavailableError);
    expect(err).toMatchObject({ provider: 'anthropic', status: 503 });
    expect((err as Error).message).toMatch(/service unavailable \(503\) after 2 retries/);
    expect(api.requests).toHaveLength(3);
  });

  it.each([
    [429, /rate limited \(429\)/],
    [529, /overloaded \(529\)/],
    [500, /server error \(500\)/],
  ])('names the cause of a %i in the ModelUnavailableError', async (status, pattern) => {
    const api = await fake({ name: `persistent ${status}`, script: [{ status }] });
    const provider = new AnthropicProvider({ apiKey: KEY, baseURL: api.url, maxRetries: 0 });
    const err = await provider.complete(request([ask('hi')])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelUnavailableError);
    expect((err as Error).message).toMatch(pattern);
  });

  it('reports a hung request as a timeout', async () => {
    const api = await fake({ name: 'hang', script: [{ hang: true }] });
    const provider = new AnthropicProvider({ apiKey: KEY, baseURL: api.url, maxRetries: 0, timeoutMs: 300 });
    const err = await provider.complete(request([ask('hi')])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelUnavailableError);
    expect(err).toMatchObject({ status: undefined });
    expect((err as Error).message).toMatch(/timed out: no response within 300 ms/);
  });

  it('reports a refused connection as unreachable', async () => {
    const api = await startFakeAnthropic({ name: 'closed', script: [] });
    await api.close();
    const provider = new AnthropicProvider({ apiKey: KEY, baseURL: api.url, maxRetries: 0 });
    const err = await provider.complete(request([ask('hi')])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelUnavailableError);
    expect((err as Error).message).toMatch(/unreachable: connection failed/);
  });

  it('reports a rejected key as a configuration error without retrying', async () => {
    const api = await fake({ name: 'bad key', script: [{ text: 'never' }] });
    const provider = new AnthropicProvider({ apiKey: 'sk-wrong', baseURL: api.url, maxRetries: 2 });
    const err = await provider.complete(request([ask('hi')])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelConfigurationError);
    expect(err).toMatchObject({ provider: 'anthropic', status: 401 });
    expect((err as Error).message).toMatch(/API key was rejected/);
    expect(api.requests).toHaveLength(1);
  });

  it('reports a request the API refuses (unanswered tool_use) as a ModelRequestError', async () => {
    const api = await fake({ name: 'bad request', script: [] });
    const provider = new AnthropicProvider({ apiKey: KEY, baseURL: api.url });
    const err = await provider
      .complete(
        request([
          ask('go'),
          { role: 'assistant', content: [{ type: 'tool_call', id: 'toolu_x', name: 'get_pods', input: {} }] },
          ask('no result given'),
        ]),
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelRequestError);
    expect((err as Error).message).toMatch(/without `tool_result` blocks/);
  });

  it('says which script ran out', async () => {
    const api = await fake({ name: 'empty script for the exhaustion test', script: [] });
    const provider = new AnthropicProvider({ apiKey: KEY, baseURL: api.url });
    const err = await provider.complete(request([ask('hi')])).catch((e: unknown) => e);
    expect((err as Error).message).toContain('empty script for the exhaustion test');
    expect(api.requests).toHaveLength(1);
  });

  it('accepts a base URL that already ends in /v1', async () => {
    const api = await fake({ name: 'v1 suffix', script: [{ text: 'ok' }] });
    const provider = new AnthropicProvider({ apiKey: KEY, baseURL: `${api.url}/v1/` });
    await provider.complete(request([ask('hi')]));
    expect(api.requests[0]?.path).toBe('/v1/messages');
  });

  it('rethrows the abort reason when the caller aborts', async () => {
    const api = await fake({ name: 'abort', script: [{ hang: true }] });
    const provider = new AnthropicProvider({ apiKey: KEY, baseURL: api.url, maxRetries: 0 });
    const controller = new AbortController();
    const pending = provider.complete(request([ask('hi')], { signal: controller.signal })).catch((e: unknown) => e);
    setTimeout(() => controller.abort(new Error('stop requested')), 50);
    expect(await pending).toMatchObject({ message: 'stop requested' });
  });
});

describe('default Anthropic model', () => {
  async function warningsDuring(model: string | undefined): Promise<string[]> {
    const api = await fake({ name: `deprecation check ${model ?? 'default'}`, script: [{ text: 'ok' }] });
    const provider = new AnthropicProvider({ apiKey: KEY, baseURL: api.url, ...(model ? { model } : {}) });
    const seen: string[] = [];
    const original = console.warn;
    const onWarning = (w: Error) => seen.push(w.message);
    console.warn = (...args: unknown[]) => seen.push(args.map(String).join(' '));
    process.on('warning', onWarning);
    try {
      await provider.complete(request([ask('hi')]));
      await new Promise((r) => setImmediate(r)); // process warnings are emitted on the next tick
    } finally {
      console.warn = original;
      process.off('warning', onWarning);
    }
    return seen;
  }

  it('is current: calling it triggers no deprecation warning', async () => {
    expect(await warningsDuring(undefined)).toEqual([]);
  });

  it('(control) a deprecated model does trigger the SDK warning we listen for', async () => {
    const seen = await warningsDuring('claude-sonnet-4-5');
    expect(seen.join('\n')).toMatch(/deprecated/);
  });
});

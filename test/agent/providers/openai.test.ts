import { afterEach, describe, expect, it } from 'vitest';
import { ModelConfigurationError } from '../../../src/agent/providers/errors.js';
import { DEFAULT_OPENAI_MODEL, OpenAIProvider, openAIBaseURL } from '../../../src/agent/providers/openai.js';
import { isInvalidToolArguments } from '../../../src/agent/providers/tool-input.js';
import { ModelUnavailableError, type ModelMessage, type ModelRequest } from '../../../src/agent/types.js';
import { startFakeOpenAI, type FakeOpenAI, type FakeOpenAIOptions } from '../../fakes/models/openai.js';

const KEY = 'test-openai-key';
const tools = [
  { name: 'get_pods', description: 'List pods in a namespace', inputSchema: { type: 'object', properties: { namespace: { type: 'string' } } } },
];
const ask = (text: string): ModelMessage => ({ role: 'user', content: [{ type: 'text', text }] });
const request = (messages: ModelMessage[], extra: Partial<ModelRequest> = {}): ModelRequest => ({
  system: 'You are Vigil, an SRE agent.',
  tools,
  messages,
  maxOutputTokens: 512,
  ...extra,
});

const servers: FakeOpenAI[] = [];
async function fake(options: FakeOpenAIOptions): Promise<FakeOpenAI> {
  const server = await startFakeOpenAI(options);
  servers.push(server);
  return server;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('OpenAIProvider against the fake Chat Completions API', () => {
  it('maps a text reply; cached prompt tokens become cache reads', async () => {
    const api = await fake({ name: 'text', script: [{ text: 'Disk full on node-3.', usage: { prompt_tokens: 1000, completion_tokens: 40, cached_tokens: 800 } }] });
    const provider = new OpenAIProvider({ apiKey: KEY, baseURL: api.baseURL });
    const res = await provider.complete(request([ask('What broke?')], { tools: [] }));

    expect(res.content).toEqual([{ type: 'text', text: 'Disk full on node-3.' }]);
    expect(res.stopReason).toBe('end_turn');
    expect(res.model).toBe(DEFAULT_OPENAI_MODEL);
    expect(res.id).toMatch(/^chatcmpl-/);
    expect(res.usage).toEqual({ inputTokens: 200, outputTokens: 40, cacheReadTokens: 800, cacheWriteTokens: 0 });
    // gpt-6-sol: $2 in, $10 out, $0.20 cached in per MTok.
    expect(provider.cost(res.usage).usd).toBeCloseTo((200 * 2 + 40 * 10 + 800 * 0.2) / 1e6, 10);

    const sent = api.requests[0];
    expect(sent?.path).toBe('/v1/chat/completions');
    expect(sent?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent?.body.messages[0]).toEqual({ role: 'system', content: 'You are Vigil, an SRE agent.' });
    expect(sent?.body.max_completion_tokens).toBe(512);
    expect(sent?.body.max_tokens).toBeUndefined();
    expect(sent?.body.tools).toBeUndefined();
    expect(sent?.raw).not.toContain(KEY);
  });

  it('runs a tool round trip with function tools, assistant tool_calls and role:tool results', async () => {
    const api = await fake({
      name: 'tool round trip',
      script: [
        { toolCalls: [{ id: 'call_1', name: 'get_pods', arguments: { namespace: 'shop' } }] },
        (req) => ({ text: `Seen: ${req.body.messages.at(-1).content}` }),
      ],
    });
    const provider = new OpenAIProvider({ apiKey: KEY, baseURL: api.baseURL });
    const messages: ModelMessage[] = [ask('Why is checkout failing?')];
    const first = await provider.complete(request(messages));
    expect(first.stopReason).toBe('tool_use');
    expect(first.content).toEqual([{ type: 'tool_call', id: 'call_1', name: 'get_pods', input: { namespace: 'shop' } }]);

    messages.push({ role: 'assistant', content: first.content });
    messages.push({ role: 'user', content: [{ type: 'tool_result', callId: 'call_1', content: 'checkout-7f9 CrashLoopBackOff' }] });
    const second = await provider.complete(request(messages));
    expect(second.content).toEqual([{ type: 'text', text: 'Seen: checkout-7f9 CrashLoopBackOff' }]);

    const body = api.requests[1]?.body;
    expect(body.tools).toEqual([{ type: 'function', function: { name: 'get_pods', description: 'List pods in a namespace', parameters: tools[0]?.inputSchema } }]);
    // OpenAI's GPT-6 family accepts function tools on Chat Completions only with reasoning_effort 'none'.
    expect(body.reasoning_effort).toBe('none');
    expect(body.messages[2]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_pods', arguments: '{"namespace":"shop"}' } }],
    });
    expect(body.messages[3]).toEqual({ role: 'tool', tool_call_id: 'call_1', content: 'checkout-7f9 CrashLoopBackOff' });
  });

  it('turns malformed tool arguments into a marker the loop answers with an error result', async () => {
    const api = await fake({
      name: 'malformed arguments',
      script: [{ toolCalls: [{ id: 'call_bad', name: 'get_pods', arguments: '{"namespace": "sh' }] }, { text: 'retrying properly' }],
    });
    const provider = new OpenAIProvider({ apiKey: KEY, baseURL: api.baseURL });
    const first = await provider.complete(request([ask('go')]));
    const call = first.content[0];
    expect(call?.type).toBe('tool_call');
    const input = call?.type === 'tool_call' ? call.input : undefined;
    expect(isInvalidToolArguments(input)).toBe(true);
    if (!isInvalidToolArguments(input)) return;
    expect(input.raw).toBe('{"namespace": "sh');
    expect(input.error).toMatch(/not valid JSON/);

    const second = await provider.complete(
      request([
        ask('go'),
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', callId: 'call_bad', content: input.error, isError: true }] },
      ]),
    );
    expect(second.content).toEqual([{ type: 'text', text: 'retrying properly' }]);
    const replay = api.requests[1]?.body.messages;
    expect(replay[2].tool_calls[0].function.arguments).toBe('{"namespace": "sh');
    expect(replay[3].content).toMatch(/^ERROR: Invalid tool call/);
  });

  it('rides out 429 then 500 with the SDK retries (maxRetries 2, retry-after: 0)', async () => {
    const api = await fake({
      name: '429-500-200',
      script: [{ status: 429, headers: { 'retry-after': '0' } }, { status: 500, headers: { 'retry-after': '0' } }, { text: 'recovered' }],
    });
    const provider = new OpenAIProvider({ apiKey: KEY, baseURL: api.baseURL, maxRetries: 2 });
    const res = await provider.complete(request([ask('hi')]));
    expect(res.content).toEqual([{ type: 'text', text: 'recovered' }]);
    expect(api.requests).toHaveLength(3);
  });

  it('reports a persistent 503 as ModelUnavailableError after the retries', async () => {
    const fail = { status: 503, headers: { 'retry-after': '0' } };
    const api = await fake({ name: 'persistent 503', script: [fail, fail, fail] });
    const provider = new OpenAIProvider({ apiKey: KEY, baseURL: api.baseURL, maxRetries: 2 });
    const err = await provider.complete(request([ask('hi')])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelUnavailableError);
    expect(err).toMatchObject({ provider: 'openai', status: 503 });
    expect((err as Error).message).toMatch(/service unavailable \(503\) after 2 retries/);
    expect(api.requests).toHaveLength(3);
  });

  it('reports a hung request as a timeout', async () => {
    const api = await fake({ name: 'hang', script: [{ hang: true }] });
    const provider = new OpenAIProvider({ apiKey: KEY, baseURL: api.baseURL, maxRetries: 0, timeoutMs: 300 });
    const err = await provider.complete(request([ask('hi')])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelUnavailableError);
    expect((err as Error).message).toMatch(/timed out: no response within 300 ms/);
  });

  it('reports a rejected key as a configuration error without retrying', async () => {
    const api = await fake({ name: 'bad key', script: [{ text: 'never' }] });
    const provider = new OpenAIProvider({ apiKey: 'sk-wrong', baseURL: api.baseURL, maxRetries: 2 });
    const err = await provider.complete(request([ask('hi')])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelConfigurationError);
    expect((err as Error).message).toMatch(/401.*Incorrect API key/s);
    expect(api.requests).toHaveLength(1);
  });
});

describe('OpenAI-compatible self-hosted endpoints', () => {
  it('adds /v1 to a bare origin and keeps a gateway path as given', () => {
    expect(openAIBaseURL(undefined)).toBe('https://api.openai.com/v1');
    expect(openAIBaseURL('http://vllm:8000')).toBe('http://vllm:8000/v1');
    expect(openAIBaseURL('http://vllm:8000/')).toBe('http://vllm:8000/v1');
    expect(openAIBaseURL('http://ollama:11434/v1/')).toBe('http://ollama:11434/v1');
    expect(openAIBaseURL('https://gw.example/openai/v1')).toBe('https://gw.example/openai/v1');
  });

  it('talks to a server given as a bare origin, without OpenAI-only parameters', async () => {
    const api = await fake({ name: 'self-hosted', apiKey: 'local', script: [{ toolCalls: [{ name: 'get_pods', arguments: '{}' }], finishReason: 'stop' }] });
    const provider = new OpenAIProvider({ apiKey: 'local', baseURL: api.url, model: 'qwen3-coder-30b' });
    const res = await provider.complete(request([ask('hi')]));
    expect(api.requests[0]?.path).toBe('/v1/chat/completions');
    expect(api.requests[0]?.body.reasoning_effort).toBeUndefined();
    // Some servers answer tool calls with finish_reason "stop"; the calls decide.
    expect(res.stopReason).toBe('tool_use');
    expect(res.content[0]).toMatchObject({ type: 'tool_call', name: 'get_pods', input: {} });
    expect(provider.cost(res.usage)).toEqual({ usd: 0, priced: false });
  });

  it('works behind a gateway path prefix, with max_tokens when asked', async () => {
    const api = await fake({ name: 'gateway', pathPrefix: '/openai', script: [{ text: 'ok' }] });
    const provider = new OpenAIProvider({ apiKey: KEY, baseURL: api.baseURL, model: 'llama-4', tokenLimitField: 'max_tokens' });
    await provider.complete(request([ask('hi')]));
    expect(api.requests[0]?.path).toBe('/openai/v1/chat/completions');
    expect(api.requests[0]?.body.max_tokens).toBe(512);
    expect(api.requests[0]?.body.max_completion_tokens).toBeUndefined();
  });

  it('the fake enforces the GPT-6 tool rule the provider satisfies by default', async () => {
    const api = await fake({ name: 'rule check', script: [] });
    const provider = new OpenAIProvider({ apiKey: KEY, baseURL: api.baseURL, reasoningEffort: null });
    const err = await provider.complete(request([ask('hi')])).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/set reasoning_effort to 'none'/);
  });
});

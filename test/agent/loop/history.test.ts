/**
 * What the model is re-sent of its own investigation: a tool result it has read and acted on is sent
 * as its digest from the next turn on (status, cite, evidence lines), so long investigations do not
 * pay for every result again on every call. Proven through the real Anthropic SDK against the fake
 * Messages API, with the real Kubernetes tools on the demo world; the digest's cite stays citable.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { requestHistory } from '../../../src/agent/history.js';
import { runAgent } from '../../../src/agent/loop.js';
import { AnthropicProvider } from '../../../src/agent/providers/index.js';
import type { ModelMessage } from '../../../src/agent/types.js';
import { startFakeAnthropic } from '../../fakes/models/anthropic.js';
import { investigateDemo, submitFromDescribe } from './harness.js';

let demo: Awaited<ReturnType<typeof investigateDemo>>;
beforeAll(async () => {
  demo = await investigateDemo();
});
afterAll(async () => {
  await demo?.close();
});
const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const DESCRIBE = { kind: 'Deployment', namespace: 'shop', name: 'checkout' };

/** Every tool_result block of a request body, by tool_use_id. */
function resultsById(body: any): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of body.messages as any[]) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content) if (b.type === 'tool_result') out.set(b.tool_use_id, typeof b.content === 'string' ? b.content : b.content.map((c: any) => c.text).join(''));
  }
  return out;
}

describe('older tool results are sent as digests', () => {
  it('sends the describe whole while it is the newest result, then its digest, and still accepts its cite', async () => {
    const api = await startFakeAnthropic({
      name: 'history',
      script: [
        { toolCalls: [{ name: 'k8s_describe', input: DESCRIBE }] },
        { toolCalls: [{ name: 'k8s_events', input: { namespace: 'shop' } }] },
        { toolCalls: [{ name: 'k8s_list', input: { kind: 'pods', namespace: 'shop' } }] },
        // The describe result is a digest by now; the submission cites it all the same.
        (req) => {
          const first = (req.body.messages as any[])[2].content.find((b: any) => b.type === 'tool_result');
          return submitFromDescribe({ ...req, body: { ...req.body, messages: [{ role: 'user', content: [first] }] } });
        },
      ],
    });
    servers.push(api);
    const result = await runAgent({
      provider: new AnthropicProvider({ apiKey: 'test-anthropic-key', baseURL: api.url, maxRetries: 0 }),
      tools: demo.tools,
      input: demo.outcome.input,
      findings: demo.outcome.findings,
      redactor: demo.redactor,
    });
    expect(result.status).toBe('completed');
    expect(result.findings[0]?.status).toBe('supported');

    const [, second, third, fourth] = api.requests;
    const describeId = [...resultsById(second!.body).keys()][0]!;
    const whole = resultsById(second!.body).get(describeId)!;
    // While it is the newest result: whole, data included.
    expect(JSON.parse(whole).data).toBeTruthy();
    // From the next turn on: the digest — same status and cite, evidence lines kept, the data elided — and shorter.
    const digest = resultsById(third!.body).get(describeId)!;
    expect(resultsById(fourth!.body).get(describeId)).toBe(digest);
    expect(digest.length).toBeLessThan(whole.length);
    const parsed = JSON.parse(digest);
    expect(parsed).toMatchObject({ status: 'success', cite: JSON.parse(whole).cite });
    expect(parsed.data).toMatch(/elided: read in an earlier turn; call again/);
    expect(parsed.evidence ?? []).toEqual(JSON.parse(whole).evidence ?? []);
    // The newest result is always whole.
    const newest = [...resultsById(fourth!.body).values()].at(-1)!;
    expect(JSON.parse(newest).data).toBeTruthy();
    for (const req of api.requests) for (const secret of demo.secrets) expect(req.raw).not.toContain(secret);
  });
});

describe('requestHistory', () => {
  const turn = (role: 'user' | 'assistant', id: string, content = 'x'.repeat(100)): ModelMessage =>
    role === 'user' ? { role, content: [{ type: 'tool_result', callId: id, content }] } : { role, content: [{ type: 'tool_call', id, name: 't', input: {} }] };

  it('keeps the newest user turn whole, digests older results, and leaves results without a digest alone', () => {
    const messages = [turn('user', 'a'), turn('assistant', 'b'), turn('user', 'b'), turn('assistant', 'c'), turn('user', 'c'), turn('assistant', 'd'), turn('user', 'd')];
    const digests = new Map([['b', 'short b'], ['d', 'short d']]);
    const sent = requestHistory(messages, digests, 1);
    const content = (i: number) => (sent[i]!.content[0] as { content: string }).content;
    expect(content(2)).toBe('short b');
    expect(content(4)).toBe('x'.repeat(100)); // no digest: an error or an already short result
    expect(content(6)).toBe('x'.repeat(100)); // the newest turn
    // The loop's own history is not edited.
    expect((messages[2]!.content[0] as { content: string }).content).toBe('x'.repeat(100));
  });

  it('never swaps in a digest longer than the result', () => {
    const messages = [turn('user', 'a', 'tiny'), turn('assistant', 'b'), turn('user', 'b')];
    expect(requestHistory(messages, new Map([['a', 'a much longer digest than the result']]), 1)).toEqual(messages);
  });
});

/**
 * The loop's control: the one repair round, the four budgets, model outages, the stop signal and
 * responder steering — with the real Anthropic provider against the fake Messages API and the real
 * Kubernetes tools against the fake API server (demo world).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runAgent, type AgentEvent, type AgentOptions } from '../../../src/agent/loop.js';
import { AnthropicProvider } from '../../../src/agent/providers/index.js';
import type { SteeringMessage } from '../../../src/agent/steering.js';
import { startFakeAnthropic, type AnthropicReply, type FakeAnthropic } from '../../fakes/models/anthropic.js';
import type { RecordedRequest, ScriptStep } from '../../fakes/models/script.js';
import { anthropicToolResults, anthropicUserText, briefCites, investigateDemo } from './harness.js';

let demo: Awaited<ReturnType<typeof investigateDemo>>;
beforeAll(async () => {
  demo = await investigateDemo();
});
afterAll(async () => {
  await demo?.close();
});

const servers: FakeAnthropic[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function fake(script: ScriptStep<AnthropicReply>[], name: string, providerOptions: { maxRetries?: number; apiKey?: string } = {}) {
  const api = await startFakeAnthropic({ script, name });
  servers.push(api);
  const provider = new AnthropicProvider({ apiKey: providerOptions.apiKey ?? 'test-anthropic-key', baseURL: api.url, maxRetries: providerOptions.maxRetries ?? 0 });
  return { api, provider };
}

function run(provider: AnthropicProvider, extra: Partial<AgentOptions> = {}) {
  const events: AgentEvent[] = [];
  const promise = runAgent({
    provider,
    tools: demo.tools,
    input: demo.outcome.input,
    findings: demo.outcome.findings,
    redactor: demo.redactor,
    onEvent: (e) => events.push(e),
    ...extra,
  });
  return { events, promise };
}

/** A valid one-hypothesis submission citing the first citation the brief offered (a triage finding's). */
function submitFromBrief(req: RecordedRequest, citation?: string): AnthropicReply {
  return { toolCalls: [{ name: 'submit_diagnosis', input: diagnosis(citation ?? briefCites(req.body)[0]!) }] };
}

function diagnosis(citation: string) {
  return {
    summary: 'checkout scaled to zero',
    hypotheses: [
      {
        title: 'checkout scaled to 0',
        status: 'supported',
        confidence: 0.9,
        component: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
        category: 'scaled-to-zero',
        mechanism: 'replicas 0',
        facts: { replicas: 0 },
        scope: 'checkout down',
        affected: [{ kind: 'Service', namespace: 'shop', name: 'checkout' }],
        evidence: [{ stance: 'supports', summary: 'replicas 0', citation }],
      },
    ],
  };
}

const describeCall: AnthropicReply = { toolCalls: [{ name: 'k8s_describe', input: { kind: 'Deployment', namespace: 'shop', name: 'checkout' } }] };
const toolNames = (req: RecordedRequest) => (req.body.tools as { name: string }[]).map((t) => t.name);

describe('output repair', () => {
  it('repairs one invalid submission: the errors go back as the tool result, the second submission stands', async () => {
    const { api, provider } = await fake(
      [
        { toolCalls: [{ name: 'submit_diagnosis', input: { ...diagnosis('apis/v1/namespaces/shop/pods/made-up'), hypotheses: [{ ...diagnosis('x').hypotheses[0], confidence: 1.7, evidence: [{ stance: 'supports', summary: 's', citation: 'apis/v1/namespaces/shop/pods/made-up' }] }] } }] },
        (req) => {
          const [r] = anthropicToolResults(req.body);
          expect(r!.isError).toBe(true);
          expect(r!.text).toContain('confidence');
          return submitFromBrief(req);
        },
      ],
      'repair once',
    );
    const { events, promise } = run(provider);
    const result = await promise;
    expect(result.status).toBe('completed');
    expect(result.steps).toBe(2);
    expect(result.findings).toHaveLength(1);
    expect(events.filter((e) => e.type === 'diagnosis').map((e) => e.type === 'diagnosis' && e.valid)).toEqual([false, true]);
    expect(api.remaining()).toBe(0);
  });

  it('rejects citations the run never saw and "supported" without supporting evidence', async () => {
    const unseen = diagnosis('apis/v1/namespaces/shop/configmaps/never-read');
    const unsupported = { ...diagnosis('x'), hypotheses: [{ ...diagnosis('x').hypotheses[0], evidence: [] }] };
    const { api, provider } = await fake(
      [
        { toolCalls: [{ name: 'submit_diagnosis', input: unseen }] },
        (req) => {
          expect(anthropicToolResults(req.body)[0]!.text).toContain('"apis/v1/namespaces/shop/configmaps/never-read" was never returned by a tool');
          return { toolCalls: [{ name: 'submit_diagnosis', input: unsupported }] };
        },
      ],
      'give up after two',
    );
    const result = await run(provider).promise;
    expect(result.status).toBe('invalid_output');
    expect(result.findings).toEqual([]);
    expect(result.error).toMatch(/needs at least one supporting evidence/);
    expect(api.remaining()).toBe(0);
  });

  it('treats a turn that ends without a submission as invalid output and asks once', async () => {
    const { provider } = await fake(
      [
        { text: 'checkout is scaled to zero.' },
        (req) => {
          expect(anthropicUserText(req.body)).toContain('without calling submit_diagnosis');
          return submitFromBrief(req);
        },
      ],
      'text only',
    );
    const result = await run(provider).promise;
    expect(result.status).toBe('completed');
  });
});

describe('budgets', () => {
  it('steps: the last allowed call offers only submit_diagnosis and says the budget is spent', async () => {
    const { api, provider } = await fake(
      [
        describeCall,
        describeCall,
        (req) => {
          expect(toolNames(req)).toEqual(['submit_diagnosis']);
          expect(anthropicUserText(req.body)).toContain('budget is spent');
          return submitFromBrief(req, anthropicToolResults(req.body)[0]!.json!.cite);
        },
      ],
      'steps',
    );
    const result = await run(provider, { budget: { maxSteps: 3 } }).promise;
    expect(result).toMatchObject({ status: 'budget_exhausted', budgetExhausted: 'steps', steps: 3, toolCalls: 2 });
    expect(result.findings).toHaveLength(1);
    expect(api.requests).toHaveLength(3);
  });

  it('steps: a final turn without a submission stops with what it has', async () => {
    const { api, provider } = await fake([describeCall, describeCall], 'steps ignored');
    const result = await run(provider, { budget: { maxSteps: 2 } }).promise;
    expect(result).toMatchObject({ status: 'budget_exhausted', budgetExhausted: 'steps', steps: 2, findings: [] });
    expect(api.remaining()).toBe(0);
  });

  it('tokens: stops exploring when two more calls of this size would not fit', async () => {
    const big = { usage: { input_tokens: 30_000, output_tokens: 100 } };
    const { provider } = await fake(
      [
        { ...describeCall, ...big },
        { ...describeCall, ...big },
        (req) => {
          expect(toolNames(req)).toEqual(['submit_diagnosis']);
          return { ...submitFromBrief(req), ...big };
        },
      ],
      'tokens',
    );
    const result = await run(provider, { budget: { maxTokens: 100_000 } }).promise;
    expect(result).toMatchObject({ status: 'budget_exhausted', budgetExhausted: 'tokens', steps: 3 });
    expect(result.usage.inputTokens + result.usage.outputTokens).toBe(90_300);
    expect(result.findings).toHaveLength(1);
  });

  it('cost: counts USD at the list price and keeps one call for the submission', async () => {
    // claude-sonnet-5-5 input is $2/MTok: 50k tokens = $0.10 a call.
    const pricey = { usage: { input_tokens: 50_000, output_tokens: 0 } };
    const { provider } = await fake(
      [
        { ...describeCall, ...pricey },
        (req) => {
          expect(toolNames(req)).toEqual(['submit_diagnosis']);
          return { ...submitFromBrief(req), ...pricey };
        },
      ],
      'cost',
    );
    const result = await run(provider, { budget: { maxCostUsd: 0.25 } }).promise;
    expect(result).toMatchObject({ status: 'budget_exhausted', budgetExhausted: 'cost', steps: 2 });
    expect(result.usage.costUsd).toBeCloseTo(0.2, 6);
    expect(result.usage.priced).toBe(true);
  });

  it('wall time: a hanging call is cut off and the reserved time is used for the submission', async () => {
    const { api, provider } = await fake([describeCall, { hang: true }, (req) => submitFromBrief(req)], 'wall time');
    const started = Date.now();
    const { events, promise } = run(provider, { budget: { maxWallMs: 1200 } });
    const result = await promise;
    expect(Date.now() - started).toBeLessThan(2500);
    expect(result).toMatchObject({ status: 'budget_exhausted', budgetExhausted: 'wall_time', steps: 3 });
    expect(result.findings).toHaveLength(1);
    expect(events.filter((e) => e.type === 'model_call').map((e) => e.type === 'model_call' && e.outcome)).toEqual(['ok', 'aborted', 'ok']);
    // The cut-off turn is resent (with the final note): still a valid alternating conversation.
    expect(anthropicUserText(api.requests[2]!.body)).toContain('budget is spent');
  });

  it('wall time: when even the final call hangs, it stops without findings', async () => {
    const { provider } = await fake([{ hang: true }, { hang: true }], 'wall time hangs');
    const started = Date.now();
    const result = await run(provider, { budget: { maxWallMs: 600 } }).promise;
    expect(Date.now() - started).toBeLessThan(1500);
    expect(result).toMatchObject({ status: 'budget_exhausted', budgetExhausted: 'wall_time', findings: [] });
  });
});

describe('model failures', () => {
  it.each([429, 529, 503, 500])('maps %i after the SDK retries to model_unavailable', async (status) => {
    const fail = { status, headers: { 'retry-after-ms': '5' } };
    const { api, provider } = await fake([fail, fail, fail], `fail ${status}`, { maxRetries: 2 });
    const result = await run(provider).promise;
    expect(result).toMatchObject({ status: 'model_unavailable', errorKind: 'unavailable', findings: [], steps: 1 });
    expect(result.error).toContain(`(${status}) after 2 retries`);
    expect(api.requests).toHaveLength(3);
  });

  it('reports a rejected API key as model_unavailable with the configuration error', async () => {
    const { provider } = await fake([], 'bad key', { apiKey: 'wrong-key' });
    const result = await run(provider).promise;
    expect(result).toMatchObject({ status: 'model_unavailable', errorKind: 'configuration' });
    expect(result.error).toContain('401');
  });
});

describe('stop', () => {
  it('stops while a model call is in flight', async () => {
    const controller = new AbortController();
    const { api, provider } = await fake([describeCall, { hang: true }], 'stop');
    const { promise } = run(provider, { signal: controller.signal });
    while (api.requests.length < 2) await new Promise((r) => setTimeout(r, 10));
    controller.abort(new Error('/sre stop'));
    const result = await promise;
    expect(result).toMatchObject({ status: 'stopped', toolCalls: 1, findings: [] });
  });

  it('does not start when already stopped', async () => {
    const { api, provider } = await fake([], 'stopped before');
    const result = await run(provider, { signal: AbortSignal.abort() }).promise;
    expect(result).toMatchObject({ status: 'stopped', steps: 0 });
    expect(api.requests).toHaveLength(0);
  });
});

describe('steering changes the next step', () => {
  /** Follows the responders: focus on payments → look at payments' pods; otherwise read checkout. */
  const investigator = (req: RecordedRequest): AnthropicReply => {
    const said = anthropicUserText(req.body);
    if (/FOCUS: (also )?examine "payments"/.test(said)) return { toolCalls: [{ name: 'k8s_list', input: { kind: 'pods', namespace: 'payments' } }] };
    return describeCall;
  };
  const bob = (text: string, at = new Date()): SteeringMessage => ({ userId: 'U0BOB', userName: 'bob', text, at });

  it('steering in the brief changes the first tool call', async () => {
    const plain = await fake([investigator, (req) => submitFromBrief(req)], 'no steering');
    const a = run(plain.provider);
    await a.promise;
    const steered = await fake([investigator, (req) => submitFromBrief(req)], 'steered');
    const b = run(steered.provider, { steering: [bob('focus on payments instead')] });
    await b.promise;
    const firstTool = (events: AgentEvent[]) => events.find((e) => e.type === 'tool_call');
    expect(firstTool(a.events)).toMatchObject({ name: 'k8s_describe' });
    expect(firstTool(b.events)).toMatchObject({ name: 'k8s_list', input: { namespace: 'payments' } });
    expect(anthropicUserText(steered.api.requests[0]!.body)).toContain('bob');
  });

  it('steering that arrives mid-run is given to the model before its next step', async () => {
    const inbox: SteeringMessage[] = [];
    const { api, provider } = await fake([investigator, investigator, (req) => submitFromBrief(req)], 'mid-run');
    const { events, promise } = run(provider, {
      pollSteering: () => inbox.splice(0),
      onEvent: (e) => {
        events.push(e);
        // bob replies in the thread while the first tool call runs.
        if (e.type === 'tool_call' && inbox.length === 0 && events.filter((x) => x.type === 'tool_call').length === 1) inbox.push(bob('check payments too'), bob('rule out H2 because it is 3 days old'));
      },
    });
    const result = await promise;
    expect(result.status).toBe('completed');
    expect(events.filter((e) => e.type === 'tool_call').map((e) => e.type === 'tool_call' && e.name)).toEqual(['k8s_describe', 'k8s_list']);
    expect(events.filter((e) => e.type === 'steering')).toEqual([{ type: 'steering', messages: 2 }]);
    const said = anthropicUserText(api.requests[1]!.body);
    expect(said).toContain('New steering from the responders');
    expect(said).toMatch(/RULED OUT by bob: H2.*3 days old/);
  });
});

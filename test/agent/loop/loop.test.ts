/**
 * The agent loop end to end with the REAL providers (Anthropic and OpenAI SDKs) against the fake model
 * APIs, and the real Kubernetes tools against the fake API server serving the demo world. The fake
 * model's script is a function of the request: it reads the tool results it got and cites them.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runAgent, type AgentEvent, type AgentOptions } from '../../../src/agent/loop.js';
import { SYSTEM_PROMPT, buildBrief } from '../../../src/agent/prompt.js';
import { AnthropicProvider, OpenAIProvider } from '../../../src/agent/providers/index.js';
import { CitationBook } from '../../../src/agent/toolbox.js';
import type { Diagnosis } from '../../../src/agent/output.js';
import { startFakeAnthropic, type AnthropicReply, type FakeAnthropic } from '../../fakes/models/anthropic.js';
import { startFakeOpenAI, type FakeOpenAI, type OpenAIReply } from '../../fakes/models/openai.js';
import type { RecordedRequest, ScriptStep } from '../../fakes/models/script.js';
import { anthropicToolResults, investigateDemo, openaiToolResults, type SentToolResult } from './harness.js';

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

async function anthropic(script: ScriptStep<AnthropicReply>[], name: string): Promise<{ api: FakeAnthropic; provider: AnthropicProvider }> {
  const api = await startFakeAnthropic({ script, name });
  servers.push(api);
  return { api, provider: new AnthropicProvider({ apiKey: 'test-anthropic-key', baseURL: api.url, maxRetries: 0 }) };
}

function options(extra: Partial<AgentOptions> & Pick<AgentOptions, 'provider'>): AgentOptions & { events: AgentEvent[] } {
  const events: AgentEvent[] = [];
  return { tools: demo.tools, input: demo.outcome.input, findings: demo.outcome.findings, gaps: demo.outcome.gaps, redactor: demo.redactor, onEvent: (e) => events.push(e), events, ...extra };
}

const DESCRIBE = { kind: 'Deployment', namespace: 'shop', name: 'checkout' };
const logsInput = () => ({ namespace: 'shop', pod: demo.storefrontPod, tailLines: 50 });

/** What a good investigator submits after reading the checkout Deployment and storefront's log. */
function demoDiagnosis(results: SentToolResult[]): Diagnosis {
  const [describe, logs] = results;
  if (!describe?.json || !logs?.json) throw new Error(`expected two JSON tool results, got ${JSON.stringify(results).slice(0, 300)}`);
  return {
    hypotheses: [
      {
        title: 'checkout scaled to 0 by kubectl scale',
        status: 'supported',
        confidence: 0.92,
        component: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
        category: 'scaled-to-zero',
        mechanism: 'spec.replicas set to 0 through the scale subresource; no pods serve checkout.',
        facts: { replicas: 0, previousReplicas: 3, manager: 'kubectl' },
        scope: 'All checkout requests from storefront fail with connection refused.',
        affected: [
          { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
          { kind: 'Service', namespace: 'shop', name: 'checkout' },
          { kind: 'Deployment', namespace: 'shop', name: 'storefront' },
        ],
        evidence: [
          { stance: 'supports', summary: 'Deployment wants 0 replicas, 0 ready', citation: describe.json.cite },
          { stance: 'supports', summary: 'storefront gets connection refused from checkout', citation: logs.json.cite },
        ],
        mitigation: { action: 'scale', target: { kind: 'Deployment', namespace: 'shop', name: 'checkout' }, params: { replicas: 3 }, command: 'kubectl scale deployment/checkout -n shop --replicas=3', rationale: 'Helm values say 3.' },
      },
      {
        title: 'payments-worker crash loop',
        status: 'unrelated',
        confidence: 0.8,
        component: { kind: 'Pod', namespace: 'payments', name: 'payments-worker-6c8f9d7b4-x2x9k' },
        category: 'crash-loop',
        mechanism: 'KeyError since hours before the onset, other namespace.',
        facts: {},
        scope: 'payments queue only',
        affected: [],
        evidence: [{ stance: 'supports', summary: 'crashing since 5 h', citation: 'inference' }],
        reason: 'other namespace, started hours before the onset',
      },
      {
        title: 'a cache eviction storm',
        status: 'supported',
        confidence: 0.7,
        component: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
        category: 'cache-eviction',
        mechanism: 'a hunch',
        facts: {},
        scope: 'unknown',
        affected: [],
        evidence: [{ stance: 'supports', summary: 'I think so', citation: 'inference' }],
      },
    ],
    summary: 'checkout was scaled to 0 by hand 13 s before the alert; storefront checkout calls fail.',
  };
}

describe.each(['anthropic', 'openai'] as const)('happy path with the %s provider', (which) => {
  it('calls tools, gets redacted results, and turns the submitted diagnosis into model findings', async () => {
    let requests: RecordedRequest[];
    let runOpts: AgentOptions & { events: AgentEvent[] };
    if (which === 'anthropic') {
      const { api, provider } = await anthropic(
        [
          { text: 'Reading the target and its caller.', toolCalls: [{ name: 'k8s_describe', input: DESCRIBE }, { name: 'k8s_pod_logs', input: logsInput() }] },
          (req) => ({ toolCalls: [{ name: 'submit_diagnosis', input: demoDiagnosis(anthropicToolResults(req.body)) }] }),
        ],
        'demo happy path',
      );
      requests = api.requests;
      runOpts = options({ provider });
    } else {
      const api: FakeOpenAI = await startFakeOpenAI({
        name: 'demo happy path (openai)',
        script: [
          { toolCalls: [{ name: 'k8s_describe', arguments: DESCRIBE }, { name: 'k8s_pod_logs', arguments: logsInput() }] } satisfies OpenAIReply,
          (req) => ({ toolCalls: [{ name: 'submit_diagnosis', arguments: demoDiagnosis(openaiToolResults(req.body)) as never }] }),
        ],
      });
      servers.push(api);
      requests = api.requests;
      runOpts = options({ provider: new OpenAIProvider({ apiKey: 'test-openai-key', baseURL: api.baseURL, maxRetries: 0 }) });
    }

    const result = await runAgent(runOpts);

    expect(result.error).toBeUndefined();
    expect(result.status).toBe('completed');
    expect(result.steps).toBe(2);
    expect(result.toolCalls).toBe(2);
    expect(result.summary).toMatch(/scaled to 0/);

    const [lead, noise, weak] = result.findings;
    expect(lead).toMatchObject({
      key: 'model:shop/deployment/checkout:scaled-to-zero',
      analyzer: 'model',
      status: 'supported',
      component: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
      facts: { replicas: 0, previousReplicas: 3, manager: 'kubectl', category: 'scaled-to-zero' },
      mitigation: { action: 'scale', params: { replicas: 3 } },
    });
    expect(lead!.supporting.map((e) => e.citation)).toEqual([
      { source: 'kubernetes', ref: 'apis/apps/v1/namespaces/shop/deployments/checkout' },
      { source: 'kubernetes', ref: expect.stringContaining(`pods/${demo.storefrontPod}/log`) },
    ]);
    expect(lead!.supporting[1]!.kind).toBe('log');
    expect(noise).toMatchObject({ status: 'unrelated', reason: expect.stringContaining('other namespace') });
    // Support that is only the model's own claim never makes a hypothesis supported.
    expect(weak).toMatchObject({ status: 'inconclusive', confidence: 0.5, supporting: [{ kind: 'note', citation: { source: 'model', ref: 'inference' } }] });

    // The audit trail: every tool call with its redacted input, status, citation and time.
    const toolEvents = runOpts.events.filter((e) => e.type === 'tool_call');
    expect(toolEvents).toEqual([
      { type: 'tool_call', name: 'k8s_describe', input: DESCRIBE, status: 'success', citationRef: 'apis/apps/v1/namespaces/shop/deployments/checkout', ms: expect.any(Number) },
      { type: 'tool_call', name: 'k8s_pod_logs', input: logsInput(), status: 'success', citationRef: expect.stringContaining('/log'), ms: expect.any(Number) },
    ]);
    expect(runOpts.events.filter((e) => e.type === 'model_call').map((e) => e.type === 'model_call' && e.outcome)).toEqual(['ok', 'ok']);

    // The secrets in the pod log (the scenario's and ours) were read, and redacted before the wire.
    const logResult = which === 'anthropic' ? anthropicToolResults(requests[1]!.body)[1]! : openaiToolResults(requests[1]!.body)[1]!;
    expect(logResult.text).toContain('db auth failed');
    expect(logResult.text).toContain('[REDACTED');
    for (const req of requests) for (const secret of demo.secrets) expect(req.raw).not.toContain(secret);

    // Usage of both calls, priced at the default model's list price.
    expect(result.usage.priced).toBe(true);
    expect(result.usage.costUsd).toBeGreaterThan(0);
    if (which === 'anthropic') expect(result.usage).toMatchObject({ inputTokens: 20, outputTokens: 10 });
    else expect(result.usage).toMatchObject({ inputTokens: 40, outputTokens: 14 });
  });
});

describe('the brief', () => {
  it('stays compact for the demo scenario and cites what triage found', () => {
    const citations = new CitationBook();
    const brief = buildBrief({ input: demo.outcome.input, findings: demo.outcome.findings, gaps: demo.outcome.gaps, redactor: demo.redactor, citations });
    // ≈ 4 characters per token: system prompt + brief well under a few thousand tokens.
    expect((SYSTEM_PROMPT.length + brief.length) / 4).toBeLessThan(4000);
    expect(brief).toContain('KubeDeploymentReplicasMismatch');
    expect(brief).toContain('Resolved target: Deployment shop/checkout');
    expect(brief).toMatch(/H1 \[supported/);
    expect(brief).toMatch(/scale deployment\/checkout by kubectl|scale shop\/deployment\/checkout by kubectl/);
    expect(citations.size).toBeGreaterThan(3);
    for (const secret of demo.secrets) expect(brief).not.toContain(secret);
  });
});

describe('tool dispatch errors are answered, not thrown', () => {
  it('answers input the schema rejects and an unknown tool with error results the model can act on', async () => {
    const { api, provider } = await anthropic(
      [
        { toolCalls: [{ name: 'k8s_get', input: { kind: 'Deployment', namespace: 'shop' } }, { name: 'kubectl_exec', input: { cmd: 'rm -rf /' } }] },
        (req) => {
          const [bad, unknown] = anthropicToolResults(req.body);
          expect(bad).toMatchObject({ isError: true, text: expect.stringContaining('Invalid input for k8s_get') });
          expect(bad!.text).toContain('name');
          expect(unknown).toMatchObject({ isError: true, text: expect.stringContaining('Unknown tool "kubectl_exec"') });
          return { toolCalls: [{ name: 'k8s_get', input: DESCRIBE }] };
        },
        (req) => {
          const [ok] = anthropicToolResults(req.body);
          return { toolCalls: [{ name: 'submit_diagnosis', input: { summary: 'checkout at 0', hypotheses: [{ ...demoDiagnosis([ok!, ok!]).hypotheses[0]! }] } }] };
        },
      ],
      'dispatch errors',
    );
    const o = options({ provider });
    const result = await runAgent(o);
    expect(result.status).toBe('completed');
    expect(api.remaining()).toBe(0);
    expect(o.events.filter((e) => e.type === 'tool_call').map((e) => e.type === 'tool_call' && e.status)).toEqual(['invalid_input', 'unknown_tool', 'success']);
  });

  it('answers the OpenAI provider\'s invalid-arguments marker with the parse error', async () => {
    const api = await startFakeOpenAI({
      name: 'malformed arguments',
      script: [
        { toolCalls: [{ name: 'k8s_get', arguments: '{"kind": "Deployment", "namespace": ' }] },
        (req) => {
          const [r] = openaiToolResults(req.body);
          expect(r!.text).toMatch(/Invalid tool call: the arguments are not valid JSON/);
          return { toolCalls: [{ name: 'k8s_get', arguments: DESCRIBE }] };
        },
        (req) => {
          const [r] = openaiToolResults(req.body);
          return { toolCalls: [{ name: 'submit_diagnosis', arguments: { summary: 's', hypotheses: [demoDiagnosis([r!, r!]).hypotheses[0]!] } as never }] };
        },
      ],
    });
    servers.push(api);
    const o = options({ provider: new OpenAIProvider({ apiKey: 'test-openai-key', baseURL: api.baseURL, maxRetries: 0 }) });
    const result = await runAgent(o);
    expect(result.status).toBe('completed');
    expect(o.events.find((e) => e.type === 'tool_call')).toMatchObject({ name: 'k8s_get', status: 'invalid_input', input: { raw: '{"kind": "Deployment", "namespace": ' } });
  });
});

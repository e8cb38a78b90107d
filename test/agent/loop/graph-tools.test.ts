/**
 * The model reaches what deterministic triage uses: the cluster graph (`topology`), discovered metrics
 * (`prometheus_discover`) and running pods' logs (`k8s_workload_logs`), through the REAL providers
 * against the scripted fake model APIs, with the real tools against the scenario's world (fake
 * Kubernetes enforcing RBAC, real Prometheus). The scripted model misbehaves the way real ones do —
 * a misspelt component, arguments that ignore the schema, truncated JSON — and each error result must
 * say what to send instead; the model then follows it and cites what the tools returned.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runAgent, type AgentEvent } from '../../../src/agent/loop.js';
import { AnthropicProvider, OpenAIProvider } from '../../../src/agent/providers/index.js';
import { startFakeAnthropic, type AnthropicReply } from '../../fakes/models/anthropic.js';
import { startFakeOpenAI, type OpenAIReply } from '../../fakes/models/openai.js';
import type { RecordedRequest } from '../../fakes/models/script.js';
import { prometheusSkipReason } from '../../support/prometheus.js';
import { anthropicToolResults, investigateDemo, investigateScenario, openaiToolResults, type SentToolResult } from './harness.js';

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const calls = (...c: [string, Record<string, unknown>][]): AnthropicReply => ({ toolCalls: c.map(([name, input]) => ({ name, input })) });

function ok(r: SentToolResult | undefined, what: string): NonNullable<SentToolResult['json']> & { data: any } {
  if (!r?.json || r.json.status !== 'success') throw new Error(`${what}: expected a successful tool result, got ${r?.text.slice(0, 600)}`);
  return r.json as NonNullable<SentToolResult['json']> & { data: any };
}

const skip = prometheusSkipReason();

describe.skipIf(!!skip)('graph, discovery and workload logs through the Anthropic provider (deploy-before-error-spike)', () => {
  let world: Awaited<ReturnType<typeof investigateScenario>>;
  beforeAll(async () => {
    world = await investigateScenario('deploy-before-error-spike');
  }, 60_000);
  afterAll(async () => {
    await world?.close();
  });

  it('recovers from a misspelt component and schema-ignoring arguments, then diagnoses from what the new tools returned', async () => {
    const onset = world.scenario.onset.toISOString();
    let topology: ReturnType<typeof ok> | undefined;
    const api = await startFakeAnthropic({
      name: 'graph tools',
      script: [
        (req) => {
          // The new tools are offered, and the system prompt says what they are for.
          const names = (req.body.tools as { name: string }[]).map((t) => t.name);
          expect(names).toEqual(expect.arrayContaining(['topology', 'prometheus_discover', 'k8s_workload_logs']));
          const system = (req.body.system as { text: string }[]).map((b) => b.text).join('');
          for (const n of ['topology', 'prometheus_discover', 'k8s_workload_logs']) expect(system).toContain(n);
          // Like real models: a plural it made up, and one argument where the schema asks for two.
          return calls(['topology', { kind: 'Deployment', namespace: 'shop', name: 'carts' }], ['prometheus_discover', { workload: 'shop/cart' }]);
        },
        (req) => {
          const [topo, disc] = anthropicToolResults(req.body);
          expect(topo!.json).toMatchObject({ status: 'no_data' });
          expect(topo!.json!.message).toContain('Did you mean: Deployment/shop/cart');
          expect(topo!.json!.message).toContain('Call topology again with kind, namespace and name exactly as listed');
          expect(disc).toMatchObject({ isError: true, text: expect.stringContaining('Invalid input for prometheus_discover') });
          expect(disc!.text).toMatch(/namespace[\s\S]*name/);
          expect(disc!.text).toContain('Call it again with input matching its schema');
          return calls(['topology', { kind: 'deployment', namespace: 'shop', name: 'cart' }], ['prometheus_discover', { namespace: 'shop', name: 'cart' }]);
        },
        (req) => {
          const [topo, disc] = anthropicToolResults(req.body);
          topology = ok(topo, 'topology');
          const d = ok(disc, 'prometheus_discover').data;
          expect(d.convention).toBe('prometheus-client');
          const errorRatio = (d.queries as { id: string; promql: string }[]).find((q) => q.id === 'error_ratio')!.promql;
          return calls(
            ['prometheus_query_range', { query: errorRatio, onset }],
            ['k8s_workload_logs', { namespace: 'shop', name: 'cart' }],
            ['k8s_rollout_history', { kind: 'Deployment', namespace: 'shop', name: 'cart' }],
          );
        },
        (req: RecordedRequest): AnthropicReply => {
          const [ratio, logs, rollout] = anthropicToolResults(req.body);
          const r = ok(ratio, 'error ratio');
          const l = ok(logs, 'workload logs');
          const h = ok(rollout, 'rollout history');
          const errors = (l.data.current.patterns as { template: string; level?: string }[]).filter((p) => p.level === 'error');
          expect(errors.map((p) => p.template).join('\n')).toContain('allocation remainder');
          return calls([
            'submit_diagnosis',
            {
              summary: 'cart 2.14.0 (revision 12) throws on discounted carts since its rollout; 5xx went from ~0.2% to ~35%. Roll back to revision 11.',
              hypotheses: [
                {
                  title: 'cart 2.14.0 regression: RangeError in the discount allocator',
                  status: 'supported',
                  confidence: 0.9,
                  component: { kind: 'Deployment', namespace: 'shop', name: 'cart' },
                  category: 'deploy-regression',
                  mechanism: 'Revision 12 (image cart:2.14.0) answers 500 for carts with discounted items (RangeError: allocation remainder out of range).',
                  facts: { revision: 12, image: 'cart=registry.example.com/shop/cart:2.14.0', metric: 'error_ratio' },
                  scope: 'every cart request with a discounted item',
                  affected: [{ kind: 'Deployment', namespace: 'shop', name: 'cart' }, { kind: 'Service', namespace: 'shop', name: 'cart' }],
                  evidence: [
                    { stance: 'supports', summary: 'cart 5xx ratio left its ~0.2% baseline at the rollout', citation: r.cite },
                    { stance: 'supports', summary: `${errors[0]!.template.slice(0, 120)}`, citation: l.cite },
                    { stance: 'supports', summary: 'revision 12 changed the image to 2.14.0 minutes before the onset', citation: h.cite },
                    { stance: 'supports', summary: 'cart is what the alert names; its Service selects it', citation: topology!.cite },
                  ],
                  mitigation: { action: 'rollout_undo', target: { kind: 'Deployment', namespace: 'shop', name: 'cart' }, params: { toRevision: 11 }, command: 'kubectl rollout undo deployment/cart -n shop --to-revision=11', rationale: 'revision 11 ran clean for two days' },
                },
              ],
            },
          ]);
        },
      ],
    });
    servers.push(api);
    const events: AgentEvent[] = [];
    const result = await runAgent({
      provider: new AnthropicProvider({ apiKey: 'test-anthropic-key', baseURL: api.url, maxRetries: 0 }),
      tools: world.tools,
      input: world.outcome.input,
      findings: world.outcome.findings,
      gaps: world.outcome.gaps,
      redactor: world.redactor,
      onEvent: (e) => events.push(e),
    });
    expect(result.status, result.error).toBe('completed');
    expect(api.remaining()).toBe(0);
    expect(result.findings[0]).toMatchObject({ status: 'supported', analyzer: 'model', component: { kind: 'Deployment', namespace: 'shop', name: 'cart' } });
    expect(events.filter((e) => e.type === 'tool_call').map((e) => e.type === 'tool_call' && `${e.name}:${e.status}`)).toEqual([
      'topology:no_data',
      'prometheus_discover:invalid_input',
      'topology:success',
      'prometheus_discover:success',
      'prometheus_query_range:success',
      'k8s_workload_logs:success',
      'k8s_rollout_history:success',
    ]);
    // The topology came from the investigation's own graph, with the path from what the alert names.
    expect(topology!.data.graph).toContain("the investigation's graph");
    expect(topology!.data.fromAlert.subjects.length).toBeGreaterThan(0);
    expect(topology!.data.fromAlert.path).toMatch(/Deployment\/shop\/cart$/);
    // Nothing planted in the world reached the model.
    const wire = api.requests.map((r) => r.raw).join('\n');
    for (const s of world.secrets) expect(wire).not.toContain(s);
  });
});

describe('graph tools through the OpenAI provider (demo world)', () => {
  let demo: Awaited<ReturnType<typeof investigateDemo>>;
  beforeAll(async () => {
    demo = await investigateDemo();
  });
  afterAll(async () => {
    await demo?.close();
  });

  it('answers truncated JSON arguments with what to send, then serves topology and workload logs', async () => {
    const api = await startFakeOpenAI({
      name: 'graph tools openai',
      script: [
        { toolCalls: [{ name: 'topology', arguments: '{"kind": "Service", "name": "check' }] },
        (req): OpenAIReply => {
          const [r] = openaiToolResults(req.body);
          expect(r!.text).toMatch(/Invalid tool call: the arguments are not valid JSON/);
          expect(r!.text).toContain('Call the tool again with a JSON object matching its schema');
          return { toolCalls: [{ name: 'topology', arguments: { kind: 'svc', name: 'checkout' } }, { name: 'k8s_workload_logs', arguments: { namespace: 'shop', name: 'storefront' } }] };
        },
        (req): OpenAIReply => {
          const [topo, logs] = openaiToolResults(req.body);
          const t = ok(topo, 'topology');
          expect(t.data.component).toBe('Service/shop/checkout');
          expect(t.data.dependents.calls).toEqual([expect.stringContaining('Deployment/shop/storefront · env CHECKOUT_URL')]);
          expect(t.data.dependsOn.selects).toEqual([expect.stringMatching(/^Deployment\/shop\/checkout · selector/)]);
          const l = ok(logs, 'workload logs');
          // The window starts 20 minutes before the onset the loop handed the tool.
          expect(l.data.window.sinceSeconds).toBeGreaterThanOrEqual(20 * 60);
          expect(JSON.stringify(l.data)).toContain('connection refused');
          expect(JSON.stringify(l.data)).not.toContain('Planted-Agent-Secret');
          return {
            toolCalls: [
              {
                name: 'submit_diagnosis',
                arguments: {
                  summary: 'checkout has no pods behind its Service; storefront calls to it are refused.',
                  hypotheses: [
                    {
                      title: 'checkout scaled to 0: its Service has nothing to select',
                      status: 'supported',
                      confidence: 0.85,
                      component: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
                      category: 'scaled-to-zero',
                      mechanism: 'storefront calls checkout through Service shop/checkout, which selects Deployment shop/checkout; its calls are refused.',
                      facts: { caller: 'storefront' },
                      scope: 'storefront checkout requests',
                      affected: [{ kind: 'Deployment', namespace: 'shop', name: 'checkout' }, { kind: 'Deployment', namespace: 'shop', name: 'storefront' }],
                      evidence: [
                        { stance: 'supports', summary: 'storefront → Service checkout → Deployment checkout', citation: t.cite },
                        { stance: 'supports', summary: 'storefront pods log connection refused from checkout', citation: l.cite },
                      ],
                    },
                  ],
                },
              },
            ],
          };
        },
      ],
    });
    servers.push(api);
    const events: AgentEvent[] = [];
    const result = await runAgent({
      provider: new OpenAIProvider({ apiKey: 'test-openai-key', baseURL: api.baseURL, maxRetries: 0 }),
      tools: demo.tools,
      input: demo.outcome.input,
      findings: demo.outcome.findings,
      gaps: demo.outcome.gaps,
      redactor: demo.redactor,
      onEvent: (e) => events.push(e),
    });
    expect(result.status, result.error).toBe('completed');
    expect(events.filter((e) => e.type === 'tool_call').map((e) => e.type === 'tool_call' && `${e.name}:${e.status}`)).toEqual(['topology:invalid_input', 'topology:success', 'k8s_workload_logs:success']);
    const wire = api.requests.map((r) => r.raw).join('\n');
    for (const s of demo.secrets) expect(wire).not.toContain(s);
  });
});

/**
 * Evidence reads that never come back: a wedged Kubernetes API server, GitHub or Prometheus. The loop must
 * keep its wall-time budget and honour /sre stop whatever the tool does, and a slow tool must not eat the
 * time held back for the final diagnosis. Real adapters against loopback servers that never answer; the
 * clients' own timeouts are set far beyond the budget, so only the loop's deadline can end the wait.
 */
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runAgent, type AgentEvent, type AgentOptions } from '../../../src/agent/loop.js';
import { AnthropicProvider } from '../../../src/agent/providers/index.js';
import { GitHubReader } from '../../../src/evidence/github/client.js';
import { githubTools } from '../../../src/evidence/github/tools.js';
import { KubeReader } from '../../../src/evidence/kubernetes/client.js';
import { kubernetesTools } from '../../../src/evidence/kubernetes/tools/index.js';
import { PrometheusClient } from '../../../src/evidence/prometheus/client.js';
import { prometheusTools } from '../../../src/evidence/prometheus/tools.js';
import type { EvidenceTool } from '../../../src/evidence/tool.js';
import { startFakeAnthropic, type AnthropicReply } from '../../fakes/models/anthropic.js';
import type { RecordedRequest, ScriptStep } from '../../fakes/models/script.js';
import { startHangingServer, type HangingServer } from '../../evidence/hanging-server.js';
import { anthropicToolResults, briefCites, investigateDemo } from './harness.js';
import { eventually } from '../../e2e/helpers.js';

let demo: Awaited<ReturnType<typeof investigateDemo>>;
let hung: HangingServer;
let tools: EvidenceTool[];
beforeAll(async () => {
  demo = await investigateDemo();
  hung = await startHangingServer();
  const far = 60_000;
  tools = [
    ...kubernetesTools(new KubeReader(hung.kubeConfig(), { timeoutMs: far })),
    ...githubTools(new GitHubReader({ baseUrl: hung.url, logger: pino({ level: 'silent' }), timeoutMs: far })),
    ...prometheusTools(new PrometheusClient({ baseUrl: hung.url, timeoutMs: far, retries: 0 })),
  ];
});
afterAll(async () => {
  await demo?.close();
  await hung?.close();
});

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function provider(script: ScriptStep<AnthropicReply>[], name: string) {
  const api = await startFakeAnthropic({ script, name });
  servers.push(api);
  return { api, provider: new AnthropicProvider({ apiKey: 'test-anthropic-key', baseURL: api.url, maxRetries: 0 }) };
}

function run(p: AnthropicProvider, extra: Partial<AgentOptions> = {}) {
  const events: AgentEvent[] = [];
  const started = Date.now();
  const promise = runAgent({ provider: p, tools, input: demo.outcome.input, findings: demo.outcome.findings, redactor: demo.redactor, onEvent: (e) => events.push(e), ...extra }).then((result) => ({
    result,
    ms: Date.now() - started,
  }));
  return { events, promise };
}

const toolNames = (req: RecordedRequest) => (req.body.tools as { name: string }[]).map((t) => t.name);

/** The final turn: only the submission is offered; the stuck calls were answered with errors. */
function finalSubmission(expectResults: (results: ReturnType<typeof anthropicToolResults>) => void) {
  return (req: RecordedRequest): AnthropicReply => {
    expect(toolNames(req)).toEqual(['submit_diagnosis']);
    expectResults(anthropicToolResults(req.body));
    const citation = briefCites(req.body)[0]!;
    return {
      toolCalls: [
        {
          name: 'submit_diagnosis',
          input: {
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
                affected: [],
                evidence: [{ stance: 'supports', summary: 'replicas 0', citation }],
              },
            ],
          },
        },
      ],
    };
  };
}

const describeCall = { name: 'k8s_describe', input: { kind: 'Deployment', namespace: 'shop', name: 'checkout' } };
const githubCall = { name: 'github_recent_changes', input: { repo: 'acme/shop' } };
const promCall = { name: 'prometheus_query', input: { query: 'up{job="checkout"}' } };

describe('a tool that never answers', () => {
  it('a stuck Kubernetes read is cut at the exploration deadline; the reserved time goes to the submission', async () => {
    const { api, provider: p } = await provider(
      [
        { toolCalls: [describeCall] },
        finalSubmission(([r]) => {
          expect(r).toMatchObject({ isError: true, text: expect.stringMatching(/k8s_describe aborted: wall-time budget/) });
        }),
      ],
      'stuck kube',
    );
    const { events, promise } = run(p, { budget: { maxWallMs: 1600 } });
    const { result, ms } = await promise;
    expect(ms).toBeLessThan(2600);
    expect(result).toMatchObject({ status: 'budget_exhausted', budgetExhausted: 'wall_time', steps: 2, toolCalls: 1 });
    expect(result.findings).toHaveLength(1);
    expect(events.find((e) => e.type === 'tool_call')).toMatchObject({ name: 'k8s_describe', status: 'error' });
    expect(api.remaining()).toBe(0);
  });

  it('a stuck GitHub read: its call gets the abort, the rest of the turn is answered "not run"', async () => {
    const { provider: p } = await provider(
      [
        { toolCalls: [githubCall, describeCall] },
        finalSubmission(([gh, kube]) => {
          expect(gh).toMatchObject({ isError: true, text: expect.stringMatching(/github_recent_changes aborted: wall-time budget/) });
          expect(kube).toMatchObject({ isError: true, text: expect.stringMatching(/Not run: the budget is spent/) });
        }),
      ],
      'stuck github',
    );
    const { result, ms } = await run(p, { budget: { maxWallMs: 1600 } }).promise;
    expect(ms).toBeLessThan(2600);
    expect(result).toMatchObject({ status: 'budget_exhausted', budgetExhausted: 'wall_time', steps: 2, toolCalls: 1 });
    expect(result.findings).toHaveLength(1);
  });

  it('a slow tool that honours the signal stops at the exploration deadline, not the hard one', async () => {
    const { provider: p } = await provider(
      [
        { toolCalls: [promCall] },
        finalSubmission(([r]) => {
          expect(r).toMatchObject({ isError: true });
        }),
      ],
      'slow prometheus',
    );
    const { result, ms } = await run(p, { budget: { maxWallMs: 1600 } }).promise;
    expect(ms).toBeLessThan(2600);
    expect(result).toMatchObject({ status: 'budget_exhausted', budgetExhausted: 'wall_time', steps: 2 });
    expect(result.findings).toHaveLength(1);
  });

  it('/sre stop ends the run while a read hangs', async () => {
    const controller = new AbortController();
    const { provider: p } = await provider([{ toolCalls: [describeCall] }], 'stop during a stuck read');
    const { promise } = run(p, { signal: controller.signal });
    const before = hung.requests.length;
    await eventually(async () => hung.requests.length > before, 'the stuck read to reach the server', 5000);
    const stoppedAt = Date.now();
    controller.abort(new Error('/sre stop'));
    const { result } = await promise;
    expect(Date.now() - stoppedAt).toBeLessThan(500);
    expect(result).toMatchObject({ status: 'stopped', toolCalls: 1, findings: [] });
  });
});

/**
 * A model that misbehaves (issue 12, point 7), through the REAL providers (Anthropic and OpenAI SDKs)
 * against the scripted fake model APIs and the real Kubernetes tools on the demo world. Every failure is
 * corrected a bounded number of times, then given up on; the run ends with deterministic triage standing
 * and a notice that says what the model did wrong; nothing invented is stored as evidence, no fix outside
 * the incident's scope survives, and nothing is kept longer than the board can show.
 *
 * Already proven elsewhere (not repeated here):
 * - one malformed OpenAI argument string / one schema-refused Anthropic input / one unknown tool, each
 *   answered with an error result the model recovers from: loop.test.ts "tool dispatch errors…",
 *   graph-tools.test.ts (truncated JSON, schema-ignoring arguments);
 * - one invalid submission repaired; a citation never returned rejected with the repair message; prose
 *   once, then a submission: control.test.ts "output repair";
 * - a prompt-injected out-of-scope fix never written to the cluster: test/e2e/prompt-injection.test.ts.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runAgent, type AgentEvent, type AgentOptions, type AgentResult } from '../../../src/agent/loop.js';
import { agentNotice } from '../../../src/agent/notice.js';
import { AnthropicProvider, OpenAIProvider } from '../../../src/agent/providers/index.js';
import { incidentScope, preliminaryProposal } from '../../../src/approvals/policy-input.js';
import { evaluateProposal, loadPolicy } from '../../../src/policy/index.js';
import type { MitigationProposal } from '../../../src/triage/types.js';
import { startFakeAnthropic, type AnthropicReply } from '../../fakes/models/anthropic.js';
import { call, render, text, type Misbehaviour, type Provider } from '../../fakes/models/misbehave.js';
import { startFakeOpenAI, type OpenAIReply } from '../../fakes/models/openai.js';
import type { FakeServer, RecordedRequest } from '../../fakes/models/script.js';
import { anthropicToolResults, anthropicUserText, investigateDemo, openaiToolResults, type SentToolResult } from './harness.js';

let demo: Awaited<ReturnType<typeof investigateDemo>>;
beforeAll(async () => {
  demo = await investigateDemo();
});
afterAll(async () => {
  await demo?.close();
});

const servers: FakeServer[] = [];
/** Assertions a script step made: a throw there would leave the request unanswered, so they are kept and checked after the test. */
const scriptErrors: string[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  expect(scriptErrors.splice(0)).toEqual([]);
});

type Reply = AnthropicReply | OpenAIReply;
type Step = Reply | ((req: RecordedRequest) => Reply);

/** A fake API of the given kind with the real provider pointed at it. */
async function fake(which: Provider, steps: Step[], name: string) {
  const script = steps.map((step) =>
    typeof step !== 'function'
      ? step
      : (req: RecordedRequest) => {
          try {
            return step(req);
          } catch (err) {
            scriptErrors.push(err instanceof Error ? err.message : String(err));
            return text(which, 'script failed');
          }
        },
  );
  if (which === 'anthropic') {
    const api = await startFakeAnthropic({ script: script as never, name });
    servers.push(api);
    return { api, provider: new AnthropicProvider({ apiKey: 'test-anthropic-key', baseURL: api.url, maxRetries: 0 }) };
  }
  const api = await startFakeOpenAI({ script: script as never, name });
  servers.push(api);
  return { api, provider: new OpenAIProvider({ apiKey: 'test-openai-key', baseURL: api.baseURL, maxRetries: 0 }) };
}

/** The tool results the newest request answers (OpenAI has no error flag: errors are prefixed). */
function results(which: Provider, req: RecordedRequest): SentToolResult[] {
  if (which === 'anthropic') return anthropicToolResults(req.body);
  return openaiToolResults(req.body).map((r) => ({ ...r, isError: r.text.startsWith('ERROR: ') }));
}

/** The text of the newest user turn. */
function userText(which: Provider, req: RecordedRequest): string {
  if (which === 'anthropic') return anthropicUserText(req.body);
  const last = (req.body.messages as { role: string; content: unknown }[]).at(-1)!;
  return last.role === 'user' ? String(last.content) : '';
}

async function run(provider: AgentOptions['provider'], extra: Partial<AgentOptions> = {}): Promise<AgentResult & { events: AgentEvent[] }> {
  const events: AgentEvent[] = [];
  const result = await runAgent({
    provider,
    tools: demo.tools,
    input: demo.outcome.input,
    findings: demo.outcome.findings,
    gaps: demo.outcome.gaps,
    redactor: demo.redactor,
    onEvent: (e) => events.push(e),
    ...extra,
  });
  return { ...result, events };
}

const toolEvents = (events: AgentEvent[]) => events.filter((e) => e.type === 'tool_call').map((e) => (e.type === 'tool_call' ? `${e.name}:${e.status}` : ''));

const CHECKOUT = { kind: 'Deployment', namespace: 'shop', name: 'checkout' };
const DESCRIBE = { kind: 'Deployment', namespace: 'shop', name: 'checkout' };

function hypothesis(cite: string, over: Record<string, unknown> = {}) {
  return {
    title: 'checkout scaled to 0 by kubectl scale',
    status: 'supported',
    confidence: 0.9,
    component: CHECKOUT,
    category: 'scaled-to-zero',
    mechanism: 'spec.replicas is 0; no pods serve checkout.',
    facts: { replicas: 0 },
    scope: 'every checkout request',
    affected: [{ kind: 'Service', namespace: 'shop', name: 'checkout' }],
    evidence: [{ stance: 'supports', summary: 'Deployment wants 0 replicas', citation: cite }],
    ...over,
  };
}

const diagnosis = (hypotheses: unknown[], summary = 'checkout was scaled to 0 by hand.') => ({ summary, hypotheses });

/** Describe checkout first, then submit what `submitWith` makes of its cite. */
const describeThenSubmit = (which: Provider, submitWith: (cite: string) => unknown): Step[] => [
  call(which, 'k8s_describe', DESCRIBE),
  (req) => call(which, 'submit_diagnosis', submitWith(results(which, req)[0]!.json!.cite) as Record<string, unknown>),
];

const PROVIDERS = ['anthropic', 'openai'] as const;

describe.each(PROVIDERS)('1. prose instead of a tool call (%s)', (which) => {
  it('asks once, then gives up: invalid_output after two model calls, and the notice says the model answered in prose', async () => {
    const { api, provider } = await fake(
      which,
      [
        text(which, 'checkout looks scaled to zero. I would scale it back to 3 replicas.'),
        (req) => {
          expect(userText(which, req)).toContain('without calling submit_diagnosis');
          return text(which, 'As I said: scale checkout back to 3.');
        },
        call(which, 'submit_diagnosis', diagnosis([hypothesis('inference')])),
      ],
      `prose (${which})`,
    );
    const result = await run(provider);
    expect(result).toMatchObject({ status: 'invalid_output', misbehaviour: 'prose', steps: 2, findings: [], notes: [] });
    expect(api.remaining()).toBe(1);
    const notice = agentNotice(result)!;
    expect(notice).toMatch(/answered in prose instead of calling submit_diagnosis/);
    expect(notice).toMatch(/deterministic triage stands/);
  });
});

describe.each(PROVIDERS)('2. malformed tool arguments (%s)', (which) => {
  const bad: Misbehaviour = {
    kind: 'malformed',
    name: 'k8s_get',
    raw: '{"kind": "Deployment", "namespace": "shop", "name": }',
    wrongTypes: { kind: 7, namespace: ['shop'] },
  };

  it('answers each with the error; after three such turns in a row it gives up (no fourth call)', async () => {
    const { api, provider } = await fake(
      which,
      [
        render(which, bad),
        (req) => {
          const [r] = results(which, req);
          expect(r!.isError).toBe(true);
          expect(r!.text).toMatch(which === 'openai' ? /not valid JSON/ : /Invalid input for k8s_get/);
          return render(which, bad);
        },
        render(which, bad),
        call(which, 'k8s_get', DESCRIBE),
      ],
      `malformed args (${which})`,
    );
    const result = await run(provider);
    expect(result).toMatchObject({ status: 'invalid_output', misbehaviour: 'unusable_tools', steps: 3, findings: [] });
    expect(api.remaining()).toBe(1);
    expect(toolEvents(result.events)).toEqual(['k8s_get:invalid_input', 'k8s_get:invalid_input', 'k8s_get:invalid_input']);
    expect(agentNotice(result)).toMatch(/tool calls that could not run, 3 turns in a row \(arguments k8s_get does not take\)/);
  });

  it('two corrections are within the bound: a model that then gets it right completes', async () => {
    const { provider } = await fake(which, [render(which, bad), render(which, bad), ...describeThenSubmit(which, (cite) => diagnosis([hypothesis(cite)]))], `malformed twice (${which})`);
    const result = await run(provider);
    expect(result.status, result.error).toBe('completed');
    expect(toolEvents(result.events)).toEqual(['k8s_get:invalid_input', 'k8s_get:invalid_input', 'k8s_describe:success']);
  });

  it('a malformed submission is answered with what is wrong with it, once; a second one ends the run', async () => {
    const badSubmission: Misbehaviour = {
      kind: 'malformed',
      name: 'submit_diagnosis',
      raw: '{"summary": "checkout at 0", "hypotheses": [{"title": "checkout scaled to 0", }]}',
      wrongTypes: { summary: 42, hypotheses: { title: 'checkout scaled to 0' } },
    };
    const { api, provider } = await fake(
      which,
      [
        render(which, badSubmission),
        (req) => {
          const [r] = results(which, req);
          expect(r!.isError).toBe(true);
          if (which === 'openai') expect(r!.text).toMatch(/The diagnosis was not accepted:\n- Invalid tool call: the arguments are not valid JSON/);
          else {
            expect(r!.text).toContain('- summary: Invalid input: expected string, received number');
            expect(r!.text).toContain('- hypotheses: Invalid input: expected array, received object');
          }
          return render(which, badSubmission);
        },
      ],
      `malformed submission (${which})`,
    );
    const result = await run(provider);
    expect(result).toMatchObject({ status: 'invalid_output', misbehaviour: 'invalid_submission', steps: 2, findings: [] });
    expect(api.remaining()).toBe(0);
    expect(agentNotice(result)).toMatch(/its diagnosis was invalid twice/);
  });
});

describe.each(PROVIDERS)('3. output cut off at the token limit (%s)', (which) => {
  it('a tool call cut mid-arguments is never run — even when what arrived parses — and the model is told why', async () => {
    const logs = { namespace: 'shop', pod: demo.storefrontPod, tailLines: 50, previous: false };
    // The Messages API hands back what it parsed before the cut: here a valid (but shorter) input.
    const cut: Misbehaviour = { kind: 'truncated', name: 'k8s_pod_logs', input: logs, parsed: { namespace: 'shop', pod: demo.storefrontPod }, keep: 40, text: 'Reading the storefront log.' };
    const { provider } = await fake(
      which,
      [
        render(which, cut),
        (req) => {
          const [r] = results(which, req);
          expect(r!.isError).toBe(true);
          expect(r!.text).toMatch(/cut off at the output-token limit while you were writing this call's arguments/);
          return call(which, 'k8s_describe', DESCRIBE);
        },
        (req) => call(which, 'submit_diagnosis', diagnosis([hypothesis(results(which, req)[0]!.json!.cite)])),
      ],
      `truncated call (${which})`,
    );
    const result = await run(provider);
    expect(result.status, result.error).toBe('completed');
    expect(toolEvents(result.events)).toEqual(['k8s_describe:success']);
  });

  it('a submission cut off is never accepted (even one that parses); twice ends the run', async () => {
    const { provider } = await fake(
      which,
      [
        call(which, 'k8s_describe', DESCRIBE),
        (req) => {
          const full = diagnosis([hypothesis(results(which, req)[0]!.json!.cite), hypothesis('inference', { title: 'second', category: 'other' })]);
          // What parsed before the cut: the first hypothesis only — valid, but not what the model meant.
          const parsed = { ...full, hypotheses: full.hypotheses.slice(0, 1) };
          return render(which, { kind: 'truncated', name: 'submit_diagnosis', input: full, parsed });
        },
        (req) => {
          const [r] = results(which, req);
          expect(r!.text).toMatch(/cut off at the output-token limit[\s\S]*shorter submission/);
          return render(which, { kind: 'truncated', name: 'submit_diagnosis', input: diagnosis([hypothesis('inference')]), parsed: diagnosis([hypothesis('inference')]) });
        },
      ],
      `truncated submission (${which})`,
    );
    const result = await run(provider);
    expect(result).toMatchObject({ status: 'invalid_output', misbehaviour: 'truncated', findings: [], steps: 3 });
    expect(agentNotice(result)).toMatch(/cut off at the output-token limit before it completed a diagnosis/);
  });

  it('prose cut off at the limit gets a correction that asks for brevity', async () => {
    const cutProse: Reply = which === 'anthropic' ? { text: 'Let me walk through everything I know about checkout, starting with', stopReason: 'max_tokens' } : { text: 'Let me walk through everything I know about checkout, starting with', finishReason: 'length' };
    const { provider } = await fake(
      which,
      [
        cutProse,
        (req) => {
          expect(userText(which, req)).toMatch(/cut off at the output-token limit before you called submit_diagnosis[\s\S]*briefly/);
          return call(which, 'submit_diagnosis', diagnosis([hypothesis('inference', { status: 'open' })]));
        },
      ],
      `cut prose (${which})`,
    );
    const result = await run(provider);
    expect(result.status, result.error).toBe('completed');
  });
});

describe.each(PROVIDERS)('4. unknown tools (%s)', (which) => {
  it('answers with the tools that exist; three turns of unknown tools end the run; a runaway name is never echoed whole', async () => {
    const huge = `kubectl_${'x'.repeat(5000)}`;
    const { api, provider } = await fake(
      which,
      [
        render(which, { kind: 'unknown', name: 'kubectl_exec', input: { cmd: 'kubectl scale deploy/checkout --replicas=3' } }),
        (req) => {
          const [r] = results(which, req);
          expect(r!.isError).toBe(true);
          expect(r!.text).toMatch(/Unknown tool "kubectl_exec": there is no such tool\. Call only these: .*k8s_describe/);
          expect(r!.text).toContain('k8s_get');
          return render(which, { kind: 'unknown', name: 'run_shell', input: { cmd: 'ls' } });
        },
        render(which, { kind: 'unknown', name: huge, input: {} }),
        call(which, 'submit_diagnosis', diagnosis([hypothesis('inference')])),
      ],
      `unknown tools (${which})`,
    );
    const result = await run(provider);
    expect(result).toMatchObject({ status: 'invalid_output', misbehaviour: 'unusable_tools', steps: 3, findings: [] });
    expect(api.remaining()).toBe(1);
    const names = result.events.filter((e) => e.type === 'tool_call').map((e) => (e.type === 'tool_call' ? e.name : ''));
    expect(names.slice(0, 2)).toEqual(['kubectl_exec', 'run_shell']);
    expect(names[2]!.length).toBeLessThanOrEqual(101);
    const notice = agentNotice(result)!;
    expect(notice).toMatch(/unknown tool "kubectl_x+…"/);
    expect(notice.length).toBeLessThan(1000);
    expect(result.error!.length).toBeLessThan(1000);
  });
});

describe.each(PROVIDERS)('5. invented citations (%s)', (which) => {
  const INVENTED_URL = 'https://github.com/acme/checkout/pull/4242';
  const INVENTED_OBJECT = 'api/v1/namespaces/shop/secrets/checkout-db-password';

  it('corrected once; on the last chance the invented ones are dropped, never stored, and those hypotheses stay uncited and propose nothing', async () => {
    const submission = (cite: string) =>
      diagnosis([
        hypothesis(cite, {
          evidence: [
            { stance: 'supports', summary: 'Deployment wants 0 replicas', citation: cite },
            { stance: 'supports', summary: 'PR 4242 set replicas to 0', citation: INVENTED_URL },
          ],
          mitigation: { action: 'scale', target: CHECKOUT, params: { replicas: 3 }, command: 'kubectl scale deployment/checkout -n shop --replicas=3', rationale: 'restore' },
        }),
        hypothesis(INVENTED_OBJECT, { title: 'the database password rotated', category: 'credentials-rotated', component: { kind: 'Secret', namespace: 'shop', name: 'checkout-db-password' } }),
      ]);
    let cite = '';
    const { api, provider } = await fake(
      which,
      [
        call(which, 'k8s_describe', DESCRIBE),
        (req) => {
          cite = results(which, req)[0]!.json!.cite;
          return call(which, 'submit_diagnosis', submission(cite));
        },
        (req) => {
          const [r] = results(which, req);
          expect(r!.isError).toBe(true);
          expect(r!.text).toContain(`"${INVENTED_URL}" was never returned by a tool or a finding`);
          expect(r!.text).toContain(`"${INVENTED_OBJECT}" was never returned by a tool or a finding`);
          // The model insists.
          return call(which, 'submit_diagnosis', submission(cite));
        },
      ],
      `invented citations (${which})`,
    );
    const result = await run(provider);
    expect(result.status, result.error).toBe('completed');
    expect(api.remaining()).toBe(0);
    const [lead, rotated] = result.findings;
    expect(lead).toMatchObject({ status: 'inconclusive', reason: expect.stringMatching(/^uncited: the model cited evidence no tool returned/) });
    expect(lead!.confidence).toBeLessThanOrEqual(0.5);
    expect(lead!.mitigation).toBeUndefined();
    expect(lead!.supporting.map((e) => e.citation.ref)).toEqual([cite]);
    expect(rotated).toMatchObject({ status: 'inconclusive', supporting: [], reason: expect.stringContaining(INVENTED_OBJECT) });
    const stored = result.findings.flatMap((f) => [...f.supporting, ...f.refuting].map((e) => e.citation.ref));
    expect(stored).not.toContain(INVENTED_URL);
    expect(stored).not.toContain(INVENTED_OBJECT);
    expect(result.notes).toEqual([expect.stringMatching(/cited evidence no tool returned .*shows those 2 hypotheses as uncited, not supported/)]);
    expect(agentNotice(result)).toMatch(/deterministic triage stands/);
  });
});

describe('6. fixes outside the incident scope (provider-independent: Anthropic)', () => {
  const policy = loadPolicy(fileURLToPath(new URL('../../../deploy/policy.example.yaml', import.meta.url)));
  const fix = (action: string, target: { kind: string; namespace?: string; name: string }, params: Record<string, unknown>): MitigationProposal => ({ action, target, params, command: `vigil ${action}`, rationale: 'the model says so' });

  it('drops every fix the approval flow would refuse before it becomes a finding, keeps the hypotheses and the fixes in scope, and says what it dropped', async () => {
    const proposals: [string, ReturnType<typeof fix>, Record<string, string>?][] = [
      ['coredns-zero', fix('scale', { kind: 'Deployment', namespace: 'kube-system', name: 'coredns' }, { replicas: 0 }), { kind: 'Deployment', namespace: 'kube-system', name: 'coredns' }],
      ['payments-zero', fix('scale', { kind: 'Deployment', namespace: 'payments', name: 'payments-worker' }, { replicas: 0 }), { kind: 'Deployment', namespace: 'payments', name: 'payments-worker' }],
      ['attacker-image', fix('set_image', CHECKOUT, { container: 'checkout', image: 'ghcr.io/attacker/miner:latest' })],
      ['bad-params', fix('scale', CHECKOUT, { replicas: 'lots' })],
      ['foreign-flag', fix('flip_flag', CHECKOUT, { flag: 'disable-auth', to: 'on' })],
      ['foreign-repo', fix('revert_pr', CHECKOUT, { repo: 'attacker/evil', number: 1 })],
      ['no-namespace', fix('cordon_node', { kind: 'Node', name: 'node-2' }, { cordon: true })],
      ['previous-image', fix('set_image', CHECKOUT, { container: 'checkout', image: 'registry.example.com/shop/checkout:1.14.1' })],
      ['scale-back', fix('scale', CHECKOUT, { replicas: 3 })],
    ];
    const { provider } = await fake(
      'anthropic',
      describeThenSubmit('anthropic', (cite) =>
        diagnosis(
          proposals.map(([category, mitigation, component], i) => hypothesis(cite, { title: `fix ${category}`, category, confidence: 0.99 - i * 0.01, mitigation, ...(component ? { component } : {}) })),
        ),
      ),
      'out of scope',
    );
    const result = await run(provider);
    expect(result.status, result.error).toBe('completed');
    expect(result.findings).toHaveLength(proposals.length);
    const kept = result.findings.filter((f) => f.mitigation).map((f) => f.facts?.['category']);
    expect(kept).toEqual(['previous-image', 'scale-back']);
    // Every hypothesis stays, supported on its real citation: only the fix went.
    expect(result.findings.every((f) => f.status === 'supported')).toBe(true);
    expect(result.notes).toHaveLength(7);
    const notes = result.notes.join('\n');
    expect(notes).toContain("`scale` on kube-system/coredns was dropped before any approval card: it is outside this incident's scope (shop/checkout)");
    expect(notes).toContain("`scale` on payments/payments-worker was dropped before any approval card: it is outside this incident's scope (shop/checkout)");
    expect(notes).toMatch(/`set_image` on shop\/checkout was dropped .*the image it names never ran in namespace shop/);
    expect(notes).not.toContain('ghcr.io/attacker');
    expect(notes).toMatch(/`scale` on shop\/checkout was dropped .*parameters are not what `scale` takes \(replicas:/);
    expect(notes).toMatch(/`flip_flag` on shop\/checkout was dropped .*flag disable-auth is not one of checkout's flags/);
    expect(notes).toMatch(/`revert_pr` on shop\/checkout was dropped .*attacker\/evil is not checkout's repository/);
    expect(notes).toContain('`cordon_node` on node-2 was dropped before any approval card: it names no namespaced target');
    expect(agentNotice(result)).toMatch(/^Vigil checked the model’s diagnosis before adding it \(deterministic triage stands\): The model's proposed fix `scale` on kube-system\/coredns was dropped/);

    // The screen never drops what the example policy would allow: each dropped scope/namespace/flag/repo fix is refused by it too.
    const scope = incidentScope({ namespace: 'shop', service: 'checkout' });
    for (const [category, m, component] of proposals.filter(([c]) => !['previous-image', 'scale-back', 'bad-params', 'attacker-image'].includes(c))) {
      const p = preliminaryProposal({ proposal: m, incidentId: 'i', requestedBy: 'vigil', diagnosedService: (component ?? CHECKOUT).name });
      const d = evaluateProposal(policy, p, { incidentScope: scope, history: [], incidentMutations: 0, stopped: { global: false, incident: false }, now: new Date() });
      expect(d.kind, category).toBe('deny');
    }
  });
});

describe.each(PROVIDERS)('7. very long outputs (%s)', (which) => {
  it('a runaway prose answer is not re-sent whole', async () => {
    const essay = `checkout is down. ${'Let me think about this very carefully. '.repeat(5000)}`;
    const { api, provider } = await fake(which, [text(which, essay), call(which, 'submit_diagnosis', diagnosis([hypothesis('inference', { status: 'open' })]))], `long prose (${which})`);
    const result = await run(provider);
    expect(result.status, result.error).toBe('completed');
    expect(essay.length).toBeGreaterThan(150_000);
    expect(api.requests[1]!.raw.length).toBeLessThan(api.requests[0]!.raw.length + 6000);
    expect(api.requests[1]!.raw).toContain('more characters not kept');
  });

  it('a submission with thousands of hypotheses, a huge title and endless facts is cut to what the board can hold, and says so', async () => {
    const many = (cite: string) =>
      diagnosis(
        Array.from({ length: 3000 }, (_, i) =>
          hypothesis(cite, {
            title: i === 0 ? `checkout scaled to 0 ${'and more '.repeat(20_000)}` : `hypothesis ${i}`,
            category: i === 0 ? `scaled-to-zero-${'x'.repeat(200)}` : `cause-${i}`,
            facts: i === 0 ? Object.fromEntries(Array.from({ length: 500 }, (_, k) => [`fact${k}`, 'v'.repeat(1000)])) : {},
            evidence: i === 0 ? Array.from({ length: 60 }, () => ({ stance: 'supports', summary: 's'.repeat(5000), citation: cite })) : [{ stance: 'supports', summary: 'x', citation: cite }],
            ...(i === 0 ? { mechanism: 'm'.repeat(100_000) } : {}),
          }),
        ),
        `summary ${'z'.repeat(100_000)}`,
      );
    const { provider } = await fake(which, describeThenSubmit(which, many), `long submission (${which})`);
    const result = await run(provider);
    expect(result.status, result.error).toBe('completed');
    expect(result.findings).toHaveLength(12);
    const [first] = result.findings;
    expect(first!.title.length).toBeLessThanOrEqual(200);
    expect(first!.title.endsWith('…')).toBe(true);
    expect(first!.mechanism.length).toBeLessThanOrEqual(1200);
    expect(Object.keys(first!.facts ?? {}).length).toBeLessThanOrEqual(25);
    expect(first!.supporting.length).toBeLessThanOrEqual(12);
    expect(first!.supporting.every((e) => e.summary.length <= 400)).toBe(true);
    expect(first!.key.length).toBeLessThan(200);
    expect(result.summary!.length).toBeLessThanOrEqual(1500);
    expect(result.notes.join(' ')).toMatch(/submitted 3000 hypotheses; only its first 12 were kept/);
    expect(result.notes.join(' ')).toMatch(/over-long texts .* were cut/);
    expect(agentNotice(result)!.length).toBeLessThan(1000);
  });
});

describe.each(PROVIDERS)('8. refusals (%s)', (which) => {
  it('a refusal stop ends the run at once: nothing in the refused turn runs, no retry, the notice says it', async () => {
    const refusal: Misbehaviour = {
      kind: 'refusal',
      text: "I'll start by",
      category: 'cyber',
      explanation: 'This request was declined because it could enable cyber harm.',
      partialCall: { name: 'k8s_describe', input: DESCRIBE },
    };
    const { api, provider } = await fake(which, [render(which, refusal), call(which, 'k8s_describe', DESCRIBE)], `refusal (${which})`);
    const result = await run(provider);
    expect(result).toMatchObject({ status: 'refused', misbehaviour: 'refusal', steps: 1, toolCalls: 0, findings: [] });
    expect(api.remaining()).toBe(1);
    expect(toolEvents(result.events)).toEqual([]);
    const notice = agentNotice(result)!;
    expect(notice).toMatch(/^The model refused to investigate \(.+\): deterministic triage stands; nothing it wrote was kept\.$/);
    expect(notice).toContain(which === 'anthropic' ? 'category cyber: This request was declined' : "I'm sorry, but I can't help with that.");
  });

  it('"I can\'t help with that" in plain text is asked again once, then the run ends saying the model declined', async () => {
    const { api, provider } = await fake(which, [text(which, "I can't help with that."), text(which, "I'm sorry, I can't help with that."), call(which, 'k8s_describe', DESCRIBE)], `declines (${which})`);
    const result = await run(provider);
    expect(result).toMatchObject({ status: 'invalid_output', misbehaviour: 'declined', steps: 2, findings: [] });
    expect(api.remaining()).toBe(1);
    expect(agentNotice(result)).toMatch(/it declined \(“I'm sorry, I can't help with that\.”\) instead of calling submit_diagnosis[\s\S]*deterministic triage stands/);
  });

  it('a declining answer is redacted before it is quoted: a token across the quote’s cut leaves no half behind', async () => {
    // Assembled at run time so the repository holds no literal token; it starts at character 140 of 160 quoted.
    const token = ['gh', 'p_', 'Q7wErTyUiOpAsDfGhJkLzXcVbNm1234567890'].join('');
    const opening = "I can't help with that: the logs I was shown carry credentials,";
    const declining = `${opening}${' and'.repeat(Math.ceil((140 - opening.length) / 4))} ${token} and more`;
    const { provider } = await fake(which, [text(which, declining), text(which, declining)], `declines with a token (${which})`);
    const result = await run(provider);
    expect(result).toMatchObject({ status: 'invalid_output', misbehaviour: 'declined' });
    const notice = agentNotice(result)!;
    expect(notice).toMatch(/it declined \(“I can't help with that/);
    expect(notice).not.toContain(token.slice(0, 12));
    expect(result.error ?? '').not.toContain(token.slice(0, 12));
  });
});

describe('provider stop reasons', () => {
  it('Chat Completions: finish_reason content_filter is a refusal; length with tool calls is a cut, not a tool_use', async () => {
    const { provider } = await fake('openai', [{ text: null as never, finishReason: 'content_filter' }, { toolCalls: [{ name: 'k8s_get', arguments: '{"kind":' }], finishReason: 'length' }], 'openai stops');
    const req = { system: 's', tools: [], messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'go' }] }], maxOutputTokens: 100 };
    expect(await provider.complete(req)).toMatchObject({ stopReason: 'refusal', refusal: expect.stringContaining('content filter') });
    expect(await provider.complete(req)).toMatchObject({ stopReason: 'max_tokens', content: [{ type: 'tool_call', name: 'k8s_get' }] });
  });

  it('Messages API: model_context_window_exceeded is a cut; refusal carries its stop_details', async () => {
    const { provider } = await fake(
      'anthropic',
      [
        { text: 'partial', stopReason: 'model_context_window_exceeded' },
        { stopReason: 'refusal', stopDetails: { category: null, explanation: null } },
      ],
      'anthropic stops',
    );
    const req = { system: 's', tools: [], messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'go' }] }], maxOutputTokens: 100 };
    expect(await provider.complete(req)).toMatchObject({ stopReason: 'max_tokens' });
    const refused = await provider.complete(req);
    expect(refused.stopReason).toBe('refusal');
    expect(refused.refusal).toBeUndefined();
  });
});

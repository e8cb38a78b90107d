/**
 * Issue 12 item 5, end to end: the canary corpus (test/redact/canaries.ts, 60+ shapes) planted through
 * every input channel of one world (test/e2e/canary-world.ts: Kubernetes env, envFrom ConfigMap and Secret,
 * ConfigMap data, annotations, labels, Events, current and previous logs; Loki; Prometheus labels; Helm
 * values; flag changes; GitHub pull requests and commits; a change announcement; the alert's title and text;
 * a responder's reply; `/sre investigate`; an Alertmanager webhook), through the real app, with a scripted
 * model that reads every evidence source (so tool results reach model requests) and misbehaves: it pastes
 * secrets into tool arguments and calls a tool named like a token, answers in prose echoing the tool results,
 * declines once with a token across the point where its words are quoted, and pastes raw secrets into its
 * diagnosis, its fix's command and the postmortem's prose. Its fix gets an approval card, which is rejected;
 * then `/sre status`, `/sre postmortem` and App Home read everything back.
 *
 * Then every sink is searched for every secret and for its 12-character fragments (also JSON-escaped,
 * percent-encoded as a link would carry it, and a grouped secret without its spaces), plus the planted
 * Secret's base64 values and windows of the Helm release blobs: every request the model server received
 * (what Vigil wrote: system text, briefs, tool results, corrections; the model's own turns sent back are its
 * words, not a leak), every call the fake Slack received and every response_url post, the GitHub issue
 * `/sre postmortem` opened, /metrics, EVERY row of EVERY table (the Prisma models enumerated from the client's DMMF,
 * checked against SQLite's own table list), every log line at trace level, and every span's name,
 * attributes, events and status. 0 leaked.
 *
 * Leaks it found, fixed: the postmortem prose check cut the model's answer into tokens before redacting it
 * (src/postmortem/prose.ts), and a declining answer was cut to its quote before redacting (src/agent/loop.ts).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Prisma } from '../../node_modules/.prisma/vigil-sqlite/index.js';
import { createLogger } from '../../src/log.js';
import { createRedactor } from '../../src/redact/index.js';
import { canaries, type Canary } from '../redact/canaries.js';
import { appHomeOpenedEnvelope, blockActionsPayload } from '../fakes/slack/index.js';
import { ALERT_CHANNEL, startWorld, type AnthropicReply, type ModelRequest, type World } from '../support/world.js';
import { CHANNELS, marker, slackTexts, spread, WORLD, writeCanaryScenario, type ChannelId } from './canary-world.js';

const CORPUS = canaries(777);
const PLACEMENTS = spread(CORPUS);
/** Shapes the misbehaving model pastes raw into its answer (a model may repeat what it should not). */
const MODEL_PASTES = ['slack_bot_token', 'aws_access_key_id', 'card_visa', 'yaml_password'];
const WEBHOOK_TOKEN = 'canary-alertmanager-webhook-token-0123';
const canary = (shape: string): Canary => CORPUS.find((c) => c.shape === shape)!;

/** Every 12-character window of a long secret (a token cut in half still leaks its half), or the secret itself. */
function fragments(c: Canary): string[] {
  const of = (secret: string): string[] => {
    if (/\s/.test(secret) || secret.length < 20) return [secret];
    const out: string[] = [];
    for (let i = 0; i + 12 <= secret.length; i += 6) out.push(secret.slice(i, i + 12));
    return out;
  };
  // A grouped secret (a card, an IBAN, a phone) also counts written without its spaces.
  const compact = c.secret.replace(/\s+/g, '');
  const base = [...(c.probes?.length ? c.probes.flatMap(of) : of(c.secret)), ...(compact !== c.secret && compact.length >= 10 ? of(compact) : [])];
  // As JSON carries it, and as a URL (a Grafana or Loki link) would.
  return [...new Set(base.flatMap((f) => [f, JSON.stringify(f).slice(1, -1), encodeURIComponent(f)]))];
}

/** `shape: where` for every canary (and scenario secret) with a fragment in `text`. */
function leaks(text: string, extra: string[] = []): string[] {
  const found = CORPUS.filter((c) => fragments(c).some((f) => text.includes(f))).map((c) => {
    const f = fragments(c).find((x) => text.includes(x))!;
    const at = text.indexOf(f);
    return `${c.shape}: …${text.slice(Math.max(0, at - 80), at + f.length + 40)}…`;
  });
  return [...found, ...extra.filter((s) => text.includes(s)).map((s) => `scenario secret ${s.slice(0, 6)}…`)];
}

// ---- the scripted model: reads every source, misbehaves once, then submits --------------------------------

type Block = { type: string; text?: string; content?: unknown; name?: string; input?: unknown };
const userBlocks = (req: ModelRequest): Block[] => (req.body.messages as { role: string; content: Block[] | string }[]).filter((m) => m.role === 'user').flatMap((m) => (typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content));
const toolResultTexts = (req: ModelRequest): string[] =>
  userBlocks(req)
    .filter((b) => b.type === 'tool_result')
    .map((b) => (typeof b.content === 'string' ? b.content : (b.content as { text?: string }[]).map((c) => c.text ?? '').join('')));
const cites = (req: ModelRequest): string[] =>
  toolResultTexts(req).flatMap((t) => {
    try {
      const cite = (JSON.parse(t) as { cite?: string }).cite;
      return cite ? [cite] : [];
    } catch {
      return [];
    }
  });

const call = (name: string, input: Record<string, unknown>) => ({ name, input });
const { namespace: ns, deployment, pod, otherPod, container, repo, release } = WORLD;
const TURNS: AnthropicReply[] = [
  {
    toolCalls: [
      call('k8s_describe', { kind: 'Deployment', namespace: ns, name: deployment }),
      call('k8s_describe', { kind: 'Pod', namespace: ns, name: pod }),
      call('k8s_get', { kind: 'ConfigMap', namespace: ns, name: WORLD.envConfigMap }),
      call('k8s_get', { kind: 'ConfigMap', namespace: ns, name: WORLD.fileConfigMap }),
      call('k8s_get', { kind: 'Pod', namespace: ns, name: pod }),
      call('k8s_events', { namespace: ns, kind: 'Pod', name: pod }),
      call('k8s_list', { kind: 'ConfigMap', namespace: ns }),
      call('k8s_get', { kind: 'Secret', namespace: ns, name: WORLD.secret }),
    ],
  },
  {
    toolCalls: [
      call('k8s_pod_logs', { namespace: ns, pod, container }),
      call('k8s_pod_logs', { namespace: ns, pod, container, previous: true }),
      call('k8s_workload_logs', { namespace: ns, name: deployment }),
      call('k8s_helm_history', { namespace: ns, release }),
      call('loki_query_range', { query: `{namespace="${ns}", pod="${pod}"}`, start: '2h' }),
      call('k8s_pod_logs', { namespace: ns, pod: otherPod, container }),
    ],
  },
  {
    toolCalls: [
      call('github_recent_changes', { repo, hours: 24 }),
      call('github_pull_request', { repo, number: 150 }),
      call('github_pull_request', { repo, number: 151 }),
      call('prometheus_query', { query: `sum by (pod) (rate(http_requests_total{namespace="${ns}"}[5m]))` }),
      call('topology', { kind: 'Deployment', namespace: ns, name: deployment }),
      call('k8s_events', { namespace: ns }),
      call('prometheus_query', { query: `auth_gateway_upstream_info{namespace="${ns}"}` }),
    ],
  },
  {
    // The model pastes secrets into its own tool arguments: an error quoting them must not carry them on.
    toolCalls: [
      call('loki_query_range', { query: `{namespace="${ns}"} |= "${canary('github_oauth').secret}"`, start: '1h' }),
      call('k8s_get', { kind: 'Secret', namespace: ns, name: canary('stripe_secret_test').secret }),
      call('prometheus_query', { query: `up{token="${canary('gitlab_pat').secret}"}` }),
      call('github_pull_request', { repo: `acme/${canary('npm_token').secret}`, number: 7 }),
      // A tool named like a token, glued to an identifier as a model would write it.
      call(`lookup_${canary('huggingface_token').secret}`, {}),
    ],
  },
];

/** One reply per turn of whichever conversation asks (investigations run side by side). */
function respond(req: ModelRequest): AnthropicReply {
  const pasted = MODEL_PASTES.map((s) => canary(s).lines[0]!).join(' ; ');
  if ((req.body.tools as { name: string }[] | undefined)?.some((t) => t.name === 'submit_prose')) {
    // The postmortem's prose: the model pastes secrets there too (its check rejects what is not in the facts, and says what).
    const facts = userBlocks(req).map((b) => b.text ?? '').join('\n');
    return { toolCalls: [{ name: 'submit_prose', input: { cause: `The cause was node-2 ${canary('slack_bot_token').secret}`, scope: `A third of requests; ${pasted}`.slice(0, 600), mechanism: `${facts.slice(0, 800)} ${canary('aws_access_key_id').lines[0]}`.slice(0, 1200) } }] };
  }
  const turn = (req.body.messages as { role: string }[]).filter((m) => m.role === 'assistant').length;
  if (turn < TURNS.length) return TURNS[turn]!;
  const results = toolResultTexts(req).join('\n');
  if (turn === TURNS.length) {
    // The misbehaviour: prose instead of a submission, echoing tool results and pasting raw secrets.
    return { text: `Here is what I found:\n${results.slice(0, 6000)}\nand also ${pasted}`, stopReason: 'end_turn' };
  }
  if (turn === TURNS.length + 1 && userBlocks(req).some((b) => b.text?.includes(marker('manual')))) {
    // For the manual run it declines instead, a token across the point where its words are quoted (160 characters).
    const opening = 'I cannot help with that: the gateway logs I was shown carry credentials, for example';
    return { text: `${opening}${' and'.repeat(Math.ceil((140 - opening.length) / 4))} ${canary('github_pat_classic').secret} and ${pasted}`, stopReason: 'end_turn' };
  }
  const cite = cites(req).find((c) => c.includes('deployments/auth-gateway')) ?? cites(req)[0]!;
  return {
    toolCalls: [
      {
        name: 'submit_diagnosis',
        input: {
          summary: `auth-gateway rejects tokens on node-2. Raw notes: ${pasted}. ${results.slice(0, 900)}`.slice(0, 1500),
          hypotheses: [
            {
              title: `node-2 clock skew; pasted ${canary('slack_bot_token').secret}`.slice(0, 200),
              status: 'supported',
              confidence: 0.8,
              component: { kind: 'Deployment', namespace: ns, name: deployment },
              category: 'pod-on-skewed-node',
              mechanism: `tokens are "used before issued" on node-2. Echo: ${results.slice(0, 1000)} ${pasted}`.slice(0, 1200),
              facts: { node: 'node-2', pasted: canary('aws_access_key_id').secret, echo: results.slice(0, 280) },
              scope: `a third of auth-gateway requests; ${pasted}`.slice(0, 600),
              affected: [{ kind: 'Deployment', namespace: ns, name: deployment }],
              evidence: [{ stance: 'supports', summary: `${results.slice(0, 300)} ${canary('card_visa').secret}`.slice(0, 400), citation: cite }],
              mitigation: { action: 'rollout_restart', target: { kind: 'Deployment', namespace: ns, name: deployment }, params: {}, command: `kubectl rollout restart deployment/${deployment} -n ${ns} # ${canary('yaml_password').lines[0]}`, rationale: `move off node-2; ${pasted}`.slice(0, 600) },
            },
          ],
        },
      },
    ],
  };
}

describe('canary corpus through every input channel, 0 leaked in every sink', () => {
  const exporter = new InMemorySpanExporter();
  const logLines: string[] = [];
  let world: World;
  let tmp: string;
  let alertTs: string;

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'vigil-canary-'));
    const dir = writeCanaryScenario(tmp, PLACEMENTS);
    const sink = new Writable({
      write(chunk, _enc, done) {
        logLines.push(String(chunk));
        done();
      },
    });
    world = await startWorld({
      scenarioDir: dir,
      logger: createLogger('trace', createRedactor(), sink),
      spanExporter: exporter,
      model: { script: Array.from({ length: 60 }, () => respond), name: 'canary channels' },
      // `/sre postmortem` also opens a GitHub issue: what Vigil writes to GitHub is a sink too.
      env: { VIGIL_ALERTMANAGER_WEBHOOK_TOKEN: WEBHOOK_TOKEN, GITHUB_ISSUES_REPO: WORLD.repo },
      policyFile: writePolicy(tmp),
    });
    const texts = slackTexts(PLACEMENTS);
    ({ ts: alertTs } = await world.postAlert());
    await world.settle();
    // A responder steers with a paste; free text re-runs the model with it.
    await world.slack.postAsUser(ALERT_CHANNEL, { user: 'U0BOB', text: texts.steering, thread_ts: alertTs });
    const res = await fetch(`http://127.0.0.1:${world.vigil!.port}/webhooks/alertmanager`, { method: 'POST', headers: { authorization: `Bearer ${WEBHOOK_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(texts.webhook) });
    expect(res.status, await res.text()).toBeLessThan(300);
    await world.slack.sendCommand({ command: '/sre', text: `investigate ${texts.manual}`, user_id: 'U0BOB', channel_id: ALERT_CHANNEL, trigger_id: 't-canary' });
    await world.settle();
    // The model's fix (a rollout restart, its command pasted with a secret) gets a card; the on-call rejects it.
    const card = await world.vigil!.db.prisma.approvalRequest.findFirst({ where: { status: 'pending', action: 'rollout_restart' } });
    if (card?.cardTs) {
      const message = world.slack.message(ALERT_CHANNEL, card.cardTs)!;
      await world.slack.sendInteraction(
        blockActionsPayload({ user: { id: 'U0VIGILSRE' }, channel: ALERT_CHANNEL, message: { ts: message.ts, thread_ts: message.thread_ts ?? alertTs, text: message.text ?? '', blocks: message.blocks ?? [] }, action: { action_id: 'approval_reject', value: card.id, block_id: `approval:${card.id}` } }),
      );
      await world.settle();
    }
    // What people read back: status, the postmortem draft, App Home.
    const incident = await world.vigil!.db.prisma.incident.findFirstOrThrow({ orderBy: { openedAt: 'asc' } });
    for (const text of ['status', `postmortem ${incident.id}`]) {
      await world.slack.sendCommand({ command: '/sre', text, user_id: 'U0BOB', channel_id: ALERT_CHANNEL, trigger_id: `t-${text.length}` });
      await world.settle();
    }
    await world.slack.sendEvent(appHomeOpenedEnvelope('U0BOB'));
    await world.settle();
  }, 120_000);
  afterAll(async () => {
    await world?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  /**
   * The scenario's own secrets, and what the API serves encoded: each value of the planted Secret as base64,
   * and windows of the Helm release blobs (a raw blob passed on would carry every value, compressed).
   */
  const scenarioSecrets = () => {
    const encoded = (world.scenario.objects as { kind: string; type?: string; metadata: { name: string }; data?: Record<string, string> }[])
      .filter((o) => o.kind === 'Secret' && (o.metadata.name === WORLD.secret || o.type === 'helm.sh/release.v1'))
      .flatMap((o) => Object.values(o.data ?? {}).flatMap((v) => (v.length > 120 ? [v.slice(60, 84), v.slice(100, 124)] : [v])));
    return [...world.scenario.plantedSecrets, ...encoded];
  };

  it('plants 60+ shapes, each through at least two channels, and every channel carries many', () => {
    // The leak check itself finds every shape in its own raw lines (the test is not vacuous).
    for (const c of CORPUS) for (const line of c.lines) expect(leaks(line).map((l) => l.split(':')[0]), `${c.shape}: ${line}`).toContain(c.shape);
    expect(world.skipped).toEqual([]);
    expect(CORPUS.length).toBeGreaterThanOrEqual(60);
    for (const c of CORPUS) expect(new Set(PLACEMENTS.filter((p) => p.shape === c.shape).map((p) => p.channel)).size, c.shape).toBeGreaterThanOrEqual(2);
    for (const ch of CHANNELS) expect(PLACEMENTS.filter((p) => p.channel === ch.id).length, ch.id).toBeGreaterThanOrEqual(10);
    for (const p of PLACEMENTS) expect(p.line.includes(canary(p.shape).secret) || p.line.includes(JSON.stringify(canary(p.shape).secret).slice(1, -1)), `${p.shape} in ${p.channel}`).toBe(true);
  });

  it('every channel really reached Vigil (its marker is in a model request or a stored row)', async () => {
    const sent = world.model!.requests.map((r) => r.raw).join('\n');
    const stored = JSON.stringify(await dumpDatabase(world));
    const channels: ChannelId[] = [...CHANNELS.map((c) => c.id), 'label', 'alerttitle', 'prtitle'];
    // A Secret's values never come out, not even its marker: its keys do, read by the model on purpose.
    const markerless = new Set<ChannelId>(['alerttitle', 'prtitle', 'secret']);
    const missing = channels.filter((ch) => !markerless.has(ch) && !sent.includes(marker(ch)) && !stored.includes(marker(ch)));
    expect(missing).toEqual([]);
    const secretRead = world.model!.requests.flatMap(toolResultTexts).find((t) => t.includes(WORLD.secret) && t.includes('NOTE_0'));
    expect(secretRead, 'the model read the Secret (its keys)').toBeDefined();
    // The titles carry no marker of their own: their secrets come out as placeholders where the title is stored.
    const alerts = (await world.vigil!.db.prisma.alert.findMany()).map((a) => a.title).join('\n');
    expect(alerts).toContain('[REDACTED:github_token:');
    expect(sent).toMatch(/\[REDACTED:[a-z0-9_]+:[0-9a-f]{8}\]/);
    // The model ran for the alert, the reply and the command, and misbehaved (prose) before submitting.
    expect(world.model!.requests.length).toBeGreaterThanOrEqual(3 * (TURNS.length + 2));
    expect(await world.vigil!.db.prisma.incident.count()).toBeGreaterThanOrEqual(3);
    // The manual run's model declined (its words quoted in the notice), the others submitted after prose.
    expect(JSON.stringify(world.slack.calls.map((c) => c.body))).toMatch(/declined \(“I cannot help with that/);
    expect((await world.vigil!.db.prisma.hypothesis.findMany({ where: { analyzer: 'model' } })).length).toBeGreaterThanOrEqual(2);
    // The approval card and its decision (a rejection), the postmortem and App Home were all written.
    expect(await world.vigil!.db.prisma.approvalDecision.count()).toBeGreaterThanOrEqual(1);
    expect(world.slack.calls.some((c) => c.method === 'views.publish')).toBe(true);
    expect(await world.vigil!.db.prisma.auditEvent.count({ where: { kind: 'postmortem.posted' } })).toBeGreaterThanOrEqual(1);
  });

  it('no model request carries one (what Vigil wrote: system text, briefs, tool results)', () => {
    const authored = world.model!.requests
      .map((r) => JSON.stringify({ system: r.body?.system, tools: r.body?.tools, messages: (r.body?.messages ?? []).filter((m: { role: string }) => m.role !== 'assistant') }))
      .join('\n');
    expect(authored.length).toBeGreaterThan(10_000);
    expect(leaks(authored, scenarioSecrets())).toEqual([]);
  });

  it('no Slack call or response_url post carries one', () => {
    const outbound = JSON.stringify(world.slack.calls.map((c) => c.body)) + JSON.stringify(world.slack.responses.map((r) => r.body));
    expect(world.slack.calls.length).toBeGreaterThan(5);
    expect(leaks(outbound, scenarioSecrets())).toEqual([]);
  });

  it('no metric on /metrics carries one', async () => {
    const res = await fetch(`http://127.0.0.1:${world.vigil!.port}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('# TYPE');
    expect(leaks(text, scenarioSecrets())).toEqual([]);
  });

  it('no GitHub write (the postmortem issue) carries one', () => {
    expect(world.github!.issues.length).toBeGreaterThanOrEqual(1);
    expect(leaks(JSON.stringify(world.github!.issues), scenarioSecrets())).toEqual([]);
  });

  it('no row of any table carries one', async () => {
    const rows = await dumpDatabase(world);
    // Every table SQLite holds is a Prisma model (so the dump above missed none), migrations aside.
    const tables = (await world.vigil!.db.prisma.$queryRawUnsafe<{ name: string }[]>(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_prisma_%'`)).map((t) => t.name);
    expect(tables.sort()).toEqual(Object.keys(rows).sort());
    expect(rows['SteeringMessage']!.length).toBeGreaterThanOrEqual(1);
    expect(rows['ChangeEvent']!.length).toBeGreaterThanOrEqual(1);
    expect(rows['Evidence']!.length).toBeGreaterThan(5);
    expect(leaks(JSON.stringify(rows), scenarioSecrets())).toEqual([]);
  });

  it('no log line at trace level carries one', () => {
    expect(logLines.length).toBeGreaterThan(20);
    expect(logLines.some((l) => l.includes('"level":10') || l.includes('"level":20'))).toBe(true);
    expect(leaks(logLines.join(''), scenarioSecrets())).toEqual([]);
  });

  it('no span carries one (names, attributes, events, status)', () => {
    const spans = exporter.getFinishedSpans();
    expect(spans.length).toBeGreaterThan(10);
    const dump = JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status, links: s.links })));
    expect(leaks(dump, scenarioSecrets())).toEqual([]);
  });
});

/** The example write policy with the canary world's namespace in production, so the model's fix gets a card. */
function writePolicy(dir: string): string {
  const file = join(dir, 'policy.yaml');
  const example = readFileSync(new URL('../../deploy/policy.example.yaml', import.meta.url), 'utf8');
  const edited = example.replace('namespaces: [shop, payments]', `namespaces: [shop, payments, ${WORLD.namespace}]`);
  if (edited === example) throw new Error('deploy/policy.example.yaml changed: put the canary namespace in production another way');
  writeFileSync(file, edited);
  return file;
}

/** Every row of every Prisma model, keyed by model name (the models come from the client's DMMF, not a hand list). */
async function dumpDatabase(world: World): Promise<Record<string, unknown[]>> {
  const db = world.vigil!.db.prisma as unknown as Record<string, { findMany(): Promise<unknown[]> }>;
  const out: Record<string, unknown[]> = {};
  for (const model of Prisma.dmmf.datamodel.models) {
    const delegate = db[model.name.charAt(0).toLowerCase() + model.name.slice(1)]!;
    out[model.dbName ?? model.name] = await delegate.findMany();
  }
  return out;
}

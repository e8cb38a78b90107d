/**
 * `npm run bench`: Vigil's own overhead on this machine, with every fake answering instantly.
 *   - ack latency of events, slash commands and button clicks (p50/p99), measured at the sender as Slack would;
 *   - alert post → first hypothesis card (the board) in the thread (p50/p99), deterministic path;
 *   - an alert storm: 1,000 alert posts in 60 s for 25 distinct alerts in one channel, with the fake
 *     Slack enforcing ~1 post/s per channel: threads opened, posts lost, ratelimited answers, peak RSS (and the
 *     storm's own part of it, above the idle baseline, per 1,000 alerts);
 *   - context: bytes/tokens of raw evidence gathered per investigation;
 *   - throughput of the two per-line passes every log goes through: template mining (lines/s) and
 *     redaction (MB/s), best of five on 10,000 mixed lines / 1 MB (the unit tests only guard against
 *     a pathological slowdown);
 *   - model input per investigation: a scripted model plays a typical investigation of a scenario (topology,
 *     metric discovery, two PromQL range queries, running pods' logs, events, rollout history, the pull
 *     request, then a diagnosis) through the real app and the real Anthropic SDK pointed at the loopback
 *     fake; every token the model was sent over the loop is summed from the usage fields the fake reports
 *     (it cannot tokenise: ⌈characters of system + JSON(tools) + JSON(messages) ÷ 4⌉ per request), and
 *     compared with the raw evidence of that scenario's world.
 * Options: --json FILE, --storm-seconds N (default 60), --storm-posts N (default 1000), --samples N (default 30),
 * --only model-input | throughput | storm (just that measurement).
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Writable } from 'node:stream';
import { createLogger } from '../src/log.js';
import { createRedactor } from '../src/redact/index.js';
import { mineTemplates } from '../src/evidence/logs/drain.js';
import type { LogLine } from '../src/evidence/logs/types.js';
import { ALERT_CHANNEL, startWorld, type AnthropicReply, type ModelRequest, type ScriptStep, type World } from '../test/support/world.js';
import { meterTotals, type MeteredResponse } from '../test/support/meter.js';
import { blockActionsPayload } from '../test/fakes/slack/index.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    json: { type: 'string' },
    samples: { type: 'string', default: '30' },
    'storm-seconds': { type: 'string', default: '60' },
    'storm-posts': { type: 'string', default: '1000' },
    'storm-distinct': { type: 'string', default: '25' },
    only: { type: 'string' },
  },
});
const DEMO = join(root, 'test', 'scenarios', 'demo-checkout-scaled-to-zero');
/** The model-input scenario: a deploy regression with metrics (real Prometheus), Running pods' logs, rollout history and GitHub. */
const MODEL_SCENARIO = join(root, 'test', 'scenarios', 'deploy-before-error-spike');
/** The realistically sized world: a blind scenario with many objects, logs (187 KB) and series (124). */
const REALISTIC_SCENARIO = join(root, 'test', 'scenarios-blind', 'spring-postgres-lock-contention');
/** Goals for what the model is sent per investigation. */
const MODEL_INPUT_GOALS = { maxShareOfRaw: 1 / 20, maxTokens: 40_000 };

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? Math.round(s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]! * 10) / 10 : 0;
};
const quietLogger = () => createLogger('silent', createRedactor(), new Writable({ write: (_c, _e, d) => d() }));

async function newWorld(extra: Record<string, unknown> = {}): Promise<World> {
  return startWorld({ scenarioDir: DEMO, logger: quietLogger(), ...extra });
}

function alertAttachment(name: string) {
  const title = `[FIRING:1] ${name} (checkout shop critical)`;
  return [{ title, title_link: 'http://alertmanager.local:9093/#/alerts?receiver=slack', text: '', fallback: `${title} | http://alertmanager.local:9093`, color: 'danger', mrkdwn_in: ['fallback', 'pretext', 'text'] }];
}

async function ackAndFirstCard(samples: number) {
  const world = await newWorld();
  const db = world.vigil!.db.prisma;
  const eventAcks: number[] = [];
  const commandAcks: number[] = [];
  const clickAcks: number[] = [];
  const firstCard: number[] = [];
  try {
    for (let i = 0; i < samples; i++) {
      // Incidents a few seconds apart, as on a real channel: Vigil paces its posts at Slack's ~1/s per
      // channel, so back-to-back samples would measure the pacing, not Vigil.
      if (i > 0) await new Promise((r) => setTimeout(r, 2500));
      await db.incident.deleteMany();
      const before = world.slack.calls.length;
      const t0 = performance.now();
      const post = await world.slack.postAsBot(ALERT_CHANNEL, { username: 'Alertmanager', attachments: alertAttachment('KubeDeploymentReplicasMismatch') });
      eventAcks.push(post.delivery!.ackMs);
      await world.slack.waitFor(
        () => world.slack.calls.slice(before).find((c) => c.method === 'chat.postMessage' && (c.body['metadata'] as { event_payload?: { purpose?: string } })?.event_payload?.purpose === 'board'),
        { timeoutMs: 10_000 },
      );
      firstCard.push(performance.now() - t0);
      await world.settle();
      const reply = await world.slack.postAsUser(ALERT_CHANNEL, { user: 'U0BOB', text: 'looking', thread_ts: post.message.ts });
      eventAcks.push(reply.delivery!.ackMs);
      const cmd = await world.slack.sendCommand({ command: '/sre', text: 'status', user_id: 'U0BOB', channel_id: ALERT_CHANNEL, trigger_id: `b${i}` });
      commandAcks.push(cmd.ackMs);
      // A click: Pin in the ⋯ menu of H1 on the board.
      const h1 = await db.hypothesis.findFirst({ where: { label: 'H1' } });
      const board = world.slack.threadOf(ALERT_CHANNEL, post.message.ts).find((m) => (m.metadata as { event_payload?: { purpose?: string } })?.event_payload?.purpose === 'board');
      if (h1 && board) {
        const clickRes = await world.slack.sendInteraction(
          blockActionsPayload({ user: { id: 'U0BOB' }, channel: ALERT_CHANNEL, message: { ts: board.ts, thread_ts: post.message.ts, blocks: board.blocks ?? [] }, action: { action_id: 'hyp_menu', block_id: `hyp:${h1.id}`, selected_option: { value: `pin:${h1.id}` } } }),
        );
        clickAcks.push(clickRes.ackMs);
      }
      await world.settle();
    }
  } finally {
    await world.close();
  }
  return { eventAcks, commandAcks, clickAcks, firstCard };
}

async function storm(posts: number, seconds: number, distinct: number) {
  // Real Slack's per-channel posting limit, enforced by the fake: any 429 counts against us.
  const world = await newWorld({ slackPostRate: { perSecond: 1, burst: 4 } });
  // Before the first post: what the storm adds on top of an idle Vigil and its fakes.
  const baseline = process.memoryUsage().rss;
  let peak = process.memoryUsage().rss;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 100);
  const started = performance.now();
  const gap = (seconds * 1000) / posts;
  try {
    const sends: Promise<unknown>[] = [];
    for (let i = 0; i < posts; i++) {
      const due = started + i * gap;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      sends.push(world.slack.postAsBot(ALERT_CHANNEL, { username: 'Alertmanager', attachments: alertAttachment(`StormAlert${i % distinct}`) }));
    }
    await Promise.all(sends);
    await world.settle();
    const drained = performance.now();
    // Count-only edits of the summary cards wait out their gap: the newest counts follow within it.
    await new Promise((r) => setTimeout(r, world.vigil!.thread.countEditGapMs + 1000));
    await world.settle();
    const db = world.vigil!.db.prisma;
    const incidents = await db.incident.count();
    const alerts = await db.alert.count();
    const threads = new Set((await db.slackPost.findMany({ where: { purpose: 'header' } })).map((p) => p.incidentId)).size;
    // Posts per incident by what they are (header, board, escalation, alert notes…): what a storm costs at 1 post/s.
    const byPurpose: Record<string, number> = {};
    const purposeOf = new Map<string, string>();
    for (const p of await db.slackPost.findMany({ where: { ts: { not: null } }, select: { purpose: true, ts: true } })) {
      const kind = p.purpose.replace(/:.*$/, '');
      byPurpose[kind] = (byPurpose[kind] ?? 0) + 1;
      purposeOf.set(p.ts!, kind);
    }
    const editsByPurpose: Record<string, number> = {};
    for (const c of world.slack.callsTo('chat.update')) {
      const kind = purposeOf.get(String(c.body['ts'])) ?? 'other';
      editsByPurpose[kind] = (editsByPurpose[kind] ?? 0) + 1;
    }
    return {
      alerts: posts,
      distinct,
      incidents,
      threads,
      lost: posts - alerts,
      rateLimitedErrors: world.slack.rateLimitedCount,
      rejected: world.slack.rejections.length,
      slackPosts: world.slack.callsTo('chat.postMessage').length,
      slackUpdates: world.slack.callsTo('chat.update').length,
      postsPerIncident: incidents ? Math.round((world.slack.callsTo('chat.postMessage').length / incidents) * 10) / 10 : 0,
      postsByPurpose: byPurpose,
      editsByPurpose,
      drainSeconds: Math.round((drained - started) / 100) / 10,
      peakRssMb: Math.round(peak / 1024 / 1024),
      baselineRssMb: Math.round(baseline / 1024 / 1024),
      /** Peak RSS above the idle baseline, scaled to 1,000 alerts (the storm's own memory, not the process's). */
      peakRssMbPer1000Alerts: Math.round(((peak - baseline) / 1024 / 1024) * (1000 / posts) * 10) / 10,
    };
  } finally {
    clearInterval(sampler);
    await world.close();
  }
}

/** The world Vigil could read (objects and logs), as bytes and a ~4-bytes-per-token estimate. */
function rawEvidence(world: World): { bytes: number; tokens: number } {
  const bytes = JSON.stringify(world.scenario.objects).length + JSON.stringify(world.scenario.logs).length;
  return { bytes, tokens: Math.round(bytes / 4) };
}

async function context() {
  const world = await newWorld();
  try {
    await world.postAlert();
    await world.settle();
    const raw = rawEvidence(world);
    const storedEvidence = JSON.stringify(await world.vigil!.db.prisma.evidence.findMany()).length;
    return {
      rawEvidenceBytes: raw.bytes,
      rawEvidenceTokens: raw.tokens,
      storedEvidenceBytes: storedEvidence,
      costUsdPerInvestigation: 0,
      note: 'deterministic path on the demo world: nothing is sent to a model here; the model-input measurement below plays the model loop',
    };
  } finally {
    await world.close();
  }
}

// ------------------------------------------------------------------ model input per investigation

/** A tool result in the newest user turn of an Anthropic request, parsed back from the loop's JSON envelope. */
interface SeenResult {
  text: string;
  json?: { status: string; cite: string; data?: any; message?: string; error?: string };
}

function lastResults(req: ModelRequest): SeenResult[] {
  const last = (req.body.messages as { content: { type: string; content?: unknown }[] }[]).at(-1)!;
  return last.content
    .filter((b) => b.type === 'tool_result')
    .map((b) => {
      const text = typeof b.content === 'string' ? b.content : (b.content as { text: string }[]).map((c) => c.text).join('');
      try {
        return { text, json: JSON.parse(text) as SeenResult['json'] };
      } catch {
        return { text };
      }
    });
}

function success(r: SeenResult | undefined, what: string): NonNullable<SeenResult['json']> {
  if (r?.json?.status !== 'success') throw new Error(`bench investigation: ${what} did not succeed: ${r?.text.slice(0, 300)}`);
  return r.json;
}

const toolCalls = (...c: [string, Record<string, unknown>][]): AnthropicReply => ({ text: 'Checking.', toolCalls: c.map(([name, input]) => ({ name, input })) });

/** A step that cannot go on (a tool did not answer as expected) ends the turn without a diagnosis, and says why. */
const guarded =
  (problems: string[]) =>
  (step: (req: ModelRequest) => AnthropicReply) =>
  (req: ModelRequest): AnthropicReply => {
    try {
      return step(req);
    } catch (err) {
      problems.push(err instanceof Error ? err.message : String(err));
      return { text: 'I cannot continue.' };
    }
  };

const pickQuery = (queries: { id: string; promql: string }[], ...ids: string[]) => ids.map((id) => queries.find((q) => q.id === id)?.promql).find(Boolean);

/**
 * A typical investigation of the cart deploy regression, one or two tool calls per turn as real models
 * work: where cart sits in the graph, which metrics it has, its error ratio and latency, its running
 * pods' logs, the namespace's events and its rollout history, the merged pull request, then a diagnosis
 * citing what the tools returned. Each step reads the previous results, as a model would.
 */
function cartInvestigation(onset: Date, problems: string[]): ScriptStep<AnthropicReply>[] {
  const cites: string[] = [];
  let queries: { id: string; promql: string }[] = [];
  const guard = guarded(problems);
  return [
    guard(() => toolCalls(['topology', { kind: 'Deployment', namespace: 'shop', name: 'cart' }])),
    guard((req) => {
      cites.push(success(lastResults(req)[0], 'topology').cite);
      return toolCalls(['prometheus_discover', { namespace: 'shop', name: 'cart' }]);
    }),
    guard((req) => {
      queries = success(lastResults(req)[0], 'prometheus_discover').data.queries;
      const pick = (id: string) => queries.find((q) => q.id === id)?.promql;
      if (!pick('error_ratio') || !pick('request_rate')) throw new Error(`bench investigation: discovery offered ${queries.map((q) => q.id).join(', ')}`);
      return toolCalls(['prometheus_query_range', { query: pick('error_ratio')!, onset: onset.toISOString() }], ['prometheus_query_range', { query: pick('request_rate')!, onset: onset.toISOString() }]);
    }),
    guard((req) => {
      for (const [i, r] of lastResults(req).entries()) cites.push(success(r, `range query ${i + 1}`).cite);
      return toolCalls(['k8s_workload_logs', { namespace: 'shop', name: 'cart' }]);
    }),
    guard((req) => {
      cites.push(success(lastResults(req)[0], 'k8s_workload_logs').cite);
      return toolCalls(['k8s_events', { namespace: 'shop', sinceMinutes: 60 }], ['k8s_rollout_history', { kind: 'Deployment', namespace: 'shop', name: 'cart' }]);
    }),
    guard((req) => {
      const [events, rollout] = lastResults(req);
      if (events?.json?.status === 'success') cites.push(events.json.cite);
      cites.push(success(rollout, 'k8s_rollout_history').cite);
      return toolCalls(['github_pull_request', { repo: 'acme/cart', number: 214 }]);
    }),
    guard((req) => {
      const pr = lastResults(req)[0];
      if (pr?.json?.status === 'success') cites.push(pr.json.cite);
      const [topology, ratio, second, logs, ...rest] = cites;
      return {
        toolCalls: [
          {
            name: 'submit_diagnosis',
            input: {
              summary: 'cart 2.14.0 (revision 12, PR #214) answers 500 for discounted carts since its rollout five minutes before the alert; roll back to revision 11.',
              hypotheses: [
                {
                  title: 'cart 2.14.0 regression (PR #214): RangeError in the discount allocator',
                  status: 'supported',
                  confidence: 0.9,
                  component: { kind: 'Deployment', namespace: 'shop', name: 'cart' },
                  category: 'deploy-regression',
                  mechanism: 'Revision 12 rounds half-to-even; the discount allocator then throws RangeError and the handler answers 500.',
                  facts: { revision: 12, image: 'cart=registry.example.com/shop/cart:2.14.0', pr: 214, metric: 'error_ratio' },
                  scope: 'cart requests with discounted items; storefront checkout previews',
                  affected: [
                    { kind: 'Deployment', namespace: 'shop', name: 'cart' },
                    { kind: 'Service', namespace: 'shop', name: 'cart' },
                  ],
                  evidence: [
                    { stance: 'supports', summary: '5xx ratio left its ~0.2% baseline at the rollout', citation: ratio! },
                    { stance: 'supports', summary: 'cart kept its traffic: the failures are answers, not an outage', citation: second! },
                    { stance: 'supports', summary: 'RangeError: allocation remainder out of range since 2.14.0 started', citation: logs! },
                    ...rest.map((citation) => ({ stance: 'supports' as const, summary: 'revision 12 / PR #214 rolled out right before the onset', citation })),
                    { stance: 'supports', summary: 'cart is what the alert names; Service cart selects it', citation: topology! },
                  ],
                  mitigation: { action: 'rollout_undo', target: { kind: 'Deployment', namespace: 'shop', name: 'cart' }, params: { toRevision: 11 }, command: 'kubectl rollout undo deployment/cart -n shop --to-revision=11', rationale: 'revision 11 ran clean for two days' },
                },
              ],
            },
          },
        ],
      };
    }),
  ];
}

/**
 * A typical investigation of the catalog latency page in the realistically sized blind world
 * `spring-postgres-lock-contention` (4 nodes, 58 objects, 11 pods' logs, 124 series, 2 repositories),
 * two or three tool calls per turn as current models work: the graph around catalog-service and its
 * series; its latency and connection-pool saturation; its pods' logs and the namespace's events; the
 * data store it calls (found in the graph) and the namespace's pods; the migration Job's pod log (found
 * in the pod list) and the service's repository; then a diagnosis citing what they returned.
 */
function catalogInvestigation(onset: Date, problems: string[]): ScriptStep<AnthropicReply>[] {
  const ns = 'catalog';
  const cites: Record<string, string> = {};
  let store: { kind: string; name: string } | undefined;
  let migratePod: string | undefined;
  const guard = guarded(problems);
  return [
    guard(() => toolCalls(['topology', { kind: 'Deployment', namespace: ns, name: 'catalog-service' }], ['prometheus_discover', { namespace: ns, name: 'catalog-service' }])),
    guard((req) => {
      const [topology, discovery] = lastResults(req);
      const t = success(topology, 'topology');
      cites['topology'] = t.cite;
      // The data store catalog-service calls: the first StatefulSet the graph reaches from it.
      const ids: string[] = [...Object.values(t.data.dependsOn ?? {}).flat(), ...(t.data.reaches ?? [])].map(String);
      const hit = ids.join(' ').match(/StatefulSet\/([^/\s]+)\/([^\s·]+)/);
      if (!hit) throw new Error(`bench investigation: no StatefulSet in catalog-service's graph: ${ids.join('; ').slice(0, 300)}`);
      store = { kind: 'StatefulSet', name: hit[2]! };
      const queries = success(discovery, 'prometheus_discover').data.queries as { id: string; promql: string }[];
      const latency = pickQuery(queries, 'latency_p99', 'error_ratio');
      const pool = pickQuery(queries, 'db_pool_saturation', 'request_rate');
      if (!latency || !pool) throw new Error(`bench investigation: discovery offered ${queries.map((q) => q.id).join(', ')}`);
      return toolCalls(['prometheus_query_range', { query: latency, onset: onset.toISOString() }], ['prometheus_query_range', { query: pool, onset: onset.toISOString() }]);
    }),
    guard((req) => {
      const [latency, pool] = lastResults(req);
      cites['latency'] = success(latency, 'latency range query').cite;
      cites['pool'] = success(pool, 'pool range query').cite;
      return toolCalls(['k8s_workload_logs', { namespace: ns, name: 'catalog-service' }], ['k8s_events', { namespace: ns, sinceMinutes: 60 }]);
    }),
    guard((req) => {
      const [logs, events] = lastResults(req);
      cites['serviceLogs'] = success(logs, 'k8s_workload_logs catalog-service').cite;
      if (events?.json?.status === 'success') cites['events'] = events.json.cite;
      return toolCalls(['k8s_workload_logs', { namespace: ns, name: store!.name, kind: store!.kind }], ['k8s_list', { kind: 'pods', namespace: ns }]);
    }),
    guard((req) => {
      const [dbLogs, pods] = lastResults(req);
      cites['storeLogs'] = success(dbLogs, `k8s_workload_logs ${store!.name}`).cite;
      const list = success(pods, 'k8s_list pods');
      cites['pods'] = list.cite;
      migratePod = JSON.stringify(list.data).match(/catalog-migrate-[a-z0-9-]+/)?.[0];
      if (!migratePod) throw new Error(`bench investigation: no migration pod in ${JSON.stringify(list.data).slice(0, 300)}`);
      return toolCalls(['k8s_pod_logs', { namespace: ns, pod: migratePod }], ['github_recent_changes', { repo: 'northwind/catalog-service', hours: 24 }]);
    }),
    guard((req) => {
      const [jobLog, changes] = lastResults(req);
      cites['jobLog'] = success(jobLog, 'k8s_pod_logs migration').cite;
      if (changes?.json?.status === 'success') cites['changes'] = changes.json.cite;
      const store_ = { kind: store!.kind, namespace: ns, name: store!.name };
      const job = { kind: 'Job', namespace: ns, name: migratePod!.replace(/-[a-z0-9]{5}$/, '') };
      return {
        toolCalls: [
          {
            name: 'submit_diagnosis',
            input: {
              summary: `The Argo CD PreSync migration ${job.name} holds an ACCESS EXCLUSIVE lock on products; every catalog query queues behind it, times out and exhausts HikariPool-1. catalog-service itself did not change.`,
              hypotheses: [
                {
                  title: `Migration ${job.name} locks products: catalog queries queue and time out`,
                  status: 'supported',
                  confidence: 0.85,
                  component: job,
                  category: 'lock-contention',
                  mechanism: 'ALTER TABLE products ALTER COLUMN price TYPE numeric(14,4) rewrites the table under ACCESS EXCLUSIVE; SELECTs wait for AccessShareLock until statement_timeout cancels them, and the waiting requests hold every pool connection.',
                  facts: { table: 'products', lock: 'AccessExclusiveLock', blockingPid: 2290, pool: 'HikariPool-1' },
                  scope: 'every catalog API request reading products; storefront pages that call it',
                  affected: [job, store_, { kind: 'Deployment', namespace: ns, name: 'catalog-service' }],
                  evidence: [
                    { stance: 'supports', summary: 'postgres: process 2290 (ALTER TABLE products) holds the lock the catalog queries wait for', citation: cites['storeLogs']! },
                    { stance: 'supports', summary: 'the migration log stops at "Migrating schema to version 88"', citation: cites['jobLog']! },
                    { stance: 'supports', summary: 'catalog latency p99 left its baseline at the onset', citation: cites['latency']! },
                    { stance: 'supports', summary: 'HikariPool-1 saturated: requests wait for connections', citation: cites['pool']! },
                    { stance: 'supports', summary: 'catalog-service logs: Connection is not available, request timed out (a consequence)', citation: cites['serviceLogs']! },
                    ...(cites['changes'] ? [{ stance: 'supports' as const, summary: 'PR #611 widened products.price: the migration behind the lock', citation: cites['changes'] }] : []),
                    { stance: 'supports', summary: 'catalog-service calls the database; the Job runs in its namespace', citation: cites['topology']! },
                  ],
                },
                {
                  title: 'HikariPool leak in catalog-service',
                  status: 'ruled_out',
                  confidence: 0.1,
                  component: { kind: 'Deployment', namespace: ns, name: 'catalog-service' },
                  category: 'connection-pool-leak',
                  mechanism: 'The pool errors follow the lock waits; nothing in catalog-service changed.',
                  facts: { pool: 'HikariPool-1' },
                  scope: 'catalog-service',
                  affected: [{ kind: 'Deployment', namespace: ns, name: 'catalog-service' }],
                  evidence: [{ stance: 'refutes', summary: 'the pods run the same ReplicaSet as before the onset', citation: cites['pods']! }],
                  reason: 'a consequence of the lock, not a leak',
                },
              ],
            },
          },
        ],
      };
    }),
  ];
}

interface Investigation {
  dir: string;
  /** Namespaces of other teams added around the scenario (see withBystanders). */
  bystanders?: number;
  /** What kind of world it is, for the output. */
  world: string;
  script: (onset: Date, problems: string[]) => ScriptStep<AnthropicReply>[];
}

const INVESTIGATIONS: Investigation[] = [
  { dir: MODEL_SCENARIO, world: 'small fixture', script: cartInvestigation },
  { dir: REALISTIC_SCENARIO, world: 'realistically sized blind world', script: catalogInvestigation },
  { dir: REALISTIC_SCENARIO, world: 'the same incident in a production-sized cluster (+120 bystander namespaces)', script: catalogInvestigation, bystanders: 120 },
];

/**
 * A production cluster around the same incident: `n` namespaces of other teams, each with a Deployment,
 * its ReplicaSet, 4 Running pods, a Service, a ConfigMap and a recurring old warning, as a cluster of a few
 * hundred workloads has. Vigil reads the whole cluster (lists), so raw evidence grows with it; what the model
 * is sent must not.
 */
function withBystanders(dir: string, n: number): string {
  const doc = parseYaml(readFileSync(join(dir, 'scenario.yaml'), 'utf8')) as { id: string; kubernetes: { objects: unknown[] } };
  const objects = doc.kubernetes.objects;
  for (let i = 0; i < n; i++) {
    const ns = `team-${String(i).padStart(3, '0')}`;
    const app = `svc-${i}`;
    const labels = { app };
    const container = { name: app, image: `registry.example.com/${ns}/${app}:1.${i % 9}.${i % 7}`, ports: [{ name: 'http', containerPort: 8080 }], resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } } };
    objects.push({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, creationTimestamp: '@-200d' } });
    objects.push({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: app, namespace: ns, creationTimestamp: '@-200d', annotations: { 'deployment.kubernetes.io/revision': '3' }, labels }, spec: { replicas: 4, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [container] } } }, status: { replicas: 4, readyReplicas: 4, availableReplicas: 4, updatedReplicas: 4 } });
    objects.push({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: `${app}-7d9f8b6c5`, namespace: ns, creationTimestamp: '@-9d', labels: { ...labels, 'pod-template-hash': '7d9f8b6c5' }, annotations: { 'deployment.kubernetes.io/revision': '3' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: app, uid: `uid-${ns}`, controller: true }] }, spec: { replicas: 4, selector: { matchLabels: { ...labels, 'pod-template-hash': '7d9f8b6c5' } }, template: { metadata: { labels: { ...labels, 'pod-template-hash': '7d9f8b6c5' } }, spec: { containers: [container] } } }, status: { replicas: 4, readyReplicas: 4 } });
    for (let k = 0; k < 4; k++) {
      objects.push({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `${app}-7d9f8b6c5-${'abcd'[k]}x${i}q`, namespace: ns, creationTimestamp: '@-9d', labels: { ...labels, 'pod-template-hash': '7d9f8b6c5' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `${app}-7d9f8b6c5`, uid: `uid-rs-${ns}`, controller: true }] }, spec: { nodeName: `node-${(i + k) % 12}`, containers: [container] }, status: { phase: 'Running', startTime: '@-9d', conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [{ name: app, ready: true, restartCount: 0, image: container.image, imageID: '', state: { running: { startedAt: '@-9d' } } }] } });
    }
    objects.push({ apiVersion: 'v1', kind: 'Service', metadata: { name: app, namespace: ns, creationTimestamp: '@-200d' }, spec: { selector: labels, ports: [{ name: 'http', port: 80, targetPort: 'http' }] } });
    objects.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${app}-config`, namespace: ns, creationTimestamp: '@-200d' }, data: { LOG_LEVEL: 'info', UPSTREAM_URL: `http://svc-${(i + 1) % n}.team-${String((i + 1) % n).padStart(3, '0')}.svc:80` } });
    objects.push({ apiVersion: 'v1', kind: 'Event', metadata: { name: `${app}.probe`, namespace: ns }, type: 'Warning', reason: 'Unhealthy', message: 'Readiness probe failed: HTTP probe failed with statuscode: 503', involvedObject: { kind: 'Pod', namespace: ns, name: `${app}-7d9f8b6c5-ax${i}q` }, count: 40 + i, firstTimestamp: '@-3d', lastTimestamp: '@-40m' });
  }
  const parent = mkdtempSync(join(tmpdir(), 'vigil-bench-'));
  mkdirSync(join(parent, doc.id));
  writeFileSync(join(parent, doc.id, 'scenario.yaml'), toYaml(doc));
  return join(parent, doc.id);
}

/** Raw evidence by source; Kubernetes split into objects, events and pod logs. */
function rawBySource(responses: MeteredResponse[]) {
  const groups: Record<string, MeteredResponse[]> = {};
  for (const r of responses) {
    const path = r.path.split('?')[0]!;
    const key = r.source !== 'kubernetes' ? r.source : /\/log$/.test(path) ? 'podLogs' : /\/events$|\/events\//.test(path) ? 'events' : 'objects';
    (groups[key] ??= []).push(r);
  }
  return { ...meterTotals(responses), bySource: Object.fromEntries(Object.entries(groups).map(([k, v]) => [k, meterTotals(v)])) };
}

async function measureInvestigation(inv: Investigation) {
  const started = performance.now();
  // The scenario's times are relative to its onset (now); the script needs that onset before the world exists.
  const onset = new Date(Math.floor(Date.now() / 1000) * 1000);
  const problems: string[] = [];
  // Where the evidence APIs' responses stood when each model request arrived: before the first one is
  // the deterministic gathering, between the first and the last the model's tool calls.
  const marks: number[] = [];
  let responses: MeteredResponse[] = [];
  const script = inv.script(onset, problems).map((step) => (req: ModelRequest) => {
    marks.push(responses.length);
    return typeof step === 'function' ? (step as (r: ModelRequest) => AnthropicReply)(req) : (step as AnthropicReply);
  });
  const scenarioDir = inv.bystanders ? withBystanders(inv.dir, inv.bystanders) : inv.dir;
  const world = await startWorld({ scenarioDir, onset, logger: quietLogger(), meter: true, model: { script, name: `bench ${inv.dir}` } });
  try {
    if (world.skipped.length) return { scenario: world.scenario.id, skipped: world.skipped.join('; ') } as const;
    responses = world.meter!.responses;
    const before = responses.length;
    await world.postAlert();
    await world.settle();
    const db = world.vigil!.db.prisma;
    const done = await db.auditEvent.findFirst({ where: { kind: 'agent.completed' } });
    const agent = done ? (JSON.parse(done.data) as { status: string; steps: number; toolCalls: number; usage: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number } }) : undefined;
    if (!agent) throw new Error(`${world.scenario.id}: the model step did not complete${problems.length ? `: ${problems.join('; ')}` : ''}`);
    const requests = world.model!.messageRequests();
    if (process.env['BENCH_DUMP']) writeFileSync(`${process.env['BENCH_DUMP']}.${world.scenario.id}.json`, JSON.stringify(requests, null, 1));
    // Everything each request sent, by part (the same ÷ 4 estimate the fake reports as usage).
    const systemChars = (b: any) => (b.system as { text: string }[]).reduce((n, x) => n + x.text.length, 0);
    const part = (f: (b: any) => number) => Math.ceil(requests.reduce((n, b) => n + f(b), 0) / 4);
    const breakdown = {
      system: part(systemChars),
      tools: part((b) => JSON.stringify(b.tools ?? []).length),
      messages: part((b) => JSON.stringify(b.messages).length),
    };
    const last = requests.at(-1);
    const sent = agent.usage.inputTokens + agent.usage.cacheReadTokens + agent.usage.cacheWriteTokens;
    const first = marks[0] ?? responses.length;
    const end = marks.at(-1) ?? responses.length;
    const raw = {
      gathering: rawBySource(responses.slice(before, first)),
      toolCalls: rawBySource(responses.slice(first, end)),
      ...rawBySource(responses.slice(before, end)),
      afterDiagnosis: meterTotals(responses.slice(end)),
    };
    const ratio = sent / raw.tokens;
    const s = world.scenario;
    return {
      scenario: s.id,
      world: `${inv.world}: ${s.objects.length} objects, ${Object.keys(s.logs).length} log streams, ${s.prometheus?.series.length ?? 0} series, ${Object.keys(s.github?.repos ?? {}).length} repositories`,
      status: agent.status,
      ...(problems.length ? { problems } : {}),
      modelCalls: agent.steps,
      toolCalls: agent.toolCalls,
      modelInputTokens: sent,
      uncachedInputTokens: agent.usage.inputTokens,
      cacheReadTokens: agent.usage.cacheReadTokens,
      cacheWriteTokens: agent.usage.cacheWriteTokens,
      perCall: requests.length ? Math.round(sent / requests.length) : 0,
      lastCall: last ? Math.ceil((JSON.stringify(last.tools ?? []).length + JSON.stringify(last.messages).length + systemChars(last)) / 4) : 0,
      toolDefinitionsPerCall: Math.ceil(JSON.stringify(requests[0]?.tools ?? []).length / 4),
      systemPerCall: requests[0] ? Math.ceil(systemChars(requests[0]) / 4) : 0,
      breakdown,
      outputTokens: agent.usage.outputTokens,
      raw,
      ratio: Math.round(ratio * 1000) / 1000,
      goals: {
        shareOfRaw: { target: `≤ 1/${Math.round(1 / MODEL_INPUT_GOALS.maxShareOfRaw)} of raw`, pass: ratio <= MODEL_INPUT_GOALS.maxShareOfRaw },
        tokens: { target: `< ${MODEL_INPUT_GOALS.maxTokens}`, pass: sent < MODEL_INPUT_GOALS.maxTokens },
      },
      seconds: Math.round((performance.now() - started) / 100) / 10,
    };
  } finally {
    await world.close();
  }
}

const MODEL_INPUT_METHOD =
  'model input: usage fields of the fake Anthropic API (real SDK, real app), ⌈characters of system + JSON(tools) + JSON(messages) ÷ 4⌉ per request summed over the loop ' +
  '(total = uncached input + cache writes + cache reads; the fake caches like the API, by prefix at the cache_control breakpoints); ' +
  'raw evidence: the response bodies every evidence API (Kubernetes objects, events and pod logs, Prometheus, Loki, GitHub) served to Vigil ' +
  'from the alert post to the last model call (deterministic gathering + the model’s tool calls), counted by a metering proxy in front of each, uncompressed, ÷ 4';

async function modelInput() {
  const started = performance.now();
  const runs = [];
  for (const inv of INVESTIGATIONS) runs.push(await measureInvestigation(inv));
  return { method: MODEL_INPUT_METHOD, runs, seconds: Math.round((performance.now() - started) / 100) / 10 };
}

function printModelInput(m: Awaited<ReturnType<typeof modelInput>>) {
  const k = (n: number) => `${(n / 1000).toFixed(1)}k`;
  for (const r of m.runs) {
    if ('skipped' in r) {
      console.log(`model input (${r.scenario}): not measured (${r.skipped})`);
      continue;
    }
    const src = Object.entries(r.raw.bySource)
      .map(([name, t]) => `${name} ${k(t.tokens)}`)
      .join(', ');
    console.log(
      `model input per investigation (${r.scenario}, ${r.world}; scripted model through the Anthropic SDK: ${r.modelCalls} model calls, ${r.toolCalls} tool calls, ${r.status}): ${r.modelInputTokens} tokens sent ` +
        `(system ${k(r.breakdown.system)} + tools ${k(r.breakdown.tools)} + messages ${k(r.breakdown.messages)}; per call: tools ${k(r.toolDefinitionsPerCall)}, system ${k(r.systemPerCall)}; last call ${k(r.lastCall)}); ` +
        `uncached ${r.uncachedInputTokens} (cache writes ${r.cacheWriteTokens}, reads ${r.cacheReadTokens})`,
    );
    console.log(
      `  raw evidence served to Vigil: ~${r.raw.tokens} tokens (${(r.raw.bytes / 1024).toFixed(1)} KB in ${r.raw.requests} responses: gathering ${k(r.raw.gathering.tokens)} + tool calls ${k(r.raw.toolCalls.tokens)}; ${src}); ratio model/raw ${r.ratio}`,
    );
    console.log(`  goal model input ${r.goals.shareOfRaw.target} evidence: ${r.goals.shareOfRaw.pass ? 'PASS' : 'FAIL'} (model input = ${r.ratio} × raw; the goal is ≤ ${MODEL_INPUT_GOALS.maxShareOfRaw} ×)`);
    console.log(`  goal model input ${r.goals.tokens.target} tokens: ${r.goals.tokens.pass ? 'PASS' : 'FAIL'} (${r.modelInputTokens})`);
  }
}

// ------------------------------------------------------------------ per-line throughput

/** Lines of the shapes real services write (logfmt, JSON, klog, access log, Java), with varying values. */
function mixedLines(n: number): LogLine[] {
  const start = Date.UTC(2026, 0, 15, 10);
  const shapes = [
    (i: number) => `ts=2026-01-15T10:${String(i % 60).padStart(2, '0')}:00Z level=info msg="request done" method=GET path=/api/v1/orders/${i} status=200 duration=${(i % 97) + 0.5}ms`,
    (i: number) => `{"ts":${start + i},"level":"warn","msg":"slow query","elapsed_ms":${i % 900},"trace_id":"${(i * 2654435761).toString(16).padStart(32, '0').slice(0, 32)}"}`,
    (i: number) => `I0115 10:00:${String(i % 60).padStart(2, '0')}.123456       1 controller.go:123] Reconciling deployment shop/checkout-${i % 7} resourceVersion=${48291734 + i}`,
    (i: number) => `10.1.${i % 250}.${i % 199} - - [15/Jan/2026:10:00:00 +0000] "POST /cart/${i} HTTP/1.1" ${i % 11 === 0 ? 502 : 200} ${512 + (i % 400)}`,
    (i: number) => `ts=2026-01-15T10:00:00Z level=error msg="upstream request failed" upstream=payments addr=10.2.3.${i % 250}:8080 err="context deadline exceeded" attempt=${i % 5}`,
    (i: number) => `2026-01-15 10:00:00.${String(i % 1000).padStart(3, '0')} ERROR [http-nio-8080-exec-${i % 200}] o.h.e.j.s.SqlExceptionHelper : HikariPool-1 - Connection is not available, request timed out after ${30000 + (i % 10)}ms.`,
  ];
  return Array.from({ length: n }, (_, i) => ({ ts: new Date(start + i * 100), line: shapes[i % shapes.length]!(i) }));
}

function bestOf<T>(runs: number, f: () => T): { ms: number; out: T } {
  let out = f(); // warm the JIT
  let ms = Infinity;
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    out = f();
    ms = Math.min(ms, performance.now() - t);
  }
  return { ms, out };
}

function throughput() {
  const lines = mixedLines(10_000);
  const mined = bestOf(5, () => mineTemplates(lines));
  const redactor = createRedactor({ salt: 'bench' });
  let blob = '';
  for (let i = 0; blob.length < 1_000_000; i++) blob += `${lines[i % lines.length]!.line}\n`;
  const redacted = bestOf(5, () => redactor.redactText(blob));
  return {
    mining: { lines: lines.length, ms: Math.round(mined.ms * 10) / 10, linesPerSecond: Math.round(lines.length / (mined.ms / 1000)), templates: mined.out.length },
    redaction: { bytes: blob.length, ms: Math.round(redacted.ms * 10) / 10, mbPerSecond: Math.round((blob.length / 1e6 / (redacted.ms / 1000)) * 10) / 10 },
  };
}

async function main() {
  const samples = Number(values.samples);
  console.log(`Vigil bench · ${new Date().toISOString()} · node ${process.version} · ${process.platform}/${process.arch}`);
  if (values.only === 'throughput') {
    console.log(JSON.stringify(throughput()));
    return;
  }
  if (values.only === 'storm') {
    const s = await storm(Number(values['storm-posts']), Number(values['storm-seconds']), Number(values['storm-distinct']));
    console.log(JSON.stringify(s));
    if (values.json) writeFileSync(values.json, JSON.stringify({ at: new Date().toISOString(), node: process.version, storm: s }, null, 2));
    return;
  }
  if (values.only === 'model-input') {
    const m = await modelInput();
    printModelInput(m);
    if (values.json) writeFileSync(values.json, JSON.stringify({ at: new Date().toISOString(), node: process.version, modelInput: m }, null, 2));
    return;
  }
  const a = await ackAndFirstCard(samples);
  const all = [...a.eventAcks, ...a.commandAcks, ...a.clickAcks];
  const ackMs = {
    p50: pct(all, 50),
    p99: pct(all, 99),
    events: { p50: pct(a.eventAcks, 50), p99: pct(a.eventAcks, 99) },
    commands: { p50: pct(a.commandAcks, 50), p99: pct(a.commandAcks, 99) },
    clicks: { p50: pct(a.clickAcks, 50), p99: pct(a.clickAcks, 99) },
    samples: all.length,
  };
  const firstCardMs = { p50: pct(a.firstCard, 50), p99: pct(a.firstCard, 99), samples: a.firstCard.length };
  console.log(`ack: p50 ${ackMs.p50} ms, p99 ${ackMs.p99} ms (${ackMs.samples} deliveries)`);
  console.log(`alert post → first hypothesis card: p50 ${firstCardMs.p50} ms, p99 ${firstCardMs.p99} ms`);
  const s = await storm(Number(values['storm-posts']), Number(values['storm-seconds']), Number(values['storm-distinct']));
  console.log(`storm: ${s.alerts} posts for ${s.distinct} alerts → ${s.incidents} incidents, ${s.threads} threads, lost ${s.lost}, ratelimited ${s.rateLimitedErrors}, ${s.slackPosts} posts + ${s.slackUpdates} edits, drained in ${s.drainSeconds} s, peak RSS ${s.peakRssMb} MB (idle ${s.baselineRssMb} MB: +${s.peakRssMbPer1000Alerts} MB per 1,000 alerts)`);
  const t = throughput();
  console.log(`log template mining: ${t.mining.linesPerSecond.toLocaleString('en')} lines/s (${t.mining.lines.toLocaleString('en')} lines → ${t.mining.templates} templates in ${t.mining.ms} ms, best of 5)`);
  console.log(`redaction: ${t.redaction.mbPerSecond} MB/s (${(t.redaction.bytes / 1e6).toFixed(1)} MB in ${t.redaction.ms} ms, best of 5)`);
  const c = await context();
  console.log(`context: raw evidence ~${c.rawEvidenceTokens} tokens per investigation (demo world, deterministic path: no model input)`);
  const m = await modelInput();
  printModelInput(m);
  const report = { at: new Date().toISOString(), node: process.version, ackMs, firstCardMs, storm: s, throughput: t, context: c, modelInput: m };
  if (values.json) writeFileSync(values.json, JSON.stringify(report, null, 2));
}

main().catch((err: unknown) => {
  console.error(`bench failed: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});

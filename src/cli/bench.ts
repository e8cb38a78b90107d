/**
 * `npm run bench`: Vigil's own overhead on this machine, with every fake answering instantly.
 *   - ack latency of events, slash commands and button clicks (p50/p99), measured at the sender as Slack would;
 *   - alert post → first hypothesis card (the board) in the thread (p50/p99), deterministic path;
 *   - an alert storm: 1,000 alert posts in 60 s for 25 distinct alerts in one channel, with the fake
 *     Slack enforcing ~1 post/s per channel: threads opened, posts lost, ratelimited answers, peak RSS;
 *   - context: bytes/tokens of raw evidence gathered per investigation (model input: none in this build).
 * Options: --json FILE, --storm-seconds N (default 60), --storm-posts N (default 1000), --samples N (default 30).
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Writable } from 'node:stream';
import { createLogger } from '../log.js';
import { createRedactor } from '../redact/index.js';
import { ALERT_CHANNEL, startWorld, type World } from '../../test/support/world.js';
import { blockActionsPayload } from '../../test/fakes/slack/index.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { values } = parseArgs({
  options: {
    json: { type: 'string' },
    samples: { type: 'string', default: '30' },
    'storm-seconds': { type: 'string', default: '60' },
    'storm-posts': { type: 'string', default: '1000' },
    'storm-distinct': { type: 'string', default: '25' },
  },
});
const DEMO = join(root, 'test', 'scenarios', 'demo-checkout-scaled-to-zero');

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
      // A button click: Pin on H1 of the board.
      const h1 = await db.hypothesis.findFirst({ where: { label: 'H1' } });
      const board = world.slack.threadOf(ALERT_CHANNEL, post.message.ts).find((m) => (m.metadata as { event_payload?: { purpose?: string } })?.event_payload?.purpose === 'board');
      if (h1 && board) {
        const clickRes = await world.slack.sendInteraction(
          blockActionsPayload({ user: { id: 'U0BOB' }, channel: ALERT_CHANNEL, message: { ts: board.ts, thread_ts: post.message.ts, blocks: board.blocks ?? [] }, action: { action_id: 'hyp_pin', value: h1.id, block_id: `hyp:${h1.id}` } }),
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
    const db = world.vigil!.db.prisma;
    const incidents = await db.incident.count();
    const alerts = await db.alert.count();
    const threads = new Set((await db.slackPost.findMany({ where: { purpose: 'header' } })).map((p) => p.incidentId)).size;
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
      drainSeconds: Math.round((performance.now() - started) / 100) / 10,
      peakRssMb: Math.round(peak / 1024 / 1024),
    };
  } finally {
    clearInterval(sampler);
    await world.close();
  }
}

async function context() {
  const world = await newWorld();
  try {
    await world.postAlert();
    await world.settle();
    // The world Vigil could read (objects and logs), as bytes and ~4-bytes-per-token estimate.
    const rawBytes = JSON.stringify(world.scenario.objects).length + JSON.stringify(world.scenario.logs).length;
    const storedEvidence = JSON.stringify(await world.vigil!.db.prisma.evidence.findMany()).length;
    return {
      rawEvidenceBytes: rawBytes,
      rawEvidenceTokens: Math.round(rawBytes / 4),
      storedEvidenceBytes: storedEvidence,
      modelInputTokens: null,
      ratio: null,
      costUsdPerInvestigation: 0,
      note: 'the bench runs without a model (deterministic path): nothing is sent to a model; see npm run eval -- --model for model token counts',
    };
  } finally {
    await world.close();
  }
}

async function main() {
  const samples = Number(values.samples);
  console.log(`Vigil bench · ${new Date().toISOString()} · node ${process.version} · ${process.platform}/${process.arch}`);
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
  console.log(`storm: ${s.alerts} posts for ${s.distinct} alerts → ${s.incidents} incidents, ${s.threads} threads, lost ${s.lost}, ratelimited ${s.rateLimitedErrors}, ${s.slackPosts} posts + ${s.slackUpdates} edits, drained in ${s.drainSeconds} s, peak RSS ${s.peakRssMb} MB`);
  const c = await context();
  console.log(`context: raw evidence ~${c.rawEvidenceTokens} tokens per investigation; model input: none (${c.note})`);
  const report = { at: new Date().toISOString(), node: process.version, ackMs, firstCardMs, storm: s, context: c };
  if (values.json) writeFileSync(values.json, JSON.stringify(report, null, 2));
}

main().catch((err: unknown) => {
  console.error(`bench failed: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});

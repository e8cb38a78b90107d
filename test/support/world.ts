/**
 * The offline world: fake Slack, fake Kubernetes serving a scenario, a temp SQLite database, and Vigil
 * itself started in-process with its real Bolt HTTP receiver and real SDK clients. Used by the
 * end-to-end tests and by `npm run demo`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pino, { type Logger } from 'pino';
import { loadConfig, type Config } from '../../src/config/index.js';
import { createLogger } from '../../src/log.js';
import { createRedactor } from '../../src/redact/index.js';
import { startVigil, type Vigil } from '../../src/vigil.js';
import type { ModelProvider } from '../../src/agent/types.js';
import { AnthropicProvider } from '../../src/agent/providers/index.js';
import { startFakeAnthropic, type AnthropicReply, type FakeAnthropic } from '../fakes/models/anthropic.js';
import type { ScriptStep } from '../fakes/models/script.js';
import type { SpanExporter } from '@opentelemetry/sdk-trace';
import { startFakeKube, type FakeKube } from '../fakes/kubernetes/server.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack/index.js';
import { loadScenario, type Scenario } from '../scenarios/load.js';
import { startFakeGitHub, type FakeGitHub } from '../fakes/github/server.js';
import { repoScenario } from '../fakes/github/builders.js';
import { startFakeLoki, type FakeLoki } from '../fakes/loki/server.js';
import { startFakeLaunchDarkly, type FakeFlag, type FakeLaunchDarkly } from '../fakes/launchdarkly/server.js';
import { buildSeries, prometheusSkipReason, startPrometheus, type RunningPrometheus } from './prometheus.js';
import { startMeter, type Meter, type MeteredResponse } from './meter.js';
import { stringify as toYaml } from 'yaml';

export type { AnthropicReply } from '../fakes/models/anthropic.js';
export type { RecordedRequest as ModelRequest, ScriptStep } from '../fakes/models/script.js';

export const ALERT_CHANNEL = 'C0ALERTS';
export const READER_TOKEN = 'vigil-reader-token';
/** The fake GitHub's reader token (GITHUB_TOKEN) and, with `githubWriter`, the writer's (GITHUB_WRITE_TOKEN). */
export const GITHUB_READER_TOKEN = 'ghp-fake-reader';
export const GITHUB_WRITER = { token: 'ghp-fake-writer', login: 'vigil-bot' };
/** The fake LaunchDarkly's tokens, with `launchDarkly`: a reader role and a separate writer role. */
export const LAUNCHDARKLY_TOKENS = {
  reader: { token: 'api-fake-ld-reader', name: 'vigil-reader' },
  writer: { token: 'api-fake-ld-writer', name: 'vigil-flag-writer' },
};
export const DEMO_USERS = [
  { id: 'U0VIGILSRE', name: 'alice', real_name: 'Alice Oncall' },
  { id: 'U0BOB', name: 'bob', real_name: 'Bob Responder' },
];

export interface WorldOptions {
  scenarioDir: string;
  onset?: Date;
  noise?: boolean;
  /** Defaults to a fresh SQLite file in a temp folder. */
  databaseUrl?: string;
  logger?: Logger;
  /** Extra settings (env names), e.g. VIGIL_LEASE_SECONDS. */
  env?: Record<string, string>;
  /** Start Vigil in this process (default true). */
  startApp?: boolean;
  /** A write policy file (VIGIL_POLICY_FILE); without one Vigil is read-only and posts no approval cards. */
  policyFile?: string;
  /** Spans go here (an in-memory exporter in tests). */
  spanExporter?: SpanExporter;
  /** The model provider Vigil uses (e.g. pointed at a fake model server); default: none. */
  modelProvider?: ModelProvider;
  /**
   * Start a scripted fake Anthropic Messages API and give Vigil the real Anthropic provider (the SDK)
   * pointed at it. Its usage fields estimate the tokens of each request (characters ÷ 4), so the
   * run's recorded usage measures what the model was sent. Ignored when `modelProvider` is given.
   */
  model?: { script: ScriptStep<AnthropicReply>[]; name?: string };
  /**
   * Put a metering proxy (test/support/meter.ts) in front of every evidence API — Kubernetes,
   * Prometheus, Loki, GitHub — and give Vigil the proxies' URLs: `world.meter` then holds the bytes of
   * every response served to Vigil (the bench's raw evidence).
   */
  meter?: boolean;
  /** More tokens the fake Slack accepts (e.g. a Socket Mode app token). */
  slackExtraTokens?: string[];
  /** Make the fake Slack enforce a per-channel posting rate (answers 429 like Slack when exceeded). */
  slackPostRate?: { perSecond: number; burst: number };
  /** More Slack user groups (id → member ids), added to the default S0SREONCALL (a group named here replaces it). */
  usergroups?: Record<string, string[]>;
  /**
   * Start a fake LaunchDarkly holding the scenario's flags in their state after its flag changes (the
   * latest `after` per flag and environment), and set the LAUNCHDARKLY_* settings with a reader and a
   * separate writer token (LAUNCHDARKLY_TOKENS). `project` defaults to `default`.
   */
  launchDarkly?: boolean | { project?: string };
  /**
   * Give the fake GitHub a separate writer token (GITHUB_WRITER, may push) and set GITHUB_WRITE_TOKEN;
   * the reader token then may not write, as a least-privileged reader. Needs a scenario with `github`.
   */
  githubWriter?: boolean;
}

export interface World {
  scenario: Scenario;
  slack: FakeSlack;
  kube: FakeKube;
  /** Started when the scenario has series (real Prometheus from Debian). */
  prometheus?: RunningPrometheus;
  loki?: FakeLoki;
  github?: FakeGitHub;
  /** Started with the `launchDarkly` option. */
  launchDarkly?: FakeLaunchDarkly;
  /** Started with the `model` option: every request the provider sent. */
  model?: FakeAnthropic;
  /** With the `meter` option: every evidence API response served to Vigil (source kubernetes | prometheus | loki | github). */
  meter?: { responses: MeteredResponse[] };
  /** Why a source the scenario wanted is not running (e.g. no Prometheus binary outside CI). */
  skipped: string[];
  vigil?: Vigil;
  config: Config;
  env: Record<string, string>;
  tmp: string;
  /** A kubeconfig file pointing at the fake API server with the reader token. */
  kubeconfigPath: string;
  /** Start Vigil (in-process) if it was not started, e.g. after a simulated crash. */
  start(): Promise<Vigil>;
  /** Post the scenario's alert to the alert channel as the alerting tool would; Slack delivers it as an event. */
  postAlert(overrides?: { channel?: string }): Promise<{ ts: string }>;
  /** Wait for every queued investigation to finish. */
  settle(): Promise<void>;
  /** Set once the scenario's past Slack traffic was delivered (it is played before the first alert only). */
  pastPlayed?: boolean;
  close(): Promise<void>;
}

export async function startWorld(o: WorldOptions): Promise<World> {
  const scenario = await loadScenario(o.scenarioDir, { onset: o.onset, noise: o.noise });
  if (o.githubWriter && !scenario.github) throw new Error(`githubWriter needs a scenario with github repositories (${scenario.id} has none)`);
  const tmp = mkdtempSync(join(tmpdir(), 'vigil-world-'));
  const signingSecret = randomBytes(16).toString('hex');
  const extraChannels = scenario.slack.channels.filter((c) => c.name !== 'alerts').map((c) => ({ id: channelId(c.name), name: c.name, purpose: c.purpose }));
  const slack = await startFakeSlack({
    ...(o.slackPostRate ? { postRatePerChannel: o.slackPostRate } : {}),
    ...(o.slackExtraTokens ? { extraTokens: o.slackExtraTokens } : {}),
    users: DEMO_USERS,
    usergroups: { S0SREONCALL: ['U0VIGILSRE'], ...o.usergroups },
    channels: [{ id: ALERT_CHANNEL, name: 'alerts' }, ...extraChannels.map(({ id, name }) => ({ id, name }))] as never,
  });
  const kube = await startFakeKube({ objects: scenario.objects, logs: scenario.logs });
  const metered: MeteredResponse[] = [];
  const meters: Meter[] = [];
  const via = async (source: string, url: string) => {
    if (!o.meter) return url;
    const m = await startMeter(source, url, metered);
    meters.push(m);
    return m.url;
  };
  const kubeUrl = await via('kubernetes', kube.url);
  const kubeconfigPath = join(tmp, 'kubeconfig.yaml');
  writeFileSync(
    kubeconfigPath,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{ name: fake, cluster: { server: "' + kubeUrl + '", insecure-skip-tls-verify: true } }]',
      'users: [{ name: reader, user: { token: "' + READER_TOKEN + '" } }]',
      'contexts: [{ name: fake, context: { cluster: fake, user: reader } }]',
      'current-context: fake',
      '',
    ].join('\n'),
  );
  const skipped: string[] = [];
  let prometheus: RunningPrometheus | undefined;
  if (scenario.prometheus && scenario.prometheus.series.length + scenario.prometheus.samples.length > 0) {
    const why = prometheusSkipReason();
    if (why) skipped.push(why);
    else {
      const now = new Date();
      const series = [...scenario.prometheus.series.map((spec) => buildSeries(spec, scenario.onset)), ...scenario.prometheus.samples].map((built) => ({
        ...built,
        points: built.points.filter((p) => p.t.getTime() <= now.getTime()),
      }));
      prometheus = await startPrometheus({ series, now });
    }
  }
  const loki = scenario.loki ? await startFakeLoki({ streams: scenario.loki.streams }) : undefined;
  let github: FakeGitHub | undefined;
  if (scenario.github) {
    const repos: Record<string, ReturnType<typeof repoScenario>['repo']> = {};
    for (const [name, r] of Object.entries(scenario.github.repos)) {
      const b = repoScenario();
      for (const c of r.commits) b.commit({ message: c.message, author: c.author, at: new Date(c.at), ...(c.sha ? { sha: c.sha } : {}) });
      for (const p of r.pulls) {
        if (!p.mergedAt) {
          b.openPull({ title: p.title, author: p.author, ...(p.number ? { number: p.number } : {}), ...(p.body ? { body: p.body } : {}), ...(p.createdAt ? { createdAt: new Date(p.createdAt) } : {}) });
          continue;
        }
        b.mergedPull({
          title: p.title,
          author: p.author,
          mergedAt: new Date(p.mergedAt),
          ...(p.number ? { number: p.number } : {}),
          ...(p.body ? { body: p.body } : {}),
          ...(p.mergedBy ? { mergedBy: p.mergedBy } : {}),
          ...(p.files ? { files: p.files.map((f) => ({ filename: f.filename, status: 'modified', additions: f.additions, deletions: f.deletions })) as never } : {}),
        });
      }
      for (const d of r.deployments) b.deployment({ sha: d.sha, environment: d.environment, creator: d.creator, at: new Date(d.at), states: [[d.state as never, new Date(d.at)]] });
      for (const w of r.workflowRuns)
        b.workflowRun({
          name: w.name,
          headSha: w.headSha,
          headBranch: w.headBranch,
          event: w.event,
          status: w.status,
          conclusion: w.conclusion,
          actor: w.actor,
          at: new Date(w.at),
          ...(w.updatedAt ? { updatedAt: new Date(w.updatedAt) } : {}),
          ...(w.displayTitle ? { displayTitle: w.displayTitle } : {}),
        });
      repos[name] = b.repo;
    }
    github = await startFakeGitHub({
      repos,
      ...(o.githubWriter
        ? { tokens: { [GITHUB_READER_TOKEN]: { login: 'vigil-reader', write: false }, [GITHUB_WRITER.token]: { login: GITHUB_WRITER.login, write: true } } }
        : { token: GITHUB_READER_TOKEN }),
    });
  }
  const ldProject = typeof o.launchDarkly === 'object' ? (o.launchDarkly.project ?? 'default') : 'default';
  const launchDarkly = o.launchDarkly
    ? await startFakeLaunchDarkly({
        project: ldProject,
        flags: flagsAfterChanges(scenario),
        tokens: {
          [LAUNCHDARKLY_TOKENS.reader.token]: { name: LAUNCHDARKLY_TOKENS.reader.name, role: 'reader' },
          [LAUNCHDARKLY_TOKENS.writer.token]: { name: LAUNCHDARKLY_TOKENS.writer.name, role: 'writer' },
        },
      })
    : undefined;
  const model = o.model && !o.modelProvider ? await startFakeAnthropic({ script: o.model.script, name: o.model.name ?? `${scenario.id} model`, usage: 'estimate' }) : undefined;
  const modelProvider = o.modelProvider ?? (model ? new AnthropicProvider({ apiKey: 'test-anthropic-key', baseURL: model.url, maxRetries: 0 }) : undefined);
  let catalogFile: string | undefined;
  if (scenario.catalog) {
    catalogFile = join(tmp, 'catalog.yaml');
    writeFileSync(catalogFile, toYaml(scenario.catalog));
  }
  const flagsToken = randomBytes(16).toString('hex');
  const prometheusUrl = prometheus ? await via('prometheus', prometheus.url) : undefined;
  const lokiUrl = loki ? await via('loki', loki.url) : undefined;
  const githubUrl = github ? await via('github', github.url) : undefined;

  const env: Record<string, string> = {
    SLACK_BOT_TOKEN: slack.botToken,
    SLACK_SIGNING_SECRET: signingSecret,
    SLACK_API_URL: slack.apiUrl,
    PORT: '0',
    VIGIL_ALERT_CHANNELS: ALERT_CHANNEL,
    DATABASE_URL: o.databaseUrl ?? `file:${join(tmp, 'vigil.db')}`,
    KUBECONFIG: kubeconfigPath,
    VIGIL_FLAGS_WEBHOOK_TOKEN: flagsToken,
    ...(o.policyFile ? { VIGIL_POLICY_FILE: o.policyFile } : {}),
    ...(prometheusUrl ? { PROMETHEUS_URL: prometheusUrl } : {}),
    ...(lokiUrl ? { LOKI_URL: lokiUrl } : {}),
    ...(githubUrl ? { GITHUB_API_URL: githubUrl, GITHUB_TOKEN: GITHUB_READER_TOKEN } : {}),
    ...(o.githubWriter ? { GITHUB_WRITE_TOKEN: GITHUB_WRITER.token } : {}),
    ...(launchDarkly
      ? {
          LAUNCHDARKLY_API_URL: launchDarkly.url,
          LAUNCHDARKLY_PROJECT: ldProject,
          LAUNCHDARKLY_READ_TOKEN: LAUNCHDARKLY_TOKENS.reader.token,
          LAUNCHDARKLY_WRITE_TOKEN: LAUNCHDARKLY_TOKENS.writer.token,
        }
      : {}),
    ...(catalogFile ? { VIGIL_CATALOG_FILE: catalogFile } : {}),
    ...(extraChannels.some((c) => c.purpose === 'changes') ? { VIGIL_CHANGE_CHANNELS: extraChannels.filter((c) => c.purpose === 'changes').map((c) => c.id).join(',') } : {}),
    LOG_LEVEL: 'warn',
    ...o.env,
  };
  const config = loadConfig(env);
  const redactor = createRedactor();
  const log = o.logger ?? createLogger(config.logLevel, redactor, pino.destination(2));

  const world: World = {
    scenario,
    slack,
    kube,
    prometheus,
    loki,
    github,
    launchDarkly,
    ...(model ? { model } : {}),
    ...(o.meter ? { meter: { responses: metered } } : {}),
    skipped,
    config,
    env,
    tmp,
    kubeconfigPath,
    async start() {
      if (world.vigil) return world.vigil;
      const vigil = await startVigil(config, log, {
        redactor,
        modelProvider: modelProvider ?? null,
        ...(o.spanExporter ? { spanExporter: o.spanExporter } : {}),
        // Tests and the demo want errors fast, not Slack's 30-minute production retry policy.
        slackClientOptions: { retryConfig: { retries: 2, factor: 1, minTimeout: 50, maxTimeout: 200 } },
      });
      world.vigil = vigil;
      slack.setEventsTarget({ url: `http://127.0.0.1:${vigil.port}/slack/events`, signingSecret });
      return vigil;
    },
    async postAlert(overrides = {}) {
      // Flag changes reach Vigil the way flag tools send them: on the webhook, before the alert.
      if (scenario.flags.length && world.vigil) {
        const res = await fetch(`http://127.0.0.1:${world.vigil.port}/webhooks/flags`, {
          method: 'POST',
          headers: { authorization: `Bearer ${flagsToken}`, 'content-type': 'application/json' },
          body: JSON.stringify(scenario.flags.map((f, i) => ({ ...f, id: `${scenario.id}-${i}` }))),
        });
        if (res.status !== 202) throw new Error(`flags webhook answered ${res.status}: ${await res.text()}`);
      }
      // The world's past Slack traffic, backdated, in time order: announcements, earlier alerts.
      if (!world.pastPlayed) {
        world.pastPlayed = true;
        for (const m of scenario.slack.messages) {
          const channel = m.channel === 'alerts' ? (overrides.channel ?? ALERT_CHANNEL) : channelId(m.channel);
          const ts = `${Math.floor(Date.parse(m.at) / 1000)}.${String(Date.parse(m.at) % 1000).padStart(3, '0')}100`;
          const { channel: _c, at: _at, user, ...post } = m;
          if (user) await slack.postAsUser(channel, { user, text: m.text ?? '', ts });
          else await slack.postAsBot(channel, { ...post, ts } as never);
        }
        if (scenario.slack.messages.length) await world.settle();
      }
      const a = scenario.alert;
      const res = await slack.postAsBot(overrides.channel ?? ALERT_CHANNEL, {
        username: a.username ?? 'Alertmanager',
        text: a.text ?? '',
        attachments: a.attachments,
        blocks: a.blocks,
      } as never);
      return { ts: res.message.ts };
    },
    async settle() {
      // Deliveries → listener work after the ack → investigations → the thread syncs they trigger.
      for (let round = 0; round < 2; round++) {
        await slack.idle();
        await world.vigil?.desk.idle();
        await world.vigil?.runner.idle();
        await world.vigil?.approvals?.idle();
      }
    },
    async close() {
      await world.vigil?.stop();
      world.vigil = undefined;
      await slack.close();
      await kube.close();
      await prometheus?.stop();
      await loki?.close();
      await github?.close();
      await launchDarkly?.close();
      await model?.close();
      for (const m of meters) await m.close();
      rmSync(tmp, { recursive: true, force: true });
    },
  };
  if (o.startApp !== false) await world.start();
  return world;
}

const OFF = new Set(['off', 'false', 'disabled', '0']);

/** A Slack channel id for a scenario channel name: `deploys` → `C0DEPLOYS`. */
export function channelId(name: string): string {
  return `C0${name.toUpperCase().replace(/[^A-Z0-9]/g, '')}`.slice(0, 11);
}

/** The scenario's flags as the flag tool holds them now: per flag and environment, the latest change's `after`. */
function flagsAfterChanges(scenario: Scenario): FakeFlag[] {
  const flags = new Map<string, FakeFlag>();
  for (const f of [...scenario.flags].sort((a, b) => Date.parse(a.at) - Date.parse(b.at))) {
    const flag = flags.get(f.flag) ?? { key: f.flag, environments: {} };
    const env = f.environment ?? 'production';
    flag.environments[env] = { on: !OFF.has(f.after.trim().toLowerCase()), version: (flag.environments[env]?.version ?? 1) + 1, lastModified: Date.parse(f.at) };
    flags.set(f.flag, flag);
  }
  return [...flags.values()];
}

/**
 * The offline world: fake Slack, fake Kubernetes serving a scenario, a temp SQLite database, and Vigil
 * itself started in-process with its real Bolt HTTP receiver and real SDK clients. Used by the
 * end-to-end tests and by `npm run demo`.
 *
 * The fake Kubernetes API server enforces deploy/'s RBAC (test/fakes/kubernetes/deploy-rbac.ts): Vigil's
 * kubeconfig holds the token of the bot's ServiceAccount `vigil` (the reader, bound by
 * deploy/reader-rbac.yaml, plus deploy/executor-access.yaml — or executor-token.yaml with
 * VIGIL_EXECUTOR_MODE=token), and it writes only as `vigil-executor` (deploy/executor-rbac.yaml). Like an
 * operator whose namespaces are not deploy/'s examples, the world binds deploy/'s executor template
 * ClusterRole (RoleBindings, the narrowest template that covers the policy) in each namespace where the
 * world's write policy allows a Kubernetes write, and `vigil-reader-secrets` in each of the scenario's
 * namespaces except kube-system and vigil (Helm history and certificate checks where the apps are;
 * never a cluster-wide Secret read). The cluster's own components have their own tokens: CONTROLLER_TOKEN
 * (a test playing the deployment controller) and ADMIN_TOKEN (an operator's kubectl), both full access.
 * `kubeAdmin: true` turns RBAC off (every token an admin, the fake's raw mode).
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
import { startExecutor, type Executor } from '../../src/executor.js';
import { loadExecutorConfig } from '../../src/config/index.js';
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
import { FULL_ACCESS } from '../fakes/kubernetes/rbac.js';
import { clusterRbac, EXECUTOR_USER, pickTemplate, deployManifests, READER_USER, type ExecutorMode } from '../fakes/kubernetes/deploy-rbac.js';
import { executorNeeds } from '../../src/cli/doctor.js';
import { loadPolicy, type Policy } from '../../src/policy/index.js';

export type { AnthropicReply } from '../fakes/models/anthropic.js';
export type { RecordedRequest as ModelRequest, ScriptStep } from '../fakes/models/script.js';

export const ALERT_CHANNEL = 'C0ALERTS';
/** The bot's ServiceAccount token (Vigil's kubeconfig): the reader, `system:serviceaccount:vigil:vigil`. */
export const READER_TOKEN = 'vigil-reader-token';
export { READER_USER, EXECUTOR_USER };
/** Split mode: the executor process's own kubeconfig token, the executor SA's (`system:serviceaccount:vigil:vigil-executor`). */
export const EXECUTOR_TOKEN = 'vigil-executor-own-token';
/** Split mode: the executor's own Slack app, installed beside Vigil's in the fake workspace. */
export const EXECUTOR_APP = { token: 'xoxb-fake-vigil-executor', userId: 'U0VIGILEXEC', botId: 'B0VIGILEXEC', appId: 'A0VIGILEXEC', name: 'vigil-executor' } as const;
/** The cluster's own controllers (a test playing the deployment controller): full access, as kube-controller-manager has. */
export const CONTROLLER_TOKEN = 'controller';
/** A cluster admin (an operator's kubectl), for tests that change the world as a person would. */
export const ADMIN_TOKEN = 'kubernetes-admin';
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
  /**
   * Run the fake Kubernetes API server without RBAC: every token is a full admin (the fake's raw mode).
   * Only for tests that need raw access to the fake; everything else runs under deploy/'s RBAC.
   */
  kubeAdmin?: boolean;
  /** More RBAC objects for the fake's authoriser (e.g. a deliberately over-broad ClusterRoleBinding). */
  rbac?: object[];
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
  /** The bot token's granted scopes, enforced by the fake Slack (missing_scope); default: every scope. */
  slackScopes?: string[];
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
  /**
   * Split mode: Vigil runs as the investigator (VIGIL_ROLE=investigator), the fake cluster has deploy/'s
   * split-mode RBAC (no impersonation; the executor SA reads and writes with its own token) and the fake
   * Slack a second app, the executor's. `world.startExecutor()` starts `vigil executor` in-process with its
   * own settings (`executorEnv`): its Slack app's token and signing secret, and its own kubeconfig.
   */
  split?: boolean;
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
  /** The RBAC the fake enforces (absent with `kubeAdmin`): where the world bound the executor and the Secret reads. */
  rbac?: WorldRbac;
  /** Split mode: the executor process, once started, its settings, and its signing secret. */
  executor?: Executor;
  executorEnv?: Record<string, string>;
  executorSigningSecret?: string;
  executorKubeconfigPath?: string;
  /** Split mode: start `vigil executor` in-process (if not running). */
  startExecutor(): Promise<Executor>;
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
    ...(o.slackScopes ? { scopes: o.slackScopes } : {}),
    users: DEMO_USERS,
    ...(o.split ? { apps: [{ ...EXECUTOR_APP }] } : {}),
    usergroups: { S0SREONCALL: ['U0VIGILSRE'], ...o.usergroups },
    channels: [{ id: ALERT_CHANNEL, name: 'alerts' }, ...extraChannels.map(({ id, name }) => ({ id, name }))] as never,
  });
  const rbac = o.kubeAdmin ? undefined : worldRbac(scenario, o);
  const kube = await startFakeKube({
    objects: [...scenario.objects, ...(rbac?.serviceAccounts ?? deployManifests().filter((d) => (d as { kind?: string }).kind === 'ServiceAccount'))],
    logs: scenario.logs,
    ...(rbac
      ? {
          rbac: { objects: [...rbac.objects, ...(o.rbac ?? [])], tokens: { [READER_TOKEN]: READER_USER, ...(o.split ? { [EXECUTOR_TOKEN]: EXECUTOR_USER } : {}) } },
          identities: {
            [CONTROLLER_TOKEN]: { user: 'system:kube-controller-manager', rules: FULL_ACCESS },
            [ADMIN_TOKEN]: { user: 'kubernetes-admin', groups: ['system:masters'], rules: FULL_ACCESS },
          },
        }
      : {}),
  });
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
  const executorKubeconfigPath = o.split ? join(tmp, 'executor-kubeconfig.yaml') : undefined;
  if (executorKubeconfigPath)
    writeFileSync(
      executorKubeconfigPath,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{ name: fake, cluster: { server: "' + kubeUrl + '", insecure-skip-tls-verify: true } }]',
        'users: [{ name: executor, user: { token: "' + EXECUTOR_TOKEN + '" } }]',
        'contexts: [{ name: fake, context: { cluster: fake, user: executor } }]',
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
        // A scenario commit `<subject> (#N)` is the PR's squash commit, as on GitHub: its sha is the PR's
        // merge_commit_sha, and the builder adds no second one.
        const squash = p.number ? r.commits.find((c) => c.sha && new RegExp(`\\(#${p.number}\\)\\s*$`).test(c.message.split('\n')[0] ?? '')) : undefined;
        b.mergedPull({
          title: p.title,
          author: p.author,
          mergedAt: new Date(p.mergedAt),
          ...(squash ? { mergeCommitSha: squash.sha!, squashCommit: false } : {}),
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
    // An earlier alert may come from another alert channel the team has (warnings, a platform channel): Vigil watches those too.
    VIGIL_ALERT_CHANNELS: [ALERT_CHANNEL, ...extraChannels.filter((c) => c.purpose === 'alerts').map((c) => c.id)].join(','),
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
    ...(o.split ? { VIGIL_ROLE: 'investigator' } : {}),
    ...o.env,
  };
  const executorSigningSecret = o.split ? randomBytes(16).toString('hex') : undefined;
  // The executor's own settings: the shared ones, its own Slack app and kubeconfig; never the investigator's.
  const executorEnv: Record<string, string> | undefined = o.split
    ? (() => {
        const { SLACK_BOT_TOKEN: _t, SLACK_SIGNING_SECRET: _s, KUBECONFIG: _k, VIGIL_ROLE: _r, ...shared } = env;
        return {
          ...shared,
          VIGIL_EXECUTOR_SLACK_BOT_TOKEN: EXECUTOR_APP.token,
          VIGIL_EXECUTOR_SLACK_SIGNING_SECRET: executorSigningSecret!,
          VIGIL_EXECUTOR_KUBECONFIG: executorKubeconfigPath!,
          VIGIL_EXECUTOR_PORT: '0',
          VIGIL_EXECUTOR_POLL_SECONDS: '0.2',
        };
      })()
    : undefined;
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
    ...(rbac ? { rbac } : {}),
    ...(executorEnv ? { executorEnv, executorSigningSecret, executorKubeconfigPath } : {}),
    async startExecutor() {
      if (world.executor) return world.executor;
      if (!executorEnv) throw new Error('startExecutor needs a world started with split: true');
      const executor = await startExecutor(loadExecutorConfig(executorEnv), log, { redactor, slackClientOptions: { retryConfig: { retries: 2, factor: 1, minTimeout: 50, maxTimeout: 200 } } });
      world.executor = executor;
      slack.setEventsTarget({ url: `http://127.0.0.1:${executor.port}/slack/events`, signingSecret: executorSigningSecret! }, EXECUTOR_APP.appId);
      return executor;
    },
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
        // Split mode: what the investigator handed over, taken by the executor now rather than at its next poll.
        if (world.executor) {
          await world.executor.handoff.sweep();
          await world.executor.idle();
          await slack.idle();
        }
      }
    },
    async close() {
      await world.executor?.stop();
      world.executor = undefined;
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

export interface WorldRbac {
  mode: ExecutorMode;
  /** Namespace → the executor template ClusterRole bound there (deploy/'s own bindings and the generated ones). */
  executorNamespaces: Record<string, string>;
  /** Namespaces where the reader may read Secrets (vigil-reader-secrets RoleBindings). */
  readerSecretNamespaces: string[];
  /** What the fake's authoriser holds (without the `rbac` option's extras). */
  objects: object[];
  serviceAccounts: object[];
}

/** Namespaces where the reader is never given Secrets: the cluster's own, and Vigil's (its credentials are Secrets there). */
const SYSTEM_NAMESPACES = new Set(['kube-system', 'kube-public', 'kube-node-lease', 'vigil']);

/** deploy/'s RBAC, bound in this scenario's namespaces as an operator would (see the module comment). */
function worldRbac(scenario: Scenario, o: WorldOptions): WorldRbac {
  const mode: ExecutorMode = o.split ? 'split' : o.env?.['VIGIL_EXECUTOR_MODE'] === 'token' ? 'token' : 'impersonate';
  const namespaces = new Set<string>();
  for (const obj of scenario.objects as { kind?: string; metadata?: { name?: string; namespace?: string } }[]) {
    if (obj.metadata?.namespace) namespaces.add(obj.metadata.namespace);
    if (obj.kind === 'Namespace' && obj.metadata?.name) namespaces.add(obj.metadata.name);
  }
  const policyFile = o.policyFile ?? o.env?.['VIGIL_POLICY_FILE'];
  let policy: Policy | undefined;
  try {
    policy = policyFile ? loadPolicy(policyFile) : undefined;
  } catch {
    policy = undefined; // an invalid policy stops Vigil itself, with its own message
  }
  const docs = deployManifests(mode);
  const executorNamespaces: Record<string, string> = {};
  if (policy) {
    // The cluster's namespaces (a RoleBinding needs its namespace to exist), judged by the policy as doctor
    // judges them: the operator binds the executor wherever the policy lets Vigil act, and nowhere else.
    for (const ns of [...namespaces].sort()) {
      const needs = executorNeeds(policy, ns);
      if (!needs.length) continue;
      const template = pickTemplate(docs, needs.map((a) => ({ verb: a.verb, group: a.group, resource: a.subresource ? `${a.resource}/${a.subresource}` : a.resource })));
      if (template) executorNamespaces[ns] = template;
    }
  }
  const readerSecretNamespaces = [...namespaces].filter((ns) => !SYSTEM_NAMESPACES.has(ns)).sort();
  const built = clusterRbac({ mode, executorNamespaces, readerSecretNamespaces });
  const bound: Record<string, string> = {};
  const secrets = new Set<string>();
  for (const b of built.rbac as { kind?: string; metadata?: { namespace?: string }; roleRef?: { kind?: string; name?: string }; subjects?: { kind?: string; name?: string; namespace?: string }[] }[]) {
    if (b.kind !== 'RoleBinding' || !b.metadata?.namespace) continue;
    const to = b.subjects?.find((s) => s.kind === 'ServiceAccount' && s.namespace === 'vigil')?.name;
    if (to === 'vigil-executor' && b.roleRef?.kind === 'ClusterRole') bound[b.metadata.namespace] = b.roleRef.name!;
    if (to === 'vigil' && b.roleRef?.name === 'vigil-reader-secrets') secrets.add(b.metadata.namespace);
  }
  return { mode, executorNamespaces: bound, readerSecretNamespaces: [...secrets].sort(), objects: built.rbac, serviceAccounts: built.serviceAccounts };
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

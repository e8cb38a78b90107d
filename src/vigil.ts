import type { Server } from 'node:http';
import type { App } from '@slack/bolt';
import { WebClientEvent, type WebClient, type WebClientOptions } from '@slack/web-api';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { parseFlagsWebhook } from './changes/flags-webhook.js';
import { recordChange, storedChanges } from './changes/store.js';
import { otherAlerts } from './incidents/other-alerts.js';
import type { Config } from './config/index.js';
import { GitHubReverts, LaunchDarklyFlags, TargetReader, type ExternalProviders } from './actions/index.js';
import { startAuditAnchorer } from './audit/anchor.js';
import { createProvider } from './agent/providers/index.js';
import { ApprovalService, SlackUserGroups } from './approvals/index.js';
import { registerApprovalListeners } from './slack/approval-listeners.js';
import { SINGLE_PROCESS_MODE, splitModeLabel } from './approvals/mode.js';
import { countingFetch } from './slack/api-metrics.js';
import { registerHypothesisListeners } from './slack/hypothesis-listeners.js';
import type { ModelProvider } from './agent/types.js';
import { GitHubReader } from './evidence/github/client.js';
import { evidenceTools } from './evidence/tools.js';
import { KubeReader, loadKubeConfig } from './evidence/kubernetes/client.js';
import { LokiClient } from './evidence/loki/client.js';
import { PrometheusClient } from './evidence/prometheus/client.js';
import { BodyTooLargeError, bodySummary, readBody, sendJson, type Route } from './http/routes.js';
import { VigilMetrics } from './http/metrics.js';
import { Probes } from './http/probes.js';
import { ALERTMANAGER_WEBHOOK_PATH, alertmanagerWebhookRoute } from './http/alertmanager-webhook.js';
import { preflightSlack } from './slack/preflight.js';
import { grafanaWebhookRoute, opsgenieWebhookRoute, pagerdutyWebhookRoute } from './http/alert-webhooks.js';
import { IncidentPaging, pagersFrom } from './paging/index.js';
import type { Alert } from './alerts/types.js';
import { recordAudit } from './incidents/audit.js';
import { systemClock, type Clock } from './incidents/clock.js';
import { IncidentDesk } from './incidents/desk.js';
import type { EvidenceSources } from './incidents/investigate.js';
import { InvestigationRunner } from './incidents/runner.js';
import { IncidentService } from './incidents/service.js';
import { ThreadSync } from './incidents/thread.js';
import { SetupPanel, type SetupFacts } from './incidents/setup.js';
import { ServiceCatalog } from './knowledge/catalog.js';
import { SkillLibrary, type SkillLibraryState } from './knowledge/skills.js';
import { PostmortemService } from './postmortem/service.js';
import { createTracing } from './audit/tracing.js';
import type { SpanExporter } from '@opentelemetry/sdk-trace';
import { loadPolicy } from './policy/index.js';
import { createRedactor, type Redactor } from './redact/index.js';
import { createPostClient, createSlackApp, registerListeners, startReceiver } from './slack/app.js';
import { SlackChat } from './slack/chat.js';
import { openDatabase, type Database } from './store/db.js';
import { applyMigrations } from './store/migrate.js';

/** Seams the demo and tests use; production passes none of them. */
export interface VigilOverrides {
  clock?: Clock;
  redactor?: Redactor;
  /** A ready KubeConfig (e.g. pointed at the fake API server) instead of loading one from settings; null = none. */
  kubeConfig?: KubeConfig | null;
  slackClientOptions?: WebClientOptions;
  /** Skip Bolt's startup auth.test. */
  botUserId?: string;
  /** A provider instead of the one the settings describe; null = no model. */
  modelProvider?: ModelProvider | null;
  /** Export spans here (tests: an in-memory exporter) instead of OTLP from the settings. */
  spanExporter?: SpanExporter;
  /** Probes and metrics created before start (main.ts serves them from process start); default: new ones. */
  probes?: Probes;
  metrics?: VigilMetrics;
}

export interface Vigil {
  app: App;
  db: Database;
  runner: InvestigationRunner;
  desk: IncidentDesk;
  /** Present when a write policy is configured. */
  approvals?: ApprovalService;
  thread: ThreadSync;
  /** Probe (/livez, /readyz, /healthz), /metrics and webhook routes (served by Bolt in HTTP mode; main.ts serves them in Socket Mode). */
  routes: Route[];
  probes: Probes;
  metrics: VigilMetrics;
  /** The HTTP port the receiver listens on (HTTP mode). */
  port?: number;
  stop(): Promise<void>;
}

/** Every evidence adapter the settings ask for, pointed at its service. */
function evidenceSources(config: Config, db: Database, redactor: Redactor, clock: Clock, log: Logger, o: VigilOverrides): EvidenceSources & { kubeConfig?: KubeConfig } {
  let kube: KubeReader | undefined;
  let kubeConfig: KubeConfig | undefined;
  if (o.kubeConfig !== null) {
    try {
      kubeConfig = o.kubeConfig ?? loadKubeConfig(config.kubernetes);
      kube = new KubeReader(kubeConfig);
    } catch (err) {
      log.warn({ err: String(err) }, 'Kubernetes is not configured; investigations will report it as a gap');
    }
  }
  return {
    kubeConfig,
    kube,
    prometheus: config.prometheus
      ? new PrometheusClient({ baseUrl: config.prometheus.url, publicUrl: config.prometheus.publicUrl, bearerToken: config.prometheus.bearerToken })
      : undefined,
    loki: config.loki
      ? new LokiClient({ baseUrl: config.loki.url, tenant: config.loki.tenant, ...(config.loki.bearerToken ? { auth: { type: 'bearer', token: config.loki.bearerToken } } : {}) })
      : undefined,
    github: config.github ? new GitHubReader({ token: config.github.token, baseUrl: config.github.apiUrl, logger: log }) : undefined,
    catalog: ServiceCatalog.load(config.catalogFile),
    storedChanges: (from, to) => storedChanges(db.prisma, from, to),
    otherAlerts: (alert, from, to) => otherAlerts(db.prisma, alert, from, to, clock.now()),
    redactor,
    now: () => clock.now(),
  };
}

/** The writers outside Kubernetes, each with its own writer token (config refuses one equal to the reader's). */
export function externalProviders(config: Config): ExternalProviders {
  return {
    ...(config.flags ? { flags: new LaunchDarklyFlags(config.flags) } : {}),
    ...(config.githubWriteToken
      ? { github: new GitHubReverts({ writeToken: config.githubWriteToken, ...(config.github?.token ? { readToken: config.github.token } : {}), ...(config.github?.apiUrl ? { baseUrl: config.github.apiUrl } : {}) }) }
      : {}),
  };
}

function routesFor(config: Config, db: Database, redactor: Redactor, clock: Clock, log: Logger, intake: { desk?: IncidentDesk }): Route[] {
  // The probes and /metrics are added by startVigil (src/http/probes.ts, metrics.ts).
  const routes: Route[] = [];
  const token = config.changes.flagsWebhookToken;
  if (token) {
    routes.push({
      path: '/webhooks/flags',
      method: ['POST'],
      handler: (req, res) => {
        void (async () => {
          const raw = await readBody(req);
          const result = parseFlagsWebhook(raw, req.headers.authorization, token, redactor, clock.now());
          // A refusal is the sender's to fix: say why in the log too, with the body's shape, not its content.
          if (result.status >= 400) log.warn({ path: '/webhooks/flags', status: result.status, error: result.body['error'], body: bodySummary(raw) }, 'flags webhook refused');
          for (const { change, dedupeKey } of result.changes) {
            const stored = await recordChange(db.prisma, change, dedupeKey);
            if (stored === 'stored') await recordAudit(db.prisma, { actor: 'flags-webhook', kind: 'change.received', data: { summary: change.summary } });
          }
          sendJson(res, result.status, result.body);
        })().catch((err: unknown) => {
          // An oversized body was already answered 413 by readBody; only real failures are errors.
          if (err instanceof BodyTooLargeError) return log.warn({ path: '/webhooks/flags' }, 'flags webhook body too large');
          log.error({ err: String(err) }, 'flags webhook failed');
          sendJson(res, 500, { ok: false, error: 'internal error; retry later' });
        });
      },
    });
  }
  const am = config.alertmanagerWebhook;
  if (am) {
    routes.push(
      alertmanagerWebhookRoute({
        token: am.token,
        redactor,
        log,
        // After the 202: the desk is set before the server listens; its intake logs its own failures.
        onAlert: ({ alert, deliveryKey }) => void intake.desk?.onWebhookAlert({ alert, channelId: am.channelId, deliveryKey }).catch((err: unknown) => log.error({ err: String(err), deliveryKey }, 'alertmanager webhook alert failed')),
      }),
    );
    log.info({ path: ALERTMANAGER_WEBHOOK_PATH, channel: am.channelId }, 'Alertmanager webhook enabled');
  } else log.info({ path: ALERTMANAGER_WEBHOOK_PATH }, 'Alertmanager webhook not mounted: VIGIL_ALERTMANAGER_WEBHOOK_TOKEN is not set');
  routes.push(...alertSourceRoutes(config, redactor, log, intake));
  return routes;
}

/** `POST /webhooks/grafana|pagerduty|opsgenie`, each mounted when its secret is set (src/http/alert-webhooks.ts). */
function alertSourceRoutes(config: Config, redactor: Redactor, log: Logger, intake: { desk?: IncidentDesk }): Route[] {
  const deliver = (name: string, channelId: string) => ({ alert, deliveryKey }: { alert: Alert; deliveryKey: string }) =>
    void intake.desk?.onWebhookAlert({ alert, channelId, deliveryKey }).catch((err: unknown) => log.error({ err: String(err), deliveryKey }, `${name} webhook alert failed`));
  const routes: Route[] = [];
  const { grafanaWebhook: g, pagerdutyWebhook: pd, opsgenieWebhook: og } = config;
  if (g) routes.push(grafanaWebhookRoute({ token: g.token, redactor, log, onAlert: deliver('grafana', g.channelId) }));
  if (pd) routes.push(pagerdutyWebhookRoute({ secret: pd.secret, redactor, log, onAlert: deliver('pagerduty', pd.channelId) }));
  if (og) routes.push(opsgenieWebhookRoute({ token: og.token, redactor, log, onAlert: deliver('opsgenie', og.channelId) }));
  if (routes.length) log.info({ paths: routes.map((r) => r.path) }, 'alert source webhooks enabled');
  return routes;
}

/**
 * The composition root: store (migrated), evidence adapters, incident service, runner and the Slack
 * app, wired together and started. Unfinished investigations from a previous process are resumed.
 */
export async function startVigil(config: Config, log: Logger, o: VigilOverrides = {}): Promise<Vigil> {
  const clock = o.clock ?? systemClock;
  const redactor = o.redactor ?? createRedactor();
  // Loaded first: an invalid policy stops start-up before anything connects (PolicyError lists every problem).
  const policy = loadPolicy(config.policyFile);
  log.info({ policy: config.policyFile ?? 'read-only default', rules: policy.rules.length }, 'write policy loaded');
  const probes = o.probes ?? new Probes();
  const metrics = o.metrics ?? new VigilMetrics();
  // The tokens and the network before anything else connects: a wrong token or a blocked egress is one
  // message naming the setting (SlackPreflightError), not a stack trace after "Vigil is listening".
  let preflight: SetupFacts['preflight'];
  if (!o.botUserId) {
    const who = await preflightSlack(config.slack, { ...(config.slack.apiUrl ? { slackApiUrl: config.slack.apiUrl } : {}), ...o.slackClientOptions });
    log.info({ botUserId: who.userId, team: who.team }, 'Slack tokens accepted');
    const optional = who.missingOptional?.length ? `the token lacks ${who.missingOptional.join(', ')}, so Vigil adds no reactions: add it under OAuth & Permissions and reinstall the app` : undefined;
    if (optional) log.warn(optional);
    // App Home's setup panel shows this check (and what it found missing) to whoever opens it.
    preflight = { at: clock.now(), ok: !optional, ...(optional ? { detail: optional } : {}) };
  }
  const db = await openDatabase(config.databaseUrl, { logger: log });
  probes.useDatabase(db.prisma);
  metrics.useStore(db.prisma);
  const { applied } = await applyMigrations(db, { logger: log });
  if (applied.length) log.info({ applied }, 'database migrations applied');
  probes.migrationsApplied();

  const anchorer = config.auditAnchorIntervalMs ? startAuditAnchorer(db.prisma, log, { intervalMs: config.auditAnchorIntervalMs }) : undefined;
  const sources = evidenceSources(config, db, redactor, clock, log, o);
  const skills = loadSkills(config.skillsDir, log);
  const tracing = createTracing({ ...(config.tracing ? { otlpEndpoint: config.tracing.endpoint, headers: config.tracing.headers } : {}), ...(o.spanExporter ? { exporter: o.spanExporter } : {}) });
  if (tracing) log.info({ endpoint: config.tracing?.endpoint ?? 'in-process exporter' }, 'traces enabled');
  const intake: { desk?: IncidentDesk } = {};
  const routes = [...probes.routes(), metrics.route(config.probes.metricsToken), ...routesFor(config, db, redactor, clock, log, intake)];
  const service = new IncidentService(db.prisma, { dedupWindowMs: config.incidents.dedupWindowMs, reopenWindowMs: config.incidents.reopenWindowMs, throttle: config.incidents.throttle }, clock, redactor, log);
  countAlerts(service, metrics);
  let socketUp = false;
  // Every Web API request of every client (Bolt's, Socket Mode's, the post client) is counted by outcome.
  const slackClientOptions = { ...o.slackClientOptions, fetch: countingFetch(metrics.slackCalls, o.slackClientOptions?.fetch) };
  const app = createSlackApp({ ...config.slack, clientOptions: slackClientOptions, botUserId: o.botUserId }, log, routes, { onSocketState: (up) => (socketUp = up) });
  const postClient = createPostClient({ ...config.slack, clientOptions: slackClientOptions }, log);
  for (const client of [app.client, postClient]) countRateLimits(client, metrics);
  const chat = new SlackChat(app.client, log, undefined, postClient);
  countMalformed(chat, metrics);
  const thread = new ThreadSync(db.prisma, chat, log);
  thread.links = config.links;
  thread.broadcastCritical = config.slack.broadcastCritical ?? false;
  const pagers = pagersFrom(config.paging);
  if (pagers.length) {
    thread.paging = new IncidentPaging({ db: db.prisma, pagers, redactor, log, now: () => clock.now() });
    log.info({ pagers: pagers.map((p) => p.name) }, 'paging enabled: a handover pages a person');
  }
  thread.skills = skills;
  const provider = o.modelProvider !== undefined ? (o.modelProvider ?? undefined) : config.model ? createProvider(config.model) : undefined;
  if (provider) log.info({ provider: provider.name, model: provider.model }, 'model loop enabled');
  else log.info('no model configured: deterministic triage only');
  const runner = new InvestigationRunner(
    db.prisma,
    thread,
    sources,
    redactor,
    clock,
    { concurrency: config.incidents.workerConcurrency, leaseMs: config.incidents.leaseMs, escalationConfidence: config.agent.escalationConfidence },
    log,
    provider
      ? {
          provider,
          // The read-only tools the model may call, over the same adapters the deterministic gatherers use.
          tools: evidenceTools(sources),
          budget: { maxSteps: config.agent.maxSteps, maxTokens: config.agent.maxTokens, maxWallMs: config.agent.maxSeconds * 1000, maxCostUsd: config.agent.maxCostUsd },
          escalationConfidence: config.agent.escalationConfidence,
          skills,
          caps: { incidentTokens: config.agent.incidentMaxTokens, dayTokens: config.agent.dailyMaxTokens },
        }
      : undefined,
  );
  // Writes exist only with a policy file: read-only by default means no approval cards at all.
  // Split mode's investigator proposes only: no executor credential, and the executor process owns the cards.
  const investigator = config.role === 'investigator';
  const approvals =
    config.policyFile && sources.kubeConfig
      ? new ApprovalService({
          db: db.prisma,
          chat,
          userGroups: new SlackUserGroups(app.client),
          reader: new TargetReader(sources.kubeConfig),
          executor: investigator ? { mode: 'none' } : { mode: config.executor.mode, base: sources.kubeConfig, serviceAccount: config.executor.serviceAccount },
          role: investigator ? 'investigator' : 'single',
          settings: { mode: investigator ? splitModeLabel(serviceAccountUser(config.executor.serviceAccount)) : SINGLE_PROCESS_MODE },
          policy,
          ...(sources.catalog ? { catalog: sources.catalog } : {}),
          providers: externalProviders(config),
          clock,
          redactor,
          log,
        })
      : undefined;
  const postmortem = new PostmortemService({
    db: db.prisma,
    chat,
    redactor,
    log,
    // With a model the prose reads better; every fact is still checked against the record.
    ...(provider ? { model: provider, modelBudget: { maxCostUsd: config.agent.maxCostUsd } } : {}),
    ...(config.postmortemIssues
      ? { github: { repo: config.postmortemIssues.repo, labels: config.postmortemIssues.labels, ...(config.postmortemIssues.token ? { token: config.postmortemIssues.token } : {}), ...(config.github?.apiUrl ? { baseUrl: config.github.apiUrl } : {}) } }
      : {}),
  });
  const desk = new IncidentDesk({
    postmortem,
    db: db.prisma,
    service,
    runner,
    thread,
    chat,
    clock,
    redactor,
    alertChannels: config.slack.alertChannels,
    changeChannels: config.changes.channels,
    ...(approvals ? { approvals } : {}),
    skills,
    setup: new SetupPanel(
      db.prisma,
      chat,
      {
        alertChannels: config.slack.alertChannels,
        sources: [
          { name: 'Kubernetes', configured: !!sources.kube, keyword: 'kubernetes' },
          { name: 'Prometheus', configured: !!sources.prometheus, keyword: 'prometheus' },
          { name: 'Loki', configured: !!sources.loki, keyword: 'loki' },
          { name: 'GitHub', configured: !!sources.github, keyword: 'github' },
        ],
        policy: { ...(config.policyFile ? { file: config.policyFile } : {}), rules: config.policyFile ? policy.rules.length : 0 },
        ...(provider ? { model: { provider: provider.name, ...(provider.model ? { name: provider.model } : {}) } } : {}),
        ...(preflight ? { preflight } : {}),
      },
      clock,
    ),
    log,
  });
  intake.desk = desk;
  registerListeners(app, desk, log);
  registerHypothesisListeners(app, desk, log);
  if (tracing) runner.tracer = postmortem.tracer = tracing.tracer;
  runner.metrics = metrics;
  thread.onSynced = () => desk.scheduleHomeRefresh();
  if (approvals) {
    registerApprovalListeners(app, approvals, log);
    approvals.onChanged = (incidentId) => desk.approvalChanged(incidentId);
    // After every report, the leading supported hypothesis's fix becomes an approval card (idempotent), and
    // the board shows what the planner and the policy made of it: no command before they accepted it.
    thread.fixesNeedApproval = true;
    runner.afterReport = (incidentId) => desk.afterReport(incidentId);
  }

  const { server, port } = await startReceiver(app, config.slack.mode, config.slack.port, probes, () => socketUp);
  log.info({ mode: config.slack.mode, port, channels: config.slack.alertChannels, database: db.provider, role: config.role }, 'Vigil is listening');
  if (investigator) log.info({ executor: serviceAccountUser(config.executor.serviceAccount) }, 'split mode: this is the investigator; proposals are handed to `vigil executor`, which posts the cards and writes');
  await runner.resumePending();
  runner.startSweeping();
  await approvals?.resumeInterrupted();
  // Cards nobody approved in time close on their own (without buttons, saying why), not at the next click.
  approvals?.startExpiring();

  return {
    app,
    db,
    runner,
    desk,
    ...(approvals ? { approvals } : {}),
    thread,
    routes,
    probes,
    metrics,
    port,
    async stop() {
      probes.markStopping();
      await app.stop().catch(() => undefined);
      await desk.idle();
      await runner.stop();
      await thread.stop();
      await approvals?.stopAll();
      await tracing?.shutdown();
      await anchorer?.stop();
      await db.close();
    },
  };
}

/**
 * The skills directory, loaded once at start and again when a file in it changes. A bad file is logged
 * with its file and field and left out; the others load and start-up goes on (skills are advice).
 */
function loadSkills(dir: string, log: Logger): SkillLibrary {
  const report = (s: SkillLibraryState, what: string) => {
    for (const e of s.errors) log.error({ file: e.file, field: e.field, error: e.message }, `skill not loaded: ${e.file}${e.field ? ` (${e.field})` : ''}: ${e.message}`);
    log.info({ dir, skills: s.skills.length, errors: s.errors.length }, what);
  };
  const library = SkillLibrary.load(dir);
  report({ skills: [...library.skills], errors: [...library.errors], loadedAt: library.loadedAt }, 'skills loaded');
  library.onReload = (s) => report(s, 'skills reloaded');
  return library;
}

/** vigil_alerts_received_total: every intake attempt's outcome, observed around IncidentService.receiveAlert. */
function countAlerts(service: IncidentService, metrics: VigilMetrics): void {
  const receive = service.receiveAlert.bind(service);
  service.receiveAlert = async (d) => {
    try {
      const r = await receive(d);
      metrics.alert(d.alert.source, r.kind);
      return r;
    } catch (err) {
      metrics.alert(d.alert.source, 'error');
      throw err;
    }
  };
}

/**
 * outcome="malformed": the desk answers an unreadable alert post with one error note tagged `malformed:…`
 * (incidents/desk.ts reportOnce); counted where that note is posted, without a hook in the desk.
 */
function countMalformed(chat: SlackChat, metrics: VigilMetrics): void {
  const post = chat.post.bind(chat);
  chat.post = (channel, threadTs, m, tag, opts) => {
    if (tag.purpose?.startsWith('malformed:')) metrics.alert('unknown', 'malformed');
    return post(channel, threadTs, m, tag, opts);
  };
}

/** vigil_slack_rate_limited_total: the WebClient's own `rate_limited` event (a 429 from Slack). */
function countRateLimits(client: WebClient, metrics: VigilMetrics): void {
  client.on(WebClientEvent.RATE_LIMITED, (_retrySec: number, { url }: { url?: string }) => metrics.slackRateLimited.inc({ method: url ?? 'unknown' }));
}

/** `system:serviceaccount:<namespace>:<name>`: how the API server (and the card) names a ServiceAccount. */
export function serviceAccountUser(sa: { namespace: string; name: string }): string {
  return `system:serviceaccount:${sa.namespace}:${sa.name}`;
}

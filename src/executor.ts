/**
 * `vigil executor`: split mode's other half, the only process that can approve or write. It holds its own
 * Kubernetes identity (the executor ServiceAccount's own token, verified with a SelfSubjectReview before
 * anything starts) and its own Slack app (bot token, signing secret or app token). It takes the proposals
 * the investigator stored (src/approvals/handoff.ts), plans each again as itself (access checks, the
 * server-side dry run), asks the policy again, posts the approval card with its own bot, receives the clicks
 * on its own endpoint, checks them (approver groups, four-eyes, the request's state, the stops), writes,
 * verifies and updates the card. It serves no alert intake, no events and no /sre.
 */
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { hostname } from 'node:os';
import type { App } from '@slack/bolt';
import type { Logger } from 'pino';
import { ownExecutorKubeConfig, TargetReader } from './actions/index.js';
import { ExecutorHandoff } from './approvals/handoff.js';
import { ApprovalService, SlackUserGroups } from './approvals/index.js';
import { splitModeLabel } from './approvals/mode.js';
import type { Config } from './config/index.js';
import { loadKubeConfig } from './evidence/kubernetes/client.js';
import { VigilMetrics } from './http/metrics.js';
import { Probes } from './http/probes.js';
import type { Route } from './http/routes.js';
import { systemClock } from './incidents/clock.js';
import { ServiceCatalog } from './knowledge/catalog.js';
import { loadPolicy } from './policy/index.js';
import { createRedactor } from './redact/index.js';
import { countingFetch } from './slack/api-metrics.js';
import { registerApprovalListeners } from './slack/approval-listeners.js';
import { createPostClient, createSlackApp, startReceiver } from './slack/app.js';
import { SlackChat } from './slack/chat.js';
import { preflightSlack } from './slack/preflight.js';
import { EXECUTOR_SCOPES } from './slack/scopes.js';
import { openDatabase, type Database } from './store/db.js';
import { applyMigrations } from './store/migrate.js';
import { externalProviders, serviceAccountUser, type VigilOverrides } from './vigil.js';

export interface Executor {
  app: App;
  db: Database;
  approvals: ApprovalService;
  handoff: ExecutorHandoff;
  /** The Kubernetes user it writes as, as the API server named it. */
  identity: string;
  /** "split mode: executor <identity>", as on its cards. */
  mode: string;
  routes: Route[];
  probes: Probes;
  port?: number;
  /** Resolves when nothing started here is running (tests). */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

export async function startExecutor(config: Config, log: Logger, o: VigilOverrides = {}): Promise<Executor> {
  if (config.role !== 'executor') throw new Error('startExecutor needs the executor settings (loadExecutorConfig)');
  const clock = o.clock ?? systemClock;
  const redactor = o.redactor ?? createRedactor();
  const policy = loadPolicy(config.policyFile);
  const sa = config.executor.serviceAccount;
  // Its own credential, proven to be the executor's before anything connects: a reader's kubeconfig is refused here.
  const kc = await ownExecutorKubeConfig(o.kubeConfig ?? loadKubeConfig(config.kubernetes), sa);
  const identity = serviceAccountUser(sa);
  const mode = splitModeLabel(identity);
  log.info({ identity, policy: config.policyFile, rules: policy.rules.length }, 'executor identity verified by the API server');
  const probes = o.probes ?? new Probes();
  const metrics = o.metrics ?? new VigilMetrics();
  if (!o.botUserId) {
    // Its own app's scopes (manifest.executor.yml), not the investigator's.
    const who = await preflightSlack({ ...config.slack, scopes: EXECUTOR_SCOPES, manifest: 'manifest.executor.yml' }, { ...(config.slack.apiUrl ? { slackApiUrl: config.slack.apiUrl } : {}), ...o.slackClientOptions });
    log.info({ botUserId: who.userId, team: who.team }, "the executor's Slack app tokens accepted");
  }
  const db = await openDatabase(config.databaseUrl, { logger: log });
  probes.useDatabase(db.prisma);
  metrics.useStore(db.prisma);
  await applyMigrations(db, { logger: log });
  probes.migrationsApplied();

  const routes: Route[] = [...probes.routes(), metrics.route(config.probes.metricsToken)];
  const slackClientOptions = { ...o.slackClientOptions, fetch: countingFetch(metrics.slackCalls, o.slackClientOptions?.fetch) };
  let socketUp = false;
  const app = createSlackApp({ ...config.slack, clientOptions: slackClientOptions, botUserId: o.botUserId }, log, routes, { onSocketState: (up) => (socketUp = up) });
  const chat = new SlackChat(app.client, log, undefined, createPostClient({ ...config.slack, clientOptions: slackClientOptions }, log));
  const catalog = ServiceCatalog.load(config.catalogFile);
  const approvals = new ApprovalService({
    db: db.prisma,
    chat,
    userGroups: new SlackUserGroups(app.client),
    reader: new TargetReader(kc),
    executor: { mode: 'own', kubeConfig: kc, serviceAccount: sa },
    role: 'executor',
    settings: { mode },
    policy,
    ...(catalog ? { catalog } : {}),
    providers: externalProviders(config),
    clock,
    redactor,
    log,
  });
  registerApprovalListeners(app, approvals, log);

  const { server, port } = await startReceiver(app, config.slack.mode, config.slack.port, probes, () => socketUp);
  await approvals.resumeInterrupted();
  approvals.startExpiring();
  const handoff = new ExecutorHandoff(db.prisma, approvals, clock, log, {
    owner: `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`,
    leaseMs: config.split.leaseMs,
    pollMs: config.split.pollMs,
  });
  handoff.start();
  log.info({ mode: config.slack.mode, port, identity, database: db.provider }, 'Vigil executor is listening (split mode)');

  return {
    app,
    db,
    approvals,
    handoff,
    identity,
    mode,
    routes,
    probes,
    ...(port !== undefined ? { port } : {}),
    async idle() {
      await handoff.idle();
      await approvals.idle();
    },
    async stop() {
      probes.markStopping();
      await handoff.stop();
      await app.stop().catch(() => undefined);
      await approvals.stopAll();
      await db.close();
    },
  };
}

import type { App } from '@slack/bolt';
import type { WebClientOptions } from '@slack/web-api';
import type { Logger } from 'pino';
import type { Config } from './config/index.js';
import { KubeReader, loadKubeConfig } from './evidence/kubernetes/client.js';
import type { KubeConfig } from '@kubernetes/client-node';
import { systemClock, type Clock } from './incidents/clock.js';
import { IncidentDesk } from './incidents/desk.js';
import { InvestigationRunner } from './incidents/runner.js';
import { IncidentService } from './incidents/service.js';
import { ThreadSync } from './incidents/thread.js';
import { createRedactor, type Redactor } from './redact/index.js';
import { createSlackApp, registerListeners } from './slack/app.js';
import { SlackChat } from './slack/chat.js';
import { openDatabase, type Database } from './store/db.js';
import { applyMigrations } from './store/migrate.js';

/** Seams the demo and tests use; production passes none of them. */
export interface VigilOverrides {
  clock?: Clock;
  redactor?: Redactor;
  /** A ready KubeConfig (e.g. pointed at the fake API server) instead of loading one from settings. */
  kubeConfig?: KubeConfig | null;
  slackClientOptions?: WebClientOptions;
  /** Skip Bolt's startup auth.test. */
  botUserId?: string;
}

export interface Vigil {
  app: App;
  db: Database;
  runner: InvestigationRunner;
  desk: IncidentDesk;
  thread: ThreadSync;
  /** The HTTP port the receiver listens on (HTTP mode). */
  port?: number;
  stop(): Promise<void>;
}

/**
 * The composition root: store (migrated), evidence adapters, incident service, runner and the Slack
 * app, wired together and started. Unfinished investigations from a previous process are resumed.
 */
export async function startVigil(config: Config, log: Logger, o: VigilOverrides = {}): Promise<Vigil> {
  const clock = o.clock ?? systemClock;
  const redactor = o.redactor ?? createRedactor();
  const db = await openDatabase(config.databaseUrl, { logger: log });
  const { applied } = await applyMigrations(db);
  if (applied.length) log.info({ applied }, 'database migrations applied');

  let kube: KubeReader | undefined;
  if (o.kubeConfig !== null) {
    try {
      kube = new KubeReader(o.kubeConfig ?? loadKubeConfig(config.kubernetes));
    } catch (err) {
      log.warn({ err: String(err) }, 'Kubernetes is not configured; investigations will report it as a gap');
    }
  }

  const service = new IncidentService(db.prisma, { dedupWindowMs: config.incidents.dedupWindowMs, reopenWindowMs: config.incidents.reopenWindowMs }, clock, redactor, log);
  const app = createSlackApp({ ...config.slack, clientOptions: o.slackClientOptions, botUserId: o.botUserId }, log, {
    healthz: async () => (await db.prisma.$queryRawUnsafe('SELECT 1'), true),
  });
  const chat = new SlackChat(app.client, log);
  const thread = new ThreadSync(db.prisma, chat, log);
  const runner = new InvestigationRunner(db.prisma, thread, { kube }, redactor, clock, { concurrency: config.incidents.workerConcurrency, leaseMs: config.incidents.leaseMs }, log);
  const desk = new IncidentDesk({ db: db.prisma, service, runner, thread, chat, clock, redactor, alertChannels: config.slack.alertChannels, log });
  registerListeners(app, desk, log);

  const server = config.slack.mode === 'http' ? await app.start(config.slack.port) : await app.start();
  const address = config.slack.mode === 'http' ? (server as import('node:http').Server).address() : null;
  const port = address && typeof address === 'object' ? address.port : undefined;
  log.info({ mode: config.slack.mode, port, channels: config.slack.alertChannels, database: db.provider }, 'Vigil is listening');
  await runner.resumePending();

  return {
    app,
    db,
    runner,
    desk,
    thread,
    port,
    async stop() {
      await app.stop().catch(() => undefined);
      await desk.idle();
      await runner.stop();
      await db.close();
    },
  };
}

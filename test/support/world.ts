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
import { startFakeKube, type FakeKube } from '../fakes/kubernetes/server.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack/index.js';
import { loadScenario, type Scenario } from '../scenarios/load.js';

export const ALERT_CHANNEL = 'C0ALERTS';
export const READER_TOKEN = 'vigil-reader-token';
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
}

export interface World {
  scenario: Scenario;
  slack: FakeSlack;
  kube: FakeKube;
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
  close(): Promise<void>;
}

export async function startWorld(o: WorldOptions): Promise<World> {
  const scenario = await loadScenario(o.scenarioDir, { onset: o.onset, noise: o.noise });
  const tmp = mkdtempSync(join(tmpdir(), 'vigil-world-'));
  const signingSecret = randomBytes(16).toString('hex');
  const slack = await startFakeSlack({ users: DEMO_USERS, usergroups: { S0SREONCALL: ['U0VIGILSRE'] }, channels: [{ id: ALERT_CHANNEL, name: 'alerts' }] as never });
  const kube = await startFakeKube({ objects: scenario.objects, logs: scenario.logs });
  const kubeconfigPath = join(tmp, 'kubeconfig.yaml');
  writeFileSync(
    kubeconfigPath,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{ name: fake, cluster: { server: "' + kube.url + '", insecure-skip-tls-verify: true } }]',
      'users: [{ name: reader, user: { token: "' + READER_TOKEN + '" } }]',
      'contexts: [{ name: fake, context: { cluster: fake, user: reader } }]',
      'current-context: fake',
      '',
    ].join('\n'),
  );
  const env: Record<string, string> = {
    SLACK_BOT_TOKEN: slack.botToken,
    SLACK_SIGNING_SECRET: signingSecret,
    SLACK_API_URL: slack.apiUrl,
    PORT: '0',
    VIGIL_ALERT_CHANNELS: ALERT_CHANNEL,
    DATABASE_URL: o.databaseUrl ?? `file:${join(tmp, 'vigil.db')}`,
    KUBECONFIG: kubeconfigPath,
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
    config,
    env,
    tmp,
    kubeconfigPath,
    async start() {
      if (world.vigil) return world.vigil;
      const vigil = await startVigil(config, log, {
        redactor,
        // Tests and the demo want errors fast, not Slack's 30-minute production retry policy.
        slackClientOptions: { retryConfig: { retries: 2, factor: 1, minTimeout: 50, maxTimeout: 200 } },
      });
      world.vigil = vigil;
      slack.setEventsTarget({ url: `http://127.0.0.1:${vigil.port}/slack/events`, signingSecret });
      return vigil;
    },
    async postAlert(overrides = {}) {
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
      }
    },
    async close() {
      await world.vigil?.stop();
      world.vigil = undefined;
      await slack.close();
      await kube.close();
      rmSync(tmp, { recursive: true, force: true });
    },
  };
  if (o.startApp !== false) await world.start();
  return world;
}

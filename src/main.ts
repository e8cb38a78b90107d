import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import { ConfigError, loadConfig } from './config/index.js';
import { VigilMetrics } from './http/metrics.js';
import { Probes, listenProbes } from './http/probes.js';
import type { Route } from './http/routes.js';
import { createLogger } from './log.js';
import { PolicyError } from './policy/index.js';
import { createRedactor } from './redact/index.js';
import { SlackPreflightError } from './slack/preflight.js';
import { startVigil } from './vigil.js';

/**
 * `npm start`: run the bot for real from the environment (and `.env` when present). Bad settings stop it
 * with one message naming each bad variable; SIGTERM/SIGINT drain and close cleanly.
 */
async function main(): Promise<void> {
  if (existsSync('.env')) process.loadEnvFile('.env');
  let config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  if (config.role === 'executor') {
    console.error('VIGIL_ROLE=executor: run `vigil executor` (npm run vigil -- executor) for the executor; `vigil start` runs the investigator or the single process.');
    process.exit(2);
  }
  const redactor = createRedactor();
  const log = createLogger(config.logLevel, redactor);
  const probes = new Probes();
  const metrics = new VigilMetrics();
  // The probes answer from process start, before the database is open or Slack connects: Kubernetes sees
  // "starting" (/livez 200, /readyz 503 naming what is missing), not a refused connection. Socket Mode has
  // no HTTP receiver, so this server also serves the webhooks on PORT once Vigil is up; in HTTP mode Bolt
  // serves everything on PORT after start, and VIGIL_PROBE_PORT (when set) answers from start as well.
  let routes: Route[] = [...probes.routes(), metrics.route(config.probes.metricsToken)];
  const socket = config.slack.mode === 'socket';
  const ports = new Set([...(socket ? [config.slack.port] : []), ...(config.probes.port !== undefined && config.probes.port !== config.slack.port ? [config.probes.port] : [])]);
  const early: Server[] = await Promise.all([...ports].map((port) => listenProbes(port, () => routes)));
  if (early.length) log.info({ ports: [...ports] }, 'probes listening (/livez, /readyz, /healthz, /metrics)');
  const vigil = await startVigil(config, log, { redactor, probes, metrics });
  // Socket Mode: the same servers serve the webhooks too, now that they exist.
  if (socket) routes = vigil.routes;

  const shutdown = async (signal: string) => {
    log.info({ signal }, 'shutting down');
    probes.markStopping();
    await vigil.stop();
    for (const server of early) server.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  if (err instanceof PolicyError || err instanceof SlackPreflightError) {
    console.error(err.message);
    process.exit(2);
  }
  console.error(`Vigil failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});

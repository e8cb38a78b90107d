import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { ConfigError, loadConfig } from './config/index.js';
import { routeRequest } from './http/routes.js';
import { createLogger } from './log.js';
import { PolicyError } from './policy/index.js';
import { createRedactor } from './redact/index.js';
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
  const redactor = createRedactor();
  const log = createLogger(config.logLevel, redactor);
  const vigil = await startVigil(config, log, { redactor });

  // Socket Mode has no HTTP receiver: serve the health check and webhooks on PORT ourselves.
  const health = config.slack.mode === 'socket' ? createServer((req, res) => routeRequest(vigil.routes, req, res)).listen(config.slack.port) : undefined;

  const shutdown = async (signal: string) => {
    log.info({ signal }, 'shutting down');
    health?.close();
    await vigil.stop();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  if (err instanceof PolicyError) {
    console.error(err.message);
    process.exit(2);
  }
  console.error(`Vigil failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});

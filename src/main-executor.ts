import { existsSync } from 'node:fs';
import { ExecutorIdentityError } from './actions/index.js';
import { ConfigError, loadExecutorConfig } from './config/index.js';
import { startExecutor } from './executor.js';
import { listenProbes } from './http/probes.js';
import { createLogger } from './log.js';
import { PolicyError } from './policy/index.js';
import { createRedactor } from './redact/index.js';
import { SlackPreflightError } from './slack/preflight.js';

/**
 * `vigil executor`: split mode's executor process from the environment (and `.env`). Bad settings, or a
 * Kubernetes credential that is not the executor's, stop it with one message; SIGTERM/SIGINT drain it.
 */
async function main(): Promise<void> {
  if (existsSync('.env')) process.loadEnvFile('.env');
  let config;
  try {
    config = loadExecutorConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  const redactor = createRedactor();
  const log = createLogger(config.logLevel, redactor);
  const executor = await startExecutor(config, log, { redactor });
  // Socket Mode has no HTTP receiver: the probes get their own server on PORT (as src/main.ts does).
  const early = config.slack.mode === 'socket' ? [await listenProbes(config.slack.port, () => executor.routes)] : [];
  const shutdown = async (signal: string) => {
    log.info({ signal }, 'executor shutting down');
    await executor.stop();
    for (const s of early) s.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  if (err instanceof PolicyError || err instanceof SlackPreflightError || err instanceof ExecutorIdentityError) {
    console.error(err.message);
    process.exit(2);
  }
  console.error(`Vigil executor failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});

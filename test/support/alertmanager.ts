/**
 * A real Alertmanager (Debian's `prometheus-alertmanager`, 0.25) for tests, plus a loopback HTTP receiver that
 * captures what it sends. Alertmanager is started on 127.0.0.1 with no cluster gossip and its storage in a temp dir.
 *
 * CI must install the binary (`apt-get install -y prometheus-alertmanager`). When it is missing, `startAlertmanager`
 * throws under `CI` (never skip silently there); elsewhere tests call `alertmanagerSkipReason()` and skip visibly.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';

export const ALERTMANAGER_BINARY = process.env.VIGIL_ALERTMANAGER_BIN ?? '/usr/bin/prometheus-alertmanager';

/** Why the live Alertmanager tests cannot run here, or undefined when they can. Throws under CI instead of skipping. */
export function alertmanagerSkipReason(): string | undefined {
  if (existsSync(ALERTMANAGER_BINARY)) return undefined;
  const reason = `Alertmanager binary not found at ${ALERTMANAGER_BINARY}; install it with: apt-get install -y prometheus-alertmanager`;
  if (process.env.CI) throw new Error(`${reason} (CI must not skip the live Alertmanager tests)`);
  return reason;
}

export interface AlertmanagerOptions {
  /** Where `slack_configs[0].api_url` points (the capturing receiver, or the fake Slack server's incoming-webhook URL). */
  slackApiUrl: string;
  /** Adds a `webhook_configs` entry (the v4 JSON webhook). */
  webhookUrl?: string;
  /** With `webhookUrl`: the webhook sends `Authorization: Bearer <this>` (`http_config.authorization`). */
  webhookBearerToken?: string;
  /** Route `group_by`; default `['alertname']`. */
  groupBy?: string[];
  /** Custom Slack templates: `title`/`text` override the slack_config fields; `definitions` are written to .tmpl files. */
  templates?: { title?: string; text?: string; definitions?: string[] };
}

/** What tests post to `/api/v2/alerts` (Alertmanager's postable alert). */
export interface PostableAlert {
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  startsAt?: string;
  endsAt?: string;
  generatorURL?: string;
}

export interface RunningAlertmanager {
  url: string;
  postAlerts(alerts: PostableAlert[]): Promise<void>;
  /** Posts the same alerts again (default: every alert posted so far) with `endsAt` in the past. */
  resolve(alerts?: PostableAlert[]): Promise<void>;
  stop(): Promise<void>;
}

export async function startAlertmanager(options: AlertmanagerOptions): Promise<RunningAlertmanager> {
  const skip = alertmanagerSkipReason();
  if (skip) throw new Error(skip);

  const dir = await mkdtemp(join(tmpdir(), 'vigil-alertmanager-'));
  const templateFiles: string[] = [];
  for (const [index, definition] of (options.templates?.definitions ?? []).entries()) {
    const file = join(dir, `custom-${index}.tmpl`);
    await writeFile(file, definition);
    templateFiles.push(file);
  }
  const slackConfig: Record<string, unknown> = { api_url: options.slackApiUrl, channel: '#alerts', send_resolved: true };
  if (options.templates?.title !== undefined) slackConfig.title = options.templates.title;
  if (options.templates?.text !== undefined) slackConfig.text = options.templates.text;
  const receiver: Record<string, unknown> = { name: 'vigil', slack_configs: [slackConfig] };
  if (options.webhookUrl) {
    const auth = options.webhookBearerToken ? { http_config: { authorization: { type: 'Bearer', credentials: options.webhookBearerToken } } } : {};
    receiver.webhook_configs = [{ url: options.webhookUrl, send_resolved: true, ...auth }];
  }
  const config = {
    route: {
      receiver: 'vigil',
      group_by: options.groupBy ?? ['alertname'],
      group_wait: '1s',
      group_interval: '1s',
      repeat_interval: '1h',
    },
    receivers: [receiver],
    ...(templateFiles.length > 0 ? { templates: templateFiles } : {}),
  };
  const configFile = join(dir, 'alertmanager.yml');
  await writeFile(configFile, stringify(config));

  const port = await freeLoopbackPort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    ALERTMANAGER_BINARY,
    [
      `--config.file=${configFile}`,
      `--storage.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      `--web.external-url=${url}`,
      '--cluster.listen-address=',
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });

  const stop = async (): Promise<void> => {
    await stopChild(child);
    await rm(dir, { recursive: true, force: true });
  };

  try {
    await waitForReady(`${url}/-/ready`, child, () => stderr);
  } catch (error) {
    await stop();
    throw error;
  }

  const posted = new Map<string, PostableAlert>();
  const post = async (alerts: PostableAlert[]): Promise<void> => {
    const response = await fetch(`${url}/api/v2/alerts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(alerts),
    });
    if (!response.ok) throw new Error(`Alertmanager rejected alerts: ${response.status} ${await response.text()}`);
  };

  return {
    url,
    async postAlerts(alerts) {
      const now = new Date().toISOString();
      const stamped = alerts.map((alert) => ({ ...alert, startsAt: alert.startsAt ?? now }));
      for (const alert of stamped) posted.set(labelKey(alert.labels), alert);
      await post(stamped);
    },
    async resolve(alerts) {
      const targets = (alerts ?? [...posted.values()]).map((alert) => posted.get(labelKey(alert.labels)) ?? alert);
      // endsAt must be after startsAt (Alertmanager validates it) and before now (so the alert counts as resolved).
      const endsAt = new Date(Date.now() - 10);
      await post(
        targets.map((alert) => {
          const startsAt = alert.startsAt ? new Date(alert.startsAt) : new Date(endsAt.getTime() - 1000);
          const safeStart = startsAt < endsAt ? startsAt : new Date(endsAt.getTime() - 1);
          return { ...alert, startsAt: safeStart.toISOString(), endsAt: endsAt.toISOString() };
        }),
      );
    },
    stop,
  };
}

function labelKey(labels: Record<string, string>): string {
  return JSON.stringify(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)));
}

async function freeLoopbackPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('could not allocate a loopback port');
  return address.port;
}

async function waitForReady(readyUrl: string, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`Alertmanager exited with code ${child.exitCode}: ${stderr()}`);
    try {
      const response = await fetch(readyUrl);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`Alertmanager was not ready within 15s: ${stderr()}`);
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/** One HTTP request the capturing receiver got. */
export interface CapturedRequest {
  path: string;
  body: unknown;
}

export interface CapturingReceiver {
  /** Base URL, e.g. `http://127.0.0.1:41234`; post to any path under it. */
  url: string;
  requests: CapturedRequest[];
  /** Resolves with the first request (old or new) on `path` that matches, or rejects after `timeoutMs`. */
  waitFor(path: string, match: (body: unknown) => boolean, timeoutMs?: number): Promise<CapturedRequest>;
  close(): Promise<void>;
}

/** A loopback `node:http` server that answers 200 `ok` (as Slack's incoming webhook does) and keeps every JSON body. */
export async function startCapturingReceiver(): Promise<CapturingReceiver> {
  const requests: CapturedRequest[] = [];
  const waiters = new Set<() => void>();
  const server: Server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown = raw;
      try {
        body = JSON.parse(raw);
      } catch {
        // keep the raw text
      }
      requests.push({ path: req.url ?? '/', body });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      for (const wake of waiters) wake();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('receiver has no port');

  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    waitFor(path, match, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = (): boolean => {
          const found = requests.find((request) => request.path === path && match(request.body));
          if (!found) return false;
          cleanup();
          resolve(found);
          return true;
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`no matching request on ${path} within ${timeoutMs}ms; got ${JSON.stringify(requests).slice(0, 2000)}`));
        }, timeoutMs);
        const wake = (): void => {
          check();
        };
        const cleanup = (): void => {
          clearTimeout(timer);
          waiters.delete(wake);
        };
        waiters.add(wake);
        check();
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiException } from '@kubernetes/client-node';
import { renderBlocksAsText } from '../../src/slack/blocks/text.js';
import type { FakeSlack } from '../fakes/slack/index.js';
import { ALERT_CHANNEL } from '../support/world.js';

export const DEMO_SCENARIO = join(dirname(fileURLToPath(import.meta.url)), '..', 'scenarios', 'demo-checkout-scaled-to-zero');

/** The thread's replies by Vigil, as readable text (current content after edits). */
export function threadText(slack: FakeSlack, ts: string, channel = ALERT_CHANNEL): string[] {
  return slack
    .threadOf(channel, ts)
    .slice(1)
    .map((m) => renderBlocksAsText(m));
}

/** Vigil's posts (chat.postMessage calls that Slack accepted). */
export function acceptedPosts(slack: FakeSlack) {
  return slack.callsTo('chat.postMessage').filter((c) => c.response?.body.ok);
}

/** Poll an async probe until it returns a value (the fake's waitFor takes synchronous probes only). */
export async function eventually<T>(probe: () => Promise<T | undefined | null | false>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** A loopback port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * Run the real entry point (`npm start`'s src/main.ts) as its own process, against the fakes; resolves once
 * /healthz answers. With `logs`, its output is collected there (one entry per line) instead of inherited.
 */
export async function startVigilProcess(env: Record<string, string>, port: number, o: { logs?: string[]; logLevel?: string; timeoutMs?: number } = {}): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port), LOG_LEVEL: o.logLevel ?? 'warn' },
    stdio: ['ignore', o.logs ? 'pipe' : 'inherit', o.logs ? 'pipe' : 'inherit'],
  });
  const collect = (b: Buffer) => o.logs!.push(...b.toString().split('\n').filter(Boolean));
  if (o.logs) {
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
  }
  const deadline = Date.now() + (o.timeoutMs ?? 20_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`vigil exited early with ${child.exitCode}${o.logs ? `: ${o.logs.slice(-5).join('\n')}` : ''}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return child;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error(`vigil did not become healthy in ${(o.timeoutMs ?? 20_000) / 1000} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}


/** The HTTP status a Kubernetes client call ends with (200 when it succeeded). */
export async function kubeStatus(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return 200;
  } catch (err) {
    if (err instanceof ApiException) return err.code;
    throw err;
  }
}

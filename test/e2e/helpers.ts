import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
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

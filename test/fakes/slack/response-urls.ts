/**
 * Slash-command and interaction `response_url`s pointing at the fake (`/response/<id>`). Bolt's `respond()` POSTs
 * JSON there. Slack allows 5 uses within 30 minutes (PLATFORM-FACTS A3); the 6th answers 404 `used_url`.
 * `in_channel` responses become channel messages; ephemeral ones are kept with the store's ephemerals.
 */
import type { SlackStore } from './store.js';
import { validateMessagePayload } from './blockkit.js';

export const RESPONSE_URL_MAX_USES = 5;

export interface ResponseUrlContext {
  channel_id: string;
  user_id: string;
}

export interface ResponseUrlPost {
  id: string;
  body: Record<string, unknown>;
  context: ResponseUrlContext;
  at: number;
}

export class ResponseUrls {
  readonly posts: ResponseUrlPost[] = [];
  private readonly issued = new Map<string, ResponseUrlContext & { uses: number }>();
  private seq = 0;

  issue(baseUrl: string, context: ResponseUrlContext): string {
    this.seq += 1;
    const id = `R${String(this.seq).padStart(6, '0')}`;
    this.issued.set(id, { ...context, uses: 0 });
    return `${baseUrl}/response/${id}`;
  }

  /** Handles a POST to `/response/<id>`; returns the HTTP status and text to answer. */
  receive(id: string, raw: string, store: SlackStore): { status: number; text: string } {
    const entry = this.issued.get(id);
    if (!entry) return { status: 404, text: 'no_such_url' };
    if (entry.uses >= RESPONSE_URL_MAX_USES) return { status: 404, text: 'used_url' };
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return { status: 400, text: 'invalid_payload' };
    }
    // Slack checks a response_url payload as it checks chat.postMessage: invalid blocks are refused (400), the URL not used up.
    const invalid = validateMessagePayload(body, !body.delete_original);
    if (invalid) return { status: 400, text: invalid.error };
    entry.uses += 1;
    const context = { channel_id: entry.channel_id, user_id: entry.user_id };
    this.posts.push({ id, body, context, at: Date.now() });
    const text = typeof body.text === 'string' ? body.text : undefined;
    const blocks = Array.isArray(body.blocks) ? body.blocks : undefined;
    if (body.response_type === 'in_channel') {
      store.add({ channel: context.channel_id, text, blocks, user: store.bot.userId, bot_id: store.bot.botId, origin: 'response_url' });
    } else if (!body.delete_original) {
      store.ephemerals.push({ channel: context.channel_id, user: context.user_id, ts: store.nextTs(), text, blocks });
    }
    return { status: 200, text: 'ok' };
  }
}

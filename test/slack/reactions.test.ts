/** SlackChat.react against the fake Slack, which answers reactions.add with Slack's own errors. */
import pino from 'pino';
import { WebClient } from '@slack/web-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SlackChat } from '../../src/slack/chat.js';
import { react } from '../../src/incidents/acknowledge.js';
import { BOT_SCOPES } from '../../src/slack/scopes.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack/index.js';

const log = pino({ level: 'silent' });
const chatOn = (slack: FakeSlack) => new SlackChat(new WebClient(slack.botToken, { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 } }), log);

describe('reactions', () => {
  let full: FakeSlack;
  let narrow: FakeSlack;
  beforeAll(async () => {
    full = await startFakeSlack();
    narrow = await startFakeSlack({ scopes: BOT_SCOPES.filter((s) => s !== 'reactions:write') });
  });
  afterAll(async () => {
    await full?.close();
    await narrow?.close();
  });

  it('adds a reaction once; a second add is already_reacted, which is not an error', async () => {
    const { message } = await full.postAsBot('C0ALERTS', { text: 'alert' });
    const chat = chatOn(full);
    expect(await chat.react('C0ALERTS', message.ts, 'eyes')).toBe('added');
    expect(await chat.react('C0ALERTS', message.ts, 'eyes')).toBe('already_reacted');
    expect(full.message('C0ALERTS', message.ts)!.reactions).toEqual([{ name: 'eyes', users: ['U0VIGIL'], count: 1 }]);
  });

  it('a deleted post (message_not_found) and a token without reactions:write (missing_scope) are logged, never thrown', async () => {
    expect(await react(chatOn(full), log, 'C0ALERTS', '1.000001', 'eyes')).toEqual({ failed: 'message_not_found', final: true });
    const { message } = await narrow.postAsBot('C0ALERTS', { text: 'alert' });
    expect(await react(chatOn(narrow), log, 'C0ALERTS', message.ts, 'eyes')).toEqual({ failed: 'missing_scope', final: true });
    expect(narrow.callsTo('reactions.add')[0]!.response!.body).toMatchObject({ ok: false, error: 'missing_scope', needed: 'reactions:write' });
    // Other methods the token has are answered as usual.
    expect((await chatOn(narrow).channelInfo('C0ALERTS')).ok).toBe(true);
  });
});

import { LogLevel, WebAPIPlatformError, WebClient } from '@slack/web-api';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeSlack, type FakeSlack } from './index.js';

let fake: FakeSlack;
let client: WebClient;
let channelSeq = 0;
let channel: string;

const platformError = async (call: Promise<unknown>): Promise<WebAPIPlatformError> => {
  const error = await call.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(WebAPIPlatformError);
  return error as WebAPIPlatformError;
};

beforeAll(async () => {
  fake = await startFakeSlack({
    users: [{ id: 'U1ALICE', name: 'alice', real_name: 'Alice Example', display_name: 'ali' }],
    usergroups: { S0SRE: ['U1ALICE', 'U2BOB'] },
    channels: [{ id: 'C0PRIVATE', name: 'secret', is_private: true, is_member: false }],
  });
  client = new WebClient(fake.botToken, { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 }, logLevel: LogLevel.ERROR });
});

afterAll(async () => {
  await fake.close();
});

beforeEach(() => {
  channelSeq += 1;
  channel = `C0TEST${channelSeq}`;
});

describe('fake Slack Web API', () => {
  it('answers auth.test with the bot identity and records the call with its bearer token', async () => {
    expect(fake.apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/$/);
    const auth = await client.auth.test();
    expect(auth).toMatchObject({ ok: true, team_id: 'T0FAKE', user_id: 'U0VIGIL', bot_id: 'B0VIGIL', url: 'https://fake.slack.test/' });
    const [call] = fake.callsTo('auth.test').slice(-1);
    expect(call?.headers.authorization).toBe(`Bearer ${fake.botToken}`);
  });

  it('posts messages with unique increasing ts and decodes form-encoded JSON fields', async () => {
    const blocks = [{ type: 'section', text: { type: 'mrkdwn', text: '*hi*' } }];
    const metadata = { event_type: 'vigil_incident', event_payload: { incident_id: 'inc-1' } };
    const first = await client.chat.postMessage({ channel, text: 'one', blocks, metadata, username: 'Vigil' });
    const second = await client.chat.postMessage({ channel, text: 'two' });
    expect(first.ts).toMatch(/^\d{10}\.\d{6}$/);
    expect(Number(second.ts)).toBeGreaterThan(Number(first.ts));
    const call = fake.callsTo('chat.postMessage').find((c) => c.body.text === 'one');
    expect(call?.headers['content-type']).toContain('application/x-www-form-urlencoded');
    expect(call?.body.blocks).toEqual(blocks);
    expect(call?.body.metadata).toEqual(metadata);
    expect(fake.messages(channel).map((m) => [m.text, m.bot_id, m.username])).toEqual([['one', 'B0VIGIL', 'Vigil'], ['two', 'B0VIGIL', undefined]]);
    expect(fake.message(channel, first.ts!)?.metadata).toEqual(metadata);
  });

  it('threads replies, bumps reply_count and resolves a reply ts to its parent', async () => {
    const parent = await client.chat.postMessage({ channel, text: 'incident' });
    const r1 = await client.chat.postMessage({ channel, thread_ts: parent.ts!, text: 'first finding' });
    await client.chat.postMessage({ channel, thread_ts: r1.ts!, text: 'reply to a reply' });
    const thread = fake.threadOf(channel, parent.ts!);
    expect(thread.map((m) => m.text)).toEqual(['incident', 'first finding', 'reply to a reply']);
    expect(thread[0]).toMatchObject({ reply_count: 2, thread_ts: parent.ts, reply_users: ['U0VIGIL'] });
    expect(thread[2]?.thread_ts).toBe(parent.ts);
    expect((await platformError(client.chat.postMessage({ channel, thread_ts: '1.000001', text: 'x' }))).data.error).toBe('thread_not_found');
  });

  it('updates only the bot’s own messages and keeps edit history', async () => {
    const posted = await client.chat.postMessage({ channel, text: 'v1', blocks: [{ type: 'divider' }] });
    const updated = await client.chat.update({ channel, ts: posted.ts!, text: 'v2' });
    expect(updated).toMatchObject({ ok: true, ts: posted.ts, text: 'v2' });
    const stored = fake.message(channel, posted.ts!);
    expect(stored).toMatchObject({ text: 'v2', blocks: [{ type: 'divider' }] });
    expect(stored?.edits.map((e) => e.text)).toEqual(['v1']);
    await client.chat.update({ channel, ts: posted.ts!, text: 'v3', blocks: [] });
    expect(fake.threadOf(channel, posted.ts!)[0]).toMatchObject({ text: 'v3', blocks: [] });

    expect((await platformError(client.chat.update({ channel, ts: '1.000001', text: 'x' }))).data.error).toBe('message_not_found');
    const human = await fake.postAsUser(channel, { user: 'U1ALICE', text: 'mine' });
    expect((await platformError(client.chat.update({ channel, ts: human.message.ts, text: 'x' }))).data.error).toBe('cant_update_message');
  });

  it('builds permalinks, with thread_ts for replies', async () => {
    const parent = await client.chat.postMessage({ channel, text: 'p' });
    const reply = await client.chat.postMessage({ channel, thread_ts: parent.ts!, text: 'r' });
    const top = await client.chat.getPermalink({ channel, message_ts: parent.ts! });
    expect(top.permalink).toBe(`https://fake.slack.test/archives/${channel}/p${parent.ts!.replace('.', '')}`);
    const threaded = await client.chat.getPermalink({ channel, message_ts: reply.ts! });
    expect(threaded.permalink).toBe(`https://fake.slack.test/archives/${channel}/p${reply.ts!.replace('.', '')}?thread_ts=${parent.ts}&cid=${channel}`);
  });

  it('pages conversations.replies with cursors and returns metadata only when asked', async () => {
    const metadata = { event_type: 'vigil_step', event_payload: { n: 0 } };
    const parent = await client.chat.postMessage({ channel, text: 'parent', metadata });
    for (let i = 1; i <= 4; i += 1) await client.chat.postMessage({ channel, thread_ts: parent.ts!, text: `r${i}` });
    const page1 = await client.conversations.replies({ channel, ts: parent.ts!, limit: 2 });
    expect(page1.messages?.map((m) => m.text)).toEqual(['parent', 'r1']);
    expect(page1.has_more).toBe(true);
    expect(page1.messages?.[0]).not.toHaveProperty('metadata');
    const texts: string[] = [];
    for await (const page of client.paginate('conversations.replies', { channel, ts: parent.ts!, limit: 2, include_all_metadata: true })) {
      const messages = (page as { messages?: { text?: string; metadata?: unknown }[] }).messages ?? [];
      texts.push(...messages.map((m) => m.text ?? ''));
      if (texts.length === 2) expect(messages[0]?.metadata).toEqual(metadata);
    }
    expect(texts).toEqual(['parent', 'r1', 'r2', 'r3', 'r4']);
    const last = await client.conversations.replies({ channel, ts: parent.ts!, limit: 2, cursor: page1.response_metadata!.next_cursor! });
    expect(last.messages?.map((m) => m.text)).toEqual(['r2', 'r3']);
  });

  it('lists conversations.history newest first without thread replies, and answers join/info', async () => {
    const a = await client.chat.postMessage({ channel, text: 'a' });
    await client.chat.postMessage({ channel, thread_ts: a.ts!, text: 'reply' });
    await client.chat.postMessage({ channel, text: 'b' });
    const history = await client.conversations.history({ channel });
    expect(history.messages?.map((m) => m.text)).toEqual(['b', 'a']);
    expect((await client.conversations.info({ channel })).channel).toMatchObject({ id: channel, is_member: true });
    expect((await platformError(client.conversations.info({ channel: 'C0NOWHERE' }))).data.error).toBe('channel_not_found');
    expect((await platformError(client.chat.postMessage({ channel: 'C0PRIVATE', text: 'x' }))).data.error).toBe('not_in_channel');
    const joined = await client.conversations.join({ channel: 'C0PRIVATE' });
    expect(joined.channel).toMatchObject({ id: 'C0PRIVATE', is_private: true, is_member: true });
    await client.chat.postMessage({ channel: 'C0PRIVATE', text: 'now allowed' });
  });

  it('answers users.info and usergroups.users.list from the configured tables', async () => {
    const { user } = await client.users.info({ user: 'U1ALICE' });
    expect(user).toMatchObject({ id: 'U1ALICE', name: 'alice', real_name: 'Alice Example', profile: { display_name: 'ali' } });
    expect((await platformError(client.users.info({ user: 'U9NOBODY' }))).data.error).toBe('user_not_found');
    expect((await client.usergroups.users.list({ usergroup: 'S0SRE' })).users).toEqual(['U1ALICE', 'U2BOB']);
    expect((await platformError(client.usergroups.users.list({ usergroup: 'S0NONE' }))).data.error).toBe('no_such_subteam');
  });

  it('refuses invalid blocks like Slack and counts the rejection', async () => {
    const before = fake.rejections.length;
    const error = await platformError(client.chat.postMessage({ channel, text: 'x', blocks: [{ type: 'divider' }, { type: 'header', text: { type: 'plain_text', text: 'h'.repeat(151) } }] }));
    expect(error.data).toMatchObject({
      error: 'invalid_blocks',
      errors: ['must be less than 151 characters [json-pointer:/blocks/1/text/text]'],
      response_metadata: { messages: ['[ERROR] must be less than 151 characters [json-pointer:/blocks/1/text/text]'] },
    });
    expect((await platformError(client.chat.postMessage({ channel, text: 'x'.repeat(40_001) }))).data.error).toBe('msg_too_long');
    expect((await platformError(client.chat.postMessage({ channel, text: '' }))).data.error).toBe('no_text');
    expect(fake.rejections.slice(before).map((r) => r.error)).toEqual(['invalid_blocks', 'msg_too_long', 'no_text']);
    expect(fake.messages(channel)).toEqual([]);
  });

  it('validates and stores views, ephemerals and reactions', async () => {
    const home = { type: 'home' as const, blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'Open incidents: 0' } }] };
    const published = await client.views.publish({ user_id: 'U1ALICE', view: home });
    expect(published.view?.id).toMatch(/^V/);
    expect(fake.store.homeViews.get('U1ALICE')).toEqual(home);
    const before = fake.rejections.length;
    const bad = await platformError(client.views.open({ trigger_id: '1.2.3', view: { type: 'modal', title: { type: 'plain_text', text: 't'.repeat(25) }, blocks: [] } }));
    expect(bad.data.error).toBe('invalid_arguments');
    expect(fake.rejections.length).toBe(before + 1);
    await client.views.open({ trigger_id: '1.2.3', view: { type: 'modal', callback_id: 'approve', title: { type: 'plain_text', text: 'Approve' }, blocks: [] } });
    expect(fake.store.openedViews.at(-1)?.view.callback_id).toBe('approve');

    const eph = await client.chat.postEphemeral({ channel, user: 'U1ALICE', text: 'only you' });
    expect(fake.store.ephemerals.at(-1)).toMatchObject({ channel, user: 'U1ALICE', ts: eph.message_ts, text: 'only you' });
    const msg = await client.chat.postMessage({ channel, text: 'ack me' });
    await client.reactions.add({ channel, timestamp: msg.ts!, name: 'eyes' });
    expect(fake.message(channel, msg.ts!)?.reactions).toEqual([{ name: 'eyes', users: ['U0VIGIL'], count: 1 }]);
    expect((await platformError(client.reactions.add({ channel, timestamp: msg.ts!, name: 'eyes' }))).data.error).toBe('already_reacted');
  });

  it('answers unknown_method, not_authed and invalid_auth', async () => {
    expect((await platformError(client.apiCall('nope.method'))).data.error).toBe('unknown_method');
    const anonymous = new WebClient(undefined, { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 }, logLevel: LogLevel.ERROR });
    expect((await platformError(anonymous.auth.test())).data.error).toBe('not_authed');
    const wrong = new WebClient('xoxb-wrong', { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 }, logLevel: LogLevel.ERROR });
    expect((await platformError(wrong.chat.postMessage({ channel, text: 'x' }))).data.error).toBe('invalid_auth');
  });

  it('accepts JSON bodies too', async () => {
    const response = await fetch(`${fake.apiUrl}chat.postMessage`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json; charset=utf-8', Authorization: `Bearer ${fake.botToken}` },
      body: JSON.stringify({ channel, text: 'json', blocks: [{ type: 'divider' }] }),
    });
    expect(await response.json()).toMatchObject({ ok: true, channel });
    expect(fake.messages(channel)[0]).toMatchObject({ text: 'json', blocks: [{ type: 'divider' }] });
  });

  it('waitFor resolves on a later call and times out with a readable list of recent calls', async () => {
    const waiting = fake.waitForCall('chat.postMessage', (c) => c.body.text === 'later');
    setTimeout(() => void client.chat.postMessage({ channel, text: 'later' }), 20);
    expect((await waiting).body.channel).toBe(channel);
    const message = await fake.waitForMessage(channel, (m) => m.text === 'later');
    expect(message.bot_id).toBe('B0VIGIL');
    await expect(fake.waitFor(() => fake.callsTo('never.called').length > 0, { timeoutMs: 50, label: 'never.called' }))
      .rejects.toThrow(/waitFor\(never\.called\) timed out after 50 ms[\s\S]*chat\.postMessage → ok/);
  });

  it('records response_url posts: in_channel becomes a channel message, ephemeral does not, 5 uses at most', async () => {
    const url = fake.newResponseUrl({ channel_id: channel, user_id: 'U1ALICE' });
    const post = (body: unknown) => fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    expect((await post({ response_type: 'in_channel', text: 'Incident declared' })).status).toBe(200);
    expect((await post({ text: 'only you' })).status).toBe(200);
    expect(fake.messages(channel).map((m) => [m.text, m.origin])).toEqual([['Incident declared', 'response_url']]);
    expect(fake.store.ephemerals.at(-1)).toMatchObject({ channel, user: 'U1ALICE', text: 'only you' });
    for (let i = 0; i < 3; i += 1) await post({ text: `use ${i + 3}` });
    const sixth = await post({ text: 'too many' });
    expect([sixth.status, await sixth.text()]).toEqual([404, 'used_url']);
    expect(fake.responses.filter((r) => r.context.channel_id === channel)).toHaveLength(5);
  });

  it('stores postAsBot messages as bot_message without delivering when no eventsTarget is set', async () => {
    const { message, delivery } = await fake.postAsBot(channel, { username: 'Grafana', attachments: [{ title: 'CPU high' }] });
    expect(message).toMatchObject({ subtype: 'bot_message', bot_id: 'B0ALERTS', username: 'Grafana', text: '' });
    expect(delivery).toBeUndefined();
    expect(fake.deliveries).toHaveLength(0);
  });
});

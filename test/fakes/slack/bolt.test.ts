import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { App, LogLevel, type SlashCommand } from '@slack/bolt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blockActionsPayload, deliverEvent, messageEventEnvelope, startFakeSlack, type FakeSlack } from './index.js';

const SECRET = 'fake-signing-secret';
const CHANNEL = 'C0ALERTS';

let fake: FakeSlack;
let app: App;
let eventsUrl: string;
const received: Record<string, unknown>[] = [];
const retryNums: (number | undefined)[] = [];
const commands: SlashCommand[] = [];
const approvals: string[] = [];

beforeAll(async () => {
  fake = await startFakeSlack({ users: [{ id: 'U1ALICE', name: 'alice' }] });
  app = new App({
    token: fake.botToken,
    signingSecret: SECRET,
    clientOptions: { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } },
    logLevel: LogLevel.ERROR,
  });
  app.event('message', async ({ event, client, context }) => {
    received.push(event as unknown as Record<string, unknown>);
    retryNums.push(context.retryNum);
    if ('user' in event && event.text === 'ping') {
      await client.chat.postMessage({ channel: event.channel, thread_ts: event.ts, text: 'pong' });
    }
  });
  app.command('/sre', async ({ ack, command, respond }) => {
    await ack();
    commands.push(command);
    await respond({ response_type: 'ephemeral', text: `Vigil: ${command.text}` });
  });
  app.action('approve', async ({ ack, body }) => {
    await ack();
    approvals.push(body.user.id);
  });
  const server = (await app.start(0)) as Server;
  eventsUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/events`;
  fake.setEventsTarget({ url: eventsUrl, signingSecret: SECRET });
});

afterAll(async () => {
  await app.stop();
  await fake.close();
});

describe('fake Slack delivering to a real Bolt app', () => {
  it('Bolt verifies its token against the fake (auth.test fired from the App constructor, not awaited by start)', async () => {
    const call = await fake.waitForCall('auth.test');
    expect(call.response?.body).toMatchObject({ ok: true, bot_id: 'B0VIGIL' });
  });

  it('delivers a human message as a signed event; the app’s threaded reply lands in the fake but is not echoed back', async () => {
    const { message, delivery } = await fake.postAsUser(CHANNEL, { user: 'U1ALICE', text: 'ping' });
    expect(delivery?.status).toBe(200);
    expect(delivery?.ackMs).toBeLessThan(3000);
    const reply = await fake.waitForMessage(CHANNEL, (m) => m.text === 'pong');
    expect(reply.thread_ts).toBe(message.ts);
    expect(fake.threadOf(CHANNEL, message.ts).map((m) => m.text)).toEqual(['ping', 'pong']);
    expect(received.at(-1)).toMatchObject({ type: 'message', user: 'U1ALICE', text: 'ping', channel: CHANNEL, ts: message.ts });
    await fake.idle();
    expect(fake.deliveries.filter((d) => d.kind === 'event')).toHaveLength(1);
  });

  it('delivers an Alertmanager webhook post as a bot_message event', async () => {
    const payload = {
      channel: '#alerts',
      username: 'Alertmanager',
      icon_emoji: ':fire:',
      attachments: [{ title: '[FIRING:1] HighErrorRate checkout', title_link: 'http://am/#/alerts', text: 'error rate 12%', fallback: '[FIRING:1] HighErrorRate', color: 'danger', mrkdwn_in: ['fallback', 'pretext', 'text'] }],
    };
    const response = await fetch(fake.webhookUrl(CHANNEL), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(payload) });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    expect(await response.text()).toBe('ok');
    const event = await fake.waitFor(() => received.find((e) => e.subtype === 'bot_message'), { label: 'webhook event' });
    expect(event).toMatchObject({ bot_id: 'B_WEBHOOK', username: 'Alertmanager', text: '', channel: CHANNEL, attachments: [{ title: '[FIRING:1] HighErrorRate checkout' }] });
    expect(fake.messages(CHANNEL).at(-1)).toMatchObject({ subtype: 'bot_message', bot_id: 'B_WEBHOOK', origin: 'webhook' });
    const bad = await fetch(fake.webhookUrl(CHANNEL), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect([bad.status, await bad.text()]).toEqual([400, 'no_text']);
  });

  it('passes retry headers through to context.retryNum', async () => {
    const envelope = messageEventEnvelope({ channel: CHANNEL, ts: '1764430999.000100', user: 'U1ALICE', text: 'retried' });
    const result = await fake.sendEvent(envelope, { retryNum: 2, retryReason: 'http_timeout' });
    expect(result.status).toBe(200);
    await fake.waitFor(() => received.some((e) => e.text === 'retried'));
    expect(retryNums.at(-1)).toBe(2);
  });

  it('runs /sre and records what the app posts to the response_url', async () => {
    const result = await fake.sendCommand({ text: 'status checkout', user_id: 'U1ALICE', channel_id: CHANNEL });
    expect(result.status).toBe(200);
    const response = await fake.waitFor(() => fake.responses.at(-1));
    expect(response.body).toEqual({ response_type: 'ephemeral', text: 'Vigil: status checkout' });
    expect(response.context).toEqual({ channel_id: CHANNEL, user_id: 'U1ALICE' });
    expect(commands.at(-1)).toMatchObject({ command: '/sre', text: 'status checkout', user_id: 'U1ALICE' });
  });

  it('delivers a button click to app.action', async () => {
    const posted = await app.client.chat.postMessage({ channel: CHANNEL, text: 'Approve rollback?' });
    const payload = blockActionsPayload({ user: { id: 'U1ALICE' }, channel: CHANNEL, message: { ts: posted.ts! }, action: { action_id: 'approve', value: 'plan-1' } });
    expect((await fake.sendInteraction(payload)).status).toBe(200);
    // The listener records after ack(), which already answered the request: wait for it.
    expect(await fake.waitFor(() => approvals.at(-1), { label: 'approve listener' })).toBe('U1ALICE');
  });

  it('rejects a bad or stale signature with 401 without running the listener', async () => {
    const before = received.length;
    const envelope = messageEventEnvelope({ channel: CHANNEL, ts: '1764431000.000100', user: 'U1ALICE', text: 'forged' });
    expect((await deliverEvent(eventsUrl, SECRET, envelope, { badSignature: true })).status).toBe(401);
    expect((await deliverEvent(eventsUrl, SECRET, envelope, { staleTimestamp: true })).status).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(received.length).toBe(before);
    expect(fake.rejections).toEqual([]);
  });
});

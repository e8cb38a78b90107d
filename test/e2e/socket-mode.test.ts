/**
 * `npm start` with SLACK_APP_TOKEN runs in Socket Mode: Bolt's real SocketModeReceiver opens its
 * connection through `apps.connections.open` on the (fake) Web API, receives envelopes over a WebSocket
 * and acks each one. The same listeners answer: an alert opens an incident, /sre replies, a retried
 * envelope opens nothing twice.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/log.js';
import { createRedactor } from '../../src/redact/index.js';
import { startVigil, type Vigil } from '../../src/vigil.js';
import { botMessage, messageEventFor } from '../fakes/slack/inbound.js';
import { FakeSocketMode } from '../fakes/slack/socket-mode.js';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';
import { DEMO_SCENARIO, eventually } from './helpers.js';

const APP_TOKEN = 'xapp-1-A0VIGIL-1764430000-fakefakefake';

describe('Socket Mode', () => {
  let world: World;
  let socket: FakeSocketMode;
  let vigil: Vigil;

  beforeAll(async () => {
    socket = await FakeSocketMode.start();
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, startApp: false, slackExtraTokens: [APP_TOKEN] });
    world.slack.store.socketModeUrl = socket.url;
    const config = loadConfig({ ...world.env, SLACK_APP_TOKEN: APP_TOKEN, SLACK_SIGNING_SECRET: '' });
    expect(config.slack.mode).toBe('socket');
    const quiet = new Writable({ write: (_c, _e, done) => done() });
    vigil = await startVigil(config, createLogger('silent', createRedactor(), quiet), { slackClientOptions: { retryConfig: { retries: 1, minTimeout: 50, maxTimeout: 100 } } });
    await socket.connectedClient();
  });
  afterAll(async () => {
    await vigil?.stop();
    await socket?.close();
    await world?.close();
  });

  it('connects through apps.connections.open with the app token', () => {
    // Twice: the start-up check of the app token (src/slack/preflight.ts), then the Socket Mode client.
    const open = world.slack.callsTo('apps.connections.open');
    expect(open).toHaveLength(2);
    for (const call of open) expect(String(call.headers['authorization'])).toBe(`Bearer ${APP_TOKEN}`);
  });

  it('acks an alert envelope at once, investigates it, and ignores the retried envelope', async () => {
    const message = world.slack.store.add(botMessage(ALERT_CHANNEL, { username: 'Alertmanager', text: '', attachments: world.scenario.alert.attachments }));
    const envelope = messageEventFor(world.slack.store, message);
    const ack = await socket.send('events_api', envelope);
    expect(ack.ackMs).toBeLessThan(1000);
    const db = vigil.db.prisma;
    const h1 = await eventually(() => db.hypothesis.findFirst({ where: { label: 'H1' } }), 'the first hypothesis');
    expect(h1).toMatchObject({ componentName: 'checkout', status: 'supported' });
    await socket.send('events_api', envelope, { retryAttempt: 1 });
    await vigil.desk.idle();
    await vigil.runner.idle();
    expect(await db.incident.count()).toBe(1);
    expect(world.slack.threadOf(ALERT_CHANNEL, message.ts).slice(1)).toHaveLength(2);
  });

  it('answers /sre over the socket', async () => {
    const response_url = world.slack.newResponseUrl({ channel_id: ALERT_CHANNEL, user_id: 'U0BOB' });
    const before = world.slack.responses.length;
    const ack = await socket.send('slash_commands', { command: '/sre', text: 'help', user_id: 'U0BOB', user_name: 'bob', channel_id: ALERT_CHANNEL, team_id: 'T0FAKE', response_url, trigger_id: 'sock-1' });
    expect(ack.ackMs).toBeLessThan(1000);
    await world.slack.waitFor(() => (world.slack.responses.length > before ? true : undefined), { timeoutMs: 10_000 });
    expect(JSON.stringify(world.slack.responses.at(-1)!.body)).toMatch(/investigate/);
  });

  it('acknowledges a malformed interaction at once (a redelivery would be as malformed) and runs nothing', async () => {
    const calls = world.slack.calls.length;
    const noUser = { type: 'block_actions', team: { id: 'T0FAKE' }, api_app_id: 'A0VIGIL', actions: [{ type: 'button', action_id: 'hyp_pin', block_id: 'b', value: 'x', action_ts: '1.2' }] };
    expect((await socket.send('interactive', noUser, { timeoutMs: 1000 })).ackMs).toBeLessThan(1000);
    const unknown = { ...noUser, user: { id: 'U0BOB' }, actions: [{ ...noUser.actions[0], action_id: 'nobody_handles_this' }] };
    expect((await socket.send('interactive', unknown, { timeoutMs: 1000 })).ackMs).toBeLessThan(1000);
    await vigil.desk.idle();
    expect(world.slack.calls.length).toBe(calls);
  });
});

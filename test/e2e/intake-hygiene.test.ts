/**
 * What arrives from outside is checked before it can hurt: through the real app (Bolt's HTTP receiver,
 * correctly signed requests, the real flags webhook), a malformed Slack request or webhook body gets a 4xx
 * that says why and a log line, never a 500 or a crash; a signed request more than five minutes from now,
 * in either direction, is refused; a lone surrogate or a NUL in a webhook body is stored, cleaned; Slack
 * Web API calls give up after their timeout and are retried; debug logs say how big a body was, not what it said.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DestinationStream } from 'pino';
import { createLogger } from '../../src/log.js';
import { createRedactor } from '../../src/redact/index.js';
import { blockActionsPayload, signSlackRequest } from '../fakes/slack/index.js';
import { createTestDatabase, testProviders, type TestDatabase } from '../store/test-databases.js';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';
import { DEMO_SCENARIO } from './helpers.js';

/** A logger writing parsed JSON lines into `lines`, through the same redacting logger Vigil uses. */
function capturingLogger(level: string) {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const destination: DestinationStream = {
    write(s: string) {
      raw.push(s);
      lines.push(JSON.parse(s) as Record<string, unknown>);
    },
  };
  return { lines, raw, logger: createLogger(level, createRedactor(), destination) };
}

describe('Slack request intake through the real receiver', () => {
  let world: World;
  const logs = capturingLogger('warn');
  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, logger: logs.logger });
  });
  afterAll(async () => world?.close());

  const eventsUrl = () => `http://127.0.0.1:${world.vigil!.port}/slack/events`;
  /** POST a raw body to /slack/events, signed correctly with the world's secret (and timestamp `ts`). */
  const postSigned = async (raw: string, contentType = 'application/x-www-form-urlencoded', ts = Math.floor(Date.now() / 1000)) => {
    const started = Date.now();
    const res = await fetch(eventsUrl(), { method: 'POST', headers: { 'content-type': contentType, ...signSlackRequest(world.env['SLACK_SIGNING_SECRET']!, raw, ts) }, body: raw });
    const text = await res.text();
    return { status: res.status, json: text ? (JSON.parse(text) as { ok: boolean; error?: string }) : undefined, ms: Date.now() - started };
  };
  /** A block_actions click as Slack sends it; `user: null` leaves the user out. */
  const click = (actionId: string, user: { id: string } | null = { id: 'U0BOB' }) => {
    const payload = blockActionsPayload({ user: user ?? { id: 'x' }, channel: ALERT_CHANNEL, message: { ts: '1700000000.000100', text: '' }, action: { action_id: actionId, value: 'c0000000000000000000000000' } });
    if (!user) delete payload['user'];
    return postSigned(new URLSearchParams({ payload: JSON.stringify(payload) }).toString());
  };
  const refusals = () => logs.lines.filter((l) => /refused/.test(String(l['msg'])));

  it('answers a click without a user with 400 naming the problem, and logs the body shape only', async () => {
    const res = await click('hyp_pin', null);
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ ok: false, error: expect.stringMatching(/block_actions payload without user\.id/) });
    const line = refusals().find((l) => /without user\.id/.test(String(l['reason'])));
    expect(line).toMatchObject({ level: 40, msg: 'Slack request refused', body: { shape: 'object', keys: expect.arrayContaining(['type', 'actions']) } });
    expect(JSON.stringify(line)).not.toContain('c0000000000000000000000000');
  });

  it('answers a click with an action id no Vigil control has with 400 at once, not a 404 after 3 s', async () => {
    const res = await click('nobody_handles_this');
    expect(res.status).toBe(400);
    expect(res.json?.error).toBe('Vigil has no handler for action id "nobody_handles_this"');
    expect(res.ms).toBeLessThan(1500);
    expect(refusals().some((l) => /nobody_handles_this/.test(String(l['reason'])))).toBe(true);
  });

  it('answers invalid JSON in `payload`, a JSON body that is not an object, and an unknown body type with 400', async () => {
    const badPayload = await postSigned('payload=%7Bnot-json');
    expect(badPayload.status).toBe(400);
    expect(badPayload.json?.error).toMatch(/^body is not valid JSON \(the payload field\)/);
    const nullPayload = await postSigned('payload=null');
    expect(nullPayload.status).toBe(400);
    expect(nullPayload.json?.error).toBe('body is not a JSON object');
    const nullEvent = await postSigned('null', 'application/json');
    expect(nullEvent.status).toBe(400);
    const noEvent = await postSigned(JSON.stringify({ type: 'event_callback', team_id: 'T0FAKE', event: 'oops' }), 'application/json');
    expect(noEvent.status).toBe(400);
    expect(noEvent.json?.error).toMatch(/event_callback without an event object/);
    const unknown = await postSigned(JSON.stringify({ type: 'something_else', user: { id: 'U0BOB' } }), 'application/json');
    expect(unknown.status).toBe(400);
    expect(unknown.json?.error).toMatch(/not a Slack event, slash command or interaction/);
    expect(refusals().filter((l) => /not valid JSON|not a JSON object|event_callback|not a Slack event/.test(String(l['msg']) + String(l['reason'])))).toHaveLength(5);
  });

  it('still serves well-formed requests afterwards (nothing crashed)', async () => {
    const res = await world.slack.sendCommand({ text: 'help', user_id: 'U0BOB', channel_id: ALERT_CHANNEL });
    expect(res.status).toBe(200);
  });

  it('refuses correctly signed requests more than 5 minutes in the future or the past with 401, and runs nothing', async () => {
    await world.settle();
    const answeredBefore = world.slack.responses.length;
    const command = { text: 'help', user_id: 'U0BOB', channel_id: ALERT_CHANNEL };
    const future = await world.slack.sendCommand(command, { timestampOffsetSeconds: 6 * 60 });
    expect(future.status).toBe(401);
    // 360 s ahead when signed; a second may pass before the receiver reads its clock (the timestamp is whole seconds).
    expect(JSON.parse(future.body)).toEqual({ ok: false, error: expect.stringMatching(/^X-Slack-Request-Timestamp is 3[56]\d s in the future/) });
    const past = await world.slack.sendCommand(command, { timestampOffsetSeconds: -6 * 60 });
    expect(past.status).toBe(401);
    expect(JSON.parse(past.body).error).toMatch(/s in the past/);
    const farFuture = await postSigned(JSON.stringify({ type: 'event_callback', team_id: 'T0FAKE', event: { type: 'app_home_opened', user: 'U0BOB', tab: 'home' } }), 'application/json', Math.floor(Date.now() / 1000) + 86_400);
    expect(farFuture.status).toBe(401);
    // Within the window either way is fine (clocks drift a little).
    expect((await world.slack.sendCommand(command, { timestampOffsetSeconds: 4 * 60 })).status).toBe(200);
    expect((await world.slack.sendCommand(command, { timestampOffsetSeconds: -4 * 60 })).status).toBe(200);
    await world.settle();
    // Only the two accepted commands were answered (on their response_url).
    expect(world.slack.responses.length - answeredBefore).toBe(2);
    expect(logs.lines.filter((l) => /Slack request refused: X-Slack-Request-Timestamp/.test(String(l['msg'])))).toHaveLength(3);
  });

  it("leaves requests without a timestamp to Bolt: Slack's unsigned ssl_check is answered 200, anything else 401", async () => {
    const ssl = await fetch(eventsUrl(), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'ssl_check=1&token=x' });
    expect(ssl.status).toBe(200);
    const unsigned = await fetch(eventsUrl(), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'event_callback', event: { type: 'app_home_opened' } }) });
    expect(unsigned.status).toBe(401);
  });
});

describe('flags webhook hygiene', () => {
  let world: World;
  const logs = capturingLogger('warn');
  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, logger: logs.logger });
  });
  afterAll(async () => world?.close());

  const send = async (body: string) => {
    const res = await fetch(`http://127.0.0.1:${world.vigil!.port}/webhooks/flags`, {
      method: 'POST',
      headers: { authorization: `Bearer ${world.env['VIGIL_FLAGS_WEBHOOK_TOKEN']}`, 'content-type': 'application/json' },
      body,
    });
    return { status: res.status, json: (await res.json()) as { ok: boolean; error?: string } };
  };

  it('answers a body that is not JSON with 400 and a log line giving its size, not its content', async () => {
    const res = await send('{"flag": "checkout-v2", oops');
    expect(res).toEqual({ status: 400, json: { ok: false, error: 'body is not JSON' } });
    const line = logs.lines.find((l) => l['msg'] === 'flags webhook refused');
    expect(line).toMatchObject({ status: 400, error: 'body is not JSON', body: { bytes: 28, shape: 'not JSON' } });
    expect(JSON.stringify(line)).not.toContain('checkout-v2');
  });
});

/** On each store: a lone surrogate and a NUL in a flag webhook body are accepted and recorded, cleaned. */
describe.each(testProviders)('flags webhook with unstorable characters on %s', (provider) => {
  let world: World;
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase(provider);
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, databaseUrl: db.url });
  }, 60_000);
  afterAll(async () => {
    await world?.close();
    await db?.drop();
  });

  it('accepts the delivery (202) and stores the change with U+FFFD in their place', async () => {
    // As JSON escapes: the body itself is valid UTF-8, the decoded strings are not storable text.
    const body = '{"flag":"checkout-v2","after":"on","actor":"al\\ud800ice","service":"check\\u0000out","id":"surrogate-1"}';
    const res = await fetch(`http://127.0.0.1:${world.vigil!.port}/webhooks/flags`, {
      method: 'POST',
      headers: { authorization: `Bearer ${world.env['VIGIL_FLAGS_WEBHOOK_TOKEN']}`, 'content-type': 'application/json' },
      body,
    });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ ok: true, accepted: 1 });
    const change = await world.vigil!.db.prisma.changeEvent.findUniqueOrThrow({ where: { dedupeKey: 'flags:surrogate-1' } });
    expect(change.actor).toBe('al\uFFFDice');
    expect(change.summary).toBe('flag checkout-v2: on by al\uFFFDice');
    const audit = await world.vigil!.db.prisma.auditEvent.findFirstOrThrow({ where: { kind: 'change.received' } });
    expect(audit.data).toContain('al\uFFFDice');
  });
});

describe('Slack Web API timeout', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, env: { SLACK_API_TIMEOUT_SECONDS: '1' } });
  });
  afterAll(async () => world?.close());

  it('abandons an answer later than the timeout and succeeds on the retry', async () => {
    world.slack.delayNext('conversations.info', { ms: 2500 });
    const started = Date.now();
    const res = await world.vigil!.app.client.conversations.info({ channel: ALERT_CHANNEL });
    const took = Date.now() - started;
    expect(res.ok).toBe(true);
    expect(world.slack.callsTo('conversations.info')).toHaveLength(2);
    expect(took).toBeGreaterThanOrEqual(950);
    expect(took).toBeLessThan(2400);
  });

  it('gives up after the retries of the configured policy when Slack never answers in time', async () => {
    const before = world.slack.callsTo('conversations.info').length;
    world.slack.delayNext('conversations.info', { ms: 5000, times: 3 });
    const started = Date.now();
    const err = await world.vigil!.app.client.conversations.info({ channel: ALERT_CHANNEL }).then(
      () => undefined,
      (e: unknown) => e as { code?: string; original?: Error },
    );
    const took = Date.now() - started;
    expect(err?.code).toBe('slack_webapi_request_error');
    expect(String(err?.original?.name)).toMatch(/TimeoutError|AbortError/);
    // The world's retry policy: 2 retries, so 3 attempts of 1 s each (plus short pauses), never 5 s.
    expect(world.slack.callsTo('conversations.info').length - before).toBe(3);
    expect(took).toBeGreaterThanOrEqual(2900);
    expect(took).toBeLessThan(4900);
  });
});

describe('debug logs of the Slack layer', () => {
  let world: World;
  const logs = capturingLogger('debug');
  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, logger: logs.logger });
  });
  afterAll(async () => world?.close());

  it('say how large each Web API request body was and which keys it had, never the cards or texts themselves', async () => {
    await world.postAlert();
    await world.settle();
    const sdk = logs.lines.filter((l) => l['component'] === 'bolt');
    const bodies = sdk.filter((l) => String(l['msg']).startsWith('http request body:'));
    expect(bodies.length).toBeGreaterThan(2);
    for (const l of bodies) {
      const summary = JSON.parse(String(l['msg']).slice('http request body: '.length)) as Record<string, unknown>;
      expect(Object.keys(summary).sort()).toEqual(['bytes', 'keys', 'shape']);
    }
    const posted = world.slack.callsTo('chat.postMessage').map((c) => JSON.stringify(c.body));
    expect(posted.length).toBeGreaterThan(0);
    // The cards Vigil posted (blocks) appear in no log line; no SDK line is longer than its cap.
    // (The blocks as sent: a JSON string, or the parsed array; `String()` of the array only said "[object Object]".)
    const blocksText = world.slack
      .callsTo('chat.postMessage')
      .map((c) => (typeof c.body['blocks'] === 'string' ? c.body['blocks'] : JSON.stringify(c.body['blocks'] ?? '')))
      .filter((b) => b.length > 200);
    expect(blocksText.length).toBeGreaterThan(0);
    for (const b of blocksText) expect(logs.raw.some((line) => line.includes(b.slice(0, 120)))).toBe(false);
    for (const l of sdk) expect(String(l['msg']).length).toBeLessThanOrEqual(600);
  });
});

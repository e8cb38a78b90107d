/**
 * Planted secrets never leave: the demo world carries a cloud access key in a log line, a password in a
 * database URL env var, a bearer token, a JWT and an email; responders paste more into the thread and into
 * `/sre investigate`. None of them may appear in any Slack call, log line or database row.
 *
 * The canary corpus (test/redact/canaries.ts, every shape the redactor knows) goes in through the same
 * real channels — the thread reply, `/sre investigate`, an alert post and a change announcement — and is
 * also checked in what the model was sent. Some canaries sit where the intake cuts or cleans the text (a
 * title cut at 200 characters, an announcement's `_…_` markup stripped), which only redacting first survives.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { createRedactor } from '../../src/redact/index.js';
import { anthropicToolResults, describeCheckout, submitFromDescribe } from '../agent/loop/harness.js';
import { canaries } from '../redact/canaries.js';
import { ALERT_CHANNEL, startWorld, type AnthropicReply, type ModelRequest, type World } from '../support/world.js';
import { DEMO_SCENARIO } from './helpers.js';

// Assembled at run time so the repository holds no literal token.
const PASTED_TOKEN = ['xoxb', '2938475610', '5647382910', 'AbCdEfGhIjKlMnOpQrStUvWx'].join('-');
const PASTED_PASSWORD = 'hunter2-Sup3rS3cret!';
const CHANGE_CHANNEL = 'C0DEPLOYS';
const CANARIES = canaries(4242);
/** One line per canary shape (its first real-text form), joined as a responder would paste a log excerpt. */
const CANARY_TEXT = CANARIES.map((c) => c.lines[0]!.replace(/\n/g, ' ')).join('\n');
const canary = (shape: string): string => CANARIES.find((c) => c.shape === shape)!.secret;
/** `text` padded with ordinary words so that `secret` starts `before` characters ahead of offset `at`. */
const straddling = (prefix: string, at: number, before: number, secret: string): string => `${prefix}${' checkout'.repeat(Math.ceil(at / 9)).slice(0, Math.max(0, at - before - prefix.length - 1))} ${secret}`;

/** Every 12-character window of a long secret (a token cut in half still leaks its half), or the secret itself. */
function fragments(secret: string): string[] {
  if (/\s/.test(secret) || secret.length < 20) return [secret];
  const out: string[] = [];
  for (let i = 0; i + 12 <= secret.length; i += 6) out.push(secret.slice(i, i + 12));
  return out;
}

describe('planted secrets never reach Slack, logs or the database', () => {
  let world: World;
  const logLines: string[] = [];

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _enc, done) {
        logLines.push(String(chunk));
        done();
      },
    });
    // Investigations run side by side, so a step answers whichever request comes: a request carrying the
    // describe result submits from it, any other describes (a fixed describe/submit order would misfire).
    const described = (req: ModelRequest): boolean => {
      try {
        return Boolean(anthropicToolResults(req.body)[0]?.json?.cite);
      } catch {
        return false;
      }
    };
    const step = (req: ModelRequest): AnthropicReply => (described(req) ? submitFromDescribe(req) : describeCheckout());
    const model = { script: Array.from({ length: 12 }, () => step), name: 'secrets e2e' };
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, logger: createLogger('trace', createRedactor(), sink), model, env: { VIGIL_CHANGE_CHANNELS: CHANGE_CHANNEL } });
    // A change announcement whose secrets sit in `_…_` markup (stripped by parsing) and where the summary
    // (80 characters) and `after` (120) are cut.
    const flagWhat = straddling('', 76, 4, `_${canary('github_pat_classic')}_`) + straddling(' ', 40, 0, `*${canary('stripe_secret_live')}*`) + ` ${CANARY_TEXT.replace(/\n/g, ' ; ')}`;
    await world.slack.postAsBot(CHANGE_CHANNEL, { username: 'flagbot', text: `alice changed the flag pricing.v2 in production: ${flagWhat}` } as never);
    const { ts } = await world.postAlert();
    await world.settle();
    await world.slack.postAsUser(ALERT_CHANNEL, { user: 'U0BOB', text: `the token was ${PASTED_TOKEN} and db is postgres://app:${PASTED_PASSWORD}@db:5432/shop\n${CANARY_TEXT}`, thread_ts: ts });
    // The manual alert's name is cut at 200 characters and its title at 1024: a token straddles each cut.
    const investigate = straddling('investigate storefront 5xx, jane.doe@example.com reported it, key ' + world.scenario.plantedSecrets[4], 200, 10, ` _${canary('gitlab_pat')}_ `);
    const longer = straddling(investigate, 1024, 12, ` ${canary('vault_service_token')} `);
    await world.slack.sendCommand({ command: '/sre', text: `${longer}\n${CANARY_TEXT}`, user_id: 'U0BOB', channel_id: ALERT_CHANNEL, trigger_id: 't-secrets' });
    // An alert post from an integration: its headline is cut to 200 for the alert name, 1024 for the title.
    const headline = straddling(':rotating_light: ALERT: storefront errors firing', 200, 8, ` _${canary('slack_bot_token')}_`);
    await world.slack.postAsBot(ALERT_CHANNEL, { username: 'uptime-bot', text: `${straddling(headline, 1024, 10, ` ${canary('anthropic_key')}`)}\n${CANARY_TEXT}` } as never);
    await world.settle();
  }, 180_000); // Four channels, three investigations with a model step: more than the default hook timeout on a busy machine.
  afterAll(async () => world?.close());

  const secrets = () => [...world.scenario.plantedSecrets, PASTED_TOKEN, PASTED_PASSWORD];
  /** Canary shapes with a fragment found in `sink` (empty when none leaked). */
  const leakedCanaries = (sink: string): string[] => CANARIES.filter((c) => fragments(c.secret).some((f) => sink.includes(f))).map((c) => c.shape);

  it('the scenario really plants them (the test is not vacuous)', () => {
    expect(world.scenario.plantedSecrets.length).toBeGreaterThanOrEqual(5);
    const serialisedWorld = JSON.stringify({ objects: world.scenario.objects, logs: world.scenario.logs });
    for (const s of world.scenario.plantedSecrets) expect(serialisedWorld).toContain(s);
  });

  it('no Slack call carries one', () => {
    const outbound = JSON.stringify(world.slack.calls.map((c) => c.body)) + JSON.stringify(world.slack.responses.map((r) => r.body));
    expect(world.slack.calls.length).toBeGreaterThan(3);
    for (const s of secrets()) expect(outbound, `secret ${s.slice(0, 6)}… in Slack`).not.toContain(s);
    expect(leakedCanaries(outbound), 'canary shapes in Slack').toEqual([]);
  });

  it('the canaries really went in through every channel, and came out as placeholders (the test is not vacuous)', async () => {
    expect(CANARIES.length).toBeGreaterThanOrEqual(60);
    const db = world.vigil!.db.prisma;
    const kinds = (t: string) => new Set([...t.matchAll(/\[REDACTED:([a-z0-9_]+):[0-9a-f]{8}\]/g)].map((m) => m[1]));
    // The thread reply: stored with a placeholder for each kind it carried.
    expect(kinds((await db.steeringMessage.findFirstOrThrow()).text).size).toBeGreaterThanOrEqual(20);
    // The announcement became a change; the token in `_…_` across the cut is a placeholder, not `ghp…`.
    const change = await db.changeEvent.findFirstOrThrow({ where: { source: 'slack' } });
    expect(`${change.summary} ${change.after}`).toContain('[REDACTED:github_token:');
    // The alert post and the command each opened an incident beside the demo's; the tokens across the cuts are placeholders.
    const titles = (await db.alert.findMany()).map((a) => a.title).join('\n');
    expect(titles).toContain('[REDACTED:slack_token:');
    expect(titles).toContain('[REDACTED:gitlab_token:');
    expect(await db.incident.count()).toBeGreaterThanOrEqual(3);
    expect(world.model!.requests.length).toBeGreaterThan(0);
  });

  it('no model request carries one', () => {
    const sent = world.model!.requests.map((r) => r.raw).join('\n');
    expect(sent.length).toBeGreaterThan(0);
    for (const s of secrets()) expect(sent, `secret ${s.slice(0, 6)}… sent to the model`).not.toContain(s);
    expect(leakedCanaries(sent), 'canary shapes sent to the model').toEqual([]);
  });

  it('no log line carries one', () => {
    expect(logLines.length).toBeGreaterThan(0);
    const logs = logLines.join('');
    for (const s of secrets()) expect(logs, `secret ${s.slice(0, 6)}… in logs`).not.toContain(s);
    expect(leakedCanaries(logs), 'canary shapes in logs').toEqual([]);
  });

  it('no database row carries one', async () => {
    const db = world.vigil!.db.prisma;
    const dump = JSON.stringify(
      await Promise.all([
        db.incident.findMany(),
        db.alert.findMany(),
        db.investigation.findMany(),
        db.hypothesis.findMany(),
        db.evidence.findMany(),
        db.steeringMessage.findMany(),
        db.slackPost.findMany(),
        db.auditEvent.findMany(),
        db.changeEvent.findMany(),
      ]),
    );
    expect(await db.steeringMessage.count()).toBe(1);
    for (const s of secrets()) expect(dump, `secret ${s.slice(0, 6)}… in the DB`).not.toContain(s);
    expect(leakedCanaries(dump), 'canary shapes in the DB').toEqual([]);
    // The redacted steering still reads: the placeholder says what was there.
    expect((await db.steeringMessage.findFirstOrThrow()).text).toMatch(/\[REDACTED:[a-z_]+:[0-9a-f]{8}\]/);
  });
});

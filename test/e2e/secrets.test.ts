/**
 * Planted secrets never leave: the demo world carries a cloud access key in a log line, a password in a
 * database URL env var, a bearer token, a JWT and an email; responders paste more into the thread and into
 * `/sre investigate`. None of them may appear in any Slack call, log line or database row.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { createRedactor } from '../../src/redact/index.js';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';
import { DEMO_SCENARIO } from './helpers.js';

// Assembled at run time so the repository holds no literal token.
const PASTED_TOKEN = ['xoxb', '2938475610', '5647382910', 'AbCdEfGhIjKlMnOpQrStUvWx'].join('-');
const PASTED_PASSWORD = 'hunter2-Sup3rS3cret!';

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
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, logger: createLogger('trace', createRedactor(), sink) });
    const { ts } = await world.postAlert();
    await world.settle();
    await world.slack.postAsUser(ALERT_CHANNEL, { user: 'U0BOB', text: `the token was ${PASTED_TOKEN} and db is postgres://app:${PASTED_PASSWORD}@db:5432/shop`, thread_ts: ts });
    await world.slack.sendCommand({ command: '/sre', text: `investigate storefront 5xx, jane.doe@example.com reported it, key ${world.scenario.plantedSecrets[4]}`, user_id: 'U0BOB', channel_id: ALERT_CHANNEL, trigger_id: 't-secrets' });
    await world.settle();
  });
  afterAll(async () => world?.close());

  const secrets = () => [...world.scenario.plantedSecrets, PASTED_TOKEN, PASTED_PASSWORD];

  it('the scenario really plants them (the test is not vacuous)', () => {
    expect(world.scenario.plantedSecrets.length).toBeGreaterThanOrEqual(5);
    const serialisedWorld = JSON.stringify({ objects: world.scenario.objects, logs: world.scenario.logs });
    for (const s of world.scenario.plantedSecrets) expect(serialisedWorld).toContain(s);
  });

  it('no Slack call carries one', () => {
    const outbound = JSON.stringify(world.slack.calls.map((c) => c.body)) + JSON.stringify(world.slack.responses.map((r) => r.body));
    expect(world.slack.calls.length).toBeGreaterThan(3);
    for (const s of secrets()) expect(outbound, `secret ${s.slice(0, 6)}… in Slack`).not.toContain(s);
  });

  it('no log line carries one', () => {
    expect(logLines.length).toBeGreaterThan(0);
    const logs = logLines.join('');
    for (const s of secrets()) expect(logs, `secret ${s.slice(0, 6)}… in logs`).not.toContain(s);
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
      ]),
    );
    expect(await db.steeringMessage.count()).toBe(1);
    for (const s of secrets()) expect(dump, `secret ${s.slice(0, 6)}… in the DB`).not.toContain(s);
    // The redacted steering still reads: the placeholder says what was there.
    expect((await db.steeringMessage.findFirstOrThrow()).text).toMatch(/\[REDACTED:[a-z_]+:[0-9a-f]{8}\]/);
  });
});

/**
 * An alert that fires again after it resolved — as a new post, or as Alertmanager's edit of the same post
 * (`edit_messages`) — reopens its incident and is investigated again; `/sre investigate` on an incident
 * whose investigation finished runs it again and says so.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { eventEnvelope, INTEGRATION_BOT_ID } from '../fakes/slack/index.js';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';
import { DEMO_SCENARIO } from './helpers.js';

describe('an alert that fires again', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO });
  });
  afterAll(async () => world?.close());
  beforeEach(async () => {
    await world.settle();
    const db = world.vigil!.db.prisma;
    await db.incident.deleteMany();
    await db.processedDelivery.deleteMany();
    await db.auditEvent.deleteMany();
  });

  const db = () => world.vigil!.db.prisma;
  const firing = () => world.scenario.alert.attachments![0] as Record<string, string>;
  const resolved = () => {
    const title = firing()['title']!.replace(/\[FIRING:\d+\]/, '[RESOLVED]');
    return { ...firing(), title, fallback: title, color: 'good' };
  };
  /** How many times triage ran for the incident (one audit event per deterministic triage). */
  const triageRuns = (incidentId: string) => db().auditEvent.count({ where: { incidentId, kind: 'triage.completed' } });
  const onlyIncident = async () => {
    expect(await db().incident.count()).toBe(1);
    return db().incident.findFirstOrThrow();
  };

  /** The message_changed event Slack sends when the integration edits its post `ts` (edited.ts set by Slack). */
  const editEvent = (ts: string, attachment: Record<string, string>, editedTs: string | undefined) =>
    eventEnvelope({
      type: 'message',
      subtype: 'message_changed',
      hidden: true,
      channel: ALERT_CHANNEL,
      ts: editedTs ?? `${Number(ts) + 1}`,
      event_ts: editedTs ?? `${Number(ts) + 1}`,
      channel_type: 'channel',
      message: {
        type: 'message',
        subtype: 'bot_message',
        bot_id: INTEGRATION_BOT_ID,
        username: 'Alertmanager',
        text: '',
        attachments: [attachment],
        ts,
        ...(editedTs ? { edited: { user: INTEGRATION_BOT_ID, ts: editedTs } } : {}),
      },
      previous_message: { type: 'message', subtype: 'bot_message', bot_id: INTEGRATION_BOT_ID, text: '', ts },
    });

  it('a new FIRING post after the RESOLVED one reopens the incident and runs triage again', async () => {
    await world.postAlert();
    await world.settle();
    const incident = await onlyIncident();
    expect(await triageRuns(incident.id)).toBe(1);

    await world.slack.postAsBot(ALERT_CHANNEL, { username: 'Alertmanager', attachments: [resolved()] });
    await world.settle();
    expect((await onlyIncident()).status).toBe('resolved');

    await world.slack.postAsBot(ALERT_CHANNEL, { username: 'Alertmanager', attachments: [firing()] });
    await world.settle();
    expect((await onlyIncident()).status).toBe('open');
    expect(await triageRuns(incident.id)).toBe(2);
    const inv = await db().investigation.findFirstOrThrow({ where: { incidentId: incident.id } });
    expect(inv.state).toBe('waiting');
  });

  it('an alert post edited from RESOLVED back to FIRING reopens and re-investigates; a retried or unfurl event does nothing', async () => {
    const { ts } = await world.postAlert();
    await world.settle();
    const incident = await onlyIncident();

    await world.slack.sendEvent(editEvent(ts, resolved(), `${Number(ts) + 60}`));
    await world.settle();
    expect((await onlyIncident()).status).toBe('resolved');

    const refire = editEvent(ts, firing(), `${Number(ts) + 120}`);
    await world.slack.sendEvent(refire);
    await world.settle();
    expect((await onlyIncident()).status).toBe('open');
    expect(await triageRuns(incident.id)).toBe(2);
    const alerts = await db().alert.count({ where: { incidentId: incident.id } });
    expect(alerts).toBe(3);

    // Slack retrying the same edit event, and a change without `edited` (a link unfurl), are no new deliveries.
    await world.slack.sendEvent(refire, { retryNum: 1, retryReason: 'http_timeout' });
    await world.slack.sendEvent(editEvent(ts, firing(), undefined));
    await world.settle();
    expect(await db().alert.count({ where: { incidentId: incident.id } })).toBe(alerts);
    expect(await triageRuns(incident.id)).toBe(2);
  });

  it('/sre investigate <alert link> on an open incident whose investigation finished runs it again, and says so', async () => {
    const { ts } = await world.postAlert();
    await world.settle();
    const incident = await onlyIncident();
    expect(await triageRuns(incident.id)).toBe(1);

    const before = world.slack.responses.length;
    const link = `https://fake.slack.com/archives/${ALERT_CHANNEL}/p${ts.replace('.', '')}`;
    await world.slack.sendCommand({ command: '/sre', text: `investigate ${link}`, user_id: 'U0BOB', user_name: 'bob', channel_id: ALERT_CHANNEL, trigger_id: `trig-${ts}` });
    await world.slack.waitFor(() => (world.slack.responses.length > before ? true : undefined), { timeoutMs: 10_000 });
    const reply = JSON.stringify(world.slack.responses.at(-1)!.body);
    expect(reply).toMatch(/matches an open incident; Vigil is investigating it again/);
    expect(reply).not.toMatch(/already under investigation/);
    await world.settle();
    expect(await triageRuns(incident.id)).toBe(2);
    expect(await db().incident.count()).toBe(1);
  });
});

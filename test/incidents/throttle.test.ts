/**
 * The automatic-investigation throttle (src/incidents/throttle.ts): one automatic investigation per alert rule
 * and service per hour by default. A second alert of the rule for the same service still gets its thread, but
 * no investigation: the thread says why and links to the one that runs, and the log says so too. A re-fire of
 * the same alert reopens and re-investigates its incident, counted against the rule; a responder's reply
 * starts a skipped one anyway.
 * Through the real app on the fake Slack, on SQLite and PostgreSQL (VIGIL_TEST_DATABASE_URL).
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { firedAt, throttleKey } from '../../src/incidents/throttle.js';
import { parseAlertMessage } from '../../src/alerts/parse/index.js';
import { DEMO_SCENARIO, threadText } from '../e2e/helpers.js';
import { createTestDatabase, testProviders, type TestDatabase } from '../store/test-databases.js';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';

let world: World | undefined;
let database: TestDatabase | undefined;
afterEach(async () => {
  await world?.close();
  await database?.drop();
  world = database = undefined;
});

/** Two containers of one checkout pod crash-looping: two fingerprints (the group values differ), one rule and service. */
const crashLoop = (container: string, status: 'FIRING' | 'RESOLVED' = 'FIRING') => ({
  username: 'Alertmanager',
  attachments: [
    {
      title: `[${status}:1] KubePodCrashLooping shop ${container}`,
      text: `*Description:* container ${container} of checkout keeps restarting\n*Labels:* alertname=KubePodCrashLooping namespace=shop pod=checkout-7d9f8b6c5-x2x9z container=${container} severity=warning`,
      color: status === 'FIRING' ? 'danger' : 'good',
    },
  ],
});

function logLines(): { lines: () => Record<string, unknown>[]; stream: Writable } {
  const out: string[] = [];
  return {
    lines: () => out.flatMap((l) => l.split('\n').filter(Boolean)).map((l) => JSON.parse(l) as Record<string, unknown>),
    stream: new Writable({ write: (c, _e, d) => (out.push(String(c)), d()) }),
  };
}

describe('the throttle key', () => {
  it('is the rule and the service the labels name, whatever the container', () => {
    const key = (container: string) => {
      const p = parseAlertMessage(crashLoop(container) as never, { receivedAt: new Date() });
      if (p.kind !== 'alert') throw new Error(p.reason);
      return throttleKey(p.alert);
    };
    expect(key('app')).toBe('kubepodcrashlooping|shop/checkout');
    expect(key('istio-proxy')).toBe(key('app'));
  });

  it('on a kube-state-metrics alert is the object it is about, not the exporter that reported it', () => {
    const ksm = { job: 'kube-state-metrics', service: 'kube-prometheus-stack-kube-state-metrics', pod: 'kube-prometheus-stack-kube-state-metrics-79d8c5f6b4-tn6qz', container: 'kube-state-metrics', namespace: 'data-platform' };
    const alert = (labels: Record<string, string>) => ({ source: 'alertmanager', status: 'firing', title: 't', alertName: labels['alertname']!, labels, labelValues: [], annotations: {}, count: 1, text: '' }) as never;
    // A Job run is its CronJob's; two runs of one CronJob are one key, another CronJob another.
    expect(throttleKey(alert({ ...ksm, alertname: 'KubeJobFailed', job_name: 'nightly-export-29176620' }))).toBe('kubejobfailed|data-platform/nightly-export');
    expect(throttleKey(alert({ ...ksm, alertname: 'KubeJobFailed', job_name: 'nightly-export-29175180' }))).toBe('kubejobfailed|data-platform/nightly-export');
    expect(throttleKey(alert({ ...ksm, alertname: 'KubeJobFailed', job_name: 'invoice-sync-29176620' }))).toBe('kubejobfailed|data-platform/invoice-sync');
    expect(throttleKey(alert({ ...ksm, alertname: 'KubeDeploymentReplicasMismatch', deployment: 'checkout' }))).toBe('kubedeploymentreplicasmismatch|data-platform/checkout');
  });

  it('is judged at the time the alert fired, not when it was delivered', () => {
    const now = new Date('2026-12-03T10:00:00Z');
    const a = { startsAt: new Date('2026-12-02T10:00:00Z') } as never;
    expect(firedAt(a, '1764669600.000100', now).toISOString()).toBe('2025-12-02T10:00:00.000Z');
    expect(firedAt(a, undefined, now).toISOString()).toBe('2026-12-02T10:00:00.000Z');
    // A clock ahead of ours is not trusted: never later than now.
    expect(firedAt({} as never, String(now.getTime() / 1000 + 600), now)).toEqual(now);
  });
});

describe.each(testProviders)('automatic investigations are throttled per rule and service (%s)', (provider) => {
  it('a second alert of the rule gets its thread and a link to the running investigation, not a second run', async () => {
    database = await createTestDatabase(provider);
    const logs = logLines();
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, databaseUrl: database.url, logger: pino({ level: 'info' }, logs.stream) });
    const db = world.vigil!.db.prisma;

    const first = await world.slack.postAsBot(ALERT_CHANNEL, crashLoop('app'));
    await world.settle();
    const second = await world.slack.postAsBot(ALERT_CHANNEL, crashLoop('istio-proxy'));
    await world.settle();

    const incidents = await db.incident.findMany({ orderBy: { openedAt: 'asc' }, include: { investigations: true } });
    expect(incidents).toHaveLength(2);
    const [a, b] = incidents as [(typeof incidents)[number], (typeof incidents)[number]];
    expect(a.investigations[0]).toMatchObject({ state: 'waiting', step: 'reported' });
    // Skipped, never queued: no claim, no triage.
    expect(b.investigations[0]).toMatchObject({ state: 'skipped', step: 'created', attempts: 0 });
    expect(await db.auditEvent.count({ where: { kind: 'triage.completed' } })).toBe(1);
    expect(await db.autoInvestigation.count()).toBe(1);
    const audit = await db.auditEvent.findFirstOrThrow({ where: { kind: 'investigation.throttled' } });
    expect(audit.incidentId).toBe(b.id);
    expect(JSON.parse(audit.data)).toMatchObject({ key: 'kubepodcrashlooping|shop/checkout', by: a.id, limit: 1, windowMs: 3_600_000 });

    // Its thread: the card says it was not investigated and why; a note links to the first incident's thread.
    const thread = threadText(world.slack, second.message.ts).join('\n');
    expect(thread).toContain('Not investigated automatically: kubepodcrashlooping on shop/checkout already had its automatic investigation in the last hour');
    expect(thread).toContain('Needs a human');
    expect(thread).toContain('Not investigated separately');
    expect(thread).toContain(`https://fake.slack.test/archives/${ALERT_CHANNEL}/p${first.message.ts.replace('.', '')}`);
    // And the log line that says the same.
    expect(logs.lines().find((l) => l['msg'] === 'automatic investigation throttled; linked to the one that covers this rule and service')).toMatchObject({ incidentId: b.id, by: a.id, throttle: 'kubepodcrashlooping|shop/checkout' });

    // A responder's reply in the skipped thread starts it: a person is never throttled.
    await world.slack.postAsUser(ALERT_CHANNEL, { user: 'U0BOB', text: 'please look at this one too', thread_ts: second.message.ts });
    await world.settle();
    const ran = await db.investigation.findFirstOrThrow({ where: { incidentId: b.id } });
    expect(ran).toMatchObject({ state: 'waiting', step: 'reported' });
    expect(JSON.parse(ran.context)).not.toHaveProperty('throttled');
    expect(await db.auditEvent.count({ where: { kind: 'triage.completed' } })).toBe(2);
  });

  it('a re-fire reopens and re-investigates its own incident, and counts against the rule’s other alerts', async () => {
    database = await createTestDatabase(provider);
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, databaseUrl: database.url });
    const db = world.vigil!.db.prisma;

    await world.slack.postAsBot(ALERT_CHANNEL, crashLoop('app'));
    await world.settle();
    await world.slack.postAsBot(ALERT_CHANNEL, crashLoop('app', 'RESOLVED'));
    await world.settle();
    await world.slack.postAsBot(ALERT_CHANNEL, crashLoop('app'));
    await world.settle();
    const incident = await db.incident.findFirstOrThrow();
    expect(incident.status).toBe('open');
    expect(await db.auditEvent.count({ where: { kind: 'triage.completed' } })).toBe(2);
    expect(await db.autoInvestigation.count({ where: { incidentId: incident.id } })).toBe(2);

    await world.slack.postAsBot(ALERT_CHANNEL, crashLoop('istio-proxy'));
    await world.settle();
    expect(await db.auditEvent.count({ where: { kind: 'triage.completed' } })).toBe(2);
    expect(await db.investigation.count({ where: { state: 'skipped' } })).toBe(1);
  });

  it('an alert a day old delivered with the live one (a replayed backlog) does not throttle it', async () => {
    database = await createTestDatabase(provider);
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, databaseUrl: database.url });
    const db = world.vigil!.db.prisma;
    const dayAgo = `${Math.floor(Date.now() / 1000) - 86_400}.000100`;
    await world.slack.postAsBot(ALERT_CHANNEL, { ...crashLoop('app'), ts: dayAgo } as never);
    await world.settle();
    await world.slack.postAsBot(ALERT_CHANNEL, crashLoop('istio-proxy'));
    await world.settle();
    const states = (await db.investigation.findMany({ orderBy: { startedAt: 'asc' } })).map((i) => i.state);
    expect(states).toEqual(['waiting', 'waiting']);
    expect(await db.auditEvent.count({ where: { kind: 'investigation.throttled' } })).toBe(0);
  });

  it('a higher limit lets that many run', async () => {
    database = await createTestDatabase(provider);
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, databaseUrl: database.url, env: { VIGIL_AUTO_INVESTIGATIONS_PER_RULE: '2', VIGIL_AUTO_INVESTIGATION_WINDOW_MINUTES: '30' } });
    for (const c of ['app', 'istio-proxy', 'log-shipper']) await world.slack.postAsBot(ALERT_CHANNEL, crashLoop(c));
    await world.settle();
    const db = world.vigil!.db.prisma;
    expect(await db.investigation.count({ where: { state: 'waiting' } })).toBe(2);
    const skipped = await db.investigation.findFirstOrThrow({ where: { state: 'skipped' } });
    expect(JSON.parse(skipped.context).notice).toContain('already had 2 automatic investigations in the last 30 minutes');
  });
});

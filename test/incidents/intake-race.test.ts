/**
 * One alert delivered twice at the same moment through two routes (the Alertmanager webhook on one
 * replica and the Slack post on another) opens one incident, not two: the open-or-repeat decision is
 * taken under a per-fingerprint lock. On PostgreSQL two separate connection pools play the two replicas
 * (when VIGIL_TEST_DATABASE_URL is set, always in CI); SQLite is the single-process store, so there the
 * deliveries race inside one process (a second connection in the same process would block the event
 * loop in SQLite's busy wait, which a real second process does not).
 */
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { Alert } from '../../src/alerts/types.js';
import { IncidentService } from '../../src/incidents/service.js';
import { createRedactor } from '../../src/redact/index.js';
import { openDatabase, type Database } from '../../src/store/db.js';
import { applyMigrations } from '../../src/store/migrate.js';
import { createTestDatabase, testProviders, type TestDatabase } from '../store/test-databases.js';

const alert: Alert = {
  source: 'alertmanager',
  status: 'firing',
  title: '[FIRING:1] CheckoutErrorBudgetBurn (shop critical)',
  alertName: 'CheckoutErrorBudgetBurn',
  labels: { alertname: 'CheckoutErrorBudgetBurn', namespace: 'shop', service: 'checkout', severity: 'critical' },
  labelValues: [],
  annotations: {},
  count: 1,
  text: 'checkout burns its error budget',
};

let target: TestDatabase | undefined;
const open: Database[] = [];
afterEach(async () => {
  for (const db of open.splice(0)) await db.close();
  await target?.drop();
  target = undefined;
});

describe.each(testProviders)('simultaneous deliveries of one alert (%s)', (provider) => {
  it('open one incident; every other delivery is a repeat of it', async () => {
    target = await createTestDatabase(provider);
    const first = await openDatabase(target.url);
    open.push(first);
    await applyMigrations(first);
    const second = provider === 'postgresql' ? await openDatabase(target.url) : first;
    if (second !== first) open.push(second);
    const log = pino({ level: 'silent' });
    const settings = { dedupWindowMs: 3_600_000, reopenWindowMs: 600_000 };
    const replicas = [first, second].map((db) => new IncidentService(db.prisma, settings, { now: () => new Date() }, createRedactor(), log));

    // Twelve deliveries in flight at once, alternating replicas: the webhook's and Slack's, and their retries.
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        replicas[i % 2]!.receiveAlert({ alert, channelId: 'C0ALERTS', deliveryKey: i % 2 ? `slack:C0ALERTS:1700.${i}:firing` : `alertmanager:group-${i}:firing`, ...(i % 2 ? { messageTs: `1700.${i}` } : {}) }),
      ),
    );
    const kinds = results.map((r) => r.kind).sort();
    expect(kinds.filter((k) => k === 'opened')).toHaveLength(1);
    expect(kinds.filter((k) => k === 'repeat')).toHaveLength(11);
    expect(await first.prisma.incident.count()).toBe(1);
    expect(await first.prisma.investigation.count()).toBe(1);
    expect(await first.prisma.alert.count()).toBe(12);
  });
});

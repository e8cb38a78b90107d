/**
 * A CronJob whose runs outlast their schedule (concurrencyPolicy Allow) piles up Jobs on a store the
 * alert's path depends on: job-failed on the CronJob, the store and its other clients in scope, and the
 * reconcile keeps the store's own degradation as a consequence of it.
 */
import { describe, expect, it } from 'vitest';
import type { ClusterTriageInput } from '../../../src/triage/analyzer.js';
import { cronjobPileup } from '../../../src/triage/cluster/cronjob-pileup.js';
import { reconcileFindings } from '../../../src/triage/reconcile.js';
import { buildTopology } from '../../../src/topology/graph.js';
import { emptySnapshot } from '../../../src/topology/snapshot.js';
import { walkFrom } from '../../../src/topology/walk.js';
import type { Finding } from '../../../src/triage/types.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const ago = (min: number) => new Date(ONSET.getTime() - min * 60_000);
const DB_ENV = [{ name: 'DATABASE_URL', value: 'postgresql://ledger-db.ledger.svc.cluster.local:5432/ledger' }];

function world(policy: string, running: number): ClusterTriageInput {
  const s = emptySnapshot();
  s.deployments = [{ metadata: { name: 'ledger-api', namespace: 'ledger' }, spec: { selector: { matchLabels: { app: 'ledger-api' } }, template: { metadata: { labels: { app: 'ledger-api' } }, spec: { containers: [{ name: 'api', env: DB_ENV }] } } } }] as never;
  s.statefulSets = [{ metadata: { name: 'ledger-db', namespace: 'ledger' }, spec: { selector: { matchLabels: { app: 'ledger-db' } }, template: { metadata: { labels: { app: 'ledger-db' } }, spec: { containers: [{ name: 'postgres' }] } } } }] as never;
  s.services = [
    { metadata: { name: 'ledger-api', namespace: 'ledger' }, spec: { selector: { app: 'ledger-api' } } },
    { metadata: { name: 'ledger-db', namespace: 'ledger' }, spec: { selector: { app: 'ledger-db' } } },
  ] as never;
  const jobs = Array.from({ length: running }, (_, i) => ({ metadata: { name: `reconcile-${i}`, namespace: 'ledger', ownerReferences: [{ kind: 'CronJob', name: 'reconcile', controller: true }] }, status: { active: 1, startTime: ago(15 - 5 * i) } }));
  s.jobs = jobs as never;
  s.cronJobs = [{ metadata: { name: 'reconcile', namespace: 'ledger' }, spec: { schedule: '*/5 * * * *', concurrencyPolicy: policy, jobTemplate: { spec: { template: { spec: { containers: [{ name: 'reconcile', env: DB_ENV }] } } } } }, status: { active: jobs.map((j) => ({ name: j.metadata.name })), lastSuccessfulTime: ago(5) } }] as never;
  const topology = buildTopology(s);
  const subjects = [{ ref: { kind: 'Service', namespace: 'ledger', name: 'ledger-api' }, how: 'label service=ledger-api' }];
  return { alert: { labels: {}, labelValues: [] } as never, onset: ONSET, cluster: { snapshot: s, topology, walk: walkFrom(subjects, topology), subjects }, inputs: [], changes: [], metrics: [], jobs: [] };
}

describe('cronjob-pileup', () => {
  it('blames the CronJob whose overlapping runs all use the store the alerted service needs', () => {
    const [f] = cronjobPileup.analyze(world('Allow', 3));
    expect(f).toMatchObject({
      family: 'job-failed',
      component: { kind: 'CronJob', namespace: 'ledger', name: 'reconcile' },
      facts: { job: 'reconcile-0', activeJobs: 3, concurrencyPolicy: 'Allow', overloads: 'ledger-db', lastSuccessfulTime: ago(5).toISOString() },
      mitigation: { action: 'suspend_cronjob', params: { name: 'reconcile', suspend: true } },
    });
    expect(f!.affected).toEqual(expect.arrayContaining([{ kind: 'Deployment', namespace: 'ledger', name: 'ledger-api' }, { kind: 'Service', namespace: 'ledger', name: 'ledger-db' }]));
  });

  it('says nothing with one run at a time, or with concurrencyPolicy Forbid', () => {
    expect(cronjobPileup.analyze(world('Allow', 1))).toEqual([]);
    expect(cronjobPileup.analyze(world('Forbid', 3))).toEqual([]);
  });

  it('keeps the pile-up the origin and the store it exhausts its consequence', () => {
    const input = world('Allow', 3);
    const [pileup] = cronjobPileup.analyze(input);
    const db: Finding = { key: 'database-degraded:ledger/StatefulSet/ledger-db', analyzer: 'database-degraded', family: 'database-degraded', status: 'supported', confidence: 0.92, title: 'ledger-db refuses new connections', component: { kind: 'StatefulSet', namespace: 'ledger', name: 'ledger-db' }, mechanism: 'm', facts: { metric: 'connections', since: ago(4).toISOString() }, supporting: [{ kind: 'note', summary: 's', citation: { source: 'x', ref: 'y' } }], refuting: [] };
    const out = reconcileFindings([pileup!, db], { topology: input.cluster.topology, walk: input.cluster.walk, subjects: input.cluster.subjects, onset: ONSET, inputs: [] });
    expect(out.find((f) => f.key === pileup!.key)).toMatchObject({ status: 'supported', role: 'origin' });
    expect(out.find((f) => f.key === db.key)!.status).toBe('ruled_out');
  });
});

/**
 * A data store whose own exporter says it is slow, with nothing in its log (a Redis fsync stall logs
 * nothing): database-degraded reads the `store_*` series; a cache that only evicts is not "degraded"
 * for its callers, and a series that left its baseline long before the onset is background.
 */
import { describe, expect, it } from 'vitest';
import type { KubeEvidence } from '../../src/evidence/kubernetes/gather.js';
import { emptySurroundings } from '../../src/evidence/kubernetes/surroundings.js';
import type { MetricSummary } from '../../src/evidence/prometheus/types.js';
import type { TriageInput } from '../../src/triage/analyzer.js';
import { databaseDegraded } from '../../src/triage/analyzers/database-degraded.js';
import { errorPhrase } from '../../src/triage/cluster/external-dependency.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const at = (min: number) => new Date(ONSET.getTime() + min * 60_000);

const kube: KubeEvidence = {
  ...emptySurroundings(),
  onset: ONSET,
  target: { kind: 'StatefulSet', namespace: 'cache', name: 'sessions-redis' },
  workload: { kind: 'StatefulSet', metadata: { name: 'sessions-redis' }, spec: { template: { spec: { containers: [{ name: 'redis', image: 'redis:7.2' }] } } } } as never,
  replicaSets: [],
  pods: [],
  services: [{ service: { metadata: { name: 'sessions-redis' } } }],
  events: [],
  related: [],
  dependents: [],
  unhealthyPods: [],
  warningEvents: [],
  gaps: [],
  server: 'https://k8s.test',
  containerLogs: [],
};

function series(id: string, startMin: number, before: number, after: number, unit = 'seconds'): MetricSummary {
  return {
    id,
    title: id,
    unit,
    badWhen: 'high',
    query: `q-${id}`,
    range: { from: at(-60), to: ONSET },
    stepSeconds: 15,
    status: 'success',
    series: [{ metric: {}, points: 240, nonFinite: 0, from: at(-60), to: ONSET, first: before, last: after, min: before, max: after, mean: after / 2, baseline: { median: before, mad: before / 10 }, changePoints: [{ at: at(startMin), before, after }], deviationStart: at(startMin), deviationDirection: 'up' }],
    citation: { source: 'prometheus', ref: `q-${id}` },
  };
}

const input = (summaries: MetricSummary[]): TriageInput => ({ alert: { labels: {}, labelValues: [] } as never, onset: ONSET, kube, changes: [], metrics: { summaries } });

describe('database-degraded from the store\'s own exporter', () => {
  it('blames the store whose server-side latency left its baseline at the onset, its log quiet', () => {
    const [f] = databaseDegraded.analyze(input([series('store_latency', -16, 0.000045, 0.061)]));
    expect(f).toMatchObject({ status: 'supported', component: { kind: 'StatefulSet', namespace: 'cache', name: 'sessions-redis' }, facts: { database: 'sessions-redis', metric: 'latency_p99', dependency: 'sessions-redis' } });
    // Both vocabularies date the start the same: the store's latency left its baseline 16 minutes before the onset.
    expect(f!.facts!['dependencyStart']).toBe(at(-16).toISOString());
    expect(f!.facts!['since']).toBe(f!.facts!['dependencyStart']);
    expect(f!.supporting[0]!.citation.ref).toBe('q-store_latency');
  });

  it('prefers the exporter\'s replication lag over a stray slow-query line, and names the Job holding the replica', () => {
    const replica: KubeEvidence = {
      ...kube,
      target: { kind: 'StatefulSet', namespace: 'db', name: 'pg-replica' },
      workload: { metadata: { name: 'pg-replica' }, spec: { template: { spec: { containers: [{ name: 'postgres', image: 'postgres:16.4' }] } } } } as never,
      services: [{ service: { metadata: { name: 'pg-replica' } } }],
      containerLogs: [{ pod: 'pg-replica-1', container: 'postgres', previous: false, running: true, patterns: [{ template: 'LOG: duration: 1843.2 ms statement: SELECT 1', example: 'LOG: duration: 1843.2 ms statement: SELECT 1', count: 1, level: 'info' }], tail: [] }],
    };
    const report = { metadata: { name: 'finance-rollup-q4-manual', namespace: 'analytics' }, spec: { template: { spec: { containers: [{ name: 'psql', env: [{ name: 'PGHOST', value: 'pg-replica.db.svc.cluster.local' }] }] } } }, status: { active: 1, startTime: at(-31) } };
    const withJob = { ...input([series('store_replication_lag', -29, 0.2, 1780)]), kube: replica, cluster: { snapshot: { jobs: [report] } } } as unknown as TriageInput;
    const [f] = databaseDegraded.analyze(withJob);
    expect(f).toMatchObject({ status: 'supported', component: { kind: 'StatefulSet', namespace: 'db', name: 'pg-replica' }, facts: { metric: 'replication_lag', after: 1780, blockingJob: 'finance-rollup-q4-manual' } });
  });

  it('does not call a cache that evicts "degraded", nor a store series that moved long before the onset', () => {
    expect(databaseDegraded.analyze(input([series('store_evictions', -10, 0.2, 40, 'keys/s'), series('store_memory_ratio', -10, 0.6, 0.99, 'ratio')]))).toEqual([]);
    expect(databaseDegraded.analyze(input([series('store_latency', -55, 0.000045, 0.061)]))).toEqual([]);
  });
});

describe('the error an external call fails with', () => {
  it.each([
    ['time=2026-03-01T11:40:00Z level=error msg="send failed" err="Post \\"https://api.twilio.com/2010-04-01/Messages.json\\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)"', 'context deadline exceeded (Client.Timeout exceeded while awaiting headers)'],
    ['dial tcp 52.1.2.3:443: i/o timeout', 'i/o timeout'],
    ['java.net.SocketTimeoutException: Read timed out', 'SocketTimeoutException: Read timed out'],
    ['upstream answered 503 Service Unavailable', '503 Service Unavailable'],
  ])('%s', (line, phrase) => {
    expect(errorPhrase(line)).toBe(phrase);
  });
  it('has none for a line without a known error', () => {
    expect(errorPhrase('level=info msg="sent" provider=twilio')).toBeUndefined();
  });
});

describe('an error-ratio symptom needs errors a user would notice', () => {
  it('ignores a 5xx ratio that left its baseline but never reached 1%, and keeps one that did', async () => {
    const { metricSymptoms } = await import('../../src/triage/analyzers/deploy-regression.js');
    const tiny = { ...series('error_ratio', -5, 0, 0.0000327, 'ratio'), id: 'error_ratio' };
    expect(metricSymptoms(tiny)).toEqual([]);
    const real = { ...series('error_ratio', -5, 0.001, 0.4, 'ratio'), id: 'error_ratio' };
    expect(metricSymptoms(real)).toHaveLength(1);
    // Latency has no such floor: a p99 that left its baseline is a symptom at any level.
    expect(metricSymptoms(series('latency_p99', -5, 0.1, 0.3))).toHaveLength(1);
  });
});

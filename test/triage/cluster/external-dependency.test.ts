/**
 * external-dependency's look-alikes: an outside host whose failures are not what changed at the onset is
 * raised and ruled out with the reason — rate limiting it answers (429s retried), and failures that began
 * long before the onset — while a host whose calls started failing near the onset is the finding.
 */
import { describe, expect, it } from 'vitest';
import type { ClusterTriageInput } from '../../../src/triage/analyzer.js';
import { externalDependency } from '../../../src/triage/cluster/external-dependency.js';
import { buildTopology } from '../../../src/topology/graph.js';
import { emptySnapshot } from '../../../src/topology/snapshot.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const ago = (min: number) => new Date(ONSET.getTime() - min * 60_000);

function world(lines: { template: string; first: Date; count?: number; level?: string }[]): ClusterTriageInput {
  const s = emptySnapshot();
  s.deployments = [{ metadata: { name: 'rates-api', namespace: 'pricing' }, spec: { selector: { matchLabels: { app: 'rates-api' } }, template: { metadata: { labels: { app: 'rates-api' } }, spec: { containers: [{ name: 'rates-api', env: [{ name: 'FXFEED_BASE_URL', value: 'https://api.fxfeed.example/v3' }] }] } } } }] as never;
  const topology = buildTopology(s);
  const kube = {
    target: { kind: 'Deployment', namespace: 'pricing', name: 'rates-api' },
    containerLogs: [{ pod: 'rates-api-7d4b-2xkqv', container: 'rates-api', previous: false, patterns: lines.map((l) => ({ template: l.template, example: l.template, count: l.count ?? 40, level: l.level ?? 'warn', first: l.first })), tail: [] }],
  };
  return { alert: { labels: {}, labelValues: [] } as never, onset: ONSET, cluster: { snapshot: s, topology, walk: { subjects: [], starts: [], reached: new Map(), candidates: [] }, subjects: [] }, inputs: [{ kube } as never], changes: [], metrics: [], jobs: [] };
}

describe('external-dependency look-alikes', () => {
  it('rules out a host that rate-limits (429s the callers retry) when nothing harder fails towards it', () => {
    const [f, ...rest] = externalDependency.analyze(world([{ template: 'msg="retrying request" host=api.fxfeed.example status=429 attempt=1', first: ago(41) }]));
    expect(rest).toEqual([]);
    expect(f).toMatchObject({ status: 'ruled_out', component: { kind: 'ExternalService', name: 'api.fxfeed.example' }, facts: { host: 'api.fxfeed.example' } });
    expect(f!.reason).toContain('429 (rate limited)');
  });

  it('rules out failures that began hours before the onset as a standing condition', () => {
    const [f] = externalDependency.analyze(world([{ template: 'Get "https://api.fxfeed.example/v3/rates": context deadline exceeded', first: ago(5 * 60), level: 'error' }]));
    expect(f).toMatchObject({ status: 'ruled_out', component: { name: 'api.fxfeed.example' } });
    expect(f!.reason).toMatch(/began at .*, 5 h before the alert/);
  });

  it('still blames the host whose calls began failing near the onset', () => {
    const [f] = externalDependency.analyze(world([{ template: 'Get "https://api.fxfeed.example/v3/rates": context deadline exceeded', first: ago(6), level: 'error' }]));
    expect(f).toMatchObject({ status: 'supported', component: { name: 'api.fxfeed.example' } });
  });

  it('does not read a setting in an info line as a failure, nor a lookup that timed out as the host\'s', () => {
    const out = externalDependency.analyze(world([
      { template: '{"level":"info","msg":"payments-api starting","fraud_url":"https://api.fxfeed.example/v2","fraud_dial_timeout":"2s"}', first: ago(20), level: 'info' },
      { template: '{"level":"warn","msg":"health check failed","err":"lookup api.fxfeed.example: i/o timeout"}', first: ago(6) },
    ]));
    expect(out.filter((f) => f.status === 'supported')).toEqual([]);
  });

  it('gives a failure that names no host to the one outside host its workload calls', () => {
    const [f] = externalDependency.analyze(world([
      { template: '{"level":"error","msg":"payment authorization failed","provider_status":504,"error":"upstream request timeout"}', first: ago(5), level: 'error' },
      { template: '{"level":"info","msg":"client ready","base_url":"https://api.fxfeed.example","timeout":"10s"}', first: ago(300), level: 'info' },
    ]));
    expect(f).toMatchObject({ status: 'supported', component: { name: 'api.fxfeed.example' } });
  });

  it('does not take a hyphenated name ("payments-gateway") for the word that points upstream', () => {
    const out = externalDependency.analyze(world([{ template: 'logger=payments-gateway msg="charge failed" err="dial tcp 10.96.0.10:53: i/o timeout"', first: ago(5), level: 'error' }]));
    expect(out.filter((f) => f.status === 'supported')).toEqual([]);
  });
});

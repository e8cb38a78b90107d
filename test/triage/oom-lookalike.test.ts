// "OOM" in the errors without a container killed for memory (Redis's maxmemory reply, a JVM heap error
// in a running container) is raised and ruled out, so nobody raises a memory limit for it.
import { describe, expect, it } from 'vitest';
import { emptyKubeEvidence } from '../../src/evidence/kubernetes/gather.js';
import type { LogsEvidence } from '../../src/evidence/loki/types.js';
import type { TriageInput } from '../../src/triage/analyzer.js';
import { oomKilled } from '../../src/triage/analyzers/oom-killed.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const REPLY = "io.lettuce.core.RedisCommandExecutionException: OOM command not allowed when used memory > 'maxmemory'.";

function input(lastTerminated?: 'OOMKilled' | 'Error'): TriageInput {
  const kube = emptyKubeEvidence(ONSET, 'https://k8s');
  kube.target = { kind: 'Deployment', namespace: 'cart', name: 'cart-service' };
  kube.workload = { metadata: { name: 'cart-service', namespace: 'cart' }, spec: { selector: {}, template: { spec: { containers: [{ name: 'app' }] } } } } as never;
  kube.pods = [
    {
      metadata: { name: 'cart-service-1', namespace: 'cart' },
      status: {
        phase: 'Running',
        containerStatuses: [{ name: 'app', ready: true, restartCount: lastTerminated ? 1 : 0, image: 'x', imageID: 'x', ...(lastTerminated ? { lastState: { terminated: { exitCode: 137, reason: lastTerminated, finishedAt: new Date(ONSET.getTime() - 60_000) } } } : {}) }],
      },
    },
  ] as never;
  const logs: LogsEvidence = {
    summaries: [
      {
        selector: '{namespace="cart"}',
        query: '{namespace="cart"}',
        range: { from: new Date(ONSET.getTime() - 3600_000), to: ONSET },
        status: 'success',
        totalLines: 100,
        sampled: false,
        patterns: [],
        errorPatterns: [],
        newSinceOnset: [{ template: REPLY, example: REPLY, count: 90, first: new Date(ONSET.getTime() - 9 * 60_000), level: 'error', change: { kind: 'new', countBefore: 0, countAfter: 90, perMinuteBefore: 0, perMinuteAfter: 10 } }],
        citation: { source: 'loki', ref: '{namespace="cart"}' },
      },
    ],
  };
  return { alert: { labels: {}, labelValues: [] }, onset: ONSET, kube, logs, changes: [] } as unknown as TriageInput;
}

describe('oom-killed: the look-alike', () => {
  it('rules out a memory kill when the errors say OOM but no container was killed or restarted', () => {
    const [f] = oomKilled.analyze(input());
    expect(f).toMatchObject({ status: 'ruled_out', family: 'oom-killed', component: { kind: 'Deployment', namespace: 'cart', name: 'cart-service' } });
    expect(f!.reason).toMatch(/no container of cart-service was OOMKilled or restarted since the errors began/);
  });

  it('stays silent when a container did restart since the errors began (that is for the real analysis)', () => {
    expect(oomKilled.analyze(input('Error'))).toEqual([]);
  });
});

// shutdown-regression: a rollout that dropped the preStop sleep is the cause of 502 bursts hours later,
// when the HPA first removes pods of the new revision; the HPA and a traffic spike are ruled out.
import type { CoreV1Event, V1ReplicaSet } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { emptyKubeEvidence } from '../../src/evidence/kubernetes/gather.js';
import type { MetricSummary, SeriesSummary } from '../../src/evidence/prometheus/types.js';
import type { TriageInput } from '../../src/triage/analyzer.js';
import { shutdownRegression } from '../../src/triage/analyzers/shutdown-regression.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const ago = (min: number) => new Date(ONSET.getTime() - min * 60_000);

const rs = (name: string, revision: number, created: Date, preStop: boolean, grace: number): V1ReplicaSet => ({
  metadata: { name, namespace: 'partners', creationTimestamp: created, annotations: { 'deployment.kubernetes.io/revision': String(revision) } },
  spec: {
    selector: {},
    template: {
      spec: {
        terminationGracePeriodSeconds: grace,
        containers: [{ name: 'api', ports: [{ containerPort: 8080 }], ...(preStop ? { lifecycle: { preStop: { exec: { command: ['/bin/sh', '-c', 'sleep 15'] } } } } : {}) }],
      },
    },
  },
});

const scaledDown = (at: Date): CoreV1Event => ({
  metadata: { name: `partner-api.${at.getTime()}`, namespace: 'partners' },
  involvedObject: { kind: 'Deployment', name: 'partner-api', namespace: 'partners' },
  reason: 'ScalingReplicaSet',
  message: 'Scaled down replica set partner-api-7f5b9c6d82 to 12 from 14',
  lastTimestamp: at,
});

function input(o: { preStopNow?: boolean; removals?: Date[]; rate?: [number, number] } = {}): TriageInput {
  const kube = emptyKubeEvidence(ONSET, 'https://k8s');
  kube.target = { kind: 'Deployment', namespace: 'partners', name: 'partner-api' };
  kube.replicaSets = [rs('partner-api-7f5b9c6d82', 23, ago(190), o.preStopNow ?? false, 30), rs('partner-api-6c9d8b7f54', 22, ago(60 * 24 * 16), true, 45)];
  kube.events = (o.removals ?? [ago(52), ago(31), ago(4)]).map(scaledDown);
  kube.hpas = [{ metadata: { name: 'partner-api', namespace: 'partners' }, spec: { minReplicas: 4, maxReplicas: 20, scaleTargetRef: { kind: 'Deployment', name: 'partner-api' } }, status: { desiredReplicas: 8, currentReplicas: 8 } }] as never;
  const [before, after] = o.rate ?? [160, 90];
  const series: SeriesSummary = {
    metric: { ingress: 'partner-api' },
    points: 240,
    nonFinite: 0,
    from: ago(240),
    to: ONSET,
    first: before,
    last: after,
    min: Math.min(before, after),
    max: Math.max(before, after),
    mean: (before + after) / 2,
    baseline: { median: before, mad: 2 },
    changePoints: [],
    ...(after / before > 3 ? { deviationStart: ago(10), deviationDirection: 'up' as const } : {}),
  };
  const rate: MetricSummary = { id: 'request_rate', title: 'request rate', unit: 'req/s', badWhen: 'high', query: 'sum(rate(nginx_ingress_controller_requests[5m]))', range: { from: ago(240), to: ONSET }, stepSeconds: 30, status: 'success', series: [series], citation: { source: 'prometheus', ref: 'q' } };
  const metrics = { summaries: [rate] };
  return { alert: { labels: {}, labelValues: [] }, onset: ONSET, kube, metrics } as unknown as TriageInput;
}

describe('shutdown-regression', () => {
  it('blames the rollout that dropped preStop, proposes the revision that drained, and clears the HPA and load', () => {
    const fs = shutdownRegression.analyze(input());
    const main = fs.find((f) => f.status === 'supported');
    expect(main).toMatchObject({
      family: 'deploy-regression',
      component: { kind: 'Deployment', namespace: 'partners', name: 'partner-api' },
      facts: { revision: 23, previousRevision: 22, deployedAt: ago(190).toISOString(), metric: 'error_ratio', removed: 'preStop,terminationGracePeriodSeconds' },
      mitigation: { action: 'rollout_undo', params: { toRevision: 22 } },
    });
    expect(main!.mechanism).toMatch(/terminationGracePeriodSeconds 45 → 30/);
    expect(fs.filter((f) => f.status === 'ruled_out').map((f) => [f.family, f.component?.kind])).toEqual([
      ['hpa-at-max', 'HorizontalPodAutoscaler'],
      ['load-spike', 'Deployment'],
    ]);
  });

  it('does not clear load when the traffic did spike', () => {
    expect(shutdownRegression.analyze(input({ rate: [100, 400] })).some((f) => f.family === 'load-spike')).toBe(false);
  });

  it('says nothing when the new revision kept its hook, or no pod of it has gone away yet', () => {
    expect(shutdownRegression.analyze(input({ preStopNow: true }))).toEqual([]);
    expect(shutdownRegression.analyze(input({ removals: [] }))).toEqual([]);
  });
});

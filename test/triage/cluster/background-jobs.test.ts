/**
 * Jobs that ran elsewhere near the onset are the cluster's routine: each is noise, and a failed run of a
 * CronJob is also told as its CronJob's (what responders name), once per CronJob; a completed run is not.
 */
import { describe, expect, it } from 'vitest';
import type { ClusterTriageInput } from '../../../src/triage/analyzer.js';
import { backgroundNoiseCluster } from '../../../src/triage/cluster/background.js';
import { buildTopology } from '../../../src/topology/graph.js';
import { emptySnapshot } from '../../../src/topology/snapshot.js';
import { walkFrom } from '../../../src/topology/walk.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const ago = (min: number) => new Date(ONSET.getTime() - min * 60_000).toISOString();

function world(): ClusterTriageInput {
  const s = emptySnapshot();
  s.deployments = [{ metadata: { name: 'api', namespace: 'shop' }, spec: { selector: { matchLabels: { app: 'api' } }, template: { metadata: { labels: { app: 'api' } }, spec: { containers: [{ name: 'api' }] } } } }] as never;
  s.services = [{ metadata: { name: 'api', namespace: 'shop' }, spec: { selector: { app: 'api' } } }] as never;
  const run = (cron: string, name: string, condition: 'Failed' | 'Complete', min: number) => ({
    metadata: { name, namespace: 'tracking', creationTimestamp: ago(min), ownerReferences: [{ kind: 'CronJob', name: cron, controller: true }] },
    status: { conditions: [{ type: condition, status: 'True' }] },
  });
  s.jobs = [run('manifest-upload', 'manifest-upload-29412405', 'Failed', 20), run('manifest-upload', 'manifest-upload-29412390', 'Failed', 35), run('sitemap', 'sitemap-29412400', 'Complete', 25)] as never;
  s.cronJobs = [{ metadata: { name: 'manifest-upload', namespace: 'tracking' }, spec: { schedule: '*/15 * * * *' } }, { metadata: { name: 'sitemap', namespace: 'tracking' }, spec: { schedule: '*/30 * * * *' } }] as never;
  const topology = buildTopology(s);
  const subjects = [{ ref: { kind: 'Service', namespace: 'shop', name: 'api' }, how: 'label service=api' }];
  return { alert: { labels: {}, labelValues: [] } as never, onset: ONSET, cluster: { snapshot: s, topology, walk: walkFrom(subjects, topology), subjects }, inputs: [], changes: [], metrics: [], jobs: [] };
}

describe('background noise: Jobs elsewhere', () => {
  it('tells each run, and a failing CronJob once by its own name', () => {
    const out = backgroundNoiseCluster.analyze(world());
    const components = out.map((f) => `${f.component!.kind}/${f.component!.name}`);
    expect(components).toEqual(expect.arrayContaining(['Job/manifest-upload-29412405', 'Job/manifest-upload-29412390', 'Job/sitemap-29412400', 'CronJob/manifest-upload']));
    expect(components.filter((c) => c === 'CronJob/manifest-upload')).toHaveLength(1);
    expect(components).not.toContain('CronJob/sitemap');
    expect(out.every((f) => f.status === 'unrelated')).toBe(true);
  });
});

describe('background noise: node pressure that is over', () => {
  function pressured(evicted: { ns: string; name: string; owner?: string }): ClusterTriageInput {
    const w = world();
    const s = w.cluster.snapshot;
    s.nodes = [{ metadata: { name: 'node-a' }, status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: ago(40 * 24 * 60) }, { type: 'DiskPressure', status: 'False', lastTransitionTime: ago(19) }] } }] as never;
    // api runs a pod there; the eviction took another workload's pod, or api's own.
    s.replicaSets = [{ metadata: { name: 'api-7c5d', namespace: 'shop', ownerReferences: [{ kind: 'Deployment', name: 'api', controller: true }] } }] as never;
    s.pods = [
      { metadata: { name: 'api-7c5d-k8d4n', namespace: 'shop', labels: { app: 'api' }, ownerReferences: [{ kind: 'ReplicaSet', name: 'api-7c5d', controller: true }] }, spec: { nodeName: 'node-a', containers: [{ name: 'api' }] }, status: { phase: 'Running' } },
      { metadata: { name: evicted.name, namespace: evicted.ns, labels: { app: evicted.owner ?? 'loader' }, ...(evicted.owner ? { ownerReferences: [{ kind: 'ReplicaSet', name: 'api-7c5d', controller: true }] } : {}) }, spec: { nodeName: 'node-a', containers: [{ name: 'c' }] }, status: { phase: 'Failed', reason: 'Evicted' } },
    ] as never;
    s.warningEvents = [{ involvedObject: { kind: 'Node', name: 'node-a' }, reason: 'EvictionThresholdMet', type: 'Warning', message: 'Attempting to reclaim ephemeral-storage', firstTimestamp: ago(26), lastTimestamp: ago(21) }] as never;
    const topology = buildTopology(s);
    return { ...w, cluster: { ...w.cluster, snapshot: s, topology, walk: walkFrom(w.cluster.subjects, topology) } };
  }

  it('raises a node whose DiskPressure ended before the alert and evicted only pods the alert does not reach', () => {
    const node = backgroundNoiseCluster.analyze(pressured({ ns: 'analytics', name: 'loader-6f8d-w4t2x' })).find((f) => f.component?.kind === 'Node');
    expect(node).toMatchObject({ status: 'unrelated', component: { kind: 'Node', name: 'node-a' } });
    expect(node!.title).toContain('EvictionThresholdMet');
    expect(node!.reason).toContain('its evictions took no pod the alert reaches');
  });

  it('leaves it alone when the evictions took a pod of the alerted workload', () => {
    const out = backgroundNoiseCluster.analyze(pressured({ ns: 'shop', name: 'api-7c5d-zzzzz', owner: 'api' }));
    expect(out.find((f) => f.component?.kind === 'Node')).toBeUndefined();
  });
});

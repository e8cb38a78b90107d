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

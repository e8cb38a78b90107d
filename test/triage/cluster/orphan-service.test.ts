/**
 * A Service on the alert's path that selects no pod, while a Deployment there is plainly the one it is
 * meant for (a label renamed in a chart refactor): endpoints-mismatch localised to the Service.
 */
import { describe, expect, it } from 'vitest';
import type { ClusterTriageInput } from '../../../src/triage/analyzer.js';
import { orphanService } from '../../../src/triage/cluster/orphan-service.js';
import { buildTopology } from '../../../src/topology/graph.js';
import { emptySnapshot } from '../../../src/topology/snapshot.js';
import { walkFrom } from '../../../src/topology/walk.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
function world(podLabels: Record<string, string>, replicas = 2): ClusterTriageInput {
  const s = emptySnapshot();
  const dep = (ns: string, name: string, labels: Record<string, string>, env: { name: string; value: string }[] = [], r = 2) => ({
    metadata: { name, namespace: ns },
    spec: { replicas: r, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name, image: `reg/${name}:1`, env }] } } },
  });
  s.deployments = [dep('web', 'web', { app: 'web' }, [{ name: 'PROFILE_URL', value: 'http://profile.accounts.svc.cluster.local:8080' }]), dep('accounts', 'profile-server', podLabels, [], replicas)] as never;
  s.pods = [
    { metadata: { name: 'web-1', namespace: 'web', labels: { app: 'web' } }, status: { phase: 'Running' } },
    ...(replicas ? [{ metadata: { name: 'profile-server-1', namespace: 'accounts', labels: podLabels }, status: { phase: 'Running' } }] : []),
  ] as never;
  s.services = [
    { metadata: { name: 'web', namespace: 'web' }, spec: { selector: { app: 'web' } } },
    { metadata: { name: 'profile', namespace: 'accounts' }, spec: { selector: { app: 'profile' } } },
  ] as never;
  s.endpoints = [{ metadata: { name: 'profile', namespace: 'accounts' }, subsets: [] }] as never;
  const topology = buildTopology(s);
  const subjects = [{ ref: { kind: 'Service', namespace: 'web', name: 'web' }, how: 'label destination_service_name=web' }];
  return { alert: { labels: {}, labelValues: [] } as never, onset: ONSET, cluster: { snapshot: s, topology, walk: walkFrom(subjects, topology), subjects }, inputs: [], changes: [], metrics: [], jobs: [] };
}

describe('orphan-service', () => {
  it('blames the Service whose selector the renamed pod label no longer matches', () => {
    const [f] = orphanService.analyze(world({ 'app.kubernetes.io/name': 'profile' }));
    expect(f).toMatchObject({
      analyzer: 'endpoints-mismatch',
      status: 'supported',
      component: { kind: 'Service', namespace: 'accounts', name: 'profile' },
      facts: { service: 'profile', selector: 'app=profile', mismatchedKey: 'app', serviceValue: 'profile', podValue: '<missing>' },
    });
    expect(f!.affected).toEqual(expect.arrayContaining([{ kind: 'Deployment', namespace: 'accounts', name: 'profile-server' }, { kind: 'Deployment', namespace: 'web', name: 'web' }]));
    expect(f!.supporting[1]!.summary).toMatch(/carry app\.kubernetes\.io\/name=profile, not app=profile/);
  });

  it('says nothing when a pod matches, or when the workload is scaled to zero', () => {
    expect(orphanService.analyze(world({ app: 'profile' }))).toEqual([]);
    expect(orphanService.analyze(world({ 'app.kubernetes.io/name': 'profile' }, 0))).toEqual([]);
  });

  it('says nothing when the meant workload\'s template still matches the selector and its pods are just not listed', () => {
    const input = world({ app: 'profile' });
    input.cluster.snapshot.pods = input.cluster.snapshot.pods.filter((p) => p.metadata?.namespace !== 'accounts');
    expect(orphanService.analyze(input)).toEqual([]);
  });
});

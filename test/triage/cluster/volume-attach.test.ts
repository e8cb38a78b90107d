/** A scheduled pod whose ReadWriteOnce volume is still attached elsewhere: storage-unavailable on its claim. */
import type { CoreV1Event, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { ClusterTriageInput } from '../../../src/triage/analyzer.js';
import { attachFailure, volumeAttach } from '../../../src/triage/cluster/volume-attach.js';
import { buildTopology } from '../../../src/topology/graph.js';
import { emptySnapshot } from '../../../src/topology/snapshot.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const at = (min: number) => new Date(ONSET.getTime() + min * 60_000);
const PV = 'pvc-6b1e4c2a-9d3f-4e7a-b8c5-0f2d4a6e8c19';
const MULTI = `Multi-Attach error for volume "${PV}" Volume is already exclusively attached to one node and can't be attached to another`;

const ev = (reason: string, message: string, name = 'e1'): CoreV1Event => ({ metadata: { name, namespace: 'ledger' }, involvedObject: { kind: 'Pod', namespace: 'ledger', name: 'ledger-db-0' }, reason, message, type: 'Warning', count: 6, firstTimestamp: at(-14), lastTimestamp: at(-1) });
const pod = (phase: string): V1Pod => ({ metadata: { name: 'ledger-db-0', namespace: 'ledger', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'ledger-db', uid: 'u', controller: true }] }, spec: { nodeName: 'node-b', containers: [{ name: 'postgres' }], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data-ledger-db-0' } }] }, status: { phase, containerStatuses: phase === 'Running' ? [{ name: 'postgres', ready: true, restartCount: 0, image: 'x', imageID: '', state: { running: { startedAt: at(-1) } } }] : [{ name: 'postgres', ready: false, restartCount: 0, image: 'x', imageID: '', state: { waiting: { reason: 'ContainerCreating' } } }] } });

function world(events: CoreV1Event[], phase = 'Pending'): ClusterTriageInput {
  const s = emptySnapshot();
  s.pods = [pod(phase)];
  s.statefulSets = [{ metadata: { name: 'ledger-db', namespace: 'ledger' }, spec: { serviceName: 'ledger-db', selector: { matchLabels: { app: 'ledger-db' } }, template: { metadata: { labels: { app: 'ledger-db' } }, spec: { containers: [] } } } }];
  s.pvcs = [{ metadata: { name: 'data-ledger-db-0', namespace: 'ledger' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'gp3', volumeName: PV }, status: { phase: 'Bound' } }];
  s.pvs = [{ metadata: { name: PV }, spec: { claimRef: { name: 'data-ledger-db-0', namespace: 'ledger' } } }];
  s.nodes = [{ metadata: { name: 'node-a' }, status: { conditions: [{ type: 'Ready', status: 'Unknown' }], volumesInUse: [`kubernetes.io/csi/ebs.csi.aws.com^${PV}`] } }, { metadata: { name: 'node-b' }, status: { conditions: [{ type: 'Ready', status: 'True' }] } }];
  s.warningEvents = events;
  return { alert: { labels: {}, labelValues: [] } as never, onset: ONSET, cluster: { snapshot: s, topology: buildTopology(s), walk: { subjects: [], starts: [], reached: new Map(), candidates: [] }, subjects: [] }, inputs: [], changes: [], metrics: [], jobs: [] };
}

describe('volume-attach', () => {
  it('reads the attach and mount wordings, not a missing ConfigMap', () => {
    expect(attachFailure({ reason: 'FailedAttachVolume', message: MULTI })).toEqual({ reason: 'multi_attach', pv: PV });
    expect(attachFailure({ reason: 'FailedMount', message: 'Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[data]: timed out waiting for the condition' })).toMatchObject({ reason: 'mount_timeout' });
    expect(attachFailure({ reason: 'FailedMount', message: 'MountVolume.SetUp failed for volume "config" : configmap "ledger-config" not found' })).toBeUndefined();
  });

  it('localises to the claim, names the NotReady node still holding it, and proposes nothing', () => {
    const [f, ...rest] = volumeAttach.analyze(world([ev('FailedAttachVolume', MULTI), ev('FailedMount', 'Unable to attach or mount volumes: timed out waiting for the condition', 'e2')]));
    expect(rest).toEqual([]);
    expect(f).toMatchObject({ family: 'storage-unavailable', status: 'supported', component: { kind: 'PersistentVolumeClaim', namespace: 'ledger', name: 'data-ledger-db-0' }, facts: { reason: 'multi_attach', pv: PV, storageClass: 'gp3', node: 'node-b', heldBy: 'node-a' } });
    expect(f!.affected).toEqual(expect.arrayContaining([{ kind: 'StatefulSet', namespace: 'ledger', name: 'ledger-db' }]));
    expect(f!.mitigation).toBeUndefined();
  });

  it('says nothing once the pod runs', () => {
    expect(volumeAttach.analyze(world([ev('FailedAttachVolume', MULTI)], 'Running'))).toEqual([]);
  });
});

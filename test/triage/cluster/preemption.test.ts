/**
 * A higher-priority Job preempts other workloads' pods and their replacements cannot schedule: the
 * preemptor is the origin (unschedulable), each victim's own unschedulable finding is its consequence.
 */
import type { CoreV1Event, V1Deployment, V1Job, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { ClusterTriageInput } from '../../../src/triage/analyzer.js';
import { parsePreempted, preemption } from '../../../src/triage/cluster/preemption.js';
import { buildTopology } from '../../../src/topology/graph.js';
import { emptySnapshot, type ClusterSnapshot } from '../../../src/topology/snapshot.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const at = (min: number) => new Date(ONSET.getTime() + min * 60_000);
const UID = 'dae75e0e-9410-54e7-828e-9e43deab7473';

const deployment = (name: string): V1Deployment => ({ metadata: { name, namespace: 'shop' }, spec: { replicas: 3, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name, image: `reg/${name}:1` }] } } } });
const job: V1Job = { metadata: { name: 'backfill', namespace: 'data-science', creationTimestamp: at(-9), managedFields: [{ manager: 'kubectl-create', operation: 'Update', time: at(-9), fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } }] }, spec: { template: { spec: { containers: [] } } } };
const preemptor: V1Pod = { metadata: { name: 'backfill-82hlr', namespace: 'data-science', uid: UID, ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'backfill', uid: 'j', controller: true }] }, spec: { nodeName: 'n1', priorityClassName: 'platform-critical', priority: 1000000, containers: [] }, status: { phase: 'Running' } };
const pending = (name: string): V1Pod => ({
  metadata: { name, namespace: 'shop', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: name.replace(/-[a-z0-9]{5}$/, ''), uid: 'r', controller: true }] },
  spec: { containers: [] },
  status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/8 nodes are available: 2 node(s) had untolerated taint {dedicated: gpu}, 6 Insufficient cpu. preemption: 0/8 nodes are available: 2 Preemption is not helpful for scheduling, 6 No preemption victims found for incoming pod.' }] },
});
const preempted = (pod: string, message = `Preempted by pod ${UID} on node n1`): CoreV1Event => ({ metadata: { name: `${pod}.1`, namespace: 'shop' }, involvedObject: { kind: 'Pod', namespace: 'shop', name: pod }, reason: 'Preempted', message, type: 'Normal', source: { component: 'default-scheduler' }, count: 1, firstTimestamp: at(-9), lastTimestamp: at(-9) });

function cluster(events: CoreV1Event[], pods: V1Pod[]): ClusterTriageInput {
  const snapshot: ClusterSnapshot = {
    ...emptySnapshot(),
    readAt: ONSET,
    deployments: [deployment('checkout'), deployment('cart')],
    jobs: [job],
    pods: [preemptor, ...pods],
    services: [{ metadata: { name: 'checkout', namespace: 'shop' }, spec: { selector: { app: 'checkout' } } }],
    warningEvents: events,
  };
  return { alert: { labels: {}, labelValues: [] } as unknown as ClusterTriageInput['alert'], onset: ONSET, cluster: { snapshot, topology: buildTopology(snapshot), walk: { subjects: [], starts: [], reached: new Map(), candidates: [] }, subjects: [] }, inputs: [], changes: [], metrics: [], jobs: [] };
}

describe('preemption', () => {
  it('reads the preemptor from both event wordings', () => {
    expect(parsePreempted(`Preempted by pod ${UID} on node ip-10-20-11-52.eu-central-1.compute.internal`)).toEqual({ uid: UID, node: 'ip-10-20-11-52.eu-central-1.compute.internal' });
    expect(parsePreempted('Preempted by data-science/backfill-82hlr on node n1')).toEqual({ namespace: 'data-science', name: 'backfill-82hlr', node: 'n1' });
    expect(parsePreempted('Back-off restarting failed container')).toBeUndefined();
  });

  it('localises to the Job whose high-priority pods preempted the victims, with the victims\' Pending replacements', () => {
    const [f, ...rest] = preemption.analyze(cluster([preempted('checkout-7d9f8b6c4-abcde'), preempted('checkout-7d9f8b6c4-fghij'), preempted('cart-5c6d7e8f9-klmno')], [pending('checkout-7d9f8b6c4-xyz12'), pending('checkout-7d9f8b6c4-xyz34'), pending('cart-5c6d7e8f9-xyz56')]));
    expect(rest).toEqual([]);
    expect(f).toMatchObject({
      family: 'unschedulable',
      status: 'supported',
      component: { kind: 'Job', namespace: 'data-science', name: 'backfill' },
      facts: { reason: 'insufficient_cpu', pendingPods: 3, preemptedPods: 3, priorityClass: 'platform-critical', priority: 1000000, victims: 'checkout,cart', manager: 'kubectl-create', changedAt: at(-9).toISOString() },
    });
    expect(f!.affected).toEqual(expect.arrayContaining([{ kind: 'Deployment', namespace: 'shop', name: 'checkout' }, { kind: 'Service', namespace: 'shop', name: 'checkout' }, { kind: 'Deployment', namespace: 'shop', name: 'cart' }]));
    expect(f!.mitigation).toBeUndefined();
  });

  it('stays open when the victims were replaced and nothing is Pending, and ignores preemptions long before the onset', () => {
    expect(preemption.analyze(cluster([preempted('checkout-7d9f8b6c4-abcde')], []))[0]).toMatchObject({ status: 'open' });
    const old = { ...preempted('checkout-7d9f8b6c4-abcde'), firstTimestamp: at(-5 * 60), lastTimestamp: at(-5 * 60) };
    expect(preemption.analyze(cluster([old], [pending('checkout-7d9f8b6c4-xyz12')]))).toEqual([]);
  });
});

/**
 * After a failover a client keeps writing to the old primary, now a read-only replica: localised to
 * the store's direct client (not to callers quoting its errors), the store ruled out, a restart proposed.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { emptyKubeEvidence, type KubeEvidence } from '../../../src/evidence/kubernetes/gather.js';
import type { ContainerLogs } from '../../../src/evidence/kubernetes/surroundings.js';
import type { ClusterTriageInput, TriageInput } from '../../../src/triage/analyzer.js';
import { READ_ONLY_WORDINGS, stalePrimary } from '../../../src/triage/cluster/stale-primary.js';
import { buildTopology } from '../../../src/topology/graph.js';
import { emptySnapshot } from '../../../src/topology/snapshot.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const at = (min: number) => new Date(ONSET.getTime() + min * 60_000);
const READONLY = '{"level":50,"err":{"type":"ErrorReply","message":"READONLY You can\'t write against a read only replica."},"msg":"add item failed"}';

const dep = (name: string, env: Record<string, string>) => ({ metadata: { name, namespace: 'shop', uid: `u-${name}` }, spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name, image: `reg/${name}:1`, env: Object.entries(env).map(([k, value]) => ({ name: k, value })) }] } } } });
const logs = (pod: string, line: string, count = 40): ContainerLogs => ({ pod, container: 'app', previous: false, running: true, patterns: [{ template: line, example: line, count, first: at(-11), last: at(0), level: 'error' }], tail: [] });
const redisPod = (restartedMin: number | undefined): V1Pod => ({
  metadata: { name: 'redis-node-0', namespace: 'shop', labels: { app: 'redis-node' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'redis-node', uid: 'u-redis', controller: true }] },
  spec: { containers: [{ name: 'redis', image: 'redis:7.2.5' }] },
  status: { phase: 'Running', containerStatuses: [{ name: 'redis', ready: true, restartCount: restartedMin === undefined ? 0 : 1, image: 'redis:7.2.5', imageID: '', state: { running: { startedAt: at(restartedMin ?? -9000) } }, ...(restartedMin !== undefined ? { lastState: { terminated: { exitCode: 137, reason: 'Error', finishedAt: at(restartedMin) } } } : {}) }] },
});

function world(restartedMin: number | undefined): ClusterTriageInput {
  const s = emptySnapshot();
  s.deployments = [dep('cart', { REDIS_ADDR: 'redis-node-0.redis-headless.shop.svc.cluster.local:6379', REDIS_URL: 'redis://redis.shop.svc:6379' }), dep('checkout', { CART_URL: 'http://cart.shop.svc:8080' })] as never;
  s.statefulSets = [{ metadata: { name: 'redis-node', namespace: 'shop', uid: 'u-redis' }, spec: { selector: { matchLabels: { app: 'redis-node' } }, serviceName: 'redis-headless', template: { metadata: { labels: { app: 'redis-node' } }, spec: { containers: [{ name: 'redis', image: 'redis:7.2.5' }] } } } }] as never;
  s.services = [{ metadata: { name: 'redis', namespace: 'shop' }, spec: { selector: { app: 'redis-node' } } }, { metadata: { name: 'cart', namespace: 'shop' }, spec: { selector: { app: 'cart' } } }] as never;
  s.pods = [redisPod(restartedMin)];
  const topology = buildTopology(s);
  const cand = (name: string, containerLogs: ContainerLogs[]): TriageInput => {
    const kube: KubeEvidence = { ...emptyKubeEvidence(ONSET, ''), target: { kind: 'Deployment', namespace: 'shop', name }, workload: s.deployments.find((d) => d.metadata?.name === name)!, containerLogs };
    return { alert: { labels: {}, labelValues: [] } as never, onset: ONSET, kube, changes: [] };
  };
  const inputs = [cand('cart', [logs('cart-6f8d7c9b54-2xkqp', READONLY)]), cand('checkout', [logs('checkout-5d6c7b8a9-q1w2e', `PlaceOrder failed: cart: ${READONLY}`)])];
  return { alert: { labels: {}, labelValues: [] } as never, onset: ONSET, cluster: { snapshot: s, topology, walk: { subjects: [], starts: [], reached: new Map(), candidates: [] }, subjects: [] }, inputs, changes: [], metrics: [], jobs: [] };
}

describe('stale-primary', () => {
  it('knows each store\'s refusal of a write on a replica', () => {
    const store = (line: string) => READ_ONLY_WORDINGS.find((w) => w.re.test(line))?.store;
    expect(store("READONLY You can't write against a read only replica.")).toBe('redis');
    expect(store('ERROR: cannot execute INSERT in a read-only transaction (SQLSTATE 25006)')).toBe('postgresql');
    expect(store('Error 1290 (HY000): The MySQL server is running with the --read-only option so it cannot execute this statement')).toBe('mysql');
    expect(store('MongoServerError: NotWritablePrimary')).toBe('mongodb');
    expect(store('GET /cart 200')).toBeUndefined();
  });

  it('blames the direct client after the failover, rules the store out and proposes a restart', () => {
    const out = stalePrimary.analyze(world(-12));
    const origin = out.filter((f) => f.status === 'supported');
    expect(origin).toHaveLength(1);
    expect(origin[0]).toMatchObject({ component: { kind: 'Deployment', name: 'cart' }, facts: { store: 'redis', failedOverPod: 'redis-node-0', clientSideOf: 'redis-node' }, mitigation: { action: 'rollout_restart', target: { name: 'cart' } } });
    expect(origin[0]!.confidence).toBe(0.9);
    expect(out.find((f) => f.status === 'ruled_out')).toMatchObject({ family: 'database-degraded', component: { kind: 'StatefulSet', name: 'redis-node' } });
  });

  it('is less sure without a failover to point at', () => {
    const [f] = stalePrimary.analyze(world(undefined));
    expect(f).toMatchObject({ status: 'supported', component: { name: 'cart' } });
    expect(f!.confidence).toBeLessThan(0.9);
  });
});

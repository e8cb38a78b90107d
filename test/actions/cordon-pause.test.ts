/**
 * cordon_node and pause_chaos against the fake API server (RBAC enforced): plan, server-side dry run as
 * the executor, execute, verify and the rollback (uncordon / resume), plus their guards.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openApprovedExecutor, openDryRunExecutor } from '../../src/actions/executor.js';
import { executeMitigation, planMitigation, verifyMitigation } from '../../src/actions/registry.js';
import { CHANGE_ANNOTATION } from '../../src/actions/stamp.js';
import type { Approval, DiagnosisSnapshot, Plan } from '../../src/actions/types.js';
import type { MitigationProposal } from '../../src/triage/types.js';
import { OBJECT_EXECUTOR_RULES, OBJECT_OBJECTS } from './objects-world.js';
import { EXECUTOR_USER, startActionWorld, type ActionWorld } from './world.js';

const INCIDENT = 'INC-22';
const approval: Approval = { userId: 'U0BOB', userName: 'bob', at: new Date('2025-03-01T12:00:00Z') };

let world: ActionWorld;
beforeEach(async () => {
  world = await startActionWorld(OBJECT_OBJECTS, OBJECT_EXECUTOR_RULES);
});
afterEach(() => world.close());

const proposal = (action: string, kind: string, name: string, params: Record<string, unknown> = {}): MitigationProposal => ({ action, target: { kind, namespace: 'shop', name }, params, command: '(test)', rationale: 'test' });
async function plan(p: MitigationProposal, diagnosis?: DiagnosisSnapshot): Promise<Plan> {
  const executor = await openDryRunExecutor(world.impersonation, INCIDENT);
  return planMitigation({ incidentId: INCIDENT, reader: world.reader, executor, ...(diagnosis ? { diagnosis } : {}), environment: 'production' }, p);
}
const execute = async (p: Plan) => executeMitigation(await openApprovedExecutor(world.impersonation, INCIDENT, approval), p);
const verify = (p: Plan) => verifyMitigation(world.reader, p, { windowMs: 200, intervalMs: 50 });
const check = (p: Plan, name: string) => p.preChecks.find((c) => c.name === name);
const node = (name: string) => world.kube.getObject('v1', 'Node', undefined, name) as unknown as { spec: { unschedulable?: boolean }; metadata: { annotations?: Record<string, string> } };

describe('cordon_node', () => {
  it('plans by the pods on the node, dry-runs and cordons as the executor (cluster-wide patch nodes), verifies, and uncordons', async () => {
    // The diagnosis localised to the Node (node-not-ready); the ref carries the incident's namespace for the policy.
    const p = await plan(proposal('cordon_node', 'Node', 'node-1'), { component: { kind: 'Node', name: 'node-1' } });
    expect(p.title).toBe('cordon node/node-1');
    expect(check(p, 'it is the one in the diagnosis')).toMatchObject({ status: 'pass' });
    expect(check(p, 'current state is as expected')).toMatchObject({ status: 'pass', detail: 'node/node-1 is schedulable now, Ready=False (KubeletNotReady)' });
    expect(check(p, 'pods on the node known')).toMatchObject({ status: 'pass', detail: '3 pods on it in monitoring, shop' });
    expect(check(p, 'other nodes can take new pods')).toMatchObject({ status: 'pass', detail: '1 other schedulable node' });
    expect(check(p, 'executor may patch nodes cluster-wide')).toMatchObject({ status: 'pass' });
    expect(p.dryRun).toMatchObject({ status: 'accepted', identity: EXECUTOR_USER, requests: ['PATCH nodes/node-1'] });
    expect(p.changes).toEqual([{ path: 'spec.unschedulable', before: undefined, after: true }]);
    expect(p.notes).toEqual([expect.stringContaining('also runs pods of monitoring'), expect.stringContaining('nothing is evicted')]);
    expect(p.risk.factors).toContainEqual({ name: 'blast radius', points: 10, detail: '3 running pods on the node (none evicted; new pods go elsewhere)' });
    expect(p.risk.score).toBe(20 + 25 + 10);
    expect(p.rollback).toMatchObject({ action: 'cordon_node', params: { cordon: false }, command: 'kubectl uncordon node-1' });
    expect(node('node-1').spec.unschedulable).toBeUndefined();

    expect(await execute(p)).toMatchObject({ status: 'applied' });
    expect(node('node-1').spec.unschedulable).toBe(true);
    expect(node('node-1').metadata.annotations?.[CHANGE_ANNOTATION]).toContain('INC-22, approved by U0BOB');
    expect(await verify(p)).toMatchObject({ ok: true, observed: { exists: true, unschedulable: true } });

    const undo = await plan(p.rollback!, { component: { kind: 'Node', name: 'node-1' } });
    expect(undo.title).toBe('uncordon node/node-1');
    expect(undo.executable).toBe(true);
    expect(await execute(undo)).toMatchObject({ status: 'applied' });
    expect(node('node-1').spec.unschedulable).toBeUndefined();
    expect((await verify(undo)).ok).toBe(true);
  });

  it('passes the diagnosis check for a node that runs the diagnosed workload’s pods (node-pressure)', async () => {
    await world.close();
    const rsOwned = OBJECT_OBJECTS.map((o) => {
      const x = o as { kind: string; metadata: { name: string; ownerReferences?: unknown[] } };
      return x.kind === 'Pod' && x.metadata.name.startsWith('checkout-') ? { ...x, metadata: { ...x.metadata, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'checkout-5d9c', uid: 'rs-1', controller: true }] } } : o;
    });
    const rs = { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'checkout-5d9c', namespace: 'shop', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'checkout', uid: 'd-1', controller: true }] }, spec: { replicas: 3, selector: { matchLabels: { app: 'checkout' } }, template: { metadata: { labels: { app: 'checkout' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } } };
    world = await startActionWorld([...rsOwned, rs], OBJECT_EXECUTOR_RULES);
    const p = await plan(proposal('cordon_node', 'Node', 'node-1'), { component: { kind: 'Deployment', namespace: 'shop', name: 'checkout' } });
    expect(check(p, 'it is the one in the diagnosis')).toMatchObject({ status: 'pass', detail: expect.stringContaining('of the diagnosed deployment/checkout') });
    expect(p.executable).toBe(true);
  });

  it('never cordons the last schedulable node, nor one already cordoned; without the ClusterRole the dry run is refused', async () => {
    const first = await plan(proposal('cordon_node', 'Node', 'node-2'));
    expect(await execute(first)).toMatchObject({ status: 'applied' });
    const last = await plan(proposal('cordon_node', 'Node', 'node-1'));
    expect(check(last, 'other nodes can take new pods')).toMatchObject({ status: 'fail', detail: expect.stringContaining('last schedulable node') });
    expect(last.executable).toBe(false);
    const again = await plan(proposal('cordon_node', 'Node', 'node-2'));
    expect(check(again, 'current state is as expected')).toMatchObject({ status: 'fail', detail: 'node/node-2 is already cordoned' });

    await world.close();
    world = await startActionWorld(OBJECT_OBJECTS, OBJECT_EXECUTOR_RULES.filter((r) => !r.resources.includes('nodes')));
    const denied = await plan(proposal('cordon_node', 'Node', 'node-1'));
    expect(check(denied, 'executor may patch nodes cluster-wide')).toMatchObject({ status: 'fail' });
    expect(denied.dryRun).toMatchObject({ status: 'rejected', code: 403 });
  });
});

describe('pause_chaos', () => {
  it('Chaos Mesh: adds the pause annotation as the executor, verifies, and the rollback removes it', async () => {
    const p = await plan(proposal('pause_chaos', 'PodChaos', 'checkout-kill'));
    expect(p.title).toBe('pause podchaos/checkout-kill');
    expect(p.command).toBe('kubectl annotate podchaos/checkout-kill -n shop experiment.chaos-mesh.org/pause=true');
    expect(check(p, 'current state is as expected')).toMatchObject({ status: 'pass', detail: 'podchaos/checkout-kill is injecting now' });
    expect(check(p, 'executor may patch podchaos in shop')).toMatchObject({ status: 'pass' });
    expect(p.dryRun).toMatchObject({ status: 'accepted', identity: EXECUTOR_USER, requests: ['PATCH podchaos/checkout-kill in shop'] });
    expect(p.changes).toEqual([{ path: 'metadata.annotations.experiment.chaos-mesh.org/pause', before: undefined, after: 'true' }]);
    expect(p.risk.score).toBe(10 + 25);
    expect(p.rollback).toMatchObject({ action: 'pause_chaos', params: { pause: false }, command: 'kubectl annotate podchaos/checkout-kill -n shop experiment.chaos-mesh.org/pause-' });

    expect(await execute(p)).toMatchObject({ status: 'applied' });
    const chaos = () => world.kube.getObject('chaos-mesh.org/v1alpha1', 'PodChaos', 'shop', 'checkout-kill') as unknown as { metadata: { annotations?: Record<string, string> } };
    expect(chaos().metadata.annotations?.['experiment.chaos-mesh.org/pause']).toBe('true');
    expect(await verify(p)).toMatchObject({ ok: true, observed: { paused: true } });

    const undo = await plan(p.rollback!);
    expect(undo.title).toBe('resume podchaos/checkout-kill');
    expect(await execute(undo)).toMatchObject({ status: 'applied' });
    expect(chaos().metadata.annotations?.['experiment.chaos-mesh.org/pause']).toBeUndefined();
    expect((await verify(undo)).ok).toBe(true);
  });

  it('Litmus: stops the ChaosEngine with engineState stop; the rollback sets it active again', async () => {
    const p = await plan(proposal('pause_chaos', 'ChaosEngine', 'checkout-engine'));
    expect(p.title).toBe('stop chaosengine/checkout-engine');
    expect(p.changes).toEqual([{ path: 'spec.engineState', before: 'active', after: 'stop' }]);
    expect(p.executable).toBe(true);
    expect(await execute(p)).toMatchObject({ status: 'applied' });
    const engine = () => world.kube.getObject('litmuschaos.io/v1alpha1', 'ChaosEngine', 'shop', 'checkout-engine') as unknown as { spec: { engineState: string } };
    expect(engine().spec.engineState).toBe('stop');
    expect((await verify(p)).ok).toBe(true);
    const undo = await plan(p.rollback!);
    expect(await execute(undo)).toMatchObject({ status: 'applied' });
    expect(engine().spec.engineState).toBe('active');
  });

  it('does not pause what is already paused, and refuses other kinds', async () => {
    const p = await plan(proposal('pause_chaos', 'PodChaos', 'checkout-kill'));
    await execute(p);
    const again = await plan(proposal('pause_chaos', 'PodChaos', 'checkout-kill'));
    expect(check(again, 'current state is as expected')).toMatchObject({ status: 'fail', detail: 'podchaos/checkout-kill is already paused' });
    await expect(plan(proposal('pause_chaos', 'Deployment', 'checkout'))).rejects.toThrow(/not one of PodChaos/);
  });
});

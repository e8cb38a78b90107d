/**
 * The main end-to-end example on the demo world: checkout in shop was scaled to 0 by `kubectl scale`;
 * Vigil plans the scale back to 3, dry-runs it as the executor, executes it after an approval, and
 * verifies it against the fake's status.
 */
import { join } from 'node:path';
import { ApiException, AppsV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ACTIONS, planMitigation } from '../../src/actions/registry.js';
import { executorFromKubeConfig, ExecutorIdentityError, openApprovedExecutor, openDryRunExecutor, type ExecutorKubeConfig } from '../../src/actions/executor.js';
import { CHANGE_ANNOTATION } from '../../src/actions/stamp.js';
import type { Approval, PlanContext } from '../../src/actions/types.js';
import type { MitigationProposal } from '../../src/triage/types.js';
import { loadScenario } from '../scenarios/load.js';
import { BOT_USER, EXECUTOR_USER, startActionWorld, type ActionWorld } from './world.js';

const demoDir = join(import.meta.dirname, '../scenarios/demo-checkout-scaled-to-zero');
const INCIDENT = 'INC-42';
const proposal: MitigationProposal = {
  action: 'scale',
  target: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
  params: { replicas: 3 },
  command: 'kubectl scale deployment/checkout -n shop --replicas=3',
  rationale: 'restore the 3 replicas it ran before the scale-down',
};
const diagnosis = { component: { kind: 'Deployment', namespace: 'shop', name: 'checkout' }, facts: { replicas: 0, previousReplicas: 3, manager: 'kubectl' } };
const approval: Approval = { userId: 'U0VIGILSRE', userName: 'alice', at: new Date('2025-03-01T12:00:05Z') };

let world: ActionWorld;
beforeEach(async () => {
  const scenario = await loadScenario(demoDir);
  world = await startActionWorld(scenario.objects);
});
afterEach(() => world.close());

const checkout = () => world.kube.getObject('apps/v1', 'Deployment', 'shop', 'checkout') as unknown as { spec: { replicas: number }; metadata: { annotations?: Record<string, string>; managedFields?: { manager: string; subresource?: string }[] } };

async function planWith(mode: 'impersonation' | 'token', extra: Partial<PlanContext> = {}) {
  const executor = await openDryRunExecutor(world[mode], INCIDENT);
  return planMitigation({ incidentId: INCIDENT, reader: world.reader, executor, diagnosis, environment: 'production', ...extra }, proposal);
}

describe('identities', () => {
  it('a write with the reader identity is rejected by the API (403)', async () => {
    const apps = world.kube.kubeConfigFor('reader-token').makeApiClient(AppsV1Api);
    const err = await apps
      .patchNamespacedDeploymentScale({ namespace: 'shop', name: 'checkout', body: { spec: { replicas: 3 } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiException);
    expect((err as ApiException<unknown>).code).toBe(403);
  });

  it('the executor refuses a reader KubeConfig before sending anything', async () => {
    const readerKc: KubeConfig = world.kube.kubeConfigFor('reader-token');
    // @ts-expect-error a plain (reader) KubeConfig is not an executor KubeConfig
    const typed: ExecutorKubeConfig = readerKc;
    expect(typed).toBe(readerKc);
    const sent = world.kube.requests.length;
    expect(() => executorFromKubeConfig(readerKc, INCIDENT, approval)).toThrow(ExecutorIdentityError);
    // Impersonation mode with a base that already impersonates someone else is refused too.
    const sneaky = world.kube.kubeConfigFor('reader-token', { impersonateUser: 'system:admin' });
    await expect(openApprovedExecutor({ mode: 'impersonate', base: sneaky }, INCIDENT, approval)).rejects.toThrow(ExecutorIdentityError);
    expect(world.kube.requests.length).toBe(sent);
  });
});

describe('scale shop/checkout to 3 (impersonation)', () => {
  it('plans: diff, pre-checks, a dry run through the executor that does not persist, criteria, rollback, risk', async () => {
    const before = structuredClone(checkout());
    const plan = await planWith('impersonation');

    expect(plan.title).toBe('scale deployment/checkout to 3 (from 0)');
    expect(plan.changes).toEqual([{ path: 'spec.replicas', before: 0, after: 3 }]);
    expect(plan.preChecks.map((c) => [c.name, c.status])).toEqual([
      ['target exists', 'pass'],
      ['it is the one in the diagnosis', 'pass'],
      ['current state is as expected', 'pass'],
      ['executor may patch deployments/scale in shop', 'pass'],
      ['executor may patch deployments in shop', 'pass'],
    ]);
    expect(plan.dryRun).toEqual({
      status: 'accepted',
      identity: EXECUTOR_USER,
      requests: ['PATCH deployments/checkout/scale in shop', 'PATCH deployments/checkout in shop'],
    });
    expect(plan.successCriteria).toMatchObject([{ kind: 'ready_replicas', atLeast: 3, withinSeconds: 300, description: 'readyReplicas ≥ 3 within 5 min' }]);
    expect(plan.rollback).toMatchObject({ action: 'scale', params: { replicas: 0 }, command: 'kubectl scale deployment/checkout -n shop --replicas=0' });
    expect(plan.risk.score).toBe(35);
    expect(plan.executable).toBe(true);
    // JSON-serialisable: stored with the approval request.
    expect(JSON.parse(JSON.stringify(plan))).toEqual(plan);

    // The dry run did not persist.
    expect(checkout()).toEqual(before);
    const dry = world.kube.audit.filter((a) => a.verb === 'patch');
    expect(dry).toHaveLength(2);
    for (const entry of dry) expect(entry).toMatchObject({ user: EXECUTOR_USER, impersonatedBy: BOT_USER, dryRun: true, fieldManager: 'vigil', status: 200, extra: { incident: [INCIDENT] } });
  });

  it('executes as the executor with fieldManager vigil and the change annotation; the audit log names approver and incident', async () => {
    const plan = await planWith('impersonation');
    const executor = await openApprovedExecutor(world.impersonation, INCIDENT, approval);
    const result = await ACTIONS.scale.execute(executor, plan);

    expect(result).toMatchObject({ status: 'applied', identity: { mode: 'impersonate', user: EXECUTOR_USER } });
    const annotation = 'INC-42, approved by U0VIGILSRE (alice) at 2025-03-01T12:00:05Z';
    expect(result.status === 'applied' && result.annotation).toBe(annotation);
    const obj = checkout();
    expect(obj.spec.replicas).toBe(3);
    expect(obj.metadata.annotations?.[CHANGE_ANNOTATION]).toBe(annotation);
    expect(obj.metadata.managedFields).toEqual(expect.arrayContaining([expect.objectContaining({ manager: 'vigil', subresource: 'scale' }), expect.objectContaining({ manager: 'vigil' })]));

    const writes = world.kube.audit.filter((a) => a.verb === 'patch' && !a.dryRun);
    expect(writes.map((w) => w.path)).toEqual(['/apis/apps/v1/namespaces/shop/deployments/checkout/scale', '/apis/apps/v1/namespaces/shop/deployments/checkout']);
    for (const w of writes)
      expect(w).toMatchObject({ user: EXECUTOR_USER, impersonatedBy: BOT_USER, fieldManager: 'vigil', status: 200, extra: { 'approved-by': ['U0VIGILSRE'], incident: [INCIDENT] }, userAgent: `vigil-executor (incident=${INCIDENT}; approved-by=U0VIGILSRE)` });
    // Nothing was written with the reader's or the bot's own identity.
    expect(world.kube.audit.filter((a) => a.verb !== 'get' && a.verb !== 'list' && a.verb !== 'create' && a.user !== EXECUTOR_USER)).toEqual([]);
  });

  it('verifies once the controller reports 3 ready replicas', async () => {
    const plan = await planWith('impersonation');
    await ACTIONS.scale.execute(await openApprovedExecutor(world.impersonation, INCIDENT, approval), plan);
    const controller = (async () => {
      await new Promise((r) => setTimeout(r, 150));
      await world.setDeploymentStatus('shop', 'checkout', { replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3 });
    })();
    const result = await ACTIONS.scale.verify(world.reader, plan, { windowMs: 3000, intervalMs: 50 });
    await controller;
    expect(result.ok).toBe(true);
    expect(result.checks).toEqual([{ description: 'readyReplicas ≥ 3 within 5 min', ok: true, observed: 'readyReplicas 3/3' }]);
    expect(result.observed).toMatchObject({ replicas: 3, readyReplicas: 3 });
    expect(result.rollback).toBeUndefined();
  });

  it('checks a caller-supplied PromQL criterion through the metrics port', async () => {
    const errorRatio = 'sum(rate(http_requests_total{namespace="shop",service="checkout",code=~"5.."}[1m])) / sum(rate(http_requests_total{namespace="shop",service="checkout"}[1m]))';
    const plan = await planWith('impersonation', { metricCriteria: [{ query: errorRatio, op: '<', threshold: 0.01, description: '5xx < 1%' }] });
    expect(plan.successCriteria.map((c) => c.description)).toEqual(['readyReplicas ≥ 3 within 5 min', '5xx < 1%']);
    await ACTIONS.scale.execute(await openApprovedExecutor(world.impersonation, INCIDENT, approval), plan);
    await world.setDeploymentStatus('shop', 'checkout', { replicas: 3, readyReplicas: 3 });
    const readings = [0.4, 0.05, 0.002];
    const asked: string[] = [];
    const metrics = { value: async (q: string) => (asked.push(q), readings.shift() ?? 0.002) };
    const result = await ACTIONS.scale.verify(world.reader, plan, { windowMs: 2000, intervalMs: 20, metrics });
    expect(result.ok).toBe(true);
    expect(result.checks[1]).toEqual({ description: '5xx < 1%', ok: true, observed: '0.002 (need < 0.01)' });
    expect(asked).toEqual([errorRatio, errorRatio, errorRatio]);
  });

  it('fails verification when the pods never become ready, and returns the rollback for approval', async () => {
    const plan = await planWith('impersonation');
    await ACTIONS.scale.execute(await openApprovedExecutor(world.impersonation, INCIDENT, approval), plan);
    await world.setDeploymentStatus('shop', 'checkout', { replicas: 3, readyReplicas: 1 });
    const result = await ACTIONS.scale.verify(world.reader, plan, { windowMs: 300, intervalMs: 50 });
    expect(result.ok).toBe(false);
    expect(result.checks[0]).toMatchObject({ ok: false, observed: 'readyReplicas 1/3' });
    expect(result.rollback).toEqual(plan.rollback);
    // Not executed: still 3 replicas.
    expect(checkout().spec.replicas).toBe(3);
  });

  it('a pre-check fails when the target changed since the diagnosis, and execution is refused', async () => {
    await world.patchDeployment('shop', 'checkout', { spec: { replicas: 1 } });
    const plan = await planWith('impersonation');
    expect(plan.preChecks.find((c) => c.name === 'current state is as expected')).toEqual({
      name: 'current state is as expected',
      status: 'fail',
      detail: 'replicas is 1 now; the diagnosis saw 0 (the target changed since the diagnosis)',
    });
    expect(plan.executable).toBe(false);
    const sent = world.kube.requests.length;
    const result = await ACTIONS.scale.execute(await openApprovedExecutor(world.impersonation, INCIDENT, approval), plan);
    expect(result.status).toBe('refused');
    expect(world.kube.requests.length).toBe(sent);
  });

  it('a pre-check fails when the proposal is not about the diagnosed component', async () => {
    const plan = await planWith('impersonation', { diagnosis: { component: { kind: 'Deployment', namespace: 'shop', name: 'storefront' } } });
    expect(plan.preChecks.find((c) => c.name === 'it is the one in the diagnosis')).toMatchObject({ status: 'fail', detail: 'the diagnosis is about deployment/storefront in shop, not deployment/checkout in shop' });
    expect(plan.executable).toBe(false);
  });
});

describe('scale shop/checkout to 3 (short-lived token)', () => {
  it('mints a 10-minute token for the executor SA and writes with it', async () => {
    const plan = await planWith('token');
    expect(plan.dryRun.status).toBe('accepted');
    const started = Date.now();
    const executor = await openApprovedExecutor(world.token, INCIDENT, approval);
    expect(executor.identity.mode).toBe('token');
    expect(new Date(executor.identity.expiresAt!).getTime() - started).toBeLessThanOrEqual(600_000 + 1000);
    // The token itself is nowhere in what the executor exposes.
    expect(JSON.stringify(executor.identity)).not.toContain('fake-sa-token');

    const result = await ACTIONS.scale.execute(executor, plan);
    expect(result).toMatchObject({ status: 'applied', identity: { user: EXECUTOR_USER } });
    expect(checkout().spec.replicas).toBe(3);

    const tokenRequests = world.kube.requests.filter((r) => r.path === '/api/v1/namespaces/vigil/serviceaccounts/vigil-executor/token');
    expect(tokenRequests.length).toBe(2); // one for the plan's dry run, one for this execution
    for (const r of tokenRequests) expect(JSON.parse(r.body!)).toMatchObject({ spec: { expirationSeconds: 600 } });
    expect(world.kube.audit.filter((a) => a.path.endsWith('/token')).every((a) => a.user === BOT_USER)).toBe(true);
    const writes = world.kube.audit.filter((a) => a.verb === 'patch' && !a.dryRun);
    expect(writes).toHaveLength(2);
    for (const w of writes) {
      expect(w).toMatchObject({ user: EXECUTOR_USER, fieldManager: 'vigil', status: 200 });
      expect(w.impersonatedBy).toBeUndefined();
      // A minted token carries no extras: the approver reaches the API server's audit log in the User-Agent.
      expect(w.userAgent).toBe(`vigil-executor (incident=${INCIDENT}; approved-by=U0VIGILSRE)`);
    }
  });
});

/**
 * The window between a plan and its write: `scale`, `rollout_restart` and `suspend_cronjob` write only if
 * the target is still as the plan read it. The fake API server enforces the preconditions the way
 * kube-apiserver does (409 Conflict for a stale resourceVersion, 422 for a failed JSON-patch `test`), on
 * dry runs and writes alike.
 */
import { AppsV1Api, BatchV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openApprovedExecutor, openDryRunExecutor, type ApprovedExecutor } from '../../src/actions/executor.js';
import { executeMitigation, planMitigation } from '../../src/actions/registry.js';
import { CHANGE_ANNOTATION } from '../../src/actions/stamp.js';
import type { Approval, ExecutionResult, Plan } from '../../src/actions/types.js';
import type { MitigationProposal } from '../../src/triage/types.js';
import { CATALOG_EXECUTOR_RULES, CATALOG_OBJECTS } from './catalog-world.js';
import { EXECUTOR_USER, startActionWorld, type ActionWorld } from './world.js';

const INCIDENT = 'INC-9';
const approval: Approval = { userId: 'U0BOB', userName: 'bob', at: new Date('2025-03-01T12:00:00Z') };
const web = { kind: 'Deployment', namespace: 'shop', name: 'web' };
const db = { kind: 'StatefulSet', namespace: 'shop', name: 'db' };
const nightly = { kind: 'CronJob', namespace: 'shop', name: 'nightly' };
const report = { kind: 'CronJob', namespace: 'shop', name: 'report' };
/** A CronJob as the API server stores one that was applied: a generation and annotations. */
const NIGHTLY = {
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: { name: 'nightly', namespace: 'shop', generation: 2, annotations: { team: 'data' } },
  spec: { schedule: '0 3 * * *', suspend: false, jobTemplate: { spec: {} } },
  status: {},
};

let world: ActionWorld;
let apps: AppsV1Api;
let batch: BatchV1Api;
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
beforeEach(async () => {
  world = await startActionWorld([...CATALOG_OBJECTS, NIGHTLY], CATALOG_EXECUTOR_RULES);
  apps = world.kube.kubeConfigFor('admin-token').makeApiClient(AppsV1Api);
  batch = world.kube.kubeConfigFor('admin-token').makeApiClient(BatchV1Api);
});
afterEach(() => world.close());

const proposal = (action: string, target: MitigationProposal['target'], params: Record<string, unknown> = {}): MitigationProposal => ({
  action,
  target,
  params,
  command: `(${action})`,
  rationale: 'test',
});

async function plan(p: MitigationProposal): Promise<Plan> {
  const executor = await openDryRunExecutor(world.impersonation, INCIDENT);
  const planned = await planMitigation({ incidentId: INCIDENT, reader: world.reader, executor, environment: 'staging' }, p);
  expect(planned.executable).toBe(true);
  return planned;
}

/** Executes as the approved executor; `beforeWrite` plays someone else acting after Vigil's last dry run. */
async function execute(p: Plan, beforeWrite?: () => Promise<void>): Promise<ExecutionResult> {
  const executor = await openApprovedExecutor(world.impersonation, INCIDENT, approval);
  if (!beforeWrite) return executeMitigation(executor, p);
  const interleaved: ApprovedExecutor = {
    identity: executor.identity,
    incidentId: executor.incidentId,
    approval: executor.approval,
    annotation: executor.annotation,
    canI: (c) => executor.canI(c),
    dryRun: (w) => executor.dryRun(w),
    apply: async (w) => {
      await beforeWrite();
      return executor.apply(w);
    },
  };
  return executeMitigation(interleaved, p);
}

type Obj = Record<string, any>;
const deployment = (name: string): Obj => world.kube.getObject('apps/v1', 'Deployment', 'shop', name) as unknown as Obj;
const statefulSet = (name: string): Obj => world.kube.getObject('apps/v1', 'StatefulSet', 'shop', name) as unknown as Obj;
const cronJob = (name: string): Obj => world.kube.getObject('batch/v1', 'CronJob', 'shop', name) as unknown as Obj;
/** Writes the executor got through (not dry runs). */
const executorWrites = () => world.kube.audit.filter((a) => a.user === EXECUTOR_USER && !a.dryRun && a.verb === 'patch' && a.status < 300);

const someoneScales = (name: string, replicas: number) => () =>
  apps.patchNamespacedDeploymentScale({ namespace: 'shop', name, body: { spec: { replicas } }, fieldManager: 'kubectl' }, merge).then(() => undefined);
const someoneEdits = (name: string, spec: Record<string, unknown>) => () =>
  batch.patchNamespacedCronJob({ namespace: 'shop', name, body: { spec }, fieldManager: 'kubectl-edit' }, merge).then(() => undefined);
const aJobStarts = (name: string) =>
  batch.patchNamespacedCronJobStatus({ namespace: 'shop', name, body: { status: { lastScheduleTime: '2025-03-01T03:00:00Z', active: [{ kind: 'Job', name: `${name}-1`, namespace: 'shop' }] } }, fieldManager: 'kube-controller-manager' }, merge);

describe('scale (merge patch on the Scale with the planned resourceVersion)', () => {
  it('applies when the object is as planned', async () => {
    const p = await plan(proposal('scale', web, { replicas: 4 }));
    expect(p.writes[0]).toMatchObject({ subresource: 'scale', patchType: 'merge', body: { metadata: { resourceVersion: p.observed.resourceVersion }, spec: { replicas: 4 } } });
    expect(await execute(p)).toMatchObject({ status: 'applied' });
    expect(deployment('web').spec.replicas).toBe(4);
    expect(deployment('web').metadata.annotations[CHANGE_ANNOTATION]).toContain(INCIDENT);
  });

  it('someone scales it after the plan: the final dry run gets 409 Conflict and nothing changes', async () => {
    const p = await plan(proposal('scale', web, { replicas: 4 }));
    await someoneScales('web', 3)();
    const result = await execute(p);
    expect(result).toMatchObject({
      status: 'rejected',
      writes: [{ request: 'PATCH deployments/web/scale in shop', dryRun: true, status: 'rejected', code: 409, reason: 'Conflict' }],
    });
    expect(result.status === 'rejected' && result.message).toBe(
      'deployment/web in shop changed since the plan, so the API server refused the final dry run (409 Conflict: Operation cannot be fulfilled on deployments.apps "web": the object has been modified; please apply your changes to the latest version and try again); nothing was changed. Propose it again to plan against its current state.',
    );
    expect(deployment('web').spec.replicas).toBe(3);
    expect(executorWrites()).toEqual([]);
  });

  it.each([
    ['Deployment', web, 'deployments', () => deployment('web')],
    ['StatefulSet', db, 'statefulsets', () => statefulSet('db')],
  ] as const)('%s: someone scales it between the last dry run and the write: the write itself gets 409, nothing changes', async (_kind, target, plural, read) => {
    const p = await plan(proposal('scale', target, { replicas: 5 }));
    const scaleIt =
      plural === 'deployments'
        ? someoneScales('web', 3)
        : () => apps.patchNamespacedStatefulSetScale({ namespace: 'shop', name: 'db', body: { spec: { replicas: 3 } }, fieldManager: 'kubectl' }, merge).then(() => undefined);
    const result = await execute(p, scaleIt);
    expect(result.status).toBe('rejected');
    if (result.status !== 'rejected') return;
    // Both dry runs (the Scale, then the annotation) passed; the write was refused.
    expect(result.writes.map((w) => [w.dryRun, w.status, w.code])).toEqual([
      [true, 'ok', undefined],
      [true, 'ok', undefined],
      [false, 'rejected', 409],
    ]);
    expect(result.message).toContain(`${target.kind.toLowerCase()}/${target.name} in shop changed since the plan, so the API server refused the write (409 Conflict`);
    expect(result.message).toContain('nothing was changed. Propose it again');
    expect(read().spec.replicas).toBe(3);
    expect(read().metadata.annotations?.[CHANGE_ANNOTATION]).toBeUndefined();
    expect(executorWrites()).toEqual([]);
  });
});

describe('rollout_restart (JSON patch testing uid and generation)', () => {
  it('applies when the spec is as planned, even after a status update (pods coming and going)', async () => {
    const p = await plan(proposal('rollout_restart', web));
    expect((p.writes[0] as { body: unknown[] }).body.slice(0, 2)).toEqual([
      { op: 'test', path: '/metadata/uid', value: p.observed.uid },
      { op: 'test', path: '/metadata/generation', value: 5 },
    ]);
    const rv = deployment('web').metadata.resourceVersion;
    await world.setDeploymentStatus('shop', 'web', { readyReplicas: 0, availableReplicas: 0 });
    expect(deployment('web').metadata.resourceVersion).not.toBe(rv);
    expect(await execute(p)).toMatchObject({ status: 'applied' });
    expect(deployment('web').spec.template.metadata.annotations['kubectl.kubernetes.io/restartedAt']).toBe(p.changes[0]!.after);
    expect(deployment('web').metadata.generation).toBe(6);
  });

  it('someone scales it after the plan: the final dry run gets 422, nothing changes', async () => {
    const p = await plan(proposal('rollout_restart', web));
    await someoneScales('web', 1)();
    const result = await execute(p);
    expect(result).toMatchObject({ status: 'rejected', writes: [{ dryRun: true, status: 'rejected', code: 422, reason: 'Invalid' }] });
    expect(result.status === 'rejected' && result.message).toBe(
      'deployment/web in shop changed since the plan, so the API server refused the final dry run (422 Invalid: testing value /metadata/uid or /metadata/generation failed); nothing was changed. Propose it again to plan against its current state.',
    );
    expect(deployment('web').spec.template.metadata.annotations).toBeUndefined();
    expect(deployment('web').spec.replicas).toBe(1);
    expect(executorWrites()).toEqual([]);
  });

  it('someone restarts it between the last dry run and the write: the write itself gets 422, theirs stays', async () => {
    const p = await plan(proposal('rollout_restart', web));
    const theirs = { spec: { template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': '2025-03-01T11:59:59Z' } } } } };
    const result = await execute(p, () => world.patchDeployment('shop', 'web', theirs));
    expect(result.status).toBe('rejected');
    if (result.status !== 'rejected') return;
    expect(result.writes.at(-1)).toMatchObject({ dryRun: false, status: 'rejected', code: 422 });
    expect(result.message).toContain('changed since the plan, so the API server refused the write (422 Invalid');
    expect(deployment('web').spec.template.metadata.annotations).toEqual({ 'kubectl.kubernetes.io/restartedAt': '2025-03-01T11:59:59Z' });
    expect(deployment('web').metadata.annotations[CHANGE_ANNOTATION]).toBeUndefined();
    expect(executorWrites()).toEqual([]);
  });
});

describe('suspend_cronjob (JSON patch testing uid, generation and spec.suspend)', () => {
  it('applies when the CronJob is as planned, even after a Job started', async () => {
    const p = await plan(proposal('suspend_cronjob', nightly));
    expect((p.writes[0] as { body: unknown[] }).body).toEqual([
      { op: 'test', path: '/metadata/uid', value: p.observed.uid },
      { op: 'test', path: '/metadata/generation', value: 2 },
      { op: 'test', path: '/spec/suspend', value: false },
      { op: 'add', path: '/spec/suspend', value: true },
    ]);
    await aJobStarts('nightly');
    expect(await execute(p)).toMatchObject({ status: 'applied' });
    expect(cronJob('nightly').spec.suspend).toBe(true);
    expect(cronJob('nightly').metadata.annotations).toMatchObject({ team: 'data', [CHANGE_ANNOTATION]: expect.stringContaining(INCIDENT) });
  });

  it('someone edits the CronJob after the plan: the final dry run gets 422, nothing changes', async () => {
    const p = await plan(proposal('suspend_cronjob', nightly));
    await someoneEdits('nightly', { schedule: '0 4 * * *' })();
    const result = await execute(p);
    expect(result).toMatchObject({ status: 'rejected', writes: [{ dryRun: true, status: 'rejected', code: 422, reason: 'Invalid' }] });
    expect(result.status === 'rejected' && result.message).toBe(
      'cronjob/nightly in shop changed since the plan, so the API server refused the final dry run (422 Invalid: testing value /metadata/uid or /metadata/generation or /spec/suspend failed); nothing was changed. Propose it again to plan against its current state.',
    );
    expect(cronJob('nightly').spec).toMatchObject({ schedule: '0 4 * * *', suspend: false });
    expect(executorWrites()).toEqual([]);
  });

  it('someone resumes it between the last dry run and the write: the write itself gets 422', async () => {
    await someoneEdits('nightly', { suspend: true })();
    const p = await plan(proposal('suspend_cronjob', nightly, { suspend: false }));
    const result = await execute(p, someoneEdits('nightly', { suspend: false, schedule: '0 5 * * *' }));
    expect(result.status).toBe('rejected');
    if (result.status !== 'rejected') return;
    expect(result.writes.at(-1)).toMatchObject({ dryRun: false, status: 'rejected', code: 422 });
    expect(result.message).toContain('cronjob/nightly in shop changed since the plan, so the API server refused the write');
    expect(cronJob('nightly').spec).toMatchObject({ schedule: '0 5 * * *', suspend: false });
    expect(cronJob('nightly').metadata.annotations[CHANGE_ANNOTATION]).toBeUndefined();
    expect(executorWrites()).toEqual([]);
  });

  it('a CronJob without annotations refuses on any change: the change annotation would replace the whole map', async () => {
    const p = await plan(proposal('suspend_cronjob', report));
    expect((p.writes[0] as { body: unknown[] }).body).toContainEqual({ op: 'test', path: '/metadata/resourceVersion', value: p.observed.resourceVersion });
    await batch.patchNamespacedCronJob({ namespace: 'shop', name: 'report', body: { metadata: { annotations: { owner: 'data-team' } } }, fieldManager: 'kubectl-annotate' }, merge);
    const result = await execute(p);
    expect(result).toMatchObject({ status: 'rejected', writes: [{ code: 422 }] });
    expect(cronJob('report').metadata.annotations).toEqual({ owner: 'data-team' });
    expect(cronJob('report').spec.suspend).toBe(false);
  });
});

/** Each catalog action's plan (diff, pre-checks, dry run), execution and verification on the fake API server. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openApprovedExecutor, openDryRunExecutor } from '../../src/actions/executor.js';
import { InvalidProposalError } from '../../src/actions/plan.js';
import { executeMitigation, planMitigation, verifyMitigation } from '../../src/actions/registry.js';
import { MASKED } from '../../src/actions/diff.js';
import { CHANGE_ANNOTATION } from '../../src/actions/stamp.js';
import type { Approval, DiagnosisSnapshot, Plan } from '../../src/actions/types.js';
import type { MitigationProposal } from '../../src/triage/types.js';
import { CATALOG_EXECUTOR_RULES, CATALOG_OBJECTS } from './catalog-world.js';
import { EXECUTOR_USER, startActionWorld, type ActionWorld } from './world.js';

const INCIDENT = 'INC-7';
const approval: Approval = { userId: 'U0BOB', userName: 'bob', at: new Date('2025-03-01T12:00:00Z') };
const web = { kind: 'Deployment', namespace: 'shop', name: 'web' };

let world: ActionWorld;
beforeEach(async () => {
  world = await startActionWorld(CATALOG_OBJECTS, CATALOG_EXECUTOR_RULES);
});
afterEach(() => world.close());

const proposal = (action: string, target: MitigationProposal['target'], params: Record<string, unknown> = {}): MitigationProposal => ({
  action,
  target,
  params,
  command: `(${action})`,
  rationale: 'test',
});

async function plan(p: MitigationProposal, diagnosis?: DiagnosisSnapshot): Promise<Plan> {
  const executor = await openDryRunExecutor(world.impersonation, INCIDENT);
  return planMitigation({ incidentId: INCIDENT, reader: world.reader, executor, ...(diagnosis ? { diagnosis } : {}), environment: 'staging' }, p);
}

async function execute(p: Plan) {
  return executeMitigation(await openApprovedExecutor(world.impersonation, INCIDENT, approval), p);
}

const obj = (apiVersion: string, kind: string, ns: string, name: string) => world.kube.getObject(apiVersion, kind, ns, name) as unknown as Record<string, any>;
const status = (p: Plan, name: string) => p.preChecks.find((c) => c.name === name);

describe('rollout_restart', () => {
  it('patches the template restartedAt annotation; no rollback; completes when the controller catches up', async () => {
    const p = await plan(proposal('rollout_restart', web), { component: web });
    expect(p.changes).toHaveLength(1);
    expect(p.changes[0]).toMatchObject({ path: 'spec.template.metadata.annotations.kubectl.kubernetes.io/restartedAt', before: undefined });
    expect(p.dryRun.status).toBe('accepted');
    expect(p.rollback).toBeUndefined();
    expect(p.rollbackNote).toContain('cannot be undone');
    expect(p.successCriteria[0]).toMatchObject({ kind: 'rollout_complete', minGeneration: 6 });
    expect(obj('apps/v1', 'Deployment', 'shop', 'web').spec.template.metadata.annotations).toBeUndefined();

    expect(await execute(p)).toMatchObject({ status: 'applied' });
    const after = obj('apps/v1', 'Deployment', 'shop', 'web');
    expect(after.spec.template.metadata.annotations['kubectl.kubernetes.io/restartedAt']).toBe(p.changes[0]!.after);
    expect(after.metadata.annotations[CHANGE_ANNOTATION]).toBe('INC-7, approved by U0BOB (bob) at 2025-03-01T12:00:00Z');
    expect(after.metadata.generation).toBe(6);

    expect((await verifyMitigation(world.reader, p, { windowMs: 200, intervalMs: 50 })).ok).toBe(false);
    await world.setDeploymentStatus('shop', 'web', { observedGeneration: 6, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 });
    expect((await verifyMitigation(world.reader, p, { windowMs: 200, intervalMs: 50 })).ok).toBe(true);
  });
});

describe('rollout_undo', () => {
  it('puts revision 1’s template back the way kubectl does, masks env values in the diff, and names the undo', async () => {
    const p = await plan(proposal('rollout_undo', web, { toRevision: 1 }), { component: web, facts: { revision: 2 } });
    expect(status(p, 'current state is as expected')).toMatchObject({ status: 'pass', detail: 'current revision 2, as in the diagnosis; revision 1 is ReplicaSet web-aaa111' });
    expect(p.changes).toEqual([
      { path: 'spec.template.spec.containers[web].env[DATABASE_URL].value', before: MASKED, after: MASKED },
      { path: 'spec.template.spec.containers[web].image', before: 'registry.example.com/web:2.0-bad', after: 'registry.example.com/web:1.0' },
    ]);
    expect(JSON.stringify(p.changes)).not.toContain('s3cret');
    expect(p.rollback).toMatchObject({ action: 'rollout_undo', params: { toRevision: 2 } });
    expect(p.dryRun.status).toBe('accepted');

    expect(await execute(p)).toMatchObject({ status: 'applied' });
    const after = obj('apps/v1', 'Deployment', 'shop', 'web');
    expect(after.spec.template.spec.containers[0].image).toBe('registry.example.com/web:1.0');
    expect(after.spec.template.metadata.labels).toEqual({ app: 'web' });
    expect(after.metadata.annotations).toMatchObject({ 'deployment.kubernetes.io/revision': '2', team: 'storefront', [CHANGE_ANNOTATION]: expect.stringContaining('INC-7') });
    expect(after.metadata.managedFields.at(-1)).toMatchObject({ manager: 'vigil' });
  });

  it('fails its pre-check for a revision that is not kept, and sends no dry run', async () => {
    const p = await plan(proposal('rollout_undo', web, { toRevision: 9 }));
    expect(status(p, 'current state is as expected')).toMatchObject({ status: 'fail', detail: 'revision 9 not found (ReplicaSets kept for revisions 1, 2)' });
    expect(p.dryRun.status).toBe('skipped');
    expect(p.executable).toBe(false);
  });

  it('the API refuses the final dry run when a rollout happened after the plan (JSON patch test op)', async () => {
    const p = await plan(proposal('rollout_undo', web, { toRevision: 1 }));
    await world.patchDeployment('shop', 'web', { metadata: { annotations: { 'deployment.kubernetes.io/revision': '3' } } });
    const result = await execute(p);
    expect(result).toMatchObject({ status: 'rejected', message: expect.stringContaining('testing value /metadata/annotations/deployment.kubernetes.io~1revision failed') });
    expect(obj('apps/v1', 'Deployment', 'shop', 'web').spec.template.spec.containers[0].image).toBe('registry.example.com/web:2.0-bad');
  });
});

describe('set_image', () => {
  const setBack = proposal('set_image', web, { container: 'web', image: 'registry.example.com/web:1.0' });

  it('plans the image change, executes it and verifies the template', async () => {
    const p = await plan(setBack, { component: web, facts: { image: 'registry.example.com/web:2.0-bad' } });
    expect(p.changes).toEqual([{ path: 'spec.template.spec.containers[web].image', before: 'registry.example.com/web:2.0-bad', after: 'registry.example.com/web:1.0' }]);
    expect(status(p, 'current state is as expected')?.status).toBe('pass');
    expect(p.rollback).toMatchObject({ action: 'set_image', params: { container: 'web', image: 'registry.example.com/web:2.0-bad' } });
    expect(await execute(p)).toMatchObject({ status: 'applied' });
    const v = await verifyMitigation(world.reader, p, { windowMs: 150, intervalMs: 50 });
    expect(v.checks.find((c) => c.description.startsWith('container web runs'))).toMatchObject({ ok: true });
    expect(v.ok).toBe(false); // the rollout has not completed in the fake
    expect(v.rollback).toEqual(p.rollback);
  });

  it('fails "current state is as expected" when the image is no longer the bad one', async () => {
    await world.patchDeployment('shop', 'web', { spec: { template: { spec: { containers: [{ name: 'web', image: 'registry.example.com/web:2.1' }] } } } });
    const p = await plan(setBack, { component: web, facts: { image: 'registry.example.com/web:2.0-bad' } });
    expect(status(p, 'current state is as expected')).toMatchObject({
      status: 'fail',
      detail: 'container web runs registry.example.com/web:2.1 now; the diagnosis saw registry.example.com/web:2.0-bad (the template changed since the diagnosis)',
    });
    expect(p.executable).toBe(false);
  });
});

describe('set_resources', () => {
  it('raises the StatefulSet memory limit, keeps the rest, and names the restore', async () => {
    const db = { kind: 'StatefulSet', namespace: 'shop', name: 'db' };
    const p = await plan(proposal('set_resources', db, { container: 'db', limits: { memory: '512Mi' } }), { component: db, facts: { memoryLimit: '256Mi' } });
    expect(p.changes).toEqual([{ path: 'spec.template.spec.containers[db].resources.limits.memory', before: '256Mi', after: '512Mi' }]);
    expect(p.command).toBe('kubectl set resources statefulset/db -n shop -c db --limits=memory=512Mi');
    expect(p.rollback).toMatchObject({ action: 'set_resources', params: { container: 'db', limits: { memory: '256Mi' } } });
    expect(p.dryRun).toMatchObject({ status: 'accepted' });
    expect(await execute(p)).toMatchObject({ status: 'applied' });
    expect(obj('apps/v1', 'StatefulSet', 'shop', 'db').spec.template.spec.containers[0].resources).toEqual({ requests: { memory: '256Mi' }, limits: { memory: '512Mi' } });
  });

  it('rejects parameters that are not quantities', async () => {
    await expect(plan(proposal('set_resources', web, { container: 'web', limits: { memory: 'lots' } }))).rejects.toThrow(InvalidProposalError);
  });
});

describe('suspend_cronjob', () => {
  it('suspends, with resume as the rollback', async () => {
    const p = await plan(proposal('suspend_cronjob', { kind: 'CronJob', namespace: 'shop', name: 'report' }));
    expect(p.changes).toEqual([{ path: 'spec.suspend', before: false, after: true }]);
    expect(p.rollback).toMatchObject({ action: 'suspend_cronjob', params: { suspend: false } });
    expect(await execute(p)).toMatchObject({ status: 'applied' });
    expect(obj('batch/v1', 'CronJob', 'shop', 'report').spec.suspend).toBe(true);
    expect((await verifyMitigation(world.reader, p, { windowMs: 100, intervalMs: 50 })).ok).toBe(true);
  });

  it('surfaces the dry-run rejection with the API message when the executor may not write there', async () => {
    const p = await plan(proposal('suspend_cronjob', { kind: 'CronJob', namespace: 'jobs', name: 'cleanup' }));
    expect(status(p, 'executor may patch cronjobs in jobs')).toMatchObject({ status: 'fail' });
    expect(p.dryRun).toEqual({
      status: 'rejected',
      identity: EXECUTOR_USER,
      requests: ['PATCH cronjobs/cleanup in jobs'],
      code: 403,
      reason: 'Forbidden',
      message: 'cronjobs.batch "cleanup" is forbidden: User "system:serviceaccount:vigil:vigil-executor" cannot patch resource "cronjobs" in API group "batch" in the namespace "jobs"',
    });
    expect(p.executable).toBe(false);
  });
});

describe('delete_pod', () => {
  const pod = { kind: 'Pod', namespace: 'shop', name: 'web-bbb222-x1' };

  it('recognises a pod of the diagnosed deployment, dry-runs without deleting, then deletes with the annotation first', async () => {
    const p = await plan(proposal('delete_pod', pod), { component: web });
    expect(status(p, 'it is the one in the diagnosis')).toMatchObject({ status: 'pass', detail: 'pod web-bbb222-x1 belongs to the diagnosed deployment/web in shop' });
    expect(p.changes).toEqual([{ path: 'pod/web-bbb222-x1', before: 'exists (uid 11111111-0000-0000-0000-0000000000a1)', after: '(deleted)' }]);
    expect(p.dryRun).toMatchObject({ status: 'accepted', requests: ['PATCH pods/web-bbb222-x1 in shop', 'DELETE pods/web-bbb222-x1 in shop'] });
    expect(obj('v1', 'Pod', 'shop', 'web-bbb222-x1')).toBeDefined();

    expect(await execute(p)).toMatchObject({ status: 'applied' });
    expect(obj('v1', 'Pod', 'shop', 'web-bbb222-x1')).toBeUndefined();
    const writes = world.kube.audit.filter((a) => !a.dryRun && (a.verb === 'patch' || a.verb === 'delete'));
    expect(writes.map((w) => [w.verb, w.user])).toEqual([
      ['patch', EXECUTOR_USER],
      ['delete', EXECUTOR_USER],
    ]);
    const v = await verifyMitigation(world.reader, p, { windowMs: 100, intervalMs: 50 });
    expect(v).toMatchObject({ ok: true, checks: [{ ok: true, observed: 'old pod gone; web readyReplicas 1/1' }] });
  });
});

describe('actions outside Kubernetes', () => {
  it('flip_flag and revert_pr without their providers plan as not executable, and the Kubernetes executor refuses them', async () => {
    const flag = await plan(proposal('flip_flag', { kind: 'Deployment', namespace: 'shop', name: 'checkout' }, { flag: 'new-checkout-flow', to: 'off' }));
    expect(flag.executable).toBe(false);
    expect(status(flag, 'provider available')).toMatchObject({ status: 'fail' });
    const pr = await plan(proposal('revert_pr', { kind: 'Deployment', namespace: 'shop', name: 'checkout' }, { repo: 'acme/checkout', number: 42 }));
    expect(status(pr, 'provider available')?.detail).toContain('GITHUB_WRITE_TOKEN');
    expect(await executeMitigation(await openApprovedExecutor(world.impersonation, INCIDENT, approval), pr)).toMatchObject({ status: 'refused' });
  });

  it('an unknown action is an InvalidProposalError', async () => {
    await expect(plan(proposal('helm_rollback', web))).rejects.toThrow(InvalidProposalError);
  });
});

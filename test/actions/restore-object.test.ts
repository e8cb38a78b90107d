/**
 * restore_object against the fake API server (real client-node on loopback, RBAC enforced): previous
 * spec from the last kubectl apply or the Helm history, what the plan shows (the diff of the restored
 * fields, the workloads behind the object, risk), the server-side dry run as the executor, the write,
 * verification, the undo, and the guards (unknown previous spec, drift after the plan, RBAC).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openApprovedExecutor, openDryRunExecutor } from '../../src/actions/executor.js';
import { fieldsDigest } from '../../src/actions/objects/fields.js';
import { executeMitigation, planMitigation, verifyMitigation } from '../../src/actions/registry.js';
import { CHANGE_ANNOTATION } from '../../src/actions/stamp.js';
import type { Approval, DiagnosisSnapshot, Plan } from '../../src/actions/types.js';
import type { MitigationProposal } from '../../src/triage/types.js';
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { EDITED_AT, HPA_APPLIED, INGRESS_APPLIED, NETPOL_APPLIED, NETPOL_EDITED, NEW_POLICY, OBJECT_EXECUTOR_RULES, OBJECT_OBJECTS, SERVICE_APPLIED, SERVICE_EDITED, VS_APPLIED, VS_EDITED } from './objects-world.js';
import { EXECUTOR_USER, startActionWorld, type ActionWorld } from './world.js';

const INCIDENT = 'INC-21';
const approval: Approval = { userId: 'U0BOB', userName: 'bob', at: new Date('2025-03-01T12:00:00Z') };

let world: ActionWorld;
beforeEach(async () => {
  world = await startActionWorld(OBJECT_OBJECTS, OBJECT_EXECUTOR_RULES);
});
afterEach(() => world.close());

const ref = (kind: string, name: string) => ({ kind, namespace: 'shop', name });
const restore = (kind: string, name: string, params: Record<string, unknown> = {}): MitigationProposal => ({
  action: 'restore_object',
  target: ref(kind, name),
  params: { kind, name, ...params },
  command: `(restore ${kind}/${name})`,
  rationale: 'test',
});

async function plan(p: MitigationProposal, diagnosis: DiagnosisSnapshot | undefined = { component: p.target, facts: { changedAt: EDITED_AT } }): Promise<Plan> {
  const executor = await openDryRunExecutor(world.impersonation, INCIDENT);
  return planMitigation({ incidentId: INCIDENT, reader: world.reader, executor, ...(diagnosis ? { diagnosis } : {}), environment: 'production' }, p);
}
const execute = async (p: Plan) => executeMitigation(await openApprovedExecutor(world.impersonation, INCIDENT, approval), p);
const verify = (p: Plan) => verifyMitigation(world.reader, p, { windowMs: 200, intervalMs: 50 });
const check = (p: Plan, name: string) => p.preChecks.find((c) => c.name === name);
const rows = (p: Plan) => p.changes.map((c) => `${c.path}: ${JSON.stringify(c.before ?? null)} → ${JSON.stringify(c.after ?? null)}`);
const live = (apiVersion: string, kind: string, name: string) => world.kube.getObject(apiVersion, kind, 'shop', name) as unknown as { spec: Record<string, unknown>; metadata: { uid: string; annotations?: Record<string, string> } };
const patches = (plural: string) => world.kube.audit.filter((a) => a.verb === 'patch' && a.path.includes(`/${plural}/`));

describe('restore_object: a Service edited after its last kubectl apply', () => {
  it('plans the restored selector, the workloads behind it and the undo; dry-runs, executes, verifies and undoes as the executor', async () => {
    const p = await plan(restore('Service', 'checkout'));
    expect(p.title).toBe('restore service/checkout to its last kubectl apply');
    expect(p.executable).toBe(true);
    expect(check(p, 'previous spec known')).toMatchObject({ status: 'pass', detail: expect.stringContaining('the last `kubectl apply`') });
    expect(check(p, 'current state is as expected')?.detail).toMatch(/the restore changes spec\.selector$/);
    // Old selector selects nothing; the restored one selects checkout (3 pods).
    expect(check(p, 'workloads behind it known')).toMatchObject({ status: 'pass', detail: 'its pods now or after the restore: deployment/checkout (3 pods)' });
    expect(check(p, 'executor may patch services in shop')).toMatchObject({ status: 'pass' });
    expect(p.dryRun).toMatchObject({ status: 'accepted', identity: EXECUTOR_USER, requests: ['PATCH services/checkout in shop'] });
    // Only the restored fields, after defaults: the protocol TCP the API added is not a change.
    expect(rows(p)).toEqual(['spec.selector.app: "checkout-v2" → "checkout"']);
    expect(p.content).toMatchObject({ source: { kind: 'last-applied' }, keys: { added: [], removed: [], changed: ['spec.selector'] }, readers: [{ kind: 'Deployment', name: 'checkout', via: ['selected'], pods: 3 }] });
    expect(p.risk.factors).toContainEqual({ name: 'blast radius', points: 10, detail: '3 running pods behind the changed object (traffic, network access or scaling)' });
    expect(p.risk.score).toBe(30 + 25 + 10);
    const uid = live('v1', 'Service', 'checkout').metadata.uid;
    expect(p.successCriteria[0]).toMatchObject({ kind: 'object_fields', digest: fieldsDigest('Service', uid, SERVICE_APPLIED) });
    expect(p.rollback).toMatchObject({ action: 'restore_object', params: { kind: 'Service', name: 'checkout', source: 'replaced', digest: fieldsDigest('Service', uid, SERVICE_EDITED) } });
    expect(live('v1', 'Service', 'checkout').spec['selector']).toEqual({ app: 'checkout-v2' }); // only a dry run so far

    expect(await execute(p)).toMatchObject({ status: 'applied' });
    const after = live('v1', 'Service', 'checkout');
    expect(after.spec['selector']).toEqual({ app: 'checkout' });
    expect(JSON.parse(after.metadata.annotations!['vigil.dev/replaced-spec']!)).toEqual(SERVICE_EDITED);
    expect(after.metadata.annotations![CHANGE_ANNOTATION]).toBe('INC-21, approved by U0BOB (bob) at 2025-03-01T12:00:00Z');
    expect(patches('services').filter((a) => !a.dryRun).map((a) => a.user)).toEqual([EXECUTOR_USER]);
    expect(await verify(p)).toMatchObject({ ok: true, observed: { exists: true } });

    // The undo: the fields kept on the object, checked against the digest the plan named.
    const undo = await plan(p.rollback!, undefined);
    expect(undo.title).toBe('restore service/checkout to the spec before Vigil’s restore');
    expect(undo.executable).toBe(true);
    expect(rows(undo)).toEqual(['spec.selector.app: "checkout" → "checkout-v2"']);
    expect(await execute(undo)).toMatchObject({ status: 'applied' });
    expect(live('v1', 'Service', 'checkout').spec['selector']).toEqual({ app: 'checkout-v2' });
    expect((await verify(undo)).ok).toBe(true);
  });

  it('writes nothing when the previous spec is unknown (never applied, no Helm release)', async () => {
    const p = await plan(restore('Service', 'cart'));
    expect(p.executable).toBe(false);
    expect(check(p, 'previous spec known')).toMatchObject({ status: 'fail', detail: expect.stringMatching(/^previous spec unknown: it has no last-applied-configuration .*; it is not managed by Helm/) });
    expect(p.writes).toEqual([]);
    expect(p.dryRun).toMatchObject({ status: 'skipped' });
    expect(p.content).toBeUndefined();
  });

  it('the API refuses the write when the Service changed after the plan; a write after the diagnosed edit fails the pre-check', async () => {
    const p = await plan(restore('Service', 'checkout'));
    const core = world.kube.kubeConfigFor('admin-token').makeApiClient(CoreV1Api);
    await core.patchNamespacedService({ namespace: 'shop', name: 'checkout', body: { spec: { selector: { app: 'checkout-v3' } } }, fieldManager: 'kubectl-edit' }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    expect(await execute(p)).toMatchObject({ status: 'rejected' });
    expect(live('v1', 'Service', 'checkout').spec['selector']).toEqual({ app: 'checkout-v3' });
    const again = await plan(restore('Service', 'checkout'));
    expect(check(again, 'current state is as expected')).toMatchObject({ status: 'fail', detail: expect.stringContaining('was written again') });
    expect(again.executable).toBe(false);
  });

  it('refuses params that do not name the target', async () => {
    await expect(plan(restore('Service', 'checkout', { kind: 'Ingress' }))).rejects.toThrow(/params.kind Ingress is not the target's kind Service/);
  });
});

describe('restore_object on the other kinds', () => {
  it('Ingress: puts the /api backend back; the workloads behind it are the backend Services’ pods, before and after', async () => {
    const p = await plan(restore('Ingress', 'shop-edge'));
    expect(p.executable).toBe(true);
    expect(p.dryRun).toMatchObject({ status: 'accepted', requests: ['PATCH ingresses/shop-edge in shop'] });
    expect(rows(p)).toEqual([expect.stringMatching(/^spec\.rules: .*storefront.* → .*checkout/)]);
    // storefront now; checkout after the restore, but service/checkout was edited too and selects nothing yet.
    expect(p.content?.readers.map((r) => r.name)).toEqual(['storefront']);
    expect(await execute(p)).toMatchObject({ status: 'applied' });
    expect(live('networking.k8s.io/v1', 'Ingress', 'shop-edge').spec['rules']).toEqual(INGRESS_APPLIED.rules);
    expect((await verify(p)).ok).toBe(true);
    const undo = await plan(p.rollback!, undefined);
    expect(await execute(undo)).toMatchObject({ status: 'applied' });
    expect((live('networking.k8s.io/v1', 'Ingress', 'shop-edge').spec['rules'] as { http: { paths: { backend: { service: { name: string } } }[] } }[])[0]!.http.paths[0]!.backend.service.name).toBe('storefront');
  });

  it('NetworkPolicy: a security decision, scored higher; puts the allowed peers back and undoes', async () => {
    const p = await plan(restore('NetworkPolicy', 'checkout-ingress'));
    expect(p.executable).toBe(true);
    expect(p.risk.factors[0]).toEqual({ name: 'action', points: 40, detail: 'restore network policy' });
    expect(p.notes?.[0]).toMatch(/security decision/);
    expect(p.content?.readers.map((r) => r.name)).toEqual(['checkout']);
    expect(await execute(p)).toMatchObject({ status: 'applied' });
    expect(live('networking.k8s.io/v1', 'NetworkPolicy', 'checkout-ingress').spec['ingress']).toEqual(NETPOL_APPLIED.ingress);
    expect((await verify(p)).ok).toBe(true);
    const undo = await plan(p.rollback!, undefined);
    expect(await execute(undo)).toMatchObject({ status: 'applied' });
    expect(live('networking.k8s.io/v1', 'NetworkPolicy', 'checkout-ingress').spec['ingress']).toEqual(NETPOL_EDITED.ingress);
  });

  it('HPA: restores the maxReplicas an edit lowered, judged by the Deployment it scales (the diagnosed component)', async () => {
    const p = await plan(restore('HorizontalPodAutoscaler', 'checkout'), { component: ref('Deployment', 'checkout'), facts: { changedAt: EDITED_AT } });
    expect(check(p, 'it is the one in the diagnosis')).toMatchObject({ status: 'pass', detail: expect.stringContaining('scales the diagnosed deployment/checkout') });
    expect(check(p, 'workloads behind it known')).toMatchObject({ status: 'pass', detail: 'it scales deployment/checkout (3 pods)' });
    expect(rows(p)).toEqual(['spec.maxReplicas: 3 → 10']);
    expect(p.executable).toBe(true);
    expect(await execute(p)).toMatchObject({ status: 'applied' });
    expect(live('autoscaling/v2', 'HorizontalPodAutoscaler', 'checkout').spec['maxReplicas']).toBe(HPA_APPLIED.maxReplicas);
    expect((await verify(p)).ok).toBe(true);
  });

  it('VirtualService: removes the injected fault', async () => {
    const p = await plan(restore('VirtualService', 'checkout'));
    expect(p.executable).toBe(true);
    expect(rows(p)).toEqual([expect.stringMatching(/^spec\.http: .*abort.* → /)]);
    expect(await execute(p)).toMatchObject({ status: 'applied' });
    expect(live('networking.istio.io/v1', 'VirtualService', 'checkout').spec['http']).toEqual(VS_APPLIED.http);
    expect((await verify(p)).ok).toBe(true);
    const undo = await plan(p.rollback!, undefined);
    expect(await execute(undo)).toMatchObject({ status: 'applied' });
    expect(live('networking.istio.io/v1', 'VirtualService', 'checkout').spec['http']).toEqual(VS_EDITED.http);
  });

  it('DestinationRule managed by Helm and edited after the release: the deployed revision’s rendering', async () => {
    const p = await plan(restore('DestinationRule', 'checkout'));
    expect(check(p, 'previous spec known')).toMatchObject({ status: 'pass', detail: expect.stringContaining('Helm release mesh revision 1 (the deployed one; the live fields were changed after it)') });
    expect(p.content?.source).toEqual({ kind: 'helm', release: 'mesh', namespace: 'shop', revision: 1 });
    expect(rows(p)).toEqual(['spec.subsets[stable].labels.track: "canary" → null']);
    expect(await execute(p)).toMatchObject({ status: 'applied' });
    expect(live('networking.istio.io/v1', 'DestinationRule', 'checkout').spec['subsets']).toEqual([{ name: 'stable', labels: { app: 'checkout' } }]);
  });

  it('without RBAC for the kind the plan says so and the server-side dry run is refused', async () => {
    await world.close();
    world = await startActionWorld(OBJECT_OBJECTS, OBJECT_EXECUTOR_RULES.filter((r) => !r.resources.includes('ingresses')));
    const p = await plan(restore('Ingress', 'shop-edge'));
    expect(check(p, 'executor may patch ingresses in shop')).toMatchObject({ status: 'fail' });
    expect(p.dryRun).toMatchObject({ status: 'rejected', code: 403 });
    expect(p.executable).toBe(false);
  });
});

describe('delete_network_policy: a policy added right before the onset', () => {
  const del = (name: string, params: Record<string, unknown> = {}): MitigationProposal => ({ action: 'delete_network_policy', target: ref('NetworkPolicy', name), params: { name, ...params }, command: '(delete)', rationale: 'test' });
  const policy = (name: string) => world.kube.getObject('networking.k8s.io/v1', 'NetworkPolicy', 'shop', name) as unknown as { spec: unknown; metadata: { uid: string; labels?: Record<string, string>; annotations?: Record<string, string> } } | undefined;

  it('plans a high-risk delete as the executor, deletes and verifies; the undo re-creates it as it was', async () => {
    const p = await plan(del('deny-egress'));
    expect(p.title).toBe('delete networkpolicy/deny-egress');
    expect(check(p, 'it was added, not edited')).toMatchObject({ status: 'pass' });
    expect(check(p, 'workloads behind it known')).toMatchObject({ status: 'pass', detail: 'it selects deployment/checkout (3 pods)' });
    expect(check(p, 'executor may delete networkpolicies in shop')).toMatchObject({ status: 'pass' });
    expect(p.dryRun).toMatchObject({ status: 'accepted', identity: EXECUTOR_USER, requests: ['PATCH networkpolicies/deny-egress in shop', 'DELETE networkpolicies/deny-egress in shop'] });
    expect(p.notes?.[0]).toMatch(/undoes a security decision/);
    expect(p.risk.factors[0]).toEqual({ name: 'action', points: 55, detail: 'delete network policy' });
    expect(p.risk.score).toBe(55 + 25 + 10);
    expect(p.rollback).toMatchObject({ action: 'delete_network_policy', params: { name: 'deny-egress', undo: { spec: NEW_POLICY, labels: { team: 'security' }, annotations: { 'security.example.com/ticket': 'SEC-12' } } } });
    const uid = policy('deny-egress')!.metadata.uid;

    expect(await execute(p)).toMatchObject({ status: 'applied' });
    expect(policy('deny-egress')).toBeUndefined();
    expect(await verify(p)).toMatchObject({ ok: true });

    const undo = await plan(p.rollback!, undefined);
    expect(undo.title).toBe('re-create networkpolicy/deny-egress');
    expect(check(undo, 'target does not exist')).toMatchObject({ status: 'pass' });
    expect(check(undo, 'executor may create networkpolicies in shop')).toMatchObject({ status: 'pass' });
    expect(undo.dryRun).toMatchObject({ status: 'accepted', requests: ['CREATE networkpolicies/deny-egress in shop'] });
    expect(await execute(undo)).toMatchObject({ status: 'applied' });
    const back = policy('deny-egress')!;
    expect(back.spec).toEqual(NEW_POLICY);
    expect(back.metadata.uid).not.toBe(uid);
    expect(back.metadata.labels).toEqual({ team: 'security' });
    expect(back.metadata.annotations).toMatchObject({ 'security.example.com/ticket': 'SEC-12', [CHANGE_ANNOTATION]: expect.stringContaining('INC-21') });
    expect((await verify(undo)).ok).toBe(true);
    // Re-creating what exists is refused.
    expect(check(await plan(p.rollback!, undefined), 'target does not exist')).toMatchObject({ status: 'fail' });
  });

  it('refuses to delete a policy whose previous spec is known (restore_object is the way back)', async () => {
    const p = await plan(del('checkout-ingress'));
    expect(check(p, 'it was added, not edited')).toMatchObject({ status: 'fail', detail: expect.stringContaining('restore_object') });
    expect(p.executable).toBe(false);
    expect(p.writes).toEqual([]);
  });
});

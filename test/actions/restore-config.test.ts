/**
 * restore_config against the fake API server (real client-node on loopback): where the previous content
 * comes from, what the plan shows and never shows, the guards (unknown content, drift, RBAC), the write
 * through the executor and its undo.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { contentDigest } from '../../src/actions/config/content.js';
import { openApprovedExecutor, openDryRunExecutor } from '../../src/actions/executor.js';
import { InvalidProposalError } from '../../src/actions/plan.js';
import { executeMitigation, planMitigation, verifyMitigation } from '../../src/actions/registry.js';
import { CHANGE_ANNOTATION } from '../../src/actions/stamp.js';
import type { Approval, DiagnosisSnapshot, Plan } from '../../src/actions/types.js';
import { storablePlan } from '../../src/approvals/planner.js';
import type { ApprovalView } from '../../src/approvals/types.js';
import { createRedactor } from '../../src/redact/index.js';
import { renderApprovalCard } from '../../src/slack/blocks/approval.js';
import { renderBlocksAsText } from '../../src/slack/blocks/text.js';
import type { MitigationProposal } from '../../src/triage/types.js';
import { APPLIED_DATA, CONFIG_EXECUTOR_RULES, CONFIG_OBJECTS, EDITED_AT, EDITED_DATA, HELM_REV1_DATA, PLANTED } from './config-world.js';
import { EXECUTOR_USER, startActionWorld, type ActionWorld } from './world.js';

const INCIDENT = 'INC-9';
const approval: Approval = { userId: 'U0BOB', userName: 'bob', at: new Date('2025-03-01T12:00:00Z') };
const redactor = createRedactor();

let world: ActionWorld;
beforeEach(async () => {
  world = await startActionWorld(CONFIG_OBJECTS, CONFIG_EXECUTOR_RULES);
});
afterEach(() => world.close());

const cm = (name: string, namespace = 'shop') => ({ kind: 'ConfigMap', namespace, name });
const restore = (name: string, namespace = 'shop', params: Record<string, unknown> = {}): MitigationProposal => ({
  action: 'restore_config',
  target: cm(name, namespace),
  params: { kind: 'ConfigMap', name, ...params },
  command: `(restore ${name})`,
  rationale: 'test',
});

async function plan(p: MitigationProposal, diagnosis: DiagnosisSnapshot | undefined = { component: p.target }): Promise<Plan> {
  const executor = await openDryRunExecutor(world.impersonation, INCIDENT);
  return planMitigation({ incidentId: INCIDENT, reader: world.reader, executor, ...(diagnosis ? { diagnosis } : {}), environment: 'staging', redactor }, p);
}

async function execute(p: Plan) {
  return executeMitigation(await openApprovedExecutor(world.impersonation, INCIDENT, approval), p);
}

const live = (name: string, namespace = 'shop') => world.kube.getObject('v1', 'ConfigMap', namespace, name) as unknown as { data?: Record<string, string>; metadata: { uid: string; annotations?: Record<string, string> } };
const check = (p: Plan, name: string) => p.preChecks.find((c) => c.name === name);
const patches = () => world.kube.audit.filter((a) => a.verb === 'patch' && a.path.includes('/configmaps/'));
const rows = (p: Plan) => p.changes.map((c) => `${c.path}: ${c.before ?? '(unset)'} → ${c.after ?? '(unset)'}`);

describe('restore_config from the last kubectl apply', () => {
  it('plans the keys and lines that change, the readers, the follow-ups, the undo; executes, verifies and undoes', async () => {
    const p = await plan(restore('cache-config'), { component: cm('cache-config'), facts: { changedAt: EDITED_AT, editor: 'kubectl-edit' } });
    expect(p.title).toBe('restore configmap/cache-config to its last kubectl apply');
    expect(p.executable).toBe(true);
    expect(check(p, 'previous content known')).toMatchObject({ status: 'pass', detail: expect.stringContaining('the last `kubectl apply`') });
    expect(check(p, 'readers known')).toMatchObject({ status: 'pass', detail: 'read by deployment/api (env), statefulset/cache (volume), cronjob/report (env), deployment/worker (subPath)' });
    expect(check(p, 'executor may patch configmaps in shop')).toMatchObject({ status: 'pass' });
    expect(p.dryRun).toMatchObject({ status: 'accepted', identity: EXECUTOR_USER, requests: ['PATCH configmaps/cache-config in shop'] });
    expect(p.content).toMatchObject({ source: { kind: 'last-applied' }, keys: { added: [], removed: ['ADMIN_PASSWORD'], changed: ['LOG_LEVEL', 'redis.conf'] } });
    const placeholder = String.raw`\[REDACTED:password:[0-9a-f]{8}\]`;
    expect(rows(p)).toEqual([
      expect.stringMatching(new RegExp(String.raw`^data\.ADMIN_PASSWORD: ${placeholder} → \(unset\)$`)),
      'data.LOG_LEVEL: debug → info',
      // The placeholders differ: the edit changed the password too, which the approver should know.
      expect.stringMatching(new RegExp(String.raw`^data\.redis\.conf line 3: requirepass ${placeholder} → requirepass ${placeholder}$`)),
      'data.redis.conf line 4: maxmemory 64mb → maxmemory 2gb',
    ]);
    const [, oldPass, newPass] = /requirepass (\S+) → requirepass (\S+)/.exec(rows(p)[2]!)!;
    expect(oldPass).not.toBe(newPass);
    expect(check(p, 'current state is as expected')?.detail).toMatch(/differs from it: the restore changes keys LOG_LEVEL, redis.conf; removes key ADMIN_PASSWORD \(not in the previous content\)$/);
    expect(p.notes).toEqual([
      expect.stringMatching(/^deployment\/api reads it through env variables: its 2 pods keep the old values until they restart .*a rollout restart is offered as a follow-up/),
      expect.stringMatching(/^statefulset\/cache mounts it as a volume: the kubelet updates the files within about a minute.*kubectl rollout restart statefulset\/cache -n shop/),
      'cronjob/report reads it through env variables: its next run sees the restored content',
      expect.stringMatching(/^deployment\/worker reads it through a subPath mount: .*the kubelet never updates a subPath mount/),
    ]);
    expect(p.followUps?.map((f) => [f.action, f.target.name, f.command])).toEqual([
      ['rollout_restart', 'api', 'kubectl rollout restart deployment/api -n shop'],
      ['rollout_restart', 'worker', 'kubectl rollout restart deployment/worker -n shop'],
    ]);
    // Every reader's pods run with the restored content: 1 + 2 + 1 (the CronJob runs none now).
    expect(p.risk.factors).toContainEqual({ name: 'blast radius', points: 12, detail: '4 running pods read the changed content' });
    expect(p.risk.score).toBe(30 + 5 + 12);
    const uid = live('cache-config').metadata.uid;
    expect(p.successCriteria[0]).toMatchObject({ kind: 'config_content', digest: contentDigest(uid, { data: APPLIED_DATA, binaryData: {} }) });
    expect(p.rollback).toMatchObject({ action: 'restore_config', params: { kind: 'ConfigMap', name: 'cache-config', source: 'replaced', digest: contentDigest(uid, { data: EDITED_DATA, binaryData: {} }) } });
    expect(live('cache-config').data).toEqual(EDITED_DATA); // only a dry run so far

    expect(await execute(p)).toMatchObject({ status: 'applied' });
    const after = live('cache-config');
    expect(after.data).toEqual(APPLIED_DATA);
    expect(JSON.parse(after.metadata.annotations!['vigil.dev/replaced-content']!)).toEqual({ data: EDITED_DATA, binaryData: {} });
    expect(after.metadata.annotations![CHANGE_ANNOTATION]).toBe('INC-9, approved by U0BOB (bob) at 2025-03-01T12:00:00Z');
    expect(patches().filter((a) => !a.dryRun).map((a) => a.user)).toEqual([EXECUTOR_USER]);
    expect(await verifyMitigation(world.reader, p, { windowMs: 100, intervalMs: 50 })).toMatchObject({ ok: true, observed: { exists: true, keys: ['LOG_LEVEL', 'redis.conf'] } });

    // The undo: re-derived from the annotation, checked against the digest the plan named.
    const undo = await plan(p.rollback!, undefined);
    expect(undo.title).toBe('restore configmap/cache-config to the content before Vigil’s restore');
    expect(undo.executable).toBe(true);
    expect(rows(undo)).toContain('data.redis.conf line 4: maxmemory 2gb → maxmemory 64mb');
    expect(await execute(undo)).toMatchObject({ status: 'applied' });
    expect(live('cache-config').data).toEqual(EDITED_DATA);
    expect((await verifyMitigation(world.reader, undo, { windowMs: 100, intervalMs: 50 })).ok).toBe(true);
  });

  it('keeps every planted secret out of the stored plan, the card and the plan itself (only the in-memory write body holds them)', async () => {
    const p = await plan(restore('cache-config'));
    const helm = await plan(restore('app-config'));
    for (const x of [p, helm]) {
      const { writes, ...shown } = x;
      const stored = storablePlan(x, { component: x.target }, redactor);
      const view: ApprovalView = {
        id: 'req1', incidentId: INCIDENT, status: 'pending', proposal: x.proposal, plan: stored, requestedBy: 'vigil', decisions: [], updatedAt: new Date(),
        decision: { kind: 'require_approval', approvals: 2, approverGroups: ['S0SREONCALL'], selfApprove: false, selfApproveMaxRisk: 30, rule: 'r', limits: {} },
      };
      const card = renderApprovalCard(view);
      for (const secret of PLANTED) {
        expect(JSON.stringify(shown), secret).not.toContain(secret);
        expect(JSON.stringify(stored), secret).not.toContain(secret);
        expect(JSON.stringify(card), secret).not.toContain(secret);
      }
      expect(JSON.stringify(writes)).toMatch(/s3cretRedis|HelmPl4nted/);
    }
    const text = renderBlocksAsText(renderApprovalCard({ id: 'r', incidentId: INCIDENT, status: 'pending', proposal: p.proposal, plan: storablePlan(p, undefined, redactor), requestedBy: 'vigil', decisions: [], updatedAt: new Date(), decision: { kind: 'require_approval', approvals: 1, approverGroups: ['S0SREONCALL'], selfApprove: false, selfApproveMaxRisk: 30, rule: 'r', limits: {} } }));
    expect(text).toContain('data.redis.conf line 4: maxmemory 64mb → maxmemory 2gb');
    expect(text).toContain('Good to know');
    expect(text).toContain('kubectl rollout restart deployment/api -n shop');
  });

  it('the API refuses the write when the ConfigMap changed after the plan (test on resourceVersion)', async () => {
    const p = await plan(restore('cache-config'));
    await world.patchConfigMap('shop', 'cache-config', { data: { LOG_LEVEL: 'warn' } });
    const result = await execute(p);
    expect(result).toMatchObject({ status: 'rejected', message: expect.stringContaining('configmap/cache-config in shop changed since the plan') });
    expect(result.status === 'rejected' && result.message).toContain('testing value /metadata/uid or /metadata/resourceVersion failed');
    expect(live('cache-config').data).toEqual({ ...EDITED_DATA, LOG_LEVEL: 'warn' });
    expect(patches().filter((a) => !a.dryRun && a.user === EXECUTOR_USER)).toEqual([]);
  });

  it('fails "current state is as expected" when the data was written again after the edit the diagnosis saw', async () => {
    await world.patchConfigMap('shop', 'cache-config', { data: { LOG_LEVEL: 'warn' } });
    const p = await plan(restore('cache-config'), { component: cm('cache-config'), facts: { changedAt: EDITED_AT } });
    expect(check(p, 'current state is as expected')).toMatchObject({ status: 'fail', detail: expect.stringMatching(/was written again at .* by `kubectl-edit`, after the edit the diagnosis saw/) });
    expect(p.executable).toBe(false);
  });
});

describe('restore_config from the Helm release history', () => {
  it('puts back the previous revision’s rendering when the deployed revision changed the ConfigMap', async () => {
    const p = await plan(restore('app-config'));
    expect(p.title).toBe('restore configmap/app-config to Helm release app revision 1');
    expect(p.content?.source).toEqual({ kind: 'helm', release: 'app', namespace: 'shop', revision: 1 });
    expect(p.command).toContain('helm get manifest app -n shop --revision 1');
    expect(rows(p)).toEqual([
      'data.FEATURE_MODE: turbo → classic',
      expect.stringMatching(/^data\.app\.properties line 2: db\.password=\[REDACTED:password:[0-9a-f]{8}\] → db\.password=\[REDACTED:password:[0-9a-f]{8}\]$/),
      'data.app.properties line 3: pool.size=2 → pool.size=10',
    ]);
    expect(p.notes).toContainEqual(expect.stringContaining('Helm still records revision 2 as deployed'));
    expect(p.executable).toBe(true);
    expect(await execute(p)).toMatchObject({ status: 'applied' });
    expect(live('app-config').data).toEqual(HELM_REV1_DATA);
    expect((await verifyMitigation(world.reader, p, { windowMs: 100, intervalMs: 50 })).ok).toBe(true);
  });

  it('puts back the deployed revision’s rendering when the ConfigMap was edited after it', async () => {
    const p = await plan(restore('app-flags'));
    expect(p.content?.source).toEqual({ kind: 'helm', release: 'app', namespace: 'shop', revision: 2 });
    expect(check(p, 'previous content known')?.detail).toContain('the deployed one; the live content was changed after it');
    expect(rows(p)).toEqual(['data.flags: beta=on → beta=off']);
    expect(check(p, 'readers known')?.detail).toBe('no workload in shop reads it');
    expect(p.notes).toContainEqual('no workload in shop reads configmap/app-flags: nothing running sees the restored content until one does');
  });
});

describe('restore_config refuses rather than guesses', () => {
  it('unknown previous content: a failing pre-check that says so, no dry run, nothing written', async () => {
    const before = world.kube.requests.length;
    const p = await plan(restore('plain-config'));
    expect(check(p, 'previous content known')).toEqual({
      name: 'previous content known',
      status: 'fail',
      detail:
        'previous content unknown: it has no last-applied-configuration (never `kubectl apply`-ed); it is not managed by Helm (no meta.helm.sh/release-name annotation). Nothing is written; restore it by hand from source control',
    });
    expect(p).toMatchObject({ executable: false, dryRun: { status: 'skipped' }, writes: [] });
    expect(p.rollback).toBeUndefined();
    expect(world.kube.requests.slice(before).filter((r) => r.method !== 'GET' && !r.path.endsWith('selfsubjectaccessreviews'))).toEqual([]);
    expect(await execute(p)).toMatchObject({ status: 'refused' });
    expect(live('plain-config').data).toEqual({ MODE: 'fast' });
  });

  it('a stale last-applied annotation (Helm wrote the data after that apply) is not taken for the previous content', async () => {
    const p = await plan(restore('mixed-config'));
    expect(check(p, 'previous content known')).toMatchObject({
      status: 'fail',
      detail:
        'previous content unknown: its last-applied-configuration is older than Helm’s last write of the data (managedFields), so it is not the previous content; Helm release app revision 2 (deployed): it does not render configmap/mixed-config. Nothing is written; restore it by hand from source control',
    });
    expect(p.executable).toBe(false);
  });

  it('an undo whose kept content is not the one it was planned for fails the same pre-check', async () => {
    const p = await plan(restore('cache-config', 'shop', { source: 'replaced', digest: 'a'.repeat(64) }));
    expect(check(p, 'previous content known')).toMatchObject({ status: 'fail', detail: expect.stringContaining('previous content unknown: it has no vigil.dev/replaced-content annotation') });
    const first = await plan(restore('cache-config'));
    await execute(first);
    const wrong = await plan(restore('cache-config', 'shop', { source: 'replaced', digest: 'a'.repeat(64) }));
    expect(check(wrong, 'previous content known')?.detail).toMatch(/^previous content unknown: the content Vigil's last restore replaced .* is sha256:\w{12}, not the sha256:aaaaaaaaaaaa this step was planned for/);
  });

  it('RBAC: without patch on configmaps in the namespace, the access check fails and the dry run is rejected', async () => {
    const p = await plan(restore('cache-config', 'jobs'));
    expect(check(p, 'executor may patch configmaps in jobs')).toMatchObject({ status: 'fail' });
    expect(p.dryRun).toEqual({
      status: 'rejected',
      identity: EXECUTOR_USER,
      requests: ['PATCH configmaps/cache-config in jobs'],
      code: 403,
      reason: 'Forbidden',
      message: 'configmaps "cache-config" is forbidden: User "system:serviceaccount:vigil:vigil-executor" cannot patch resource "configmaps" in API group "" in the namespace "jobs"',
    });
    expect(p.executable).toBe(false);
    expect(live('cache-config', 'jobs').data).toEqual(EDITED_DATA);
  });

  it('rejects parameters that do not name the target, and Secrets', async () => {
    await expect(plan(restore('cache-config', 'shop', { name: 'other' }))).rejects.toThrow(InvalidProposalError);
    await expect(plan({ ...restore('cache-config'), params: { kind: 'Secret', name: 'cache-config' } })).rejects.toThrow(/invalid parameters for restore_config: kind/);
    await expect(plan({ ...restore('db-credentials'), target: { kind: 'Secret', namespace: 'shop', name: 'db-credentials' } })).rejects.toThrow('target kind Secret is not one of ConfigMap');
  });
});

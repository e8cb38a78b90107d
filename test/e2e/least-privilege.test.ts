/**
 * Least privilege, proven from outside against the demo world, whose fake API server enforces deploy/'s
 * RBAC (reader-rbac.yaml, executor-access.yaml or executor-token.yaml, executor-rbac.yaml):
 * - the reader — Vigil's own kubeconfig, ServiceAccount `vigil` — cannot write anything, nor read
 *   Secrets across the cluster or Vigil's own;
 * - the executor can do only what executor-rbac.yaml gives it, where it is bound;
 * - the demo's approved scale is made by `system:serviceaccount:vigil:vigil-executor`, impersonated by
 *   `system:serviceaccount:vigil:vigil` (or, in token mode, with a token the reader minted);
 * - `npm run demo -- --doctor` passes with deploy/'s RBAC, and fails once the reader is over-privileged.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { AppsV1Api, BatchV1Api, CoreV1Api, KubeConfig, PatchStrategy, RbacAuthorizationV1Api, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDoctor } from '../../src/cli/doctor.js';
import { playDeploymentController, playSteps, Recorder, type WriteRecord } from '../../harness/steps.js';
import { ALERT_CHANNEL, EXECUTOR_USER, READER_USER, startWorld, type World } from '../support/world.js';
import { kubeStatus as status } from './helpers.js';

const root = new URL('../..', import.meta.url).pathname;
const DEMO = join(root, 'test', 'scenarios', 'demo-checkout-scaled-to-zero');
const POLICY = join(root, 'deploy', 'policy.example.yaml');
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** Vigil's own kubeconfig file, as the bot loads it: the reader's credentials. */
function readerConfig(world: World): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(world.kubeconfigPath);
  return kc;
}

/** The reader's credentials impersonating the executor, as src/actions/executor.ts does. */
function executorConfig(world: World): KubeConfig {
  const kc = readerConfig(world);
  const user = kc.getCurrentUser()!;
  kc.users = kc.users.map((u) => (u.name === user.name ? { ...u, impersonateUser: EXECUTOR_USER } : u));
  return kc;
}

async function doctorOf(world: World, argv: string[] = []): Promise<{ code: number; text: string }> {
  const lines: string[] = [];
  const code = await runDoctor(['doctor', ...argv], world.env, (l) => lines.push(l));
  return { code, text: lines.join('\n') };
}

describe('least privilege under deploy/ RBAC (the demo world)', () => {
  let world: World;

  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO, noise: false, policyFile: POLICY, startApp: false });
  });
  afterAll(() => world.close());

  it('runs under deploy/ RBAC by default: the executor bound where the policy allows writes, Secrets per namespace', () => {
    expect(world.rbac?.mode).toBe('impersonate');
    expect(world.rbac?.executorNamespaces).toEqual({
      shop: 'vigil-executor-production',
      payments: 'vigil-executor-production',
      'shop-staging': 'vigil-executor-staging',
      'payments-staging': 'vigil-executor-staging',
    });
    expect(world.rbac?.readerSecretNamespaces).not.toContain('vigil');
    expect(world.rbac?.readerSecretNamespaces).not.toContain('kube-system');
  });

  it('the reader cannot patch, delete or create anything, nor read Secrets cluster-wide or in vigil: 403 from the API server', async () => {
    const kc = readerConfig(world);
    const apps = kc.makeApiClient(AppsV1Api);
    const core = kc.makeApiClient(CoreV1Api);
    const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
    // It does read.
    expect(await status(apps.readNamespacedDeployment({ name: 'checkout', namespace: 'shop' }))).toBe(200);
    const refused = {
      'patch deployment': await status(apps.patchNamespacedDeployment({ name: 'checkout', namespace: 'shop', body: { spec: { replicas: 3 } } }, merge)),
      'patch deployments/scale': await status(apps.patchNamespacedDeploymentScale({ name: 'checkout', namespace: 'shop', body: { spec: { replicas: 3 } } }, merge)),
      'delete deployment': await status(apps.deleteNamespacedDeployment({ name: 'checkout', namespace: 'shop' })),
      'delete pod': await status(core.deleteNamespacedPod({ name: 'storefront-6b7f9c8d4-2kx8v', namespace: 'shop' })),
      'create configmap': await status(core.createNamespacedConfigMap({ namespace: 'shop', body: { metadata: { name: 'x' }, data: { a: 'b' } } })),
      'create secret': await status(core.createNamespacedSecret({ namespace: 'shop', body: { metadata: { name: 'x' }, stringData: { a: 'b' } } })),
      'patch node': await status(core.patchNode({ name: 'node-1', body: { spec: { unschedulable: true } } }, merge)),
      'create clusterrolebinding': await status(
        rbac.createClusterRoleBinding({ body: { metadata: { name: 'mine' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [{ kind: 'User', name: READER_USER }] } }),
      ),
      'mint executor token': await status(core.createNamespacedServiceAccountToken({ name: 'vigil-executor', namespace: 'vigil', body: { spec: { expirationSeconds: 600 } } })),
      'list secrets cluster-wide': await status(core.listSecretForAllNamespaces()),
      "read Vigil's own Secret": await status(core.readNamespacedSecret({ name: 'vigil-slack', namespace: 'vigil' })),
      'list secrets in kube-system': await status(core.listNamespacedSecret({ namespace: 'kube-system' })),
    };
    expect(refused).toEqual(Object.fromEntries(Object.keys(refused).map((k) => [k, 403])));
    const writesAsReader = world.kube.audit.filter((a) => a.user === READER_USER && !['get', 'list', 'watch'].includes(a.verb) && !/accessreviews/.test(a.path));
    expect(writesAsReader.length).toBeGreaterThan(0);
    expect(writesAsReader.every((a) => a.status === 403)).toBe(true);
  });

  it('the executor may do what executor-rbac.yaml allows where it is bound: scale in shop yes, in kube-system no', async () => {
    const kc = executorConfig(world);
    const apps = kc.makeApiClient(AppsV1Api);
    const core = kc.makeApiClient(CoreV1Api);
    const scale = (namespace: string, name: string) => status(apps.patchNamespacedDeploymentScale({ name, namespace, body: { spec: { replicas: 3 } }, dryRun: 'All', fieldManager: 'vigil' }, merge));
    expect(await scale('shop', 'checkout')).toBe(200);
    expect(await scale('kube-system', 'coredns')).toBe(403);
    expect(await scale('monitoring', 'grafana')).toBe(403);
    // Only the verbs executor-rbac.yaml lists, even where it is bound.
    expect(await status(apps.deleteNamespacedDeployment({ name: 'checkout', namespace: 'shop', dryRun: 'All' }))).toBe(403);
    expect(await status(core.listNamespacedSecret({ namespace: 'shop' }))).toBe(403);
    expect(await status(core.createNamespacedConfigMap({ namespace: 'shop', body: { metadata: { name: 'x' } }, dryRun: 'All' }))).toBe(403);
    // suspend_cronjob only in staging: authorised there (404, no such CronJob), refused in production.
    const batch = kc.makeApiClient(BatchV1Api);
    const suspend = (namespace: string) => status(batch.patchNamespacedCronJob({ name: 'nightly', namespace, body: { spec: { suspend: true } }, dryRun: 'All' }, merge));
    expect(await suspend('shop-staging')).toBe(404);
    expect(await suspend('shop')).toBe(403);
    // Nothing persisted: all of it was dry runs or refused.
    expect((world.kube.getObject('apps/v1', 'Deployment', 'shop', 'checkout') as { spec?: { replicas?: number } }).spec?.replicas).toBe(0);
    expect(world.kube.audit.filter((a) => a.user === EXECUTOR_USER).every((a) => a.impersonatedBy === READER_USER)).toBe(true);
  });

  it('vigil doctor against the world passes with deploy/ RBAC', async () => {
    const { code, text } = await doctorOf(world);
    expect(code, text).toBe(0);
    expect(text).toContain('✓ impersonation works');
    expect(text).toContain('✓ nothing broader than the policy needs');
    expect(text).toMatch(/✓ list secrets in shop, in payments, .*\(per namespace;/);
    expect(text).not.toMatch(/✗|⚠ (list|get) secrets/);
  });

  it('warns (exit 0) when the reader may read Secrets in vigil, where Vigil keeps its own tokens', async () => {
    world.kube.rbac!.add({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'vigil-reader-secrets', namespace: 'vigil' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'vigil-reader-secrets' },
      subjects: [{ kind: 'ServiceAccount', name: 'vigil', namespace: 'vigil' }],
    });
    try {
      const { code, text } = await doctorOf(world, ['--executor', 'skip']);
      expect(code, text).toBe(0);
      expect(text).toContain("⚠ list secrets in vigil: reads Secrets beyond the apps' namespaces");
    } finally {
      world.kube.rbac!.remove('RoleBinding', 'vigil-reader-secrets', 'vigil');
    }
  });

  it('and fails (exit 1) once the reader is over-privileged: a RoleBinding of the executor\'s role, or a cluster-admin-like ClusterRoleBinding', async () => {
    const reader = [{ kind: 'ServiceAccount', name: 'vigil', namespace: 'vigil' }];
    world.kube.rbac!.add({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'oops', namespace: 'shop' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'vigil-executor-production' },
      subjects: reader,
    });
    const narrow = await doctorOf(world, ['--executor', 'skip']);
    expect(narrow.code).toBe(1);
    expect(narrow.text).toContain('✗ CAN patch deployments — shop');
    expect(narrow.text).toContain('SAFETY FAILURE');
    world.kube.rbac!.remove('RoleBinding', 'oops', 'shop');

    // A cluster-admin-like ClusterRoleBinding given to the world at start (WorldOptions.rbac).
    const adminLike = await startWorld({
      scenarioDir: DEMO,
      noise: false,
      policyFile: POLICY,
      startApp: false,
      rbac: [
        { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'admin-like' }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] },
        { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'admin-like' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin-like' }, subjects: reader },
      ],
    });
    try {
      const broad = await doctorOf(adminLike, ['--executor', 'skip']);
      expect(broad.code).toBe(1);
      expect(broad.text).toMatch(/✗ CAN create clusterrolebindings — cluster-wide/);
      expect(broad.text).toMatch(/⚠ list secrets cluster-wide: reads Secrets beyond/);
      expect(broad.text).toContain('✗ FAILED: the reader identity can write');
    } finally {
      await adminLike.close();
    }
    // The world without the extra binding passes again.
    expect((await doctorOf(world, ['--executor', 'skip'])).code).toBe(0);
  });
});

/** The writes an approval made, and the requests behind them. */
async function approveDemo(world: World): Promise<{ writes: WriteRecord[] }> {
  const recorder = new Recorder(world);
  playDeploymentController(world);
  const { ts } = await world.postAlert();
  await world.settle();
  await playSteps(world, [{ as: 'U0VIGILSRE', click: 'approve' }], { threadTs: ts, recorder, pendingOnly: true });
  const report = await recorder.report();
  expect(report.error).toBeUndefined();
  expect(world.slack.threadOf(ALERT_CHANNEL, ts).length).toBeGreaterThan(1);
  return { writes: report.writes };
}

describe("the demo's approved scale under deploy/ RBAC", () => {
  it('impersonation (default): written by the executor, impersonated by the reader, with the approver and incident as extras', async () => {
    const world = await startWorld({ scenarioDir: DEMO, noise: false, policyFile: POLICY });
    try {
      const { writes } = await approveDemo(world);
      expect(writes.length).toBeGreaterThan(0);
      expect(writes.find((w) => w.resource === 'deployments/scale')).toMatchObject({ verb: 'patch', namespace: 'shop', name: 'checkout', status: 200 });
      for (const w of writes) {
        expect(w).toMatchObject({ identity: EXECUTOR_USER, impersonatedBy: READER_USER, status: 200 });
        expect(w.extra?.['approved-by']).toEqual(['U0VIGILSRE']);
        expect(w.extra?.['incident']?.[0]).toMatch(/^c/);
      }
      expect((world.kube.getObject('apps/v1', 'Deployment', 'shop', 'checkout') as { spec?: { replicas?: number } }).spec?.replicas).toBe(3);
      // No 403 anywhere: what Vigil needed, deploy/ granted.
      expect(world.kube.audit.filter((a) => a.status === 403)).toEqual([]);
    } finally {
      await world.close();
    }
  });

  it('token mode (VIGIL_EXECUTOR_MODE=token, executor-token.yaml): written by the executor with a token the reader minted', async () => {
    const world = await startWorld({ scenarioDir: DEMO, noise: false, policyFile: POLICY, env: { VIGIL_EXECUTOR_MODE: 'token' } });
    try {
      expect(world.rbac?.mode).toBe('token');
      const { writes } = await approveDemo(world);
      expect(writes.find((w) => w.resource === 'deployments/scale')).toMatchObject({ identity: EXECUTOR_USER, status: 200 });
      for (const w of writes) expect(w.impersonatedBy).toBeUndefined();
      const minted = world.kube.audit.filter((a) => a.path === '/api/v1/namespaces/vigil/serviceaccounts/vigil-executor/token');
      expect(minted.length).toBeGreaterThan(0);
      expect(minted.every((a) => a.user === READER_USER && a.status === 201)).toBe(true);
      expect(world.kube.audit.filter((a) => a.status === 403)).toEqual([]);
    } finally {
      await world.close();
    }
  });
});

describe('the opt-out', () => {
  it('kubeAdmin: true is the fake\'s raw mode (every token an admin), for the few tests that need raw access', async () => {
    const world = await startWorld({ scenarioDir: DEMO, noise: false, startApp: false, kubeAdmin: true });
    try {
      expect(world.rbac).toBeUndefined();
      const apps = readerConfig(world).makeApiClient(AppsV1Api);
      expect(await status(apps.patchNamespacedDeploymentScale({ name: 'checkout', namespace: 'shop', body: { spec: { replicas: 1 } }, dryRun: 'All' }, merge))).toBe(200);
    } finally {
      await world.close();
    }
  });
});

describe('npm run demo -- --doctor', () => {
  it('prints the doctor report for the demo world and exits 0 with deploy/ RBAC', () => {
    const res = spawnSync(process.execPath, ['--import', 'tsx', 'harness/demo.ts', '--doctor'], { cwd: root, env: { ...process.env, CI: '' }, encoding: 'utf8', timeout: 90_000 });
    expect(res.status, `${res.stdout}\n${res.stderr}`).toBe(0);
    expect(res.stdout).toMatch(/vigil doctor against the offline world of demo-checkout-scaled-to-zero/);
    expect(res.stdout).toMatch(/✓ cannot patch deployments\/scale/);
    expect(res.stdout).toMatch(/Executor system:serviceaccount:vigil:vigil-executor \(checked via impersonation\)/);
    expect(res.stdout).toMatch(/✓ OK: the reader cannot write/);
  });
});

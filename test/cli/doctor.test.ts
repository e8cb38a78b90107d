/**
 * `vigil doctor` against the fake API server, through a real kubeconfig file (KUBECONFIG), with
 * identities built from the RBAC in deploy/ itself: the reader bound as deploy/reader-rbac.yaml and
 * executor-access.yaml bind it, the executor as executor-rbac.yaml binds it. The fake has no
 * resourceNames, so a by-name grant becomes a grant in that namespace (doctor only asks by name where
 * the manifests grant by name).
 */
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runAuditCommand } from '../../src/audit/cli.js';
import { freshDatabase } from '../audit/helpers.js';
import { startFakeKube, type FakeKube } from '../fakes/kubernetes/server.js';
import { doctor, EXECUTOR, executor, kubeconfig, POLICY, reader, readerRules, removeTempFiles } from './doctor-harness.js';

let kube: FakeKube;

beforeAll(async () => {
  kube = await startFakeKube({
    objects: [{ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'vigil-executor', namespace: 'vigil' } }],
    identities: {
      reader,
      executor,
      // (b) the reader plus one write: patch deployments in shop.
      'leaky-reader': { ...reader, user: 'leaky', rules: [...readerRules, { verbs: ['patch'], apiGroups: ['apps'], resources: ['deployments'], namespaces: ['shop'] }] },
      // A reader that cannot list nodes (a missing required read) and cannot impersonate.
      'blind-reader': {
        user: 'blind',
        rules: readerRules.filter((r) => !r.verbs.includes('impersonate')).map((r) => ({ ...r, resources: r.resources.filter((x) => x !== 'nodes') })),
      },
    },
  });
});

afterAll(async () => {
  await kube.close();
  removeTempFiles();
});

afterEach(() => {
  kube.audit.length = 0;
});

/** The lines of the executor's section for one namespace. */
function section(text: string, ns: string): string {
  const start = text.indexOf(`\n  ${ns} (`);
  expect(start, ns).toBeGreaterThan(-1);
  const end = text.slice(start + 1).search(/\n {2}\S/);
  return text.slice(start, end < 0 ? undefined : start + 1 + end);
}

describe('vigil doctor', () => {
  it('(a) the deploy/ reader and executor pass, and the report lists what the executor may do where', async () => {
    const { code, text } = await doctor([], { KUBECONFIG: kubeconfig(kube.url, 'reader'), VIGIL_POLICY_FILE: POLICY });
    expect(code, text).toBe(0);
    expect(text).toContain('✓ cannot patch deployments');
    expect(text).toContain('✓ cannot create serviceaccounts/token');
    expect(text).toContain('✓ get pods/log');
    expect(text).not.toMatch(/✗/);
    expect(text).toContain('✓ impersonation works');
    expect(text).toContain(`Executor ${EXECUTOR} (checked via impersonation)`);

    const shop = section(text, 'shop');
    expect(shop).toMatch(/✓ scale +possible on deployments, statefulsets/);
    expect(shop).toMatch(/✓ rollout_undo +possible on deployments/);
    expect(shop).toMatch(/✓ delete_pod +possible on pods/);
    expect(shop).toMatch(/· suspend_cronjob +refused by the policy\n/);
    // RBAC cannot tell an image change from a restart; the policy is what refuses it.
    expect(shop).toMatch(/· set_image +refused by the policy \(RBAC alone would allow it on deployments, statefulsets\)/);
    expect(section(text, 'shop-staging')).toMatch(/✓ suspend_cronjob +possible on cronjobs/);
    expect(text).toMatch(/no catalog action possible or allowed in: .*shop-dr.*kube-system/);
    expect(text).toContain('✓ nothing broader than the policy needs');
    expect(text).toContain('✓ OK');

    // Doctor only asks; the executor's questions went through impersonation.
    expect(kube.audit.every((e) => e.verb === 'create' && e.path.endsWith('/selfsubjectaccessreviews'))).toBe(true);
    expect(kube.audit.some((e) => e.user === EXECUTOR && e.impersonatedBy === reader.user)).toBe(true);
  });

  it('(b) a reader that can patch deployments fails loudly with exit 1', async () => {
    const { code, text } = await doctor([], { KUBECONFIG: kubeconfig(kube.url, 'leaky-reader'), VIGIL_POLICY_FILE: POLICY });
    expect(code).toBe(1);
    expect(text).toContain('✗ CAN patch deployments — shop');
    expect(text).toContain('SAFETY FAILURE: the reader identity can WRITE');
    expect(text).toContain('- patch deployments (apps) in shop');
    expect(text).toContain('✗ FAILED: the reader identity can write');
  });

  it('a reader missing a required read fails with exit 1; without impersonation the executor is reported unchecked', async () => {
    const { code, text } = await doctor(['--executor', 'auto'], { KUBECONFIG: kubeconfig(kube.url, 'blind-reader'), VIGIL_POLICY_FILE: POLICY });
    expect(code).toBe(1);
    expect(text).toContain('✗ cannot list nodes cluster-wide');
    expect(text).toContain('⚠ the reader can reach the executor neither by impersonation nor by TokenRequest');
    expect(text).toMatch(/Executor: ⚠ could not check .*impersonation: HTTP 403.*SubjectAccessReview/);
    expect(text).toContain('✗ FAILED: the reader misses read permissions');
  });

  it('flags executor permissions broader than the policy needs, without failing', async () => {
    const broad = await startFakeKube({
      objects: [],
      identities: {
        reader,
        executor: { ...executor, rules: [...executor.rules, { verbs: ['patch'], apiGroups: ['batch'], resources: ['cronjobs'], namespaces: ['shop'] }, { verbs: ['patch'], apiGroups: ['apps'], resources: ['deployments'] }] },
      },
    });
    try {
      const { code, text } = await doctor([], { KUBECONFIG: kubeconfig(broad.url, 'reader'), VIGIL_POLICY_FILE: POLICY });
      expect(code, text).toBe(0);
      expect(text).toContain('⚠ The executor may do more than the policy needs');
      expect(text).toContain('- patch cronjobs in shop');
      // A cluster-wide grant shows up everywhere the policy allows nothing.
      expect(text).toContain('- patch deployments cluster-wide');
      expect(text).toContain('- patch deployments in kube-system');
      expect(text).not.toContain('- patch deployments in shop\n');
      expect(text).toMatch(/\n {2}shop-dr \(disaster-recovery\)\n {4}· scale +refused by the policy/);
    } finally {
      await broad.close();
    }
  });

  it('(c) an unreachable cluster exits 2 with a clear message', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const { code, text } = await doctor(['--timeout', '3'], { KUBECONFIG: kubeconfig(`http://127.0.0.1:${port}`, 'reader'), VIGIL_POLICY_FILE: POLICY });
    expect(code).toBe(2);
    expect(text).toContain(`✗ cannot reach the Kubernetes API at http://127.0.0.1:${port}`);
  });

  it('bad settings exit 2 naming the problem', async () => {
    expect(await doctor([], { KUBECONFIG: '/nonexistent/kubeconfig' })).toMatchObject({ code: 2, text: expect.stringContaining('KUBECONFIG=/nonexistent/kubeconfig: no such file') });
    expect(await doctor([], { VIGIL_KUBE_IN_CLUSTER: 'yes' })).toMatchObject({ code: 2, text: expect.stringContaining('VIGIL_KUBE_IN_CLUSTER: expects true or false') });
    const file = kubeconfig(kube.url, 'reader');
    expect(await doctor([], { KUBECONFIG: file, VIGIL_KUBE_CONTEXT: 'nope' })).toMatchObject({ code: 2, text: expect.stringContaining('VIGIL_KUBE_CONTEXT=nope: no such context') });
    expect(await doctor([], { KUBECONFIG: file, VIGIL_POLICY_FILE: '/nonexistent/policy.yaml' })).toMatchObject({ code: 2, text: expect.stringContaining('cannot read the policy file') });
    expect(await doctor(['--executor', 'sometimes'], {})).toMatchObject({ code: 2, text: expect.stringContaining('--executor expects') });
    // No kubeconfig anywhere: said so, not "cannot reach http://localhost:8080" (the client's fallback).
    expect(await doctor([], { HOME: '/nonexistent-home' })).toMatchObject({ code: 2, text: expect.stringContaining('no kubeconfig found: set KUBECONFIG') });
    expect(await doctor(['--help'], {})).toMatchObject({ code: 0, text: expect.stringContaining('Exit codes: 0 all good') });
  });

  it('rejected credentials exit 2', async () => {
    const { code, text } = await doctor([], { KUBECONFIG: kubeconfig(kube.url, 'unknown-token'), VIGIL_POLICY_FILE: POLICY });
    expect(code).toBe(2);
    expect(text).toContain('the credentials were rejected (HTTP 401)');
  });
});

/** A port nothing listens on. */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });

describe('vigil doctor records its result in the audit trail (App Home reads it)', () => {
  it('with DATABASE_URL: one doctor.completed row per run, small and redacted, and the chain still verifies', async () => {
    const t = await freshDatabase('sqlite');
    try {
      const env = { KUBECONFIG: kubeconfig(kube.url, 'reader'), VIGIL_POLICY_FILE: POLICY, DATABASE_URL: t.target.url, USER: 'ops-alice' };
      const good = await doctor([], env);
      expect(good.code, good.text).toBe(0);
      expect(good.text.split('\n').at(-1)).toMatch(/^Result recorded in the audit trail \(file:.*\): App Home's setup panel shows it\.$/);

      const leaky = await doctor([], { ...env, KUBECONFIG: kubeconfig(kube.url, 'leaky-reader'), USER: 'ops-bob' });
      expect(leaky.code).toBe(1);
      expect(leaky.text).toContain('Result recorded in the audit trail');

      const rows = await t.db.prisma.auditEvent.findMany({ where: { kind: 'doctor.completed' }, orderBy: { id: 'asc' } });
      expect(rows).toHaveLength(2);
      expect(rows.map((r) => [r.actor, r.incidentId])).toEqual([
        ['cli:ops-alice', null],
        ['cli:ops-bob', null],
      ]);
      const [ok, failed] = rows.map((r) => JSON.parse(r.data) as Record<string, unknown>);
      expect(Object.keys(ok!).sort()).toEqual(['exitCode', 'failed', 'failedChecks', 'mode', 'ok', 'passed', 'ranBy', 'warnings']);
      expect(ok).toMatchObject({ ok: true, exitCode: 0, failed: 0, failedChecks: [], ranBy: 'ops-alice', mode: expect.stringMatching(/single/i) });
      expect(ok!['passed']).toBe(good.text.split('\n').filter((l) => l.trimStart().startsWith('✓')).length);
      expect(failed).toMatchObject({ ok: false, exitCode: 1, failedChecks: expect.arrayContaining(['CAN patch deployments — shop']) });
      expect(failed!['failed']).toBe((failed!['failedChecks'] as string[]).length);
      // The report itself (kubeconfig path, cluster URL, every line) is not copied into the row.
      expect(rows.every((r) => r.data.length < 1000 && !r.data.includes(kube.url) && !r.data.includes('KUBECONFIG'))).toBe(true);

      const out: string[] = [];
      const err: string[] = [];
      expect(await runAuditCommand(['audit', 'verify'], { DATABASE_URL: t.target.url }, { out: (l) => out.push(l), err: (l) => err.push(l) })).toBe(0);
      expect(out.join('\n')).toContain('Audit trail intact: 2 row(s) checked');
      expect(err).toEqual([]);
    } finally {
      await t.close();
    }
  });

  it('without a usable database doctor exits as before and says, in one line, that the result was not recorded', async () => {
    const env = { KUBECONFIG: kubeconfig(kube.url, 'reader'), VIGIL_POLICY_FILE: POLICY };
    const none = await doctor([], env);
    expect(none.code, none.text).toBe(0);
    expect(none.text).toContain('✓ OK');
    const notRecorded = (text: string) => text.split('\n').filter((l) => l.startsWith('Result not recorded'));
    expect(notRecorded(none.text)).toEqual(['Result not recorded in the audit trail (App Home will not show it): no database configured (DATABASE_URL is not set and ./data/vigil.db does not exist)']);
    expect(none.text.split('\n').at(-1)).toBe(notRecorded(none.text)[0]);

    // A SQLite file that does not exist is not created by doctor.
    const missing = `${kubeconfig(kube.url, 'reader')}-nothing-here.db`;
    const file = await doctor([], { ...env, DATABASE_URL: `file:${missing}` });
    expect(file.code).toBe(0);
    expect(notRecorded(file.text)).toHaveLength(1);
    expect(notRecorded(file.text)[0]).toContain('does not exist');
    expect(existsSync(missing)).toBe(false);

    // A PostgreSQL server that cannot be reached: the password is not printed, the exit code is the report's.
    const pg = await doctor([], { ...env, KUBECONFIG: kubeconfig(kube.url, 'leaky-reader'), DATABASE_URL: `postgresql://vigil:s3cret-pw@127.0.0.1:${await closedPort()}/vigil` });
    expect(pg.code).toBe(1);
    expect(notRecorded(pg.text)).toHaveLength(1);
    expect(pg.text).not.toContain('s3cret-pw');

    // --help records nothing and says nothing about it.
    expect((await doctor(['--help'], { DATABASE_URL: 'file:/nonexistent/x.db' })).text).not.toContain('Result');
  });
});

/**
 * Issue 12, point 2 — approvals tied to a separate bot identity, as a credential boundary (split mode), proven
 * from outside. Two Vigil processes on one database (SQLite file, and PostgreSQL when configured): the
 * investigator (VIGIL_ROLE=investigator, ServiceAccount `vigil`, Vigil's Slack app) and `vigil executor`
 * (ServiceAccount `vigil-executor` with its own token, its own Slack app with its own signing secret). The fake
 * Kubernetes enforces deploy/'s split-mode RBAC (no impersonation grant at all); the fake Slack has both apps.
 *   - alert → investigation → proposal stored by the investigator, no card from it; the executor posts the
 *     card as its own bot, planned and dry-run as itself, naming the mode;
 *   - a click delivered to the investigator (signed by its app) is refused and writes nothing; a click for the
 *     executor signed with the investigator's secret is refused by the executor's receiver (401);
 *   - the investigator's kube credential cannot write, impersonate or mint (403 from the API server);
 *   - a signed click to the executor writes as the executor itself, with the approver in the API audit;
 *   - with the executor down, requests stay pending; one killed in the middle of posting leaves a card whose
 *     answer was lost, and the restarted executor takes the claim over after its lease: one card, never two.
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { AppsV1Api, CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/store/db.js';
import { runDoctor } from '../../src/cli/doctor.js';
import { loadExecutorConfig, loadConfig, ConfigError } from '../../src/config/index.js';
import { playDeploymentController } from '../../harness/steps.js';
import { blockActionsPayload, deliverInteraction } from '../fakes/slack/index.js';
import { createTestDatabase, testProviders, type TestDatabase } from '../store/test-databases.js';
import { ALERT_CHANNEL, DEMO_USERS, EXECUTOR_APP, EXECUTOR_USER, READER_USER, startWorld, type World } from '../support/world.js';
import { DEMO_SCENARIO, eventually, freePort, kubeStatus as status } from './helpers.js';

const root = new URL('../..', import.meta.url).pathname;
const POLICY = `${root}deploy/policy.example.yaml`;
const ALICE = { id: DEMO_USERS[0]!.id, name: DEMO_USERS[0]!.name };
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);


/** Approval cards in the thread: messages carrying Approve buttons. */
function cards(world: World, ts: string) {
  return world.slack.threadOf(ALERT_CHANNEL, ts).filter((m) => JSON.stringify(m.blocks ?? []).includes('approval_approve') || /Proposed fix/.test(m.text ?? ''));
}

function clickPayload(world: World, card: { id: string; cardTs: string | null }, threadTs: string, appId: string) {
  const message = world.slack.message(ALERT_CHANNEL, card.cardTs!)!;
  return blockActionsPayload(
    { user: ALICE, channel: ALERT_CHANNEL, message: { ts: message.ts, thread_ts: threadTs, text: message.text ?? '', blocks: message.blocks ?? [] }, action: { action_id: 'approval_approve', value: card.id, block_id: `approval:${card.id}` } },
    { api_app_id: appId, bot_user_id: appId === EXECUTOR_APP.appId ? EXECUTOR_APP.userId : 'U0VIGIL' },
  );
}

const writes = (world: World) => world.kube.audit.filter((a) => !['get', 'list', 'watch'].includes(a.verb) && !a.dryRun && !/reviews/.test(a.path));

describe.each(testProviders)('split mode: investigator and executor on one %s database', (provider) => {
  let world: World | undefined;
  let database: TestDatabase | undefined;
  const children: ChildProcess[] = [];
  afterEach(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    children.length = 0;
    await world?.close();
    await database?.drop();
    world = database = undefined;
  });

  it('the executor posts the card as its own bot, refuses nothing it should accept, and writes as itself; the investigator cannot approve or write', async () => {
    database = await createTestDatabase(provider);
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, policyFile: POLICY, split: true, databaseUrl: database.url });
    const w = world;
    const db = w.vigil!.db.prisma;
    expect(w.config.role).toBe('investigator');
    expect(w.rbac?.mode).toBe('split');

    // The investigator alone: it investigates and stores the proposal, but posts no card.
    const { ts } = await w.postAlert();
    await w.settle();
    const pending = await eventually(async () => db.approvalRequest.findFirst({ where: { status: 'pending' } }), 'the investigator to store the proposal');
    expect(pending.handoff).toBe('plan');
    expect(pending.cardTs).toBeNull();
    expect(cards(w, ts)).toEqual([]);
    const plan = JSON.parse(pending.plan!) as { dryRun: { status: string } };
    expect(plan.dryRun.status).toBe('skipped');
    const board = JSON.stringify(w.slack.threadOf(ALERT_CHANNEL, ts).map((m) => m.blocks));
    expect(board).toContain('awaiting the executor (split mode)');
    // The investigator never tried to become the executor: no impersonation, no TokenRequest, no write.
    expect(w.kube.audit.filter((a) => a.impersonatedBy || /serviceaccounts\/.*\/token/.test(a.path))).toEqual([]);
    expect(writes(w)).toEqual([]);

    // The executor: its own identity, verified by the API server; it plans as itself and posts the card.
    const executor = await w.startExecutor();
    expect(executor.identity).toBe(EXECUTOR_USER);
    expect(executor.mode).toBe(`split mode: executor ${EXECUTOR_USER}`);
    await w.settle();
    const card = await eventually(async () => {
      const r = await db.approvalRequest.findUniqueOrThrow({ where: { id: pending.id } });
      return r.cardTs && r.handoff === null ? r : undefined;
    }, 'the executor to post the card');
    const posted = w.slack.message(ALERT_CHANNEL, card.cardTs!)!;
    expect(posted).toMatchObject({ user: EXECUTOR_APP.userId, bot_id: EXECUTOR_APP.botId, app_id: EXECUTOR_APP.appId, thread_ts: ts });
    expect(JSON.stringify(posted.blocks)).toContain(`split mode: executor ${EXECUTOR_USER}`);
    expect(JSON.stringify(posted.blocks)).toContain('approval_approve');
    expect(cards(w, ts)).toHaveLength(1);
    const adopted = JSON.parse(card.plan!) as { dryRun: { status: string; identity: string } };
    expect(adopted.dryRun).toMatchObject({ status: 'accepted', identity: EXECUTOR_USER });
    expect(w.kube.audit.filter((a) => a.dryRun).every((a) => a.user === EXECUTOR_USER && !a.impersonatedBy)).toBe(true);

    // The same click, delivered to the investigator's own app (signed with its secret): refused, nothing recorded.
    const toInvestigator = await w.slack.sendInteraction(clickPayload(w, card, ts, 'A0VIGIL'));
    expect(toInvestigator.status).toBe(200);
    await w.settle();
    await eventually(async () => w.slack.store.ephemerals.find((e) => e.user === ALICE.id && /this Vigil is the investigator \(split mode\) and cannot approve anything/.test(e.text ?? '')), 'the investigator’s refusal');
    expect(await db.approvalDecision.count()).toBe(0);
    expect((await db.approvalRequest.findUniqueOrThrow({ where: { id: card.id } })).status).toBe('pending');
    // A click for the executor signed with the investigator's (stolen) signing secret: the executor's receiver refuses it.
    const forged = await deliverInteraction(`http://127.0.0.1:${executor.port}/slack/events`, w.env['SLACK_SIGNING_SECRET']!, clickPayload(w, card, ts, EXECUTOR_APP.appId));
    expect(forged.status).toBe(401);
    expect(await db.approvalDecision.count()).toBe(0);
    expect(writes(w)).toEqual([]);

    // The investigator's Kubernetes credential (stolen): no write, no impersonation, no token for the executor.
    const reader = new KubeConfig();
    reader.loadFromFile(w.kubeconfigPath);
    const apps = reader.makeApiClient(AppsV1Api);
    expect(await status(apps.patchNamespacedDeploymentScale({ namespace: 'shop', name: 'checkout', body: { spec: { replicas: 3 } } }, merge))).toBe(403);
    expect(await status(apps.patchNamespacedDeployment({ namespace: 'shop', name: 'checkout', body: { metadata: { labels: { x: 'y' } } } }, merge))).toBe(403);
    const impersonating = new KubeConfig();
    impersonating.loadFromFile(w.kubeconfigPath);
    impersonating.users = impersonating.users.map((u) => ({ ...u, impersonateUser: EXECUTOR_USER }));
    expect(await status(impersonating.makeApiClient(AppsV1Api).patchNamespacedDeploymentScale({ namespace: 'shop', name: 'checkout', body: { spec: { replicas: 3 } } }, merge))).toBe(403);
    expect(await status(reader.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({ namespace: 'vigil', name: 'vigil-executor', body: { spec: { expirationSeconds: 600 } } }))).toBe(403);
    expect(w.kube.audit.filter((a) => a.user === READER_USER && a.status !== 403 && !['get', 'list', 'watch'].includes(a.verb) && !/reviews/.test(a.path))).toEqual([]);

    // The click, signed for the executor's app: checked there, executed as the executor itself, approver in the audit.
    playDeploymentController(w);
    const res = await w.slack.sendInteraction(clickPayload(w, card, ts, EXECUTOR_APP.appId));
    expect(res.status).toBe(200);
    await w.settle();
    const done = await eventually(async () => {
      const r = await db.approvalRequest.findUniqueOrThrow({ where: { id: card.id } });
      return ['executed', 'failed'].includes(r.status) ? r : undefined;
    }, 'the execution', 30_000);
    // Every write but the deployment controller's (the cluster itself, rolling the pods out) is the executor's.
    const written = writes(w).filter((a) => a.status < 300 && a.user !== 'system:kube-controller-manager');
    expect(written.length).toBeGreaterThan(0);
    for (const a of written) {
      expect(a.user).toBe(EXECUTOR_USER);
      expect(a.impersonatedBy).toBeUndefined();
      expect(a.userAgent).toContain(`approved-by=${ALICE.id}`);
      expect(a.userAgent).toContain(`incident=${card.incidentId}`);
    }
    expect(await db.approvalDecision.findFirstOrThrow({ where: { requestId: card.id } })).toMatchObject({ userId: ALICE.id, decision: 'approve' });
    expect(done.status).toBe('executed');
    // The card is updated in place by its owner, the executor's bot; still one card in the thread.
    const updated = await w.slack.waitFor(() => {
      const m = w.slack.message(ALERT_CHANNEL, card.cardTs!)!;
      return /Executed and verified/.test(JSON.stringify(m.blocks)) ? m : undefined;
    }, { timeoutMs: 10_000, label: 'the card to show the execution' });
    expect(JSON.stringify(updated.blocks)).toContain("the executor process's own ServiceAccount");
    expect(cards(w, ts)).toHaveLength(1);
    expect(w.slack.callsTo('chat.update').filter((c) => c.body['ts'] === card.cardTs && c.response?.body.ok === false)).toEqual([]);
  }, 90_000);

  it('with the executor down requests stay pending; one killed while posting is taken over after its lease, with one card', async () => {
    database = await createTestDatabase(provider);
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, policyFile: POLICY, split: true, databaseUrl: database.url, env: { VIGIL_EXECUTOR_LEASE_SECONDS: '2' } });
    const w = world;
    const db: Database = await openDatabase(database.url);
    try {
      const { ts } = await w.postAlert();
      await w.settle();
      const pending = await eventually(async () => db.prisma.approvalRequest.findFirst({ where: { status: 'pending', handoff: 'plan' } }), 'the stored proposal');

      // The executor as its own process (`vigil executor`), killed while Slack has taken the card but not answered.
      w.slack.delayNext('chat.postMessage', { ms: 4_000, times: 1 });
      const port = await freePort();
      const first = await startExecutorProcess({ ...w.executorEnv!, VIGIL_EXECUTOR_PORT: String(port) }, port);
      children.push(first);
      await w.slack.waitFor(() => cards(w, ts).length === 1 || undefined, { timeoutMs: 20_000, label: 'the card stored by Slack' });
      expect((await db.prisma.approvalRequest.findUniqueOrThrow({ where: { id: pending.id } })).handoffOwner).toBeTruthy();
      first.kill('SIGKILL');
      await new Promise((r) => first.once('exit', r));
      const orphan = await db.prisma.approvalRequest.findUniqueOrThrow({ where: { id: pending.id } });
      expect(orphan.status).toBe('pending');
      expect(orphan.cardTs).toBeNull();
      expect(orphan.handoff).toBe('plan');

      // A new executor: after the dead one's lease it takes the request over, finds the card by its tag, posts none.
      const port2 = await freePort();
      const second = await startExecutorProcess({ ...w.executorEnv!, VIGIL_EXECUTOR_PORT: String(port2) }, port2);
      children.push(second);
      const taken = await eventually(async () => {
        const r = await db.prisma.approvalRequest.findUniqueOrThrow({ where: { id: pending.id } });
        return r.cardTs && r.handoff === null ? r : undefined;
      }, 'the restarted executor to take the request over', 30_000);
      expect(taken.status).toBe('pending');
      expect(cards(w, ts)).toHaveLength(1);
      expect(taken.cardTs).toBe(cards(w, ts)[0]!.ts);
      // One post of the card ever (the killed executor's); the restarted one edited it in place.
      expect(w.slack.callsTo('chat.postMessage').filter((c) => JSON.stringify(c.body).includes('approval_approve'))).toHaveLength(1);
      expect(w.slack.callsTo('chat.update').some((c) => c.body['ts'] === taken.cardTs && c.response?.body.ok === true)).toBe(true);
    } finally {
      await db.close();
    }
  }, 120_000);
});

describe('split mode: doctor and settings', () => {
  let world: World | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  it('vigil doctor names the mode and passes for split mode under deploy/\'s RBAC; single-process mode is labelled as such', async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, policyFile: POLICY, split: true, startApp: false });
    const lines: string[] = [];
    const code = await runDoctor(['doctor'], world.env, (l) => lines.push(l));
    const text = lines.join('\n');
    expect(text).toContain(`Mode: split mode: executor ${EXECUTOR_USER}`);
    expect(text).toContain('✓ the investigator has no way to the executor');
    expect(text).not.toMatch(/SAFETY FAILURE/);
    expect(code).toBe(0);
    const single: string[] = [];
    await runDoctor(['doctor'], { ...world.env, VIGIL_ROLE: 'single' }, (l) => single.push(l));
    expect(single.join('\n')).toContain('Mode: single-process mode (demo / small teams)');
  }, 60_000);

  it('the investigator refuses executor credentials and writer tokens; the executor refuses the investigator\'s', () => {
    const base = { SLACK_BOT_TOKEN: 'xoxb-investigator', SLACK_SIGNING_SECRET: '0123456789abcdef0123', VIGIL_ALERT_CHANNELS: 'C0ALERTS' };
    const refused = (f: () => unknown) => {
      try {
        f();
      } catch (err) {
        if (err instanceof ConfigError) return err.message;
        throw err;
      }
      return '';
    };
    expect(refused(() => loadConfig({ ...base, VIGIL_ROLE: 'investigator', VIGIL_EXECUTOR_SLACK_BOT_TOKEN: 'xoxb-executor', GITHUB_WRITE_TOKEN: 'ghp-w' }))).toMatch(
      /VIGIL_EXECUTOR_SLACK_BOT_TOKEN: must not be given to the investigator[\s\S]*GITHUB_WRITE_TOKEN: must not be given to the investigator/,
    );
    expect(refused(() => loadExecutorConfig({ ...base, VIGIL_POLICY_FILE: POLICY, VIGIL_EXECUTOR_SLACK_BOT_TOKEN: 'xoxb-investigator', VIGIL_EXECUTOR_SLACK_SIGNING_SECRET: '0123456789abcdef0123' }))).toMatch(
      /VIGIL_EXECUTOR_SLACK_BOT_TOKEN: must differ from the investigator's SLACK_BOT_TOKEN[\s\S]*VIGIL_EXECUTOR_SLACK_SIGNING_SECRET: must differ/,
    );
    const c = loadExecutorConfig({ ...base, VIGIL_POLICY_FILE: POLICY, VIGIL_EXECUTOR_SLACK_BOT_TOKEN: 'xoxb-executor', VIGIL_EXECUTOR_SLACK_SIGNING_SECRET: 'fedcba9876543210fedcba' });
    expect(c.role).toBe('executor');
    expect(c.slack).toMatchObject({ botToken: 'xoxb-executor', signingSecret: 'fedcba9876543210fedcba', mode: 'http' });
    expect(c.kubernetes.inCluster).toBe(true);
  });

  it('an executor given the reader\'s kubeconfig refuses to start: the API server names it the reader', async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, policyFile: POLICY, split: true, startApp: false });
    const env = { ...world.executorEnv!, VIGIL_EXECUTOR_KUBECONFIG: world.kubeconfigPath };
    const { startExecutor } = await import('../../src/executor.js');
    const pino = (await import('pino')).default;
    await expect(startExecutor(loadExecutorConfig(env), pino({ level: 'silent' }))).rejects.toThrow(`the executor's Kubernetes credential is "${READER_USER}"`);
  }, 60_000);
});

/** `vigil executor` (src/main-executor.ts) as its own process; resolves once its /healthz answers. */
async function startExecutorProcess(env: Record<string, string>, port: number): Promise<ChildProcess> {
  const logs: string[] = [];
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/vigil.ts', 'executor'], { cwd: root, env: { ...process.env, ...env, LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] });
  for (const s of [child.stdout!, child.stderr!]) s.on('data', (b: Buffer) => logs.push(...b.toString().split('\n').filter(Boolean)));
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`vigil executor exited early with ${child.exitCode}: ${logs.slice(-5).join('\n')}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return child;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error(`vigil executor did not become healthy: ${logs.slice(-5).join('\n')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The approval world: the fake Slack with a real Bolt app (HTTP receiver on a random port) running the
 * approval listeners, the fake Kubernetes API serving the demo world with reader / bot / executor
 * identities, a fresh SQLite store, and the example policy (S0SREONCALL approves prod scales).
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { App, LogLevel } from '@slack/bolt';
import pino, { type Logger } from 'pino';
import type { ExternalProviders } from '../../src/actions/index.js';
import { ApprovalService, SlackUserGroups, type ApprovalView, type ProposalSource } from '../../src/approvals/index.js';
import { readApproval } from '../../src/approvals/store.js';
import { systemClock } from '../../src/incidents/clock.js';
import { ServiceCatalog } from '../../src/knowledge/catalog.js';
import { loadPolicy, type Policy } from '../../src/policy/index.js';
import { createRedactor } from '../../src/redact/index.js';
import { registerApprovalListeners } from '../../src/slack/approval-listeners.js';
import { SlackChat } from '../../src/slack/chat.js';
import { openDatabase, type Database } from '../../src/store/db.js';
import { applyMigrations } from '../../src/store/migrate.js';
import { startActionWorld, EXECUTOR_USER, type ActionWorld } from '../actions/world.js';
import { blockActionsPayload, startFakeSlack, type FakeSlack, type StoredMessage } from '../fakes/slack/index.js';
import { loadScenario } from '../scenarios/load.js';
import { DEMO_SCENARIO, eventually } from '../e2e/helpers.js';

export const CHANNEL = 'C0ALERTS';
/** The identity startActionWorld uses to play the controllers (status updates). */
const CONTROLLER = 'system:kube-controller-manager';
export const ALICE = { id: 'U0VIGILSRE', name: 'alice' };
export const BOB = { id: 'U0BOB', name: 'bob' };
export const MALLORY = { id: 'U0MALLORY', name: 'mallory' };
export const ADMIN = { id: 'U0ADMIN1', name: 'admin' };

const here = import.meta.dirname;
export const POLICY_FILE = join(here, '../../deploy/policy.example.yaml');

/** The demo diagnosis: checkout in shop scaled to 0 by kubectl; the fix scales it back to 3. */
export const SCALE_FINDING: ProposalSource = {
  key: 'scaled-to-zero:shop/deployment/checkout',
  status: 'supported',
  component: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
  facts: { replicas: 0, previousReplicas: 3 },
  mitigation: {
    action: 'scale',
    target: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
    params: { replicas: 3 },
    command: 'kubectl scale deployment/checkout -n shop --replicas=3',
    rationale: 'restore the 3 replicas it ran before the scale-down',
  },
};

export interface ApprovalWorld {
  slack: FakeSlack;
  kube: ActionWorld;
  db: Database;
  service: ApprovalService;
  app: App;
  /** An open checkout incident with its thread root posted; returns its id and thread ts. */
  openIncident(): Promise<{ incidentId: string; threadTs: string }>;
  card(requestId: string): Promise<StoredMessage>;
  /** Clicks a button on the request's card as `user`; resolves once Bolt acked (the listener continues). */
  click(requestId: string, user: { id: string; name: string }, button: 'approve' | 'reject', opts?: { actionTs?: string }): Promise<Record<string, unknown>>;
  view(requestId: string): Promise<ApprovalView>;
  /** Waits until the request reaches a status. */
  waitForStatus(requestId: string, status: string | string[]): Promise<ApprovalView>;
  /** Non-dry-run writes the API server accepted, except the controller's status updates. */
  writes(): ReturnType<ActionWorld['kube']['audit']['filter']>;
  /** Plays the deployment controller: once the executor's write lands, reports the pods ready. */
  controllerReadies(ready: number): Promise<void>;
  close(): Promise<void>;
}

export async function startApprovalWorld(settings: { verifyWindowMs?: number; policy?: Policy; providers?: ExternalProviders; catalog?: ServiceCatalog; log?: Logger; cardRetryMs?: number[] } = {}): Promise<ApprovalWorld> {
  const tmp = mkdtempSync(join(tmpdir(), 'vigil-approvals-'));
  const scenario = await loadScenario(DEMO_SCENARIO);
  const kube = await startActionWorld(scenario.objects);
  const slack = await startFakeSlack({
    users: [ALICE, BOB, MALLORY, ADMIN],
    usergroups: { S0SREONCALL: [ALICE.id, BOB.id], S0SRELEADS: [], S0TEAMCHECKOUT: [BOB.id] },
    channels: [{ id: CHANNEL, name: 'alerts' }],
  });
  const db = await openDatabase(`file:${join(tmp, 'vigil.db')}`);
  await applyMigrations(db);
  const signingSecret = randomBytes(16).toString('hex');
  const log = settings.log ?? pino({ level: 'silent' });
  // No startup auth.test: a world closed right after starting would leave it failing unobserved.
  const app = new App({ token: slack.botToken, signingSecret, tokenVerificationEnabled: false, botUserId: 'U0VIGIL', botId: 'B0VIGIL', clientOptions: { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 } }, logLevel: LogLevel.ERROR });
  const redactor = createRedactor();
  const service = new ApprovalService({
    db: db.prisma,
    chat: new SlackChat(app.client, log),
    userGroups: new SlackUserGroups(app.client),
    reader: kube.reader,
    executor: kube.impersonation,
    policy: settings.policy ?? loadPolicy(POLICY_FILE),
    catalog: settings.catalog ?? new ServiceCatalog([{ name: 'checkout', namespace: 'shop', dependsOn: ['checkout-db'], flags: [] }]),
    ...(settings.providers ? { providers: settings.providers } : {}),
    clock: systemClock,
    redactor,
    log,
    settings: { verifyWindowMs: settings.verifyWindowMs ?? 3000, verifyIntervalMs: 40, ...(settings.cardRetryMs ? { cardRetryMs: settings.cardRetryMs } : {}) },
  });
  registerApprovalListeners(app, service, log);
  const server = (await app.start(0)) as Server;
  slack.setEventsTarget({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/events`, signingSecret });

  const world: ApprovalWorld = {
    slack,
    kube,
    db,
    service,
    app,
    async openIncident() {
      const root = await app.client.chat.postMessage({ channel: CHANNEL, text: '[FIRING:1] KubeDeploymentReplicasMismatch (checkout shop critical)' });
      const incident = await db.prisma.incident.create({
        data: { fingerprint: `fp-${root.ts}`, title: 'KubeDeploymentReplicasMismatch checkout', alertName: 'KubeDeploymentReplicasMismatch', namespace: 'shop', service: 'checkout', source: 'alertmanager', channelId: CHANNEL, threadTs: root.ts! },
      });
      return { incidentId: incident.id, threadTs: root.ts! };
    },
    async card(requestId) {
      const row = await db.prisma.approvalRequest.findUniqueOrThrow({ where: { id: requestId } });
      return slack.message(CHANNEL, row.cardTs!)!;
    },
    async click(requestId, user, button, opts = {}) {
      const card = await world.card(requestId);
      const payload = blockActionsPayload({
        user,
        channel: CHANNEL,
        message: { ts: card.ts, ...(card.thread_ts ? { thread_ts: card.thread_ts } : {}), text: card.text ?? '', blocks: card.blocks ?? [] },
        action: { action_id: `approval_${button}`, value: requestId, block_id: `approval:${requestId}` },
      });
      if (opts.actionTs) ((payload['actions'] as Record<string, unknown>[])[0]!)['action_ts'] = opts.actionTs;
      const res = await slack.sendInteraction(payload);
      if (res.status !== 200) throw new Error(`interaction answered ${res.status}`);
      return payload;
    },
    async view(requestId) {
      return (await readApproval(db.prisma, requestId))!;
    },
    async waitForStatus(requestId, status) {
      const wanted = Array.isArray(status) ? status : [status];
      return eventually(async () => {
        const v = await readApproval(db.prisma, requestId);
        return v && wanted.includes(v.status) ? v : undefined;
      }, `request ${requestId} to be ${wanted.join('|')}`, 10_000);
    },
    writes() {
      return kube.kube.audit.filter((a) => a.verb !== 'get' && a.verb !== 'list' && a.verb !== 'create' && !a.dryRun && a.status < 300 && a.user !== CONTROLLER);
    },
    async controllerReadies(ready) {
      await eventually(async () => kube.kube.audit.some((a) => a.user === EXECUTOR_USER && !a.dryRun && a.verb === 'patch'), 'the executor write', 10_000);
      await kube.setDeploymentStatus('shop', 'checkout', { replicas: 3, updatedReplicas: 3, readyReplicas: ready, availableReplicas: ready });
    },
    async close() {
      await service.idle();
      await app.stop();
      await slack.close();
      await kube.close();
      await db.close();
      rmSync(tmp, { recursive: true, force: true });
    },
  };
  return world;
}

/** The blocks of a message, typed loosely for assertions. */
export function blocksOf(m: StoredMessage): Record<string, unknown>[] {
  return (m.blocks ?? []) as Record<string, unknown>[];
}

export function buttonsOf(m: StoredMessage): Record<string, unknown>[] {
  return blocksOf(m)
    .filter((b) => b['type'] === 'actions')
    .flatMap((b) => b['elements'] as Record<string, unknown>[]);
}

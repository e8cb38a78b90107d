/**
 * restore_config through the whole approval flow: the card in the thread (which keys and lines change,
 * secrets masked, who reads it), two approvals clicked through the fake Slack into the real Bolt app,
 * the re-plan that re-derives the content and must match the approved digests, the write as the
 * executor, verification, and the env reader's restart proposed as its own card. No planted secret
 * reaches Slack, the database or the logs.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ProposalSource } from '../../src/approvals/index.js';
import { renderBlocksAsText } from '../../src/slack/blocks/text.js';
import { EXECUTOR_USER } from '../actions/world.js';
import { eventually } from '../e2e/helpers.js';
import { ALICE, BOB, buttonsOf, startApprovalWorld, type ApprovalWorld } from './harness.js';

const PLANTED = ['0ldR3disPassw0rd', 'N3wR3disPassw0rd', 'Adm1nPl4nted'];
const redisConf = (password: string, maxmemory: string) => `bind 0.0.0.0\nport 6379\nrequirepass ${password}\nmaxmemory ${maxmemory}\n`;
const APPLIED = { 'redis.conf': redisConf(PLANTED[0]!, '2gb'), LOG_LEVEL: 'info' };
const EDITED = { 'redis.conf': redisConf(PLANTED[1]!, '64mb'), LOG_LEVEL: 'debug', ADMIN_PASSWORD: PLANTED[2]! };
const target = { kind: 'ConfigMap', namespace: 'shop', name: 'checkout-config' };

const FINDING: ProposalSource = {
  key: 'config-change:shop/ConfigMap/checkout-config',
  status: 'supported',
  component: target,
  facts: { object: 'ConfigMap/checkout-config', editor: 'kubectl-edit' },
  mitigation: {
    action: 'restore_config',
    target,
    params: { kind: 'ConfigMap', name: 'checkout-config' },
    command: `kubectl patch configmap/checkout-config -n shop --type=json -p '[{"op":"replace","path":"/data","value":<its data before the edit>}]'`,
    rationale: "put back ConfigMap/checkout-config's content from before `kubectl edit`'s edit",
  },
};

let w: ApprovalWorld;
const logs: string[] = [];
beforeEach(async () => {
  logs.length = 0;
  const sink = new Writable({ write: (chunk, _e, done) => (logs.push(String(chunk)), done()) });
  w = await startApprovalWorld({ log: pino({ level: 'trace' }, sink) });
  await w.kube.createConfigMap('shop', {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'checkout-config',
      namespace: 'shop',
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { annotations: {}, name: 'checkout-config', namespace: 'shop' }, data: APPLIED }) },
    },
    data: EDITED,
  });
  // checkout (2 replicas) takes the ConfigMap as env: it needs a restart to see the restored values.
  const checkout = w.kube.kube.getObject('apps/v1', 'Deployment', 'shop', 'checkout') as unknown as { spec: { template: { spec: { containers: Record<string, unknown>[] } } } };
  const containers = checkout.spec.template.spec.containers.map((c) => ({ ...c, envFrom: [{ configMapRef: { name: 'checkout-config' } }] }));
  await w.kube.patchDeployment('shop', 'checkout', { spec: { replicas: 2, template: { spec: { containers } } } });
});
afterEach(() => w.close());

const configData = () => (w.kube.kube.getObject('v1', 'ConfigMap', 'shop', 'checkout-config') as unknown as { data: Record<string, string> }).data;

async function propose() {
  const { incidentId, threadTs } = await w.openIncident();
  const r = await w.service.propose(incidentId, FINDING);
  if (r.kind !== 'proposed') throw new Error(`expected a proposal, got ${JSON.stringify(r)}`);
  return { incidentId, threadTs, requestId: r.requestId };
}

async function everythingStoredAndSent(): Promise<string> {
  const db = w.db.prisma;
  const rows = await Promise.all([db.approvalRequest.findMany(), db.approvalDecision.findMany(), db.auditEvent.findMany(), db.incident.findMany()]);
  return JSON.stringify(rows) + JSON.stringify(w.slack.calls.map((c) => c.body)) + logs.join('');
}

describe('restore_config through approval', () => {
  it('card, two approvals, re-derived write as the executor, verified; the env reader’s restart proposed on its own card; no secret anywhere', async () => {
    const { requestId, threadTs } = await propose();
    const card = renderBlocksAsText(await w.card(requestId));
    expect(card).toContain('Proposed fix: restore configmap/checkout-config to its last kubectl apply');
    expect(card).toContain('data.redis.conf line 4: maxmemory 64mb → maxmemory 2gb');
    expect(card).toMatch(/data\.redis\.conf line 3: requirepass \[REDACTED:password:[0-9a-f]{8}\] → requirepass \[REDACTED:password:[0-9a-f]{8}\]/);
    expect(card).toContain('data.LOG_LEVEL: debug → info');
    expect(card).toContain('read by deployment/checkout (env)');
    expect(card).toContain('deployment/checkout reads it through env variables: its 2 pods keep the old values until they restart');
    expect(card).toContain('kubectl rollout restart deployment/checkout -n shop');
    expect(card).toContain('holds the restored content (sha256:');
    expect(card).toContain('Needs 2 approvals');
    expect(buttonsOf(await w.card(requestId))).toHaveLength(2);
    const row = await w.db.prisma.approvalRequest.findUniqueOrThrow({ where: { id: requestId } });
    const stored = JSON.parse(row.plan!) as Record<string, unknown> & { content: { restoreDigest: string; currentDigest: string } };
    expect(stored).not.toHaveProperty('writes');
    expect(stored.content.restoreDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.parse(row.decision)).toMatchObject({ kind: 'require_approval', approvals: 2, rule: 'prod-restore-config' });
    expect(w.writes()).toEqual([]);

    await w.click(requestId, ALICE, 'approve');
    await eventually(async () => (await w.view(requestId)).decisions.length === 1 || undefined, 'the first approval');
    await w.click(requestId, BOB, 'approve');
    const done = await w.waitForStatus(requestId, ['executed', 'failed', 'refused']);
    expect(done.status, done.statusReason).toBe('executed');
    expect(configData()).toEqual(APPLIED);
    const writes = w.writes();
    expect(writes.map((a) => [a.verb, a.path, a.user])).toEqual([['patch', '/api/v1/namespaces/shop/configmaps/checkout-config', EXECUTOR_USER]]);
    expect(writes[0]).toMatchObject({ fieldManager: 'vigil', extra: { 'approved-by': [BOB.id], incident: [done.incidentId] } });
    expect(done.outcome?.verification).toMatchObject({ ok: true, checks: [{ ok: true, observed: `content sha256:${stored.content.restoreDigest.slice(0, 12)}` }] });

    // The restart is a new request with its own card and approval; nothing restarted yet.
    const followUp = await eventually(
      async () => w.db.prisma.approvalRequest.findFirst({ where: { incidentId: done.incidentId, action: 'rollout_restart', targetName: 'checkout', hypothesisKey: { startsWith: 'followup:' }, cardTs: { not: null } } }),
      'the follow-up restart',
    );
    expect(followUp.status).toBe('pending');
    const followCard = renderBlocksAsText(await w.card(followUp.id));
    expect(followCard).toContain('Proposed fix: restart deployment/checkout');
    expect(followCard).toContain('follow-up of the executed restore configmap/checkout-config');
    expect(w.writes()).toHaveLength(1);
    expect(w.slack.threadOf('C0ALERTS', threadTs).map((m) => renderBlocksAsText(m)).join('\n')).toMatch(/Done: restore configmap\/checkout-config to its last kubectl apply as `system:serviceaccount:vigil:vigil-executor`/);

    await w.service.idle();
    const everything = await everythingStoredAndSent();
    expect(everything).toContain('maxmemory 2gb'); // the check below is not vacuous
    for (const secret of PLANTED) expect(everything, `${secret.slice(0, 4)}… leaked`).not.toContain(secret);
  });

  it('refuses, writing nothing, when the ConfigMap changed between the approval and the execution', async () => {
    const { requestId } = await propose();
    await w.click(requestId, ALICE, 'approve');
    await eventually(async () => (await w.view(requestId)).decisions.length === 1 || undefined, 'the first approval');
    await w.kube.patchConfigMap('shop', 'checkout-config', { data: { LOG_LEVEL: 'warn' } });
    await w.click(requestId, BOB, 'approve');
    const done = await w.waitForStatus(requestId, ['executed', 'failed', 'refused']);
    expect(done.status).toBe('refused');
    expect(done.statusReason).toMatch(/^refused: configmap\/checkout-config's content changed since it was approved \(sha256:\w{12} → sha256:\w{12}\)/);
    expect(w.writes().filter((a) => a.user === EXECUTOR_USER)).toEqual([]);
    expect(configData()).toEqual({ ...EDITED, LOG_LEVEL: 'warn' });
  });
});

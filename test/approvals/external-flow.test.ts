/**
 * Flag and revert mitigations through the whole approval flow: card in the thread, clicks through the
 * fake Slack into the real Bolt app, server-side authorisation (owner group for flags, two approvals
 * for a revert), then the write with the provider's writer token only, verified and reported.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GitHubReverts, LaunchDarklyFlags } from '../../src/actions/index.js';
import type { ProposalSource } from '../../src/approvals/index.js';
import { ServiceCatalog } from '../../src/knowledge/catalog.js';
import { renderBlocksAsText } from '../../src/slack/blocks/text.js';
import { eventually } from '../e2e/helpers.js';
import { repoScenario } from '../fakes/github/builders.js';
import { startFakeGitHub, type FakeGitHub } from '../fakes/github/server.js';
import { startFakeLaunchDarkly, type FakeLaunchDarkly } from '../fakes/launchdarkly/server.js';
import { ALICE, BOB, MALLORY, buttonsOf, startApprovalWorld, type ApprovalWorld } from './harness.js';

const READ = 'api-reader-0123456789';
const WRITE = 'api-writer-0123456789';
const checkout = { kind: 'Deployment', namespace: 'shop', name: 'checkout' };

let w: ApprovalWorld;
let ld: FakeLaunchDarkly;
let gh: FakeGitHub;
beforeEach(async () => {
  ld = await startFakeLaunchDarkly({
    project: 'shop',
    flags: [{ key: 'new-checkout-flow', environments: { production: { on: true } } }],
    tokens: { [READ]: { name: 'vigil-reader', role: 'reader' }, [WRITE]: { name: 'vigil-flag-writer', role: 'writer' } },
  });
  const cart = repoScenario();
  cart.mergedPull({ number: 214, title: 'Cache checkout totals', author: 'dana', mergedAt: new Date(Date.now() - 3600_000) });
  gh = await startFakeGitHub({ repos: { 'acme/checkout': cart.repo }, tokens: { 'ghp-reader': { login: 'vigil-reader', write: false }, 'ghp-writer': { login: 'vigil-bot', write: true } } });
  w = await startApprovalWorld({
    providers: {
      flags: new LaunchDarklyFlags({ apiUrl: ld.url, project: 'shop', environment: 'production', readToken: READ, writeToken: WRITE }),
      github: new GitHubReverts({ baseUrl: gh.url, readToken: 'ghp-reader', writeToken: 'ghp-writer' }),
    },
    catalog: new ServiceCatalog([{ name: 'checkout', namespace: 'shop', owner: 'S0TEAMCHECKOUT', repo: 'acme/checkout', dependsOn: [], flags: ['new-checkout-flow'] }]),
  });
});
afterEach(async () => {
  await w.close();
  await Promise.all([ld.close(), gh.close()]);
});

const FLAG_FINDING: ProposalSource = {
  key: 'flag-flip:new-checkout-flow',
  status: 'supported',
  component: checkout,
  facts: { flag: 'new-checkout-flow', before: 'off', after: 'on' },
  mitigation: { action: 'flip_flag', target: checkout, params: { flag: 'new-checkout-flow', to: 'off' }, command: 'set flag new-checkout-flow to "off" in the flag tool', rationale: 'it was off before the errors' },
};
const REVERT_FINDING: ProposalSource = {
  key: 'deploy-regression:shop/deployment/checkout',
  status: 'supported',
  component: checkout,
  facts: { pr: 214 },
  mitigation: { action: 'revert_pr', target: checkout, params: { repo: 'acme/checkout', number: 214 }, command: 'gh pr view 214 --repo acme/checkout (then "Revert" and deploy)', rationale: 'the deploy right before the spike' },
};

describe('flip_flag through approval', () => {
  it('the owning team approves, the flag flips with the writer token, the outcome is verified on the card', async () => {
    const { incidentId } = await w.openIncident();
    const r = await w.service.propose(incidentId, FLAG_FINDING);
    expect(r.kind).toBe('proposed');
    const requestId = (r as { requestId: string }).requestId;
    const card = renderBlocksAsText(await w.card(requestId));
    expect(card).toContain('Proposed fix: turn flag new-checkout-flow off in production');
    expect(card).toContain('new-checkout-flow.production.on: true → false');
    expect(card).toContain('accepted by the API server as `launchdarkly:vigil-flag-writer (service token)`');
    expect(card).toContain('LaunchDarkly: turn new-checkout-flow on in production');
    expect(JSON.stringify((await w.card(requestId)).blocks)).toContain('<!subteam^S0TEAMCHECKOUT>');
    expect(buttonsOf(await w.card(requestId))).toHaveLength(2);
    const row = await w.db.prisma.approvalRequest.findUniqueOrThrow({ where: { id: requestId } });
    expect([row.targetKind, row.targetNs, row.targetName]).toEqual(['FeatureFlag', 'shop', 'new-checkout-flow']);

    // An SRE outside the owning team is refused on the server; nothing is written.
    const refusedTo = (u: string) => w.slack.store.ephemerals.some((e) => e.user === u && /Not accepted: you are not in a user group that may approve/.test(e.text ?? ''));
    await w.click(requestId, ALICE, 'approve');
    await eventually(async () => refusedTo(ALICE.id), 'the refusal');
    await w.click(requestId, MALLORY, 'approve');
    await eventually(async () => refusedTo(MALLORY.id), 'the refusal');
    expect((await w.view(requestId)).decisions).toEqual([]);
    expect(ld.changes).toEqual([]);

    await w.click(requestId, BOB, 'approve');
    const done = await w.waitForStatus(requestId, ['executed', 'failed']);
    expect(done.status).toBe('executed');
    expect(ld.changes).toEqual([expect.objectContaining({ flag: 'new-checkout-flow', on: false, token: WRITE, comment: expect.stringContaining('approved by U0BOB (bob)') })]);
    expect(ld.requests.filter((q) => q.method === 'PATCH' && q.token === READ)).toEqual([]);
    expect(w.writes()).toEqual([]); // nothing went to Kubernetes
    await eventually(async () => renderBlocksAsText(await w.card(requestId)).includes('Executed as'), 'the outcome on the card');
    const after = renderBlocksAsText(await w.card(requestId));
    expect(after).toContain("Executed as `launchdarkly:vigil-flag-writer (service token)` (the provider's writer token): applied");
    expect(after).toContain('✓ new-checkout-flow targeting off in production — targeting off');
    const audit = await w.db.prisma.auditEvent.findMany({ where: { incidentId, kind: 'approval.executed' } });
    expect(JSON.parse(audit[0]!.data)).toMatchObject({ approvedBy: BOB.id, identity: { mode: 'api-token', user: 'launchdarkly:vigil-flag-writer (service token)' } });
  });
});

describe('a write without a clear answer', () => {
  it('counts as sent and lets verification decide: the flag did flip, so the request is executed, with the reason', async () => {
    const { incidentId } = await w.openIncident();
    const r = await w.service.propose(incidentId, FLAG_FINDING);
    const requestId = (r as { requestId: string }).requestId;
    ld.applyThenFailNext(504);
    await w.click(requestId, BOB, 'approve');
    const done = await w.waitForStatus(requestId, ['executed', 'failed']);
    expect(done.status).toBe('executed');
    expect(done.statusReason).toContain('no clear answer');
    expect(ld.changes).toHaveLength(1);
    const row = await w.db.prisma.approvalRequest.findUniqueOrThrow({ where: { id: requestId } });
    expect(row.executedAt).not.toBeNull(); // the rate, loop and budget limits count it
    // The card is edited after the status is stored.
    await eventually(async () => renderBlocksAsText(await w.card(requestId)).includes('no clear answer, the change may have been applied'), 'the outcome on the card');
  });
});

describe('revert_pr through approval', () => {
  it('needs the owner and an SRE, opens the revert with the writer token and never merges it', async () => {
    const { incidentId } = await w.openIncident();
    const r = await w.service.propose(incidentId, REVERT_FINDING);
    expect(r.kind).toBe('proposed');
    const requestId = (r as { requestId: string }).requestId;
    const card = renderBlocksAsText(await w.card(requestId));
    expect(card).toContain('Proposed fix: open a pull request reverting acme/checkout#214');
    expect(card).toContain('not available as `vigil-bot`');
    expect(card).toContain('Needs 2 approvals');
    expect(card).toContain('close the revert pull request without merging it');

    await w.click(requestId, ALICE, 'approve');
    await eventually(async () => (await w.view(requestId)).decisions.length === 1, 'the first approval');
    expect(gh.reverts).toEqual([]);
    await w.click(requestId, BOB, 'approve');
    const done = await w.waitForStatus(requestId, ['executed', 'failed']);
    expect(done.status).toBe('executed');
    expect(gh.reverts).toHaveLength(1);
    expect(gh.reverts[0]).toMatchObject({ login: 'vigil-bot', pull: { state: 'open', mergedAt: null, title: 'Revert "Cache checkout totals"' } });
    expect(gh.reverts[0]!.pull.body).toContain(`Opened by Vigil for incident ${incidentId}`);
    expect(gh.requests.filter((q) => q.method !== 'GET' && q.login !== 'vigil-bot')).toEqual([]);
    await eventually(async () => renderBlocksAsText(await w.card(requestId)).includes('open for review'), 'the outcome on the card');
  });
});

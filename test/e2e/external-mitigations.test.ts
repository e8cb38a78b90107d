/**
 * Flag and revert mitigations through the whole running app, composed from settings as in production
 * (`startVigil` reads LAUNCHDARKLY_* and GITHUB_WRITE_TOKEN): an alert post → the thread → the leading
 * hypothesis's fix as an approval card → clicks through the fake Slack → the write in the fake
 * LaunchDarkly / fake GitHub with the writer token only → the verified outcome in the thread. Without
 * the provider settings a flag fix stays a suggestion nobody can run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderBlocksAsText } from '../../src/slack/blocks/text.js';
import { blockActionsPayload, type StoredMessage } from '../fakes/slack/index.js';
import { ALERT_CHANNEL, DEMO_USERS, GITHUB_WRITER, LAUNCHDARKLY_TOKENS, startWorld, type World, type WorldOptions } from '../support/world.js';
import { eventually, threadText } from './helpers.js';

const root = new URL('../..', import.meta.url).pathname;
const POLICY = `${root}deploy/policy.example.yaml`;
const scenario = (id: string) => `${root}test/scenarios/${id}`;
/** On call (S0SREONCALL in the world's Slack), in no service team. */
const ALICE = { id: DEMO_USERS[0]!.id, name: DEMO_USERS[0]!.name };
/** In the owning team of the scenario's service (added per world below), not on call. */
const BOB = { id: DEMO_USERS[1]!.id, name: DEMO_USERS[1]!.name };

type User = { id: string; name: string };

async function startScenario(o: WorldOptions): Promise<{ world: World; alertTs: string }> {
  const world = await startWorld(o);
  // The flag and deploy diagnoses need the symptom in the metrics (CI installs Prometheus; so can you).
  if (world.skipped.length) {
    await world.close();
    throw new Error(`this test needs: ${world.skipped.join('; ')}`);
  }
  const { ts } = await world.postAlert();
  await world.settle();
  return { world, alertTs: ts };
}

/** The one approval request of `action` the investigation proposed. */
async function requestFor(world: World, action: string) {
  const rows = await world.vigil!.db.prisma.approvalRequest.findMany({ where: { action } });
  expect(rows, `approval requests for ${action}`).toHaveLength(1);
  return rows[0]!;
}

function card(world: World, cardTs: string): StoredMessage {
  return world.slack.message(ALERT_CHANNEL, cardTs)!;
}

const cardText = (world: World, cardTs: string) => renderBlocksAsText(card(world, cardTs));
const hasButtons = (m: StoredMessage) => JSON.stringify(m.blocks ?? []).includes('approval_approve');

/** Clicks Approve on the card as Slack would deliver it; `retryNum` replays the same delivery as Slack's retry. */
async function approve(world: World, requestId: string, cardTs: string, user: User, opts: { payload?: Record<string, unknown>; retryNum?: number } = {}) {
  const m = card(world, cardTs);
  const payload =
    opts.payload ??
    blockActionsPayload({
      user,
      channel: ALERT_CHANNEL,
      message: { ts: m.ts, ...(m.thread_ts ? { thread_ts: m.thread_ts } : {}), text: m.text ?? '', blocks: m.blocks ?? [] },
      action: { action_id: 'approval_approve', value: requestId, block_id: `approval:${requestId}` },
    });
  const res = await world.slack.sendInteraction(payload, opts.retryNum !== undefined ? { retryNum: opts.retryNum, retryReason: 'http_timeout' } : {});
  expect(res.status).toBe(200);
  return payload;
}

async function statusOf(world: World, requestId: string): Promise<string> {
  return (await world.vigil!.db.prisma.approvalRequest.findUniqueOrThrow({ where: { id: requestId } })).status;
}

const waitForStatus = (world: World, requestId: string, wanted: string[]) =>
  eventually(async () => {
    const s = await statusOf(world, requestId);
    return wanted.includes(s) ? s : undefined;
  }, `request ${requestId} to be ${wanted.join('|')}`);

const waitForEphemeral = (world: World, user: string, seen: number) =>
  eventually(async () => world.slack.store.ephemerals.filter((e) => e.user === user)[seen], `an ephemeral answer to ${user}`);

describe('flip_flag from a flag-flip alert, through the running app (feature-flag-flip)', () => {
  let world: World;
  let alertTs: string;
  let requestId: string;
  let cardTs: string;

  beforeAll(async () => {
    ({ world, alertTs } = await startScenario({
      scenarioDir: scenario('feature-flag-flip'),
      policyFile: POLICY,
      launchDarkly: { project: 'shop' },
      // The catalog names S0TEAMCHECKOUT as checkout's owner; the example policy lets owners flip flags.
      usergroups: { S0TEAMCHECKOUT: [BOB.id] },
    }));
    const row = await requestFor(world, 'flip_flag');
    requestId = row.id;
    cardTs = row.cardTs!;
  }, 60_000);
  afterAll(async () => world?.close());

  it('proposes turning the flag off, dry-run by LaunchDarkly as the writer token; nothing changes yet', async () => {
    const ld = world.launchDarkly!;
    expect(ld.flags.find((f) => f.key === 'new-checkout-flow')!.environments['production']!.on).toBe(true);
    const h1 = await world.vigil!.db.prisma.hypothesis.findFirstOrThrow({ where: { label: 'H1' } });
    expect(h1.status).toBe('supported');
    expect(JSON.parse(h1.mitigation!)).toMatchObject({ action: 'flip_flag', params: { flag: 'new-checkout-flow', to: 'off' } });

    expect(await statusOf(world, requestId)).toBe('pending');
    const text = cardText(world, cardTs);
    expect(text).toContain('Proposed fix: turn flag new-checkout-flow off in production');
    expect(text).toContain('new-checkout-flow.production.on: true → false');
    expect(text).toContain(`accepted by the API server as \`launchdarkly:${LAUNCHDARKLY_TOKENS.writer.name} (service token)\``);
    expect(text).toContain(`writes as launchdarkly:${LAUNCHDARKLY_TOKENS.writer.name} (service token), not the reader token`);
    expect(text).toContain('Needs 1 approval');
    expect(JSON.stringify(card(world, cardTs).blocks)).toContain('<!subteam^S0TEAMCHECKOUT>');
    expect(hasButtons(card(world, cardTs))).toBe(true);
    // The card sits in the alert's thread.
    expect(card(world, cardTs).thread_ts).toBe(alertTs);

    // Reads went with the reader token; the only PATCH was the dry run, with the writer token.
    expect(ld.requests.filter((r) => r.method === 'GET' && r.path.startsWith('/api/v2/flags/')).every((r) => r.token === LAUNCHDARKLY_TOKENS.reader.token)).toBe(true);
    expect(ld.requests.filter((r) => r.method === 'PATCH')).toEqual([expect.objectContaining({ dryRun: true, token: LAUNCHDARKLY_TOKENS.writer.token, status: 200 })]);
    expect(ld.changes).toEqual([]);
  });

  it('refuses an on-call responder outside the owning team with an ephemeral answer; LaunchDarkly is untouched', async () => {
    await approve(world, requestId, cardTs, ALICE);
    const refusal = await waitForEphemeral(world, ALICE.id, 0);
    expect(renderBlocksAsText(refusal)).toMatch(/Not accepted/);
    expect(renderBlocksAsText(refusal)).toContain('S0TEAMCHECKOUT');
    await world.settle();
    expect(await statusOf(world, requestId)).toBe('pending');
    expect(world.launchDarkly!.changes).toEqual([]);
    expect(world.launchDarkly!.requests.filter((r) => r.method === 'PATCH' && !r.dryRun)).toEqual([]);
    expect(world.launchDarkly!.flags.find((f) => f.key === 'new-checkout-flow')!.environments['production']!.on).toBe(true);
  });

  it('an owner approves: the flag is off, written with the writer token only, and the thread reports it verified', async () => {
    const ld = world.launchDarkly!;
    const incidentId = (await world.vigil!.db.prisma.approvalRequest.findUniqueOrThrow({ where: { id: requestId } })).incidentId;
    await approve(world, requestId, cardTs, BOB);
    expect(await waitForStatus(world, requestId, ['executed', 'failed'])).toBe('executed');
    await world.settle();

    expect(ld.flags.find((f) => f.key === 'new-checkout-flow')!.environments['production']!.on).toBe(false);
    expect(ld.changes).toEqual([
      expect.objectContaining({ flag: 'new-checkout-flow', environment: 'production', on: false, token: LAUNCHDARKLY_TOKENS.writer.token, comment: expect.stringContaining(incidentId) }),
    ]);
    expect(ld.changes[0]!.comment).toContain(`approved by ${BOB.id} (${BOB.name})`);
    expect(ld.requests.filter((r) => r.method === 'PATCH' && r.token === LAUNCHDARKLY_TOKENS.reader.token)).toEqual([]);
    // Only the flag changed: nothing was written to Kubernetes.
    expect(world.kube.audit.filter((a) => !['get', 'list', 'watch'].includes(a.verb) && !a.path.includes('accessreviews') && !a.dryRun)).toEqual([]);

    const after = cardText(world, cardTs);
    expect(after).toContain(`Executed as \`launchdarkly:${LAUNCHDARKLY_TOKENS.writer.name} (service token)\` (the provider's writer token): applied`);
    expect(after).toMatch(/Verification\*? ✓ passed/);
    expect(hasButtons(card(world, cardTs))).toBe(false);
    const outcome = threadText(world.slack, alertTs).find((t) => t.startsWith('✅ Done:'));
    expect(outcome).toBeDefined();
    expect(outcome).toContain('turn flag new-checkout-flow off in production');
    expect(outcome).toContain(`launchdarkly:${LAUNCHDARKLY_TOKENS.writer.name} (service token)`);
    expect(outcome).toContain('verified');
    expect(outcome).toContain('✓ new-checkout-flow targeting off in production — targeting off');

    // The write's audit record (the status change is recorded under the same kind, without the write).
    const audit = (await world.vigil!.db.prisma.auditEvent.findMany({ where: { incidentId, kind: 'approval.executed' } })).map((a) => JSON.parse(a.data) as Record<string, unknown>);
    expect(audit.filter((d) => d['identity'])).toEqual([
      expect.objectContaining({ approvedBy: BOB.id, status: 'applied', identity: { mode: 'api-token', user: `launchdarkly:${LAUNCHDARKLY_TOKENS.writer.name} (service token)` } }),
    ]);
  });
});

describe('revert_pr for a deploy with no Kubernetes revision to go back to (deploy-without-rollback-revision)', () => {
  let world: World;
  let alertTs: string;
  let requestId: string;
  let cardTs: string;
  let incidentId: string;
  let bobsClick: Record<string, unknown>;

  beforeAll(async () => {
    ({ world, alertTs } = await startScenario({
      scenarioDir: scenario('deploy-without-rollback-revision'),
      policyFile: POLICY,
      githubWriter: true,
      // The catalog names S0TEAMCART as cart's owner; the example policy wants the owner and on-call.
      usergroups: { S0TEAMCART: [BOB.id] },
    }));
    const row = await requestFor(world, 'revert_pr');
    ({ id: requestId, incidentId } = row);
    cardTs = row.cardTs!;
  }, 60_000);
  afterAll(async () => world?.close());

  it('proposes opening a pull request that reverts #214, needing two approvals, checked as the writer', async () => {
    const h1 = await world.vigil!.db.prisma.hypothesis.findFirstOrThrow({ where: { label: 'H1' } });
    expect(h1.analyzer).toBe('deploy-regression');
    expect(JSON.parse(h1.mitigation!)).toMatchObject({ action: 'revert_pr', params: { repo: 'acme/cart', number: 214 } });
    expect(await statusOf(world, requestId)).toBe('pending');

    const text = cardText(world, cardTs);
    expect(text).toContain('Proposed fix: open a pull request reverting acme/cart#214');
    expect(text).toContain(`${GITHUB_WRITER.login} may push to acme/cart`);
    expect(text).toContain(`not available as \`${GITHUB_WRITER.login}\``);
    expect(text).toContain('Needs 2 approvals');
    expect(text).toContain('close the revert pull request without merging it');
    const blocks = JSON.stringify(card(world, cardTs).blocks);
    expect(blocks).toContain('<!subteam^S0TEAMCART>');
    expect(blocks).toContain('<!subteam^S0SREONCALL>');
    expect(hasButtons(card(world, cardTs))).toBe(true);
    expect(world.github!.reverts).toEqual([]);
  });

  it('one approval is not enough; the second opens exactly one revert, by the writer, never merged', async () => {
    const gh = world.github!;
    await approve(world, requestId, cardTs, ALICE);
    await eventually(async () => (await world.vigil!.db.prisma.approvalDecision.count({ where: { requestId } })) === 1, 'the first approval');
    await world.settle();
    expect(await statusOf(world, requestId)).toBe('pending');
    expect(gh.reverts).toEqual([]);

    bobsClick = await approve(world, requestId, cardTs, BOB);
    expect(await waitForStatus(world, requestId, ['executed', 'failed'])).toBe('executed');
    await world.settle();

    expect(gh.reverts).toHaveLength(1);
    const revert = gh.reverts[0]!;
    expect(revert).toMatchObject({ repo: 'acme/cart', login: GITHUB_WRITER.login, pull: { state: 'open', mergedAt: null, title: 'Revert "Switch price rounding to bankers"' } });
    expect(revert.pull.body).toContain(`Opened by Vigil for incident ${incidentId}`);
    expect(revert.pull.body).toContain(`approved by ${BOB.id} (${BOB.name})`);
    expect(revert.pull.body).toContain('Vigil does not merge this pull request');
    // The reverted PR stays merged; the revert is open in the repository, not merged.
    const pulls = gh.repos['acme/cart']!.pulls ?? [];
    expect(pulls.find((p) => p.number === 214)!.mergedAt).toBeTruthy();
    expect(pulls.filter((p) => p.state === 'open' && p.title.startsWith('Revert '))).toHaveLength(1);
    // Every write went with the writer token; the reader only read.
    expect(gh.requests.filter((r) => r.method !== 'GET')).toEqual([expect.objectContaining({ method: 'POST', path: '/graphql', login: GITHUB_WRITER.login })]);
    expect(gh.requests.filter((r) => r.login === 'vigil-reader').every((r) => r.method === 'GET')).toBe(true);
    // No Kubernetes write either.
    expect(world.kube.audit.filter((a) => !['get', 'list', 'watch'].includes(a.verb) && !a.path.includes('accessreviews') && !a.dryRun)).toEqual([]);

    const after = cardText(world, cardTs);
    expect(after).toContain(`Executed as \`${GITHUB_WRITER.login}\` (the provider's writer token): applied`);
    expect(after).toContain('a revert of acme/cart#214 is open for review');
    const outcome = threadText(world.slack, alertTs).find((t) => t.startsWith('✅ Done:'));
    expect(outcome).toContain('open a pull request reverting acme/cart#214');
    expect(outcome).toContain('verified');
    expect(outcome).toMatch(/✓ a revert of acme\/cart#214 is open for review — #\d+ open for review/);
  });

  it('a Slack retry of the approving click and a late click open nothing more', async () => {
    const gh = world.github!;
    const before = world.slack.store.ephemerals.filter((e) => e.user === ALICE.id).length;
    // The same delivery again (same action_ts), as Slack resends it when the ack was late.
    await approve(world, requestId, cardTs, BOB, { payload: bobsClick, retryNum: 1 });
    await approve(world, requestId, cardTs, ALICE);
    const late = await waitForEphemeral(world, ALICE.id, before);
    expect(renderBlocksAsText(late)).toMatch(/already executed/);
    await world.settle();
    expect(gh.reverts).toHaveLength(1);
    expect(gh.requests.filter((r) => r.method === 'POST' && r.path === '/graphql')).toHaveLength(1);
    expect(await statusOf(world, requestId)).toBe('executed');
    expect(await world.vigil!.db.prisma.approvalDecision.count({ where: { requestId } })).toBe(2);
    // The retry is recognised as the same click (silently), not refused as a new one.
    expect(world.slack.store.ephemerals.filter((e) => e.user === BOB.id)).toEqual([]);
  });
});

describe('without LAUNCHDARKLY_* settings a flag fix cannot run (read-only by default)', () => {
  let world: World;

  beforeAll(async () => {
    ({ world } = await startScenario({ scenarioDir: scenario('feature-flag-flip'), policyFile: POLICY, usergroups: { S0TEAMCHECKOUT: [BOB.id] } }));
  }, 60_000);
  afterAll(async () => world?.close());

  it('the flag card says the provider is missing, has no buttons, and nothing is executed', async () => {
    expect(world.launchDarkly).toBeUndefined();
    expect(world.config.flags).toBeUndefined();
    const row = await requestFor(world, 'flip_flag');
    expect(row.status).toBe('refused');
    const text = cardText(world, row.cardTs!);
    expect(text).toContain('Cannot run');
    expect(text).toContain('no flag provider is configured (LAUNCHDARKLY_* settings)');
    expect(text).toContain('set flag new-checkout-flow to "off" in the flag tool');
    expect(hasButtons(card(world, row.cardTs!))).toBe(false);
    expect(await world.vigil!.db.prisma.auditEvent.count({ where: { kind: 'approval.executed' } })).toBe(0);
  });
});

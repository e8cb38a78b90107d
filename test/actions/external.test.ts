/**
 * flip_flag through the real LaunchDarkly adapter against a fake LaunchDarkly API, and revert_pr through
 * the real Octokit against the fake GitHub (REST + GraphQL `revertPullRequest`): plan (reader reads,
 * writer dry-runs or is checked), execution with the writer token only, preconditions, verification.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GitHubReverts } from '../../src/actions/external/github-revert.js';
import { LaunchDarklyFlags } from '../../src/actions/external/launchdarkly.js';
import type { ExternalProviders } from '../../src/actions/external/types.js';
import { InvalidProposalError } from '../../src/actions/plan.js';
import { executeExternalMitigation, planMitigation, verifyMitigation } from '../../src/actions/registry.js';
import type { Approval, DiagnosisSnapshot, Plan } from '../../src/actions/types.js';
import type { MitigationProposal } from '../../src/triage/types.js';
import { repoScenario } from '../fakes/github/builders.js';
import { startFakeGitHub, type FakeGitHub } from '../fakes/github/server.js';
import { startFakeLaunchDarkly, type FakeLaunchDarkly } from '../fakes/launchdarkly/server.js';
import { startActionWorld, type ActionWorld } from './world.js';

const INCIDENT = 'INC-9';
const approval: Approval = { userId: 'U0ALICE', userName: 'alice', at: new Date('2026-11-29T12:00:00Z') };
const checkout = { kind: 'Deployment', namespace: 'shop', name: 'checkout' };
const READ = 'api-reader-0123456789';
const WRITE = 'api-writer-0123456789';

let kube: ActionWorld;
let ld: FakeLaunchDarkly;
let gh: FakeGitHub;
let providers: ExternalProviders;

beforeEach(async () => {
  kube = await startActionWorld([]);
  ld = await startFakeLaunchDarkly({
    project: 'shop',
    flags: [{ key: 'new-checkout-flow', environments: { production: { on: true, version: 7 }, staging: { on: false } } }],
    tokens: { [READ]: { name: 'vigil-reader', role: 'reader' }, [WRITE]: { name: 'vigil-flag-writer', role: 'writer' } },
  });
  const cart = repoScenario();
  cart.mergedPull({ number: 214, title: 'Cache cart totals', author: 'dana', mergedAt: new Date('2026-11-29T11:00:00Z'), mergeCommitSha: 'a'.repeat(40) });
  cart.openPull({ number: 215, title: 'WIP: new cart UI', author: 'erin' });
  gh = await startFakeGitHub({
    repos: { 'acme/cart': cart.repo },
    tokens: { 'ghp-reader': { login: 'vigil-reader', write: false }, 'ghp-writer': { login: 'vigil-bot', write: true } },
  });
  providers = {
    flags: new LaunchDarklyFlags({ apiUrl: ld.url, project: 'shop', environment: 'production', readToken: READ, writeToken: WRITE, attempts: 2 }),
    github: new GitHubReverts({ baseUrl: gh.url, readToken: 'ghp-reader', writeToken: 'ghp-writer' }),
  };
});
afterEach(async () => {
  await Promise.all([kube.close(), ld.close(), gh.close()]);
});

const proposal = (action: string, params: Record<string, unknown>): MitigationProposal => ({ action, target: checkout, params, command: `(${action})`, rationale: 'test' });
/** `null`: no providers configured. */
const plan = (p: MitigationProposal, diagnosis?: DiagnosisSnapshot, with_: ExternalProviders | null = providers): Promise<Plan> =>
  planMitigation({ incidentId: INCIDENT, reader: kube.reader, ...(with_ ? { providers: with_ } : {}), ...(diagnosis ? { diagnosis } : {}), environment: 'production' }, p);
const check = (p: Plan, name: string) => p.preChecks.find((c) => c.name === name);
const flagDiagnosis: DiagnosisSnapshot = { component: checkout, facts: { flag: 'new-checkout-flow', before: 'off', after: 'on' } };

describe('flip_flag (LaunchDarkly)', () => {
  it('plans with the reader, dry-runs as the writer, and shows the change, checks, criteria and rollback', async () => {
    const p = await plan(proposal('flip_flag', { flag: 'new-checkout-flow', to: 'off' }), flagDiagnosis);
    expect(p.target).toEqual({ kind: 'FeatureFlag', namespace: 'shop', name: 'new-checkout-flow' });
    expect(p.changes).toEqual([{ path: 'new-checkout-flow.production.on', before: true, after: false }]);
    expect(p.preChecks.map((c) => [c.name, c.status])).toEqual([
      ['target exists', 'pass'],
      ['it is the one in the diagnosis', 'pass'],
      ['current state is as expected', 'pass'],
      ['executor may change the flag', 'pass'],
    ]);
    expect(p.dryRun).toMatchObject({ status: 'accepted', identity: 'launchdarkly:vigil-flag-writer (service token)' });
    expect(p.executable).toBe(true);
    expect(p.successCriteria[0]).toMatchObject({ kind: 'flag_state', on: false, environment: 'production' });
    expect(p.rollback).toMatchObject({ action: 'flip_flag', params: { flag: 'new-checkout-flow', to: 'on', environment: 'production' } });
    expect(p.risk.factors.find((f) => f.name === 'action')?.points).toBeGreaterThan(0);
    // Reads used the reader token; the only PATCH was a dry run with the writer token; nothing changed.
    expect(ld.requests.filter((r) => r.method === 'GET' && r.path.startsWith('/api/v2/flags')).every((r) => r.token === READ)).toBe(true);
    expect(ld.requests.filter((r) => r.method === 'PATCH')).toEqual([expect.objectContaining({ dryRun: true, token: WRITE, status: 200 })]);
    expect(ld.changes).toEqual([]);
    expect(ld.flags[0]!.environments['production']!.on).toBe(true);
  });

  it('executes with the writer token, records incident and approver in the comment, and verifies', async () => {
    const p = await plan(proposal('flip_flag', { flag: 'new-checkout-flow', to: 'off' }), flagDiagnosis);
    const result = await executeExternalMitigation(providers, p, approval);
    expect(result).toMatchObject({ status: 'applied', identity: { mode: 'api-token', user: 'launchdarkly:vigil-flag-writer (service token)' } });
    expect(ld.changes).toEqual([expect.objectContaining({ flag: 'new-checkout-flow', environment: 'production', on: false, token: WRITE })]);
    expect(ld.changes[0]!.comment).toBe('Vigil: INC-9, approved by U0ALICE (alice) at 2026-11-29T12:00:00Z');
    const v = await verifyMitigation(kube.reader, p, { providers, windowMs: 200, intervalMs: 50 });
    expect(v.ok).toBe(true);
    expect(v.checks).toEqual([{ description: 'new-checkout-flow targeting off in production', ok: true, observed: 'targeting off (version 8)' }]);
  });

  it('refuses at the provider when someone flipped the flag between plan and execution (JSON-patch test)', async () => {
    const p = await plan(proposal('flip_flag', { flag: 'new-checkout-flow', to: 'off' }), flagDiagnosis);
    ld.set('new-checkout-flow', 'production', false); // someone turned it off by hand after the plan
    const result = await executeExternalMitigation(providers, p, approval);
    expect(result).toMatchObject({ status: 'rejected', message: expect.stringContaining('requires the flag to still be on (did someone change it since the plan? propose again)') });
    expect(result.status === 'rejected' && result.writes[0]!.uncertain).toBeFalsy();
    expect(ld.requests.filter((q) => q.method === 'PATCH' && !q.dryRun).map((q) => q.status)).toEqual([400]);
    expect(ld.changes).toEqual([]);
  });

  it('plans as not executable when the flag is already in the target state or moved since the diagnosis', async () => {
    ld.set('new-checkout-flow', 'production', false);
    const p = await plan(proposal('flip_flag', { flag: 'new-checkout-flow', to: 'off' }), flagDiagnosis);
    expect(check(p, 'current state is as expected')).toMatchObject({ status: 'fail', detail: 'targeting is already off: nothing to change' });
    expect(p.executable).toBe(false);
    // The diagnosis saw it on; it is off now and the proposal turns it on: someone changed it since.
    const s = await plan(proposal('flip_flag', { flag: 'new-checkout-flow', to: 'on' }), flagDiagnosis);
    expect(check(s, 'current state is as expected')).toMatchObject({ status: 'fail', detail: expect.stringContaining('someone changed it since') });
  });

  it('flips only in the configured environment, and only for an incident in that environment', async () => {
    const staging = await plan(proposal('flip_flag', { flag: 'new-checkout-flow', to: 'on', environment: 'staging' }), flagDiagnosis);
    expect(check(staging, 'flag environment is the incident’s')).toMatchObject({ status: 'fail', detail: expect.stringContaining('only in LaunchDarkly environment production') });
    expect(staging.executable).toBe(false);
    const fromStaging = await planMitigation(
      { incidentId: INCIDENT, reader: kube.reader, providers, diagnosis: flagDiagnosis, environment: 'staging' },
      { ...proposal('flip_flag', { flag: 'new-checkout-flow', to: 'off' }), target: { ...checkout, namespace: 'shop-staging' } },
    );
    expect(check(fromStaging, 'flag environment is the incident’s')).toMatchObject({ status: 'fail', detail: 'the incident is in staging (namespace shop-staging) but LaunchDarkly environment production is production' });
    expect(ld.requests.filter((r) => r.method === 'PATCH')).toEqual([]);
  });

  it('names a missing flag, a wrong flag, a variation value and a missing provider clearly', async () => {
    const missing = await plan(proposal('flip_flag', { flag: 'no-such-flag', to: 'off' }), flagDiagnosis);
    expect(check(missing, 'target exists')).toMatchObject({ status: 'fail', detail: 'LaunchDarkly has no flag no-such-flag' });
    expect(missing.executable).toBe(false);
    const other = await plan(proposal('flip_flag', { flag: 'new-checkout-flow', to: 'off' }), { component: checkout, facts: { flag: 'dark-mode', after: 'on' } });
    expect(check(other, 'it is the one in the diagnosis')).toMatchObject({ status: 'fail', detail: 'the diagnosis is about flag dark-mode, not new-checkout-flow' });
    await expect(plan(proposal('flip_flag', { flag: 'new-checkout-flow', to: 'variant-b' }))).rejects.toThrow(/variation, which must be changed by hand/);
    await expect(plan(proposal('flip_flag', { flag: '', to: 'off' }))).rejects.toThrow(InvalidProposalError);
    const none = await plan(proposal('flip_flag', { flag: 'new-checkout-flow', to: 'off' }), flagDiagnosis, null);
    expect(none.executable).toBe(false);
    expect(check(none, 'provider available')?.detail).toContain('LAUNCHDARKLY_');
    expect(await executeExternalMitigation({}, none, approval)).toMatchObject({ status: 'refused' });
  });

  it('a writer token LaunchDarkly forbids fails the dry run, and a reader token never writes', async () => {
    const readerAsWriter = new LaunchDarklyFlags({ apiUrl: ld.url, project: 'shop', environment: 'production', readToken: WRITE, writeToken: READ });
    const p = await plan(proposal('flip_flag', { flag: 'new-checkout-flow', to: 'off' }), flagDiagnosis, { flags: readerAsWriter });
    expect(p.dryRun).toMatchObject({ status: 'rejected', code: 403, message: expect.stringContaining('writer token may not change this flag') });
    expect(p.executable).toBe(false);
    expect(ld.changes).toEqual([]);
    expect(() => new LaunchDarklyFlags({ apiUrl: ld.url, project: 'shop', environment: 'production', readToken: READ, writeToken: READ })).toThrow(/must differ/);
  });

  it('retries reads after 429 and 5xx; never resends a write that failed with 5xx, and marks it uncertain', async () => {
    ld.failNext(/new-checkout-flow/, 429, 'slow down', { 'retry-after': '0' });
    const p = await plan(proposal('flip_flag', { flag: 'new-checkout-flow', to: 'off' }), flagDiagnosis);
    expect(check(p, 'target exists')?.status).toBe('pass');
    ld.failNext(/new-checkout-flow/, 503, 'unavailable');
    expect((await providers.flags!.read('new-checkout-flow', 'production'))?.on).toBe(true);
    expect(ld.requests.filter((q) => q.method === 'GET' && q.path.endsWith('/new-checkout-flow')).map((q) => q.status).slice(-2)).toEqual([503, 200]);
    ld.failNext(/new-checkout-flow/, 503, 'unavailable');
    const r = await executeExternalMitigation(providers, p, approval);
    expect(r).toMatchObject({ status: 'rejected', writes: [{ code: 503, uncertain: true, message: expect.stringContaining('may have been applied') }] });
    expect(ld.requests.filter((q) => q.method === 'PATCH' && !q.dryRun)).toHaveLength(1);
  });

  it('a write with no answer at all (server gone) is uncertain, not a refusal', async () => {
    const p = await plan(proposal('flip_flag', { flag: 'new-checkout-flow', to: 'off' }), flagDiagnosis);
    await ld.close();
    const r = await executeExternalMitigation(providers, p, approval);
    expect(r).toMatchObject({ status: 'rejected', writes: [{ uncertain: true, message: expect.stringContaining('no answer from LaunchDarkly') }] });
    ld = await startFakeLaunchDarkly({ project: 'shop', flags: [], tokens: {} }); // for afterEach
  });
});

describe('revert_pr (GitHub)', () => {
  const revert = proposal('revert_pr', { repo: 'acme/cart', number: 214 });
  const diagnosis: DiagnosisSnapshot = { component: checkout, facts: { pr: 214, sha: 'aaaaaaa' } };

  it('plans: merged PR read with the reader, writer access checked, no dry run (and says so), never merged', async () => {
    const p = await plan(revert, diagnosis);
    expect(p.target).toEqual({ kind: 'PullRequest', namespace: 'shop', name: 'acme/cart#214' });
    expect(p.preChecks.map((c) => [c.name, c.status])).toEqual([
      ['target exists', 'pass'],
      ['it is the one in the diagnosis', 'pass'],
      ['current state is as expected', 'pass'],
      ['executor may open the revert', 'pass'],
    ]);
    expect(check(p, 'executor may open the revert')?.detail).toBe('vigil-bot may push to acme/cart');
    expect(p.dryRun).toMatchObject({ status: 'unavailable', identity: 'vigil-bot' });
    expect(p.executable).toBe(true);
    expect(p.rollback).toBeUndefined();
    expect(p.rollbackNote).toContain('close the revert pull request without merging it');
    expect(p.successCriteria).toEqual([expect.objectContaining({ kind: 'revert_pr_open', repo: 'acme/cart', number: 214 })]);
    expect(gh.requests.find((r) => r.path === '/repos/acme/cart/pulls/214')?.login).toBe('vigil-reader');
    expect(gh.reverts).toEqual([]);
  });

  it('opens the revert with the writer token through GraphQL, once, and verifies it is open', async () => {
    const p = await plan(revert, diagnosis);
    const r = await executeExternalMitigation(providers, p, approval);
    expect(r).toMatchObject({ status: 'applied', identity: { mode: 'api-token', user: 'vigil-bot' }, writes: [{ status: 'ok', message: expect.stringContaining('/acme/cart/pull/216') }] });
    expect(gh.reverts).toHaveLength(1);
    const opened = gh.reverts[0]!;
    expect(opened).toMatchObject({ repo: 'acme/cart', login: 'vigil-bot', pull: { title: 'Revert "Cache cart totals"', state: 'open', mergedAt: null, baseRef: 'main' } });
    expect(opened.pull.body).toContain('INC-9, approved by U0ALICE (alice)');
    expect(opened.pull.body).toContain('Vigil does not merge this pull request');
    expect(gh.requests.find((q) => q.path === '/graphql')?.login).toBe('vigil-bot');

    const v = await verifyMitigation(kube.reader, p, { providers, windowMs: 200, intervalMs: 50 });
    expect(v).toMatchObject({ ok: true, checks: [{ ok: true, observed: expect.stringContaining('#216 open for review') }] });
    // A retry (after a restart) finds the open revert instead of opening a second one; a re-plan refuses.
    expect(await executeExternalMitigation(providers, p, approval)).toMatchObject({ status: 'applied', writes: [{ message: expect.stringContaining('already open') }] });
    expect(gh.reverts).toHaveLength(1);
    expect(check(await plan(revert, diagnosis), 'current state is as expected')).toMatchObject({ status: 'fail', detail: expect.stringContaining('a revert is already open') });
  });

  it('refuses an unmerged PR, a token without push, and a missing provider, each with the reason', async () => {
    const open = await plan(proposal('revert_pr', { repo: 'acme/cart', number: 215 }));
    expect(check(open, 'current state is as expected')).toMatchObject({ status: 'fail', detail: '#215 is not merged: there is nothing to revert' });
    const readOnly = new GitHubReverts({ baseUrl: gh.url, readToken: 'ghp-writer', writeToken: 'ghp-reader' });
    const p = await plan(revert, diagnosis, { github: readOnly });
    expect(check(p, 'executor may open the revert')).toMatchObject({ status: 'fail', detail: 'vigil-reader may not push to acme/cart' });
    expect(p.executable).toBe(false);
    // Even executed against policy, GitHub itself refuses the read-only token: nothing is opened.
    const forced = await executeExternalMitigation({ github: readOnly }, { ...(await plan(revert, diagnosis)), executable: true }, approval);
    expect(forced).toMatchObject({ status: 'rejected', message: expect.stringContaining('FORBIDDEN') });
    expect(forced.status === 'rejected' && forced.writes[0]!.uncertain).toBeFalsy();
    expect(gh.reverts).toEqual([]);
    const none = await plan(revert, diagnosis, null);
    expect(check(none, 'provider available')?.detail).toContain('GITHUB_WRITE_TOKEN');
    expect(() => new GitHubReverts({ baseUrl: gh.url, readToken: 'x', writeToken: 'x' })).toThrow(/must differ/);
  });

  it('never opens a second revert: another incident about the same PR, or one opened by hand, is found', async () => {
    const first = await plan(revert, diagnosis);
    expect(await executeExternalMitigation(providers, first, approval)).toMatchObject({ status: 'applied' });
    // A second incident about the same change: its plan says a revert is open, and a stale plan executes nothing new.
    const other = await planMitigation({ incidentId: 'INC-10', reader: kube.reader, providers, diagnosis, environment: 'production' }, revert);
    expect(check(other, 'current state is as expected')).toMatchObject({ status: 'fail', detail: expect.stringContaining('a revert is already open') });
    expect(await executeExternalMitigation(providers, { ...first, incidentId: 'INC-10' }, approval)).toMatchObject({ status: 'applied', writes: [{ message: expect.stringContaining('already open') }] });
    expect(gh.reverts).toHaveLength(1);
    // Verification of the second incident's plan accepts the revert that is open.
    expect((await verifyMitigation(kube.reader, other, { providers, windowMs: 100, intervalMs: 50 })).ok).toBe(true);

    // A revert someone opened with GitHub's button (same title) counts too.
    gh.repos['acme/cart']!.pulls!.push({ ...gh.repos['acme/cart']!.pulls!.find((p) => p.number === 215)!, number: 300, title: 'Revert "Hotfix totals"', body: 'by hand' });
    gh.repos['acme/cart']!.pulls!.push({ ...gh.repos['acme/cart']!.pulls!.find((p) => p.number === 214)!, number: 301, title: 'Hotfix totals' });
    const byHand = await plan(proposal('revert_pr', { repo: 'acme/cart', number: 301 }));
    expect(check(byHand, 'current state is as expected')).toMatchObject({ status: 'fail', detail: expect.stringContaining('/pull/300') });
  });

  it('refuses to plan when it cannot check for an open revert (it might open a duplicate)', async () => {
    gh.failNext(/\/repos\/acme\/cart\/pulls$/, 502);
    const p = await plan(revert, diagnosis);
    expect(check(p, 'current state is as expected')).toMatchObject({ status: 'fail', detail: expect.stringContaining('could not check for a revert already open') });
    expect(p.executable).toBe(false);
  });

  it('a GitHub 5xx on the revert mutation is uncertain (GitHub may have opened it); GraphQL errors are refusals', async () => {
    const p = await plan(revert, diagnosis);
    gh.failNext(/^\/graphql$/, 502);
    expect(await executeExternalMitigation(providers, p, approval)).toMatchObject({ status: 'rejected', writes: [{ uncertain: true, message: expect.stringContaining('may have been opened') }] });
    // A GraphQL error (the PR is not merged) is a plain refusal: certain, and nothing opened.
    const unmerged = await plan(proposal('revert_pr', { repo: 'acme/cart', number: 215 }));
    const refused = await executeExternalMitigation(providers, { ...unmerged, executable: true }, approval);
    expect(refused).toMatchObject({ status: 'rejected', message: expect.stringContaining('UNPROCESSABLE') });
    expect(refused.status === 'rejected' && refused.writes[0]!.uncertain).toBeFalsy();
    expect(gh.reverts).toEqual([]);
  });

  it('names the writer of an app installation token, which has no user', async () => {
    await gh.close();
    const cart = repoScenario();
    cart.mergedPull({ number: 214, title: 'Cache cart totals', author: 'dana', mergedAt: new Date('2026-11-29T11:00:00Z') });
    gh = await startFakeGitHub({ repos: { 'acme/cart': cart.repo }, tokens: { 'ghs-app': { login: 'vigil[bot]', write: true, app: true }, 'ghp-reader': { login: 'vigil-reader', write: false } } });
    const p = await plan(revert, diagnosis, { github: new GitHubReverts({ baseUrl: gh.url, readToken: 'ghp-reader', writeToken: 'ghs-app' }) });
    expect(check(p, 'executor may open the revert')?.detail).toBe('GitHub App installation token may push to acme/cart');
  });
});

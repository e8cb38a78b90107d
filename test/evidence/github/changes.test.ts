import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { githubChanges } from '../../../src/evidence/github/changes.js';
import { startFakeGitHub, type FakeGitHub } from '../../fakes/github/server.js';
import { PREVIOUS_SHA, readerFor, shopScenario, t, TOKEN, WINDOW } from './scenario.js';

let gh: FakeGitHub;
const { shop, shas } = shopScenario();
const short = (sha: string): string => sha.slice(0, 7);

beforeAll(async () => {
  gh = await startFakeGitHub({ repos: { 'acme/shop': shop.repo }, token: TOKEN });
});
afterAll(async () => gh.close());

describe('githubChanges', () => {
  it('maps deployments, merged PRs and uncovered commits to ChangeEvents, oldest first', async () => {
    const { changes, gaps } = await githubChanges(readerFor(gh.url), 'acme/shop', WINDOW);
    expect(gaps).toEqual([]);
    expect(changes.map((c) => [c.at, c.kind, c.summary])).toEqual([
      [t(-90), 'pr_merged', '#101 "Raise pool size" merged by carol'],
      [t(-50), 'deploy', `deploy ${short(shas.hotfix)} to staging by deploy-bot[bot] (failure)`],
      [t(-45), 'commit', `commit ${short(shas.hotfix)} "hotfix: disable cache" by dave`],
      [t(-40), 'deploy', `deploy ${short(shas.pool)} to production by alice (success)`],
    ]);
    const [pr, , commit, deploy] = changes;
    expect(pr).toMatchObject({
      actor: 'carol',
      after: short(shas.pool),
      source: 'github',
      target: { kind: 'Repository', name: 'acme/shop' },
      citation: { source: 'github', ref: '/repos/acme/shop/pulls/101', url: 'https://github.com/acme/shop/pull/101' },
    });
    expect(commit).toMatchObject({ actor: 'dave', citation: { ref: `/repos/acme/shop/commits/${shas.hotfix}`, url: `https://github.com/acme/shop/commit/${shas.hotfix}` } });
    expect(deploy).toMatchObject({ actor: 'alice', before: short(PREVIOUS_SHA), after: short(shas.pool), citation: { ref: expect.stringMatching(/^\/repos\/acme\/shop\/deployments\/\d+$/) } });
  });

  it('names the service as target and filters deployments by environment', async () => {
    const { changes } = await githubChanges(readerFor(gh.url), 'acme/shop', WINDOW, { service: 'checkout', environment: 'production', kinds: ['deploy'] });
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ kind: 'deploy', target: { kind: 'Service', name: 'checkout' } });
  });

  it('a failed read becomes a gap sentence while the other sources still report', async () => {
    gh.failNext(/\/repos\/acme\/shop\/deployments$/, 500);
    const { changes, gaps } = await githubChanges(readerFor(gh.url), 'acme/shop', WINDOW);
    expect(gaps).toEqual(['Could not read GitHub deployments of acme/shop: HTTP 500 Server Error — GET /repos/acme/shop/deployments.']);
    expect(changes.map((c) => c.kind)).toEqual(['pr_merged', 'commit']);
  });

  it('without the PR listing, commits are all kept (coverage unknown) and the gap says why', async () => {
    gh.failNext(/\/repos\/acme\/shop\/pulls$/, 503);
    const { changes, gaps } = await githubChanges(readerFor(gh.url), 'acme/shop', WINDOW, { kinds: ['commit'] });
    expect(gaps).toEqual([expect.stringMatching(/^Could not read GitHub pull requests of acme\/shop: HTTP 503 Service Unavailable — GET \/repos\/acme\/shop\/pulls\?state=closed/)]);
    expect(changes.map((c) => c.summary)).toEqual([
      `commit ${short(shas.pool)} "Raise pool size (#101)" by bob`,
      `commit ${short(shas.hotfix)} "hotfix: disable cache" by dave`,
    ]);
  });

  it('a missing repository gives one clear gap per source and no changes', async () => {
    const { changes, gaps } = await githubChanges(readerFor(gh.url), 'acme/missing', WINDOW);
    expect(changes).toEqual([]);
    expect(gaps).toHaveLength(3);
    expect(gaps[0]).toBe(
      'Could not read GitHub deployments of acme/missing: HTTP 404 Not Found (the repository or object does not exist, or the token cannot see it) — GET /repos/acme/missing/deployments.',
    );
  });

  it('a rejected token says so', async () => {
    const { gaps } = await githubChanges(readerFor(gh.url, 'revoked'), 'acme/shop', WINDOW, { kinds: ['deploy'] });
    expect(gaps).toEqual(['Could not read GitHub deployments of acme/shop: HTTP 401 Bad credentials (the GitHub token was rejected) — GET /repos/acme/shop/deployments.']);
  });

  it('a rate limit says until when', async () => {
    gh.rateLimitNext(new Date('2025-03-10T12:30:00Z'));
    const { gaps, changes } = await githubChanges(readerFor(gh.url), 'acme/shop', WINDOW, { kinds: ['deploy'] });
    expect(changes).toEqual([]);
    expect(gaps).toEqual(['Could not read GitHub deployments of acme/shop: rate limited until 2025-03-10T12:30:00.000Z (HTTP 403) — GET /repos/acme/shop/deployments.']);
  });
});

// The repositories no workload names (GitOps, platform) are found by what the token can read and when
// each last moved: a user token through /user/repos?sort=pushed, an App installation token (which
// /user/repos refuses) through /installation/repositories.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoScenario } from '../../fakes/github/builders.js';
import { startFakeGitHub, type FakeGitHub } from '../../fakes/github/server.js';
import { readerFor, shopScenario, t } from './scenario.js';

let gh: FakeGitHub;

beforeAll(async () => {
  const gitops = repoScenario();
  gitops.mergedPull({ number: 611, title: 'orders: align route ports', author: 'jonas', mergedAt: t(45) });
  const stale = repoScenario();
  stale.mergedPull({ number: 3, title: 'old change', author: 'bob', mergedAt: t(-60 * 24 * 30) });
  gh = await startFakeGitHub({
    repos: { 'acme/shop': shopScenario().shop.repo, 'acme/platform-gitops': gitops.repo, 'acme/stale': stale.repo },
    tokens: { user: { login: 'vigil-reader', write: false }, app: { login: 'vigil[bot]', write: false, app: true } },
  });
});
afterAll(async () => gh.close());

describe('GitHubReader.recentlyPushedRepos', () => {
  it('lists the repositories pushed since the window start, newest first, with a user token', async () => {
    const repos = await readerFor(gh.url, 'user').recentlyPushedRepos(t(-180));
    expect(repos).toEqual(['acme/platform-gitops', 'acme/shop']);
    expect(gh.requests.at(-1)).toMatchObject({ path: '/user/repos', query: { sort: 'pushed', direction: 'desc' } });
  });

  it('falls back to the installation listing for a GitHub App token', async () => {
    const repos = await readerFor(gh.url, 'app').recentlyPushedRepos(t(-180), 1);
    expect(repos).toEqual(['acme/platform-gitops']);
    expect(gh.requests.slice(-2).map((r) => [r.path, r.status])).toEqual([
      ['/user/repos', 403],
      ['/installation/repositories', 200],
    ]);
  });

  it('fails with a read error naming the call when the token is refused', async () => {
    await expect(readerFor(gh.url, 'nope').recentlyPushedRepos(t(-180))).rejects.toThrow(/user\/repos/);
  });
});

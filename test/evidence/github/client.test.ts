import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GitHubReadError, GitHubReader } from '../../../src/evidence/github/client.js';
import { repoScenario } from '../../fakes/github/builders.js';
import { startFakeGitHub, type FakeGitHub } from '../../fakes/github/server.js';
import { ALERT, memoryLogger, PREVIOUS_SHA, readerFor, shopScenario, t, TOKEN, WINDOW } from './scenario.js';

let gh: FakeGitHub;
const { shop, shas } = shopScenario();

/** 260 closed PRs, one updated every 10 minutes going back from the alert; every other one merged. */
function busyRepo() {
  const busy = repoScenario();
  for (let i = 0; i < 260; i++) {
    const at = t(-10 * (i + 1));
    if (i % 2 === 0) busy.mergedPull({ number: 1000 + i, title: `Change ${i}`, author: 'bob', mergedAt: at, squashCommit: false });
    else busy.closedPull({ number: 1000 + i, title: `Abandoned ${i}`, author: 'bob', closedAt: at });
    busy.deployment({ sha: `${String(i).padStart(4, '0')}${'d'.repeat(36)}`, environment: 'production', creator: 'ci', at, states: [['success', at]] });
  }
  return busy.repo;
}

beforeAll(async () => {
  gh = await startFakeGitHub({ repos: { 'acme/shop': shop.repo, 'acme/busy': busyRepo() }, token: TOKEN });
});
afterAll(async () => gh.close());
beforeEach(() => {
  gh.requests.length = 0;
});

describe('GitHubReader.listCommits', () => {
  it('returns default-branch commits inside the window with first line, author and link', async () => {
    const { items, ref, truncated } = await readerFor(gh.url).listCommits('acme/shop', WINDOW);
    expect(items.map((c) => c.message)).toEqual(['hotfix: disable cache', 'Raise pool size (#101)']);
    expect(items[0]).toMatchObject({
      sha: shas.hotfix,
      authorLogin: 'dave',
      authorName: 'Dave',
      committedAt: t(-45),
      url: `https://github.com/acme/shop/commit/${shas.hotfix}`,
      apiPath: `/repos/acme/shop/commits/${shas.hotfix}`,
    });
    expect(truncated).toBe(false);
    expect(ref).toBe(`GET /repos/acme/shop/commits?since=${encodeURIComponent(WINDOW.since.toISOString())}&until=${encodeURIComponent(ALERT.toISOString())}`);
    expect(gh.requests[0]?.query).toMatchObject({ since: WINDOW.since.toISOString(), until: ALERT.toISOString(), per_page: '100' });
  });

  it('reads another branch with ref', async () => {
    const { items } = await readerFor(gh.url).listCommits('acme/shop', WINDOW, { ref: 'feature/cache' });
    expect(items.map((c) => c.message)).toEqual(['feature work']);
  });
});

describe('GitHubReader.listMergedPullRequests', () => {
  it('keeps PRs merged inside the window: not closed-unmerged, not merged before or after it', async () => {
    const { items } = await readerFor(gh.url).listMergedPullRequests('acme/shop', WINDOW);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({
      number: 101,
      title: 'Raise pool size',
      mergedAt: t(-90),
      author: 'bob',
      mergedBy: 'carol',
      baseRef: 'main',
      mergeCommitSha: shas.pool,
      url: 'https://github.com/acme/shop/pull/101',
      labels: ['db', 'config'],
    });
    const list = gh.requests.find((r) => r.path === '/repos/acme/shop/pulls');
    expect(list?.query).toMatchObject({ state: 'closed', sort: 'updated', direction: 'desc', per_page: '100' });
    // merged_by is only on GET /pulls/{n}
    expect(gh.requests.some((r) => r.path === '/repos/acme/shop/pulls/101')).toBe(true);
  });

  it('stops paginating once PRs were updated before the window', async () => {
    // 260 PRs, 100 a page: the window (last 18 h) reaches into page 2 (PRs 100..107), so page 3 is never read.
    const window = { since: t(-18 * 60 + 1), until: ALERT };
    const { items } = await readerFor(gh.url).listMergedPullRequests('acme/busy', window);
    const pages = gh.requests.filter((r) => r.path === '/repos/acme/busy/pulls').map((r) => r.query.page ?? '1');
    expect(pages).toEqual(['1', '2']);
    expect(items).toHaveLength(54);
    expect(items.every((p) => p.number % 2 === 0 && p.mergedAt >= window.since)).toBe(true);
  });

  it('follows Link rel="next" across all three pages when the window covers them', async () => {
    const window = { since: t(-3000), until: ALERT };
    const { items, truncated } = await readerFor(gh.url).listMergedPullRequests('acme/busy', window);
    const pages = gh.requests.filter((r) => r.path === '/repos/acme/busy/pulls').map((r) => r.query.page ?? '1');
    expect(pages).toEqual(['1', '2', '3']);
    expect(items).toHaveLength(130);
    expect(truncated).toBe(false);
  });

  it('marks the listing truncated when the page cap stops it', async () => {
    const reader = new GitHubReader({ token: TOKEN, baseUrl: gh.url, logger: memoryLogger().logger, maxPages: 1 });
    const { truncated, items } = await reader.listMergedPullRequests('acme/busy', { since: t(-3000), until: ALERT });
    expect(truncated).toBe(true);
    expect(items).toHaveLength(50);
  });
});

describe('GitHubReader.listDeployments', () => {
  it('lists deployments in the window with their latest status and the previous sha per environment', async () => {
    const { items } = await readerFor(gh.url).listDeployments('acme/shop', WINDOW);
    expect(items.map((d) => [d.environment, d.sha, d.state])).toEqual([
      ['production', shas.pool, 'success'],
      ['staging', shas.hotfix, 'failure'],
    ]);
    expect(items[0]).toMatchObject({ creator: 'alice', createdAt: t(-40), statusAt: t(-35), previousSha: PREVIOUS_SHA, ref: 'main' });
    expect(items[0]?.url).toBe(`https://ci.example.com/deploys/${shas.pool.slice(0, 7)}`);
    expect(items[1]).toMatchObject({ creator: 'deploy-bot[bot]', statusDescription: 'smoke tests failed' });
    expect(items[1]?.previousSha).toBeUndefined();
  });

  it('stops paging deployments once past the window with every predecessor found', async () => {
    const { items, truncated } = await readerFor(gh.url).listDeployments('acme/busy', { since: t(-35), until: ALERT });
    expect(items.map((d) => [d.sha.slice(0, 4), d.previousSha?.slice(0, 4)])).toEqual([
      ['0000', '0001'],
      ['0001', '0002'],
      ['0002', '0003'],
    ]);
    expect(truncated).toBe(false);
    expect(gh.requests.filter((r) => r.path === '/repos/acme/busy/deployments')).toHaveLength(1);
  });

  it('filters by environment on the server', async () => {
    const { items, ref } = await readerFor(gh.url).listDeployments('acme/shop', WINDOW, { environment: 'staging' });
    expect(items.map((d) => d.environment)).toEqual(['staging']);
    expect(ref).toBe('GET /repos/acme/shop/deployments?environment=staging');
    expect(gh.requests[0]?.query.environment).toBe('staging');
  });

  it('keeps a deployment whose status read failed, and says so', async () => {
    gh.failNext(/\/deployments\/\d+\/statuses$/, 502);
    const { items, gaps } = await readerFor(gh.url).listDeployments('acme/shop', WINDOW);
    expect(items).toHaveLength(2);
    expect(items.filter((d) => d.state === undefined)).toHaveLength(1);
    expect(gaps).toEqual([expect.stringMatching(/^status of deployment \d+ could not be read: GET \/repos\/acme\/shop\/deployments\/\d+\/statuses: HTTP 502 Bad Gateway$/)]);
  });
});

describe('GitHubReader errors', () => {
  it('a missing repository is a GitHubReadError 404 with GitHub’s message', async () => {
    const err = await readerFor(gh.url).listCommits('acme/nope', WINDOW).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GitHubReadError);
    expect(err).toMatchObject({ status: 404, githubMessage: 'Not Found', reason: 'HTTP 404 Not Found' });
  });

  it('a wrong token is 401 Bad credentials, logged through pino rather than the console', async () => {
    const { logger, lines } = memoryLogger();
    const err = await readerFor(gh.url, 'wrong-token', logger).listMergedPullRequests('acme/shop', WINDOW).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'GitHubReadError', status: 401, githubMessage: 'Bad credentials' });
    expect(lines).toEqual([expect.objectContaining({ level: 50, source: 'github', msg: expect.stringContaining('/repos/acme/shop/pulls') })]);
    expect(JSON.stringify(lines)).not.toContain('wrong-token');
  });

  it('a 403 with x-ratelimit-remaining: 0 says until when', async () => {
    const reset = new Date('2025-03-10T12:17:00Z');
    gh.rateLimitNext(reset);
    const err = (await readerFor(gh.url).listDeployments('acme/shop', WINDOW).catch((e: unknown) => e)) as GitHubReadError;
    expect(err.status).toBe(403);
    expect(err.rateLimitedUntil).toEqual(reset);
    expect(err.reason).toBe('rate limited until 2025-03-10T12:17:00.000Z (HTTP 403)');
  });

  it('refuses a malformed repository name before any request', async () => {
    await expect(readerFor(gh.url).listCommits('acme/shop/../../users', WINDOW)).rejects.toThrow(/not an owner\/repo name/);
    expect(gh.requests).toHaveLength(0);
  });
});

describe('GitHubReader transport failures', () => {
  it('an unreachable API is a GitHubReadError without an HTTP status', async () => {
    const gone = await startFakeGitHub({ repos: {} });
    await gone.close();
    const err = await readerFor(gone.url).listCommits('acme/shop', WINDOW).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GitHubReadError);
    expect(err).toMatchObject({ status: undefined, reason: expect.stringMatching(/^no response from GitHub \(.*ECONNREFUSED/) });
  });
});

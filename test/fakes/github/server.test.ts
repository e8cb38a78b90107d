import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoScenario } from './builders.js';
import { startFakeGitHub, type FakeGitHub } from './server.js';

const at = (m: number): Date => new Date(Date.UTC(2025, 2, 10, 12, m));
let gh: FakeGitHub;

beforeAll(async () => {
  const repo = repoScenario();
  for (let i = 0; i < 5; i++) repo.mergedPull({ number: i + 1, title: `PR ${i + 1}`, author: 'bob', mergedAt: at(i) });
  repo.deployment({ sha: 'a'.repeat(40), environment: 'production', creator: 'alice', at: at(10), states: [['success', at(12)], ['in_progress', at(10)]] });
  gh = await startFakeGitHub({ repos: { 'acme/shop': repo.repo }, token: 't0ken' });
});
afterAll(async () => gh.close());

const get = (path: string, token = 't0ken'): Promise<Response> => fetch(`${gh.url}${path}`, { headers: { authorization: `token ${token}` } });

describe('fake GitHub', () => {
  it('paginates with absolute Link URLs and rate-limit headers', async () => {
    const first = await get('/repos/acme/shop/pulls?state=closed&sort=updated&direction=desc&per_page=2');
    expect(first.status).toBe(200);
    expect(((await first.json()) as Array<{ number: number }>).map((p) => p.number)).toEqual([5, 4]);
    const link = first.headers.get('link') ?? '';
    expect(link).toContain(`<${gh.url}/repos/acme/shop/pulls?state=closed&sort=updated&direction=desc&per_page=2&page=2>; rel="next"`);
    expect(link).toContain('page=3>; rel="last"');
    expect(first.headers.get('x-ratelimit-limit')).toBe('5000');
    const remaining = Number(first.headers.get('x-ratelimit-remaining'));

    const last = await get('/repos/acme/shop/pulls?state=closed&sort=updated&direction=desc&per_page=2&page=3');
    expect(((await last.json()) as Array<{ number: number }>).map((p) => p.number)).toEqual([1]);
    expect(last.headers.get('link')).not.toContain('rel="next"');
    expect(last.headers.get('link')).toContain('rel="prev"');
    expect(Number(last.headers.get('x-ratelimit-remaining'))).toBe(remaining - 1);
  });

  it('serves the list shape without merged_by and the single shape with it', async () => {
    const [listed] = (await (await get('/repos/acme/shop/pulls?state=closed')).json()) as Array<Record<string, unknown>>;
    expect(listed).not.toHaveProperty('merged_by');
    expect(listed).toMatchObject({ base: { ref: 'main' }, user: { login: 'bob' }, html_url: expect.stringMatching(/^https:\/\/github.com\/acme\/shop\/pull\/\d$/) });
    const one = (await (await get('/repos/acme/shop/pulls/3')).json()) as Record<string, unknown>;
    expect(one).toMatchObject({ merged: true, merged_by: { login: 'bob' }, merged_at: '2025-03-10T12:02:00Z' });
  });

  it('lists deployment statuses newest first', async () => {
    const [dep] = (await (await get('/repos/acme/shop/deployments')).json()) as Array<{ id: number; creator: { login: string } }>;
    expect(dep?.creator.login).toBe('alice');
    const statuses = (await (await get(`/repos/acme/shop/deployments/${dep?.id}/statuses`)).json()) as Array<{ state: string }>;
    expect(statuses.map((s) => s.state)).toEqual(['success', 'in_progress']);
  });

  it('answers GitHub error bodies: 404, 401, injected faults and rate limits', async () => {
    const missing = await get('/repos/acme/nope/commits');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ message: 'Not Found', documentation_url: expect.any(String) });

    expect(await (await get('/repos/acme/shop/commits', 'wrong')).json()).toMatchObject({ message: 'Bad credentials' });
    expect((await fetch(`${gh.url}/repos/acme/shop/commits`)).status).toBe(401);

    gh.failNext(/\/commits$/, 502);
    expect((await get('/repos/acme/shop/pulls')).status).toBe(200);
    expect((await get('/repos/acme/shop/commits')).status).toBe(502);
    expect((await get('/repos/acme/shop/commits')).status).toBe(200);

    gh.rateLimitNext(new Date('2025-03-10T13:00:00Z'));
    const limited = await get('/repos/acme/shop/commits');
    expect(limited.status).toBe(403);
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(limited.headers.get('x-ratelimit-reset')).toBe(String(Date.UTC(2025, 2, 10, 13) / 1000));
    expect(gh.requests.at(-1)).toMatchObject({ path: '/repos/acme/shop/commits', status: 403, authorized: true });
  });
});

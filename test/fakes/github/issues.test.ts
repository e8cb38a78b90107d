import { Octokit } from '@octokit/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoScenario } from './builders.js';
import { startFakeGitHub, type FakeGitHub } from './server.js';

let gh: FakeGitHub;
let octokit: Octokit;
beforeAll(async () => {
  gh = await startFakeGitHub({ repos: { 'acme/incidents': repoScenario().repo }, token: 't0k', webUrl: 'https://github.example.com' });
  octokit = new Octokit({ auth: 't0k', baseUrl: gh.url, log: { debug() {}, info() {}, warn() {}, error() {} } });
});
afterAll(() => gh.close());

describe('fake GitHub: POST /repos/{o}/{r}/issues', () => {
  it('creates numbered issues in GitHub’s shape and keeps them', async () => {
    const a = await octokit.rest.issues.create({ owner: 'acme', repo: 'incidents', title: 'Postmortem: x', body: '# hi', labels: ['postmortem'] });
    const b = await octokit.rest.issues.create({ owner: 'acme', repo: 'incidents', title: 'second' });
    expect(a.status).toBe(201);
    expect(a.data).toMatchObject({ number: 1, title: 'Postmortem: x', body: '# hi', state: 'open', html_url: 'https://github.example.com/acme/incidents/issues/1' });
    expect(a.data.labels).toMatchObject([{ name: 'postmortem' }]);
    expect(b.data.number).toBe(2);
    expect(gh.issues.map((i) => i.title)).toEqual(['Postmortem: x', 'second']);
  });

  it('answers 422 without a title, 404 for an unknown repository and 401 with a bad token', async () => {
    await expect(octokit.request('POST /repos/{owner}/{repo}/issues', { owner: 'acme', repo: 'incidents', body: 'no title' } as never)).rejects.toMatchObject({ status: 422 });
    await expect(octokit.rest.issues.create({ owner: 'acme', repo: 'nope', title: 'x' })).rejects.toMatchObject({ status: 404 });
    const bad = new Octokit({ auth: 'wrong', baseUrl: gh.url, log: { debug() {}, info() {}, warn() {}, error() {} } });
    await expect(bad.rest.issues.create({ owner: 'acme', repo: 'incidents', title: 'x' })).rejects.toMatchObject({ status: 401 });
    expect(gh.issues).toHaveLength(2);
  });
});

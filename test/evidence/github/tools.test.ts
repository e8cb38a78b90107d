import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { githubPullRequestTool, githubRecentChangesTool, githubTools } from '../../../src/evidence/github/tools.js';
import { MAX_TOOL_RESULT_BYTES, type ToolContext } from '../../../src/evidence/tool.js';
import { createRedactor } from '../../../src/redact/index.js';
import type { FakeFile } from '../../fakes/github/types.js';
import { startFakeGitHub, type FakeGitHub } from '../../fakes/github/server.js';
import { plantAll, seededRandom } from '../../redact/planted.js';
import { ALERT, readerFor, shopScenario, t, TOKEN } from './scenario.js';

const planted = plantAll(seededRandom(4242)).filter((p) => ['github_token', 'aws_access_key', 'slack_token', 'stripe_key'].includes(p.kind));
const { shop } = shopScenario();
const ghToken = planted.find((p) => p.kind === 'github_token')!.secret;
const leakyBody = ['Rotates the deploy credentials.', '', ...planted.map((p) => p.line), '', 'Rollback: revert.'].join('\n');
shop.mergedPull({
  number: 110,
  title: `Use ${ghToken} for mirror pushes`,
  author: 'mallory',
  mergedBy: 'carol',
  mergedAt: t(-70),
  body: leakyBody,
  files: [
    { filename: 'deploy/mirror.sh', status: 'modified', additions: 3, deletions: 1 },
    { filename: 'deploy/secrets.env', status: 'added', additions: 1, deletions: 0 },
  ],
});
const hugeFiles: FakeFile[] = Array.from({ length: 450 }, (_, i) => ({ filename: `services/generated/very/long/path/module_${i}/handler_${i}.ts`, status: 'modified', additions: i, deletions: 1 }));
shop.mergedPull({ number: 120, title: 'Regenerate clients', author: 'bot', mergedAt: t(-300), body: 'x'.repeat(20_000), files: hugeFiles });

let gh: FakeGitHub;
let ctx: ToolContext;

beforeAll(async () => {
  gh = await startFakeGitHub({ repos: { 'acme/shop': shop.repo }, token: TOKEN });
  ctx = { redactor: createRedactor(), now: ALERT };
});
afterAll(async () => gh.close());

const assertNoSecrets = (value: unknown): void => {
  const text = JSON.stringify(value);
  for (const p of planted) expect(text).not.toContain(p.secret);
};

describe('github_recent_changes', () => {
  const tool = () => githubRecentChangesTool(readerFor(gh.url));

  it('lists the last N hours of changes with citations, evidence and a redacted PR title', async () => {
    const result = await tool().execute({ repo: 'acme/shop', hours: 3 }, ctx);
    if (result.status !== 'success') throw new Error(JSON.stringify(result));
    expect(result.citation).toMatchObject({ source: 'github', range: { from: t(-180), to: ALERT } });
    expect(result.citation.ref).toContain('GET /repos/acme/shop/deployments');
    const data = result.data as { changes: Array<{ kind: string; summary: string; at: string }>; gaps: string[] };
    expect(data.changes.map((c) => c.kind)).toEqual(['pr_merged', 'pr_merged', 'deploy', 'commit', 'deploy']);
    expect(data.changes[1]?.summary).toMatch(/^#110 "Use \[REDACTED:github_token:[0-9a-f]+\] for mirror pushes" merged by carol$/);
    expect(result.evidence).toHaveLength(5);
    expect(result.evidence.every((e) => e.kind === 'change' && e.citation.source === 'github')).toBe(true);
    expect(result.truncated).toBe(false);
    assertNoSecrets(result);
  });

  it('honours explicit since/until and kinds', async () => {
    const result = await tool().execute({ repo: 'acme/shop', since: t(-100).toISOString(), until: t(-60).toISOString(), kinds: ['pr_merged'] }, ctx);
    if (result.status !== 'success') throw new Error(JSON.stringify(result));
    expect((result.data as { changes: Array<{ summary: string }> }).changes.map((c) => c.summary.slice(0, 4))).toEqual(['#101', '#110']);
    expect(result.citation.ref).not.toContain('deployments');
  });

  it('a quiet window is no_data, naming what was searched', async () => {
    const result = await tool().execute({ repo: 'acme/shop', since: t(-1000).toISOString(), until: t(-900).toISOString() }, ctx);
    expect(result).toMatchObject({ status: 'no_data', message: expect.stringContaining('No deploy, pr_merged, commit changes in acme/shop between') });
  });

  it('an unreadable repository is an error carrying the gap sentences', async () => {
    const result = await tool().execute({ repo: 'acme/missing', hours: 2 }, ctx);
    expect(result.status).toBe('error');
    if (result.status === 'error') expect(result.error).toContain('Could not read GitHub deployments of acme/missing: HTTP 404 Not Found');
  });

  it('a partial failure still succeeds and lists the gap', async () => {
    gh.rateLimitNext(new Date('2025-03-10T12:45:00Z'));
    const result = await githubRecentChangesTool(readerFor(gh.url)).execute({ repo: 'acme/shop', hours: 3, kinds: ['deploy', 'commit'] }, ctx);
    if (result.status !== 'success') throw new Error(JSON.stringify(result));
    expect((result.data as { gaps: string[] }).gaps).toEqual([expect.stringContaining('rate limited until 2025-03-10T12:45:00.000Z')]);
  });

  it('rejects an empty window', async () => {
    const result = await tool().execute({ repo: 'acme/shop', since: ALERT.toISOString(), until: t(-60).toISOString() }, ctx);
    expect(result).toMatchObject({ status: 'error', error: expect.stringContaining('The window is empty') });
  });
});

describe('github_pull_request', () => {
  const tool = () => githubPullRequestTool(readerFor(gh.url));

  it('returns title, merger, files and a redacted body; no planted secret survives', async () => {
    const result = await tool().execute({ repo: 'acme/shop', number: 110 }, ctx);
    if (result.status !== 'success') throw new Error(JSON.stringify(result));
    expect(result.data).toMatchObject({
      number: 110,
      merged: true,
      mergedBy: 'carol',
      author: 'mallory',
      additions: 4,
      deletions: 1,
      changedFiles: 2,
      files: [
        { filename: 'deploy/mirror.sh', status: 'modified', additions: 3, deletions: 1 },
        { filename: 'deploy/secrets.env', status: 'added', additions: 1, deletions: 0 },
      ],
    });
    const body = (result.data as { body: string }).body;
    expect(body).toContain('Rotates the deploy credentials.');
    expect(body).toContain('[REDACTED:github_token:');
    expect(result.evidence[0]).toMatchObject({ kind: 'change', observedAt: t(-70), citation: { url: 'https://github.com/acme/shop/pull/110' } });
    assertNoSecrets(result);
  });

  it('bounds a huge pull request', async () => {
    const result = await tool().execute({ repo: 'acme/shop', number: 120 }, ctx);
    if (result.status !== 'success') throw new Error(JSON.stringify(result));
    expect(result.truncated).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(result.data))).toBeLessThanOrEqual(MAX_TOOL_RESULT_BYTES);
    expect(gh.requests.filter((r) => r.path === '/repos/acme/shop/pulls/120/files').map((r) => r.query.page ?? '1')).toEqual(['1', '2', '3']);
  });

  it('a missing pull request is no_data', async () => {
    const result = await tool().execute({ repo: 'acme/shop', number: 9999 }, ctx);
    expect(result).toMatchObject({ status: 'no_data', message: expect.stringContaining('HTTP 404 Not Found') });
  });

  it('a rejected token is an error', async () => {
    const result = await githubPullRequestTool(readerFor(gh.url, 'nope')).execute({ repo: 'acme/shop', number: 110 }, ctx);
    expect(result).toMatchObject({ status: 'error', error: expect.stringContaining('HTTP 401 Bad credentials') });
  });
});

describe('tool schemas', () => {
  it('export JSON schemas with descriptions and validate repo names', () => {
    for (const tool of githubTools(readerFor(gh.url))) {
      const schema = z.toJSONSchema(tool.parameters) as { properties: Record<string, { description?: string }> };
      expect(Object.values(schema.properties).every((p) => typeof p.description === 'string')).toBe(true);
      expect(tool.effect).toBe('read');
      expect(tool.parameters.safeParse({ repo: 'not a repo', number: 1 }).success).toBe(false);
    }
  });

  it('a malformed repo from a gatherer (no zod) is an error result, not a throw', async () => {
    const result = await githubPullRequestTool(readerFor(gh.url)).execute({ repo: '../etc', number: 1 }, ctx);
    expect(result.status).toBe('error');
  });
});

/**
 * A shop repository around an alert at ALERT (12:00Z): a merged PR, a closed-unmerged PR, PRs merged
 * outside the window, a direct hotfix commit, deployments to production and staging (one after the
 * window), with status histories stored out of order.
 */
import pino from 'pino';
import { Writable } from 'node:stream';
import { GitHubReader } from '../../../src/evidence/github/client.js';
import { fakeSha, repoScenario, type RepoScenario } from '../../fakes/github/builders.js';

export const ALERT = new Date('2025-03-10T12:00:00Z');
/** Minutes relative to the alert. */
export const t = (minutes: number): Date => new Date(ALERT.getTime() + minutes * 60_000);
/** The investigation window: three hours before the alert. */
export const WINDOW = { since: t(-180), until: ALERT };
export const TOKEN = 'fake-reader-token';

export const PREVIOUS_SHA = fakeSha('previous-release');

export function shopScenario(): { shop: RepoScenario; shas: { pool: string; hotfix: string } } {
  const shop = repoScenario();
  shop.commit({ message: 'Old work', author: 'erin', at: t(-500) });
  shop.mergedPull({ number: 99, title: 'Old merge, commented later', author: 'erin', mergedAt: t(-400), updatedAt: t(-30) });
  const pool = shop.mergedPull({
    number: 101,
    title: 'Raise pool size',
    author: 'bob',
    mergedBy: 'carol',
    mergedAt: t(-90),
    labels: ['db', 'config'],
    files: [{ filename: 'config/db.yaml', status: 'modified', additions: 2, deletions: 1 }],
  });
  shop.closedPull({ number: 102, title: 'Tweak logging', author: 'bob', closedAt: t(-60) });
  shop.mergedPull({ number: 104, title: 'Bump deps', author: 'dave', mergedAt: t(30) });
  shop.openPull({ number: 105, title: 'WIP: new cache', author: 'erin', updatedAt: t(-10) });
  const hotfix = shop.commit({ message: 'hotfix: disable cache\n\nCache was serving stale carts.', author: 'dave', at: t(-45) });
  shop.commit({ message: 'feature work', author: 'erin', at: t(-20), branches: ['feature/cache'] });

  shop.deployment({ sha: PREVIOUS_SHA, environment: 'production', creator: 'alice', at: t(-240), states: [['success', t(-238)]] });
  shop.deployment({ sha: hotfix.sha, environment: 'staging', creator: 'deploy-bot[bot]', at: t(-50), states: [['failure', t(-48), 'smoke tests failed']] });
  shop.deployment({
    sha: pool.mergeCommitSha!,
    environment: 'production',
    creator: 'alice',
    at: t(-40),
    // Out of order on purpose: the reader must pick the latest by time.
    states: [['success', t(-35)], ['in_progress', t(-40)], ['queued', t(-40)]],
  });
  shop.deployment({ sha: fakeSha('after-alert'), environment: 'production', creator: 'alice', at: t(10), states: [['success', t(12)]] });
  return { shop, shas: { pool: pool.mergeCommitSha!, hotfix: hotfix.sha } };
}

/** A pino logger writing into an array, to check that Octokit's log lines land there and not on the console. */
export function memoryLogger(): { logger: pino.Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, stream), lines };
}

export function readerFor(url: string, token = TOKEN, logger = memoryLogger().logger): GitHubReader {
  return new GitHubReader({ token, baseUrl: url, logger, now: () => ALERT });
}

// How many runs of a CronJob failed since its last success, when the history limit already deleted
// the older failed Jobs: read from the controller's Job names (`<cronjob>-<scheduled minute>`).
import type { V1Job } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { runsSinceSuccess } from '../../../src/triage/cluster/job-failed.js';

const job = (minute: number): V1Job => ({ metadata: { name: `nightly-export-${minute}` } });
const DAY = 1440;
const T = 29_176_620;

describe('runsSinceSuccess', () => {
  it('counts the daily runs since the last success, the older failed Job already deleted', () => {
    // Kept: tonight's failed run and three successes; last night's failed Job is gone (failedJobsHistoryLimit: 1).
    const jobs = [job(T), job(T - 2 * DAY), job(T - 3 * DAY), job(T - 4 * DAY)];
    expect(runsSinceSuccess(jobs[1], jobs)).toBe(2);
  });

  it('is one when only the latest run failed', () => {
    const jobs = [job(T), job(T - DAY), job(T - 2 * DAY)];
    expect(runsSinceSuccess(jobs[1], jobs)).toBe(1);
  });

  it('says nothing when the names do not carry the schedule, nothing succeeded, or one run is known', () => {
    const named = [{ metadata: { name: 'export-manual-abc' } }, { metadata: { name: 'export-manual-def' } }];
    expect(runsSinceSuccess(named[1], named)).toBeUndefined();
    expect(runsSinceSuccess(undefined, [job(T)])).toBeUndefined();
    expect(runsSinceSuccess(job(T), [job(T)])).toBeUndefined();
  });
});

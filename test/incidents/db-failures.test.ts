/**
 * A database error in the runner never crashes the process and never loses the investigation: the
 * real Prisma client on a real SQLite store, with one delegate method made to fail for chosen calls
 * (as a dropped connection would), and the investigation must still finish on a later attempt.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_SCENARIO, threadText } from '../e2e/helpers.js';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';

let world: World | undefined;
let unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeEach(() => {
  unhandled = [];
  process.on('unhandledRejection', onUnhandled);
});
afterEach(async () => {
  process.off('unhandledRejection', onUnhandled);
  await world?.close();
  world = undefined;
});

/** Make calls of one method of one model delegate fail while `when` says so (the real client otherwise). */
function failCalls<T extends object>(delegate: T, method: keyof T & string, when: (args: any, call: number) => boolean): { failures: () => number } {
  const original = (delegate as any)[method] as (...a: unknown[]) => unknown;
  let calls = 0;
  let failures = 0;
  (delegate as any)[method] = (...args: unknown[]) => {
    calls += 1;
    if (when(args[0], calls)) {
      failures += 1;
      return Promise.reject(new Error('Connection terminated unexpectedly (injected)'));
    }
    return original.apply(delegate, args);
  };
  return { failures: () => failures };
}

async function start() {
  // A 1 s lease: a run whose failure could not be recorded is claimed again after it.
  world = await startWorld({ scenarioDir: DEMO_SCENARIO, env: { VIGIL_LEASE_SECONDS: '1' } });
  return world;
}

describe('database errors in the investigation runner', () => {
  it('a failing claim is logged and retried, not an unhandled rejection', async () => {
    const w = await start();
    const db = w.vigil!.db.prisma;
    const claims = failCalls(db.investigation, 'updateMany', (args, n) => n === 1 && args?.data?.state === 'running');
    await w.postAlert();
    await w.settle();
    expect(claims.failures()).toBe(1);
    expect(unhandled).toEqual([]);
    const inv = await db.investigation.findFirstOrThrow();
    expect(inv).toMatchObject({ state: 'waiting', step: 'reported', leaseOwner: null });
    expect(await db.hypothesis.findFirst({ where: { label: 'H1' } })).toMatchObject({ componentName: 'checkout', status: 'supported' });
  });

  it('a step error whose failure handling also hits the DB error leaves the investigation resumable', async () => {
    const w = await start();
    const db = w.vigil!.db.prisma;
    // Read #1 starts the run; #2 (inside the first step) fails the step; #3 (recording that failure) fails too.
    const reads = failCalls(db.investigation, 'findUniqueOrThrow', (_args, n) => n === 2 || n === 3);
    const { ts } = await w.postAlert();
    await w.settle();
    expect(reads.failures()).toBe(2);
    expect(unhandled).toEqual([]);
    const inv = await db.investigation.findFirstOrThrow();
    expect(inv).toMatchObject({ state: 'waiting', step: 'reported', attempts: 2, leaseOwner: null, lastError: null });
    expect(threadText(w.slack, ts)).toHaveLength(2);
  });

  it('a stopped investigation tells the thread what to do next', async () => {
    const w = await start();
    const db = w.vigil!.db.prisma;
    const { ts } = await w.postAlert();
    await w.settle();
    const inv = await db.investigation.findFirstOrThrow();
    await db.investigation.update({ where: { id: inv.id }, data: { state: 'failed', lastError: 'kubernetes: connect ECONNREFUSED' } });
    await w.vigil!.thread.sync(inv.incidentId);
    const header = threadText(w.slack, ts)[0]!;
    expect(header).toContain('Investigation stopped: kubernetes: connect ECONNREFUSED');
    expect(header).toContain('To try again, reply in this thread or run `/sre investigate <link to the alert post>`');

    // Without a model, a reply is no prompt, but it still retries the failed investigation, as the notice says.
    await w.slack.postAsUser(ALERT_CHANNEL, { user: 'U0BOB', text: 'kubernetes is back, try again', thread_ts: ts });
    await w.settle();
    expect(await db.investigation.findFirstOrThrow({ where: { id: inv.id } })).toMatchObject({ state: 'waiting', step: 'reported' });
  });
});

/**
 * An Approve / Reject click whose handling fails is answered, only to the clicker, instead of being
 * left without a word. A card Slack will not update after the decision was stored is no failure: the
 * decision stands, the approval runs, and the card catches up.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventually } from '../e2e/helpers.js';
import { ALICE, SCALE_FINDING, startApprovalWorld, type ApprovalWorld } from '../approvals/harness.js';

let w: ApprovalWorld;
beforeEach(async () => {
  w = await startApprovalWorld();
});
afterEach(() => w.close());

const ephemeralsFor = (user: string) => w.slack.store.ephemerals.filter((e) => e.user === user);

async function proposeScale() {
  const { incidentId, threadTs } = await w.openIncident();
  const r = await w.service.propose(incidentId, SCALE_FINDING);
  if (r.kind !== 'proposed') throw new Error(`expected a proposal, got ${JSON.stringify(r)}`);
  return { threadTs, requestId: r.requestId };
}

describe('an approval click that fails', () => {
  it('when the store fails, tells the clicker in the thread, and the request is untouched', async () => {
    const { requestId, threadTs } = await proposeScale();
    await w.db.prisma.$executeRawUnsafe(`CREATE TRIGGER decision_insert_fails BEFORE INSERT ON "ApprovalDecision" BEGIN SELECT RAISE(ABORT, 'injected'); END`);
    await w.click(requestId, ALICE, 'approve');
    const note = await eventually(async () => ephemeralsFor(ALICE.id)[0], 'the ephemeral answer');
    expect(note.thread_ts).toBe(threadTs);
    expect(note.text).toMatch(/Vigil could not process this approval because of an internal error/);
    expect(note.text).toMatch(/click again to retry/);
    const v = await w.view(requestId);
    expect(v.status).toBe('pending');
    expect(v.decisions).toEqual([]);

    // Once the store is back, the retry the note asks for goes through.
    await w.db.prisma.$executeRawUnsafe('DROP TRIGGER decision_insert_fails');
    await w.click(requestId, ALICE, 'reject');
    await w.waitForStatus(requestId, 'rejected');
  });

  it('when Slack refuses the card update after the decision was stored, the decision stands and the approval still executes', async () => {
    const { requestId } = await proposeScale();
    w.slack.failNext('chat.update', { error: 'internal_error' });
    await w.click(requestId, ALICE, 'approve');
    await w.controllerReadies(3);
    expect((await w.waitForStatus(requestId, ['executed', 'failed'])).status).toBe('executed');
    expect(ephemeralsFor(ALICE.id)).toEqual([]); // nothing failed from the clicker's point of view
    // The card caught up on the next refresh.
    await eventually(async () => JSON.stringify((await w.card(requestId)).blocks).includes('Executed as'), 'the card to show the outcome');
  });
});

/**
 * One Slack refusal never stops the rest of a thread sync, nor an investigation: a post whose thread was
 * deleted is given up on, a deleted card is posted again, content Slack refuses goes out as text alone,
 * and a sync Slack fails during an investigation step is logged, not a failed step.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';
import { acceptedPosts, DEMO_SCENARIO } from './helpers.js';

describe('thread sync when Slack refuses a post', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO });
  });
  afterAll(async () => world?.close());
  beforeEach(async () => {
    await world.settle();
    await db().incident.deleteMany();
    await db().processedDelivery.deleteMany();
  });

  const db = () => world.vigil!.db.prisma;
  const onlyIncident = async () => {
    expect(await db().incident.count()).toBe(1);
    return db().incident.findFirstOrThrow();
  };
  const post = (purpose: string) => db().slackPost.findFirstOrThrow({ where: { purpose } });
  const command = async (text: string) => {
    const before = world.slack.responses.length;
    await world.slack.sendCommand({ command: '/sre', text, user_id: 'U0BOB', user_name: 'bob', channel_id: ALERT_CHANNEL, trigger_id: `trig-${Math.random()}` });
    await world.slack.waitFor(() => (world.slack.responses.length > before ? true : undefined), { timeoutMs: 10_000 });
    return JSON.stringify(world.slack.responses.at(-1)!.body);
  };
  const refusals = (error: string) => world.slack.calls.filter((c) => c.response?.body.error === error).length;

  it('a deleted duplicate alert post: its "already tracked" note is given up on, and /sre investigate and the re-run succeed', async () => {
    const { ts } = await world.postAlert();
    await world.settle();
    const incident = await onlyIncident();

    // The duplicate's notes (a repeat note in the incident thread, the pointer in its own thread) fail once…
    world.slack.failNext('chat.postMessage', { error: 'internal_error', times: 2 });
    const dup = await world.postAlert();
    await world.settle();
    // …and someone deletes the duplicate post before they could be posted again.
    expect(world.slack.deleteMessage(ALERT_CHANNEL, dup.ts)).toBe(true);

    const reply = await command(`investigate https://fake.slack.com/archives/${ALERT_CHANNEL}/p${ts.replace('.', '')}`);
    expect(reply).toMatch(/matches an open incident; Vigil is investigating it again/);
    expect(reply).not.toMatch(/internal error/);
    await world.settle();

    const inv = await db().investigation.findFirstOrThrow({ where: { incidentId: incident.id }, orderBy: { startedAt: 'desc' } });
    expect(inv).toMatchObject({ state: 'waiting', step: 'reported', lastError: null });
    const tracked = (await db().slackPost.findMany({ where: { incidentId: incident.id } })).find((p) => p.purpose.startsWith('tracked:'))!;
    expect(tracked).toMatchObject({ ts: null, contentHash: 'abandoned:thread_not_found' });
    // The repeat note in the incident thread went out despite the note that could not.
    expect((await db().slackPost.findMany({ where: { incidentId: incident.id, purpose: { startsWith: 'alert:' } } })).every((p) => p.ts)).toBe(true);

    // Later syncs no longer try it.
    const [refused, replies] = [refusals('thread_not_found'), world.slack.callsTo('conversations.replies').length];
    await world.vigil!.thread.sync(incident.id);
    await world.vigil!.thread.sync(incident.id);
    expect(refusals('thread_not_found')).toBe(refused);
    expect(world.slack.callsTo('conversations.replies').length).toBe(replies);
  });

  it('a deleted header is posted again, and the posts after it still go out', async () => {
    const { ts } = await world.postAlert();
    await world.settle();
    const incident = await onlyIncident();
    const header = await post('header');
    world.slack.deleteMessage(ALERT_CHANNEL, header.ts!);

    // A repeat changes the header's count (an edit Slack answers message_not_found) and earns a pointer under its own post.
    const dup = await world.postAlert();
    await world.settle();

    const reposted = await post('header');
    expect(reposted.ts).not.toBe(header.ts);
    const thread = world.slack.threadOf(ALERT_CHANNEL, ts);
    expect(thread.map((m) => m.ts)).toContain(reposted.ts);
    expect(world.slack.message(ALERT_CHANNEL, reposted.ts!)?.text).toMatch(/checkout/i);
    expect(world.slack.message(ALERT_CHANNEL, reposted.ts!)?.text).toMatch(/fired 2×|checkout/i);
    const notes = await db().slackPost.findMany({ where: { incidentId: incident.id, purpose: { startsWith: 'tracked:' } } });
    expect(notes.length).toBeGreaterThan(0);
    const underDup = world.slack.threadOf(ALERT_CHANNEL, dup.ts);
    expect(notes.every((n) => n.ts && underDup.some((m) => m.ts === n.ts))).toBe(true);

    // The board keeps changing: ruling out a hypothesis edits it.
    const board = await post('board');
    const edits = world.slack.message(ALERT_CHANNEL, board.ts!)!.edits.length;
    await world.slack.postAsUser(ALERT_CHANNEL, { user: 'U0BOB', text: 'rule out H2', thread_ts: ts });
    await world.settle();
    expect(world.slack.message(ALERT_CHANNEL, board.ts!)!.edits.length).toBeGreaterThan(edits);
  });

  it('a card whose blocks Slack refuses is sent as its text alone, and the next change sends blocks again', async () => {
    const { ts } = await world.postAlert();
    await world.settle();
    const board = await post('board');

    world.slack.failNext('chat.update', { error: 'invalid_blocks' });
    await world.slack.postAsUser(ALERT_CHANNEL, { user: 'U0BOB', text: 'rule out H2', thread_ts: ts });
    await world.settle();

    const updates = world.slack.callsTo('chat.update').filter((c) => c.body['ts'] === board.ts);
    const [refused, textOnly] = updates.slice(-2);
    expect(refused!.response!.body.error).toBe('invalid_blocks');
    expect(textOnly!.response!.body.ok).toBe(true);
    expect(textOnly!.body['blocks']).toEqual([]);
    expect(textOnly!.body['text']).toBe(refused!.body['text']);
    const shown = world.slack.message(ALERT_CHANNEL, board.ts!)!;
    expect(shown.blocks ?? []).toEqual([]);
    expect(shown.text).toBe(refused!.body['text']);

    await world.slack.postAsUser(ALERT_CHANNEL, { user: 'U0BOB', text: 'rule out H3', thread_ts: ts });
    await world.settle();
    expect(world.slack.message(ALERT_CHANNEL, board.ts!)!.blocks?.length).toBeGreaterThan(0);
  });

  it('a note Slack refuses as too long is posted as its text alone', async () => {
    await world.postAlert();
    await world.settle();
    const incident = await onlyIncident();
    world.slack.failNext('chat.postMessage', { error: 'msg_too_long' });
    await world.postAlert();
    await world.settle();
    // A quick repeat earns no note in the incident thread, only the pointer under its own post: that one is refused.
    const note = (await db().slackPost.findMany({ where: { incidentId: incident.id, purpose: { startsWith: 'tracked:' } } }))[0]!;
    expect(note.ts).toBeTruthy();
    const posts = world.slack.callsTo('chat.postMessage');
    const refused = posts.findLast((c) => c.response?.body.error === 'msg_too_long')!;
    const retry = posts[posts.indexOf(refused) + 1]!;
    expect(retry.response!.body['ts']).toBe(note.ts);
    expect(retry.body['blocks']).toEqual([]);
    expect(retry.body['text']).toBe(refused.body['text']);
  });
});

describe('an investigation step whose thread sync Slack fails', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO });
  });
  afterAll(async () => world?.close());

  it('logs it and goes on: no failed attempt, and the next sync posts what was missing', async () => {
    // The first post of the run is the header, in the "created" step.
    world.slack.failNext('chat.postMessage', { error: 'internal_error' });
    const { ts } = await world.postAlert();
    await world.settle();
    const db = world.vigil!.db.prisma;
    const inv = await db.investigation.findFirstOrThrow();
    expect(inv).toMatchObject({ state: 'waiting', step: 'reported', attempts: 1, lastError: null });
    expect(world.slack.callsTo('chat.postMessage')[0]!.response!.body.error).toBe('internal_error');
    const purposes = (await db.slackPost.findMany({ where: { ts: { not: null } } })).map((p) => p.purpose).sort();
    expect(purposes).toEqual(['board', 'header']);
    expect(world.slack.threadOf(ALERT_CHANNEL, ts).slice(1)).toHaveLength(acceptedPosts(world.slack).length);
  });
});

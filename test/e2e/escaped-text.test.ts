/**
 * Slack delivers what people type escaped (`&gt;`, `&amp;`, `<@U…>`, `<!here>`, `<https://…>`). Vigil decodes
 * it once, at intake, so the record and the board show what was typed — escaped exactly once when posted
 * back — and answers built from titles or typed labels are escaped too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderBlocksAsText } from '../../src/slack/blocks/text.js';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';
import { DEMO_SCENARIO } from './helpers.js';

describe('text as Slack delivers it', () => {
  let world: World;
  let threadTs: string;
  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO });
    ({ ts: threadTs } = await world.postAlert());
    await world.settle();
  });
  afterAll(async () => world?.close());

  const db = () => world.vigil!.db.prisma;
  const board = async () => world.slack.message(ALERT_CHANNEL, (await db().slackPost.findFirstOrThrow({ where: { purpose: 'board' } })).ts!)!;

  it('a steering reply is stored and shown as typed: entities decoded, mentions named, broadcasts dropped', async () => {
    const typed = 'p99 > 2s & 5xx since the deploy, @alice says see https://grafana.example.com/d/x?a=1&b=2 @here';
    const { message } = await world.slack.postAsUser(ALERT_CHANNEL, { user: 'U0BOB', text: typed, thread_ts: threadTs });
    // The fake delivers it the way Slack does.
    expect(message.text).toBe('p99 &gt; 2s &amp; 5xx since the deploy, <@U0VIGILSRE> says see <https://grafana.example.com/d/x?a=1&amp;b=2> <!here>');
    await world.settle();

    const stored = await db().steeringMessage.findFirstOrThrow({ where: { messageTs: message.ts } });
    expect(stored.text).toBe('p99 > 2s & 5xx since the deploy, @Alice Oncall says see https://grafana.example.com/d/x?a=1&b=2');

    const card = JSON.stringify((await board()).blocks);
    expect(card).toContain('p99 &gt; 2s &amp; 5xx since the deploy, @Alice Oncall says');
    expect(card).not.toMatch(/&amp;gt;|&amp;amp;|<@U0VIGILSRE>|<!here>/);
    expect(renderBlocksAsText(await board())).toContain('“p99 > 2s & 5xx since the deploy, @Alice Oncall says see https://grafana.example.com/d/x?a=1&b=2”');
  });

  it('a steering command with escaped text still applies', async () => {
    await world.slack.postAsUser(ALERT_CHANNEL, { user: 'U0BOB', text: 'rule out H2 because p99 > 2s started before the rollout', thread_ts: threadTs });
    await world.settle();
    const h2 = await db().hypothesis.findFirstOrThrow({ where: { label: 'H2' }, orderBy: { createdAt: 'desc' } });
    expect(h2.status).toBe('ruled_out');
    expect(h2.reason).toContain('p99 > 2s started before the rollout');
  });

  it('an answer listing the board escapes hypothesis titles and the label the user typed', async () => {
    const h1 = await db().hypothesis.findFirstOrThrow({ where: { label: 'H1' }, orderBy: { createdAt: 'desc' } });
    await db().hypothesis.update({ where: { id: h1.id }, data: { title: 'checkout <!channel> scaled to 0 & <https://evil.example|click>' } });
    await world.slack.postAsUser(ALERT_CHANNEL, { user: 'U0BOB', text: 'rule out H9', thread_ts: threadTs });
    await world.settle();
    const answer = world.slack.store.ephemerals.filter((e) => e.user === 'U0BOB').at(-1)!;
    expect(answer.text).toMatch(/There is no H9 on this incident's board/);
    expect(answer.text).toContain('H1 checkout &lt;!channel&gt; scaled to 0 &amp; &lt;https://evil.example|click&gt;');
    expect(answer.text).not.toMatch(/<!channel>|<https:/);
  });
});

describe('/sre investigate with text as Slack delivers it', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO });
  });
  afterAll(async () => world?.close());

  it('decodes the text once for the record and escapes it once in the answer', async () => {
    const before = world.slack.responses.length;
    // What Slack sends for: investigate checkout 5xx > 10% & rising in namespace shop, @bob saw it @channel
    const wire = 'investigate checkout 5xx &gt; 10% &amp; rising in namespace shop, <@U0BOB|bob> saw it <!channel>';
    await world.slack.sendCommand({ command: '/sre', text: wire, user_id: 'U0BOB', user_name: 'bob', channel_id: ALERT_CHANNEL, trigger_id: 'trig-escaped' });
    await world.slack.waitFor(() => (world.slack.responses.length > before ? true : undefined), { timeoutMs: 10_000 });
    const reply = (world.slack.responses.at(-1)!.body as { text?: string }).text ?? '';
    await world.settle();

    const alert = await world.vigil!.db.prisma.alert.findFirstOrThrow();
    const title = 'checkout 5xx > 10% & rising in namespace shop, @Bob Responder saw it';
    expect(JSON.parse(alert.payload).title).toBe(title);
    expect(reply).toContain('Investigating *checkout 5xx &gt; 10% &amp; rising in namespace shop, @Bob Responder saw it*');
    expect(reply).not.toMatch(/&amp;gt;|<!channel>/);
  });
});

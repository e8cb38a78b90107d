import { describe, expect, it } from 'vitest';
import { decodeSlackText, mentionedUsers } from '../../../src/slack/blocks/plain.js';

describe('decodeSlackText: what a person typed, from the text Slack delivers', () => {
  it('unescapes entities once', () => {
    expect(decodeSlackText('p99 &gt; 2s &amp;&amp; errors &lt; 1%')).toBe('p99 > 2s && errors < 1%');
    // Someone who typed an entity gets it back as typed, not decoded a second time.
    expect(decodeSlackText('&amp;gt; is how Slack escapes &gt;')).toBe('&gt; is how Slack escapes >');
  });

  it('names mentioned users when known, else keeps the label Slack sent or the id', () => {
    const names = new Map([['U0ALICE', 'Alice Oncall']]);
    expect(decodeSlackText('<@U0ALICE> thinks the cache is fine', names)).toBe('@Alice Oncall thinks the cache is fine');
    expect(decodeSlackText('ask <@U0BOB|bob>', names)).toBe('ask @bob');
    expect(decodeSlackText('ask <@U0CAROL>', names)).toBe('ask @U0CAROL');
    expect(mentionedUsers('<@U0ALICE> and <@U0BOB|bob> and <@U0ALICE>')).toEqual(['U0ALICE', 'U0BOB']);
  });

  it('drops broadcasts and writes links and channels as a reader would', () => {
    expect(decodeSlackText('<!here> checkout is down <!channel|channel>')).toBe('checkout is down');
    expect(decodeSlackText('please <!everyone> look')).toBe('please look');
    expect(decodeSlackText('see <https://grafana.example.com/d/x?a=1&amp;b=2|the dashboard>')).toBe('see the dashboard (https://grafana.example.com/d/x?a=1&b=2)');
    expect(decodeSlackText('see <https://grafana.example.com/d/x>')).toBe('see https://grafana.example.com/d/x');
    expect(decodeSlackText('in <#C0ALERTS|alerts>, ping <!subteam^S0SRE|@sre-oncall>')).toBe('in #alerts, ping @sre-oncall');
  });

  it('leaves formatting characters as typed', () => {
    expect(decodeSlackText('*not* the `db_pool` ~cache~')).toBe('*not* the `db_pool` ~cache~');
  });
});

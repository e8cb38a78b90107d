import { describe, expect, it } from 'vitest';
import { blockToHtml, formatSlackDate, messageToHtml, mrkdwnToHtml, pageHtml } from '../../harness/cards/html.js';
import { renderHypothesis } from '../../src/slack/blocks/hypothesis.js';
import { linkCitation } from '../../src/slack/blocks/links.js';
import { objectCitation } from '../../src/triage/citations.js';

describe('card HTML renderer (scripts/render-cards.ts, no Chromium)', () => {
  it('renders mrkdwn: links, mentions, dates, code, bold across code, italic, strike, quotes, code blocks', () => {
    const names = (id: string) => ({ U0BOB: 'Bob Responder', S0SRE: 'sre-oncall' })[id];
    expect(mrkdwnToHtml('<https://x.example/a?b=1&c=2|graph &amp; more>')).toBe('<a href="https://x.example/a?b=1&amp;c=2">graph &amp; more</a>');
    expect(mrkdwnToHtml('<@U0BOB> <!subteam^S0SRE> <#C1|ops> <!here>', names)).toBe(
      '<span class="mention">@Bob Responder</span> <span class="mention">@sre-oncall</span> <span class="mention">#ops</span> <span class="mention">@here</span>',
    );
    expect(mrkdwnToHtml('<!date^1772633109^{date_short_pretty} {time}|2026-03-04 14:05 UTC>')).toBe('<span class="date" title="2026-03-04 14:05 UTC">Mar 4 14:05</span>');
    expect(mrkdwnToHtml('*scaled by `kubectl scale` at 14:00*')).toBe('<b>scaled by <code>kubectl scale</code> at 14:00</b>');
    expect(mrkdwnToHtml('_for_ x ~old~ `a*b*c` &lt;tag&gt;')).toBe('<i>for</i> x <s>old</s> <code>a*b*c</code> &lt;tag&gt;');
    expect(mrkdwnToHtml('&gt; quoted\nplain\n```\n<b>raw</b>\n```')).toBe('<blockquote>quoted</blockquote>plain<br><pre class="code">&lt;b&gt;raw&lt;/b&gt;</pre>');
    expect(mrkdwnToHtml('<script>alert(1)</script>')).not.toContain('<script>');
  });

  it('renders the block types Vigil uses', () => {
    expect(blockToHtml({ type: 'header', text: { type: 'plain_text', text: 'Board <1>' } })).toBe('<div class="b header">Board &lt;1&gt;</div>');
    expect(blockToHtml({ type: 'divider' })).toBe('<hr class="b divider">');
    const actions = blockToHtml({ type: 'actions', elements: [{ type: 'button', text: { type: 'plain_text', text: 'Approve' }, style: 'primary' }, { type: 'overflow', options: [] }] });
    expect(actions).toContain('<span class="button primary">Approve</span>');
    expect(actions).toContain('⋯');
    expect(blockToHtml({ type: 'section', fields: [{ type: 'mrkdwn', text: '*a*' }, { type: 'plain_text', text: 'b' }] })).toContain('<div class="fields"><div><b>a</b></div><div>b</div></div>');
    const rich = blockToHtml({ type: 'rich_text', elements: [{ type: 'rich_text_list', style: 'bullet', elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text: 'one', style: { bold: true } }] }] }] });
    expect(rich).toBe('<div class="b rich"><ul><li><b>one</b></li></ul></div>');
  });

  it('renders a real hypothesis with a kubectl citation, and a page around it', () => {
    const blocks = renderHypothesis({
      id: 'h1', label: 'H1', status: 'supported', confidence: 0.9, title: 'checkout scaled to 0', mechanism: 'spec.replicas = 0',
      evidence: [{ stance: 'supports', summary: 'spec.replicas = 0', citation: linkCitation(objectCitation('Deployment', 'shop', 'checkout', 'spec.replicas')) }],
    });
    const html = messageToHtml({ author: 'Vigil', app: true, blocks });
    expect(html).toContain('<code>kubectl get deployments.apps checkout -n shop -o yaml</code> field <code>spec.replicas</code>');
    // Its controls are one ⋯ menu beside it.
    expect(html).toContain('<div class="accessory"><span class="button overflow">⋯</span></div>');
    expect(pageHtml('Card', 'x', [{ author: 'Vigil', blocks }])).toMatch(/^<!doctype html>[\s\S]*<style>[\s\S]*checkout scaled to 0[\s\S]*<\/html>\n$/);
    expect(formatSlackDate(0, '{date_num} {time_secs}')).toBe('1970-01-01 00:00:00');
  });
});

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { mrkdwnToPlain } from '../../../src/slack/blocks/plain.js';
import { renderBlocksAsText } from '../../../src/slack/blocks/text.js';

describe('mrkdwnToPlain', () => {
  it('drops formatting, keeps code, expands links and mentions, unescapes entities', () => {
    expect(mrkdwnToPlain('*bold* _it_ ~gone~ `*kept*` a_b_c 2 * 3')).toBe('bold it gone `*kept*` a_b_c 2 * 3');
    expect(mrkdwnToPlain('*scaled by `kubectl scale`*')).toBe('scaled by `kubectl scale`');
    expect(mrkdwnToPlain('<https://x.example/?a=1&amp;b=2|the *dash*> <https://y.example> <mailto:a@b.c|a@b.c>')).toBe(
      'the *dash* (https://x.example/?a=1&b=2) https://y.example a@b.c',
    );
    expect(mrkdwnToPlain('<@U1> <@U2|bob> <#C1|ops> <!here> <!subteam^S1|@sre> <!subteam^S2> <!date^1741097112^{time}|14:05 UTC>')).toBe(
      '@U1 @bob #ops @here @sre @S2 14:05 UTC',
    );
    expect(mrkdwnToPlain('a &lt;b&gt; &amp;lt; c')).toBe('a <b> &lt; c');
  });
});

describe('renderBlocksAsText', () => {
  it('renders headers, sections with fields and accessories, context, buttons and dividers', () => {
    const text = renderBlocksAsText({
      text: 'fallback not shown',
      blocks: [
        { type: 'header', text: { type: 'plain_text', text: 'Proposed fix' } },
        { type: 'section', text: { type: 'mrkdwn', text: 'scale `deployment/checkout` to 3' }, accessory: { type: 'button', text: { type: 'plain_text', text: 'Details' }, action_id: 'd' } },
        { type: 'section', fields: [{ type: 'mrkdwn', text: '*Risk*\n22/100' }, { type: 'mrkdwn', text: '*Dry run*\n✓ server-side' }] },
        { type: 'section', fields: [{ type: 'mrkdwn', text: 'left' }, { type: 'plain_text', text: 'right' }, { type: 'mrkdwn', text: 'longer left' }] },
        { type: 'divider' },
        { type: 'context', elements: [{ type: 'mrkdwn', text: 'needs 1 approval from <!subteam^S1|@sre-oncall>' }, { type: 'image', image_url: 'https://i.example/x.png', alt_text: 'logo' }] },
        { type: 'actions', elements: [{ type: 'button', text: { type: 'plain_text', text: 'Approve' }, style: 'primary', action_id: 'a' }, { type: 'button', text: { type: 'plain_text', text: 'Reject' }, action_id: 'r' }, { type: 'static_select', placeholder: { type: 'plain_text', text: 'Pick' }, action_id: 's' }] },
        { type: 'mystery' },
      ],
    });
    expect(text.split('\n')).toEqual([
      '# Proposed fix',
      'scale `deployment/checkout` to 3  [Details]',
      'Risk: 22/100',
      'Dry run: ✓ server-side',
      'left          right',
      'longer left',
      '─'.repeat(40),
      '  ┊ needs 1 approval from @sre-oncall  ·  [image: logo]',
      '[Approve] [Reject] [Pick ▾]',
      '[mystery]',
    ]);
  });

  it('renders rich_text blocks as posted by people and other apps', () => {
    const text = renderBlocksAsText({
      blocks: [
        {
          type: 'rich_text',
          elements: [
            { type: 'rich_text_section', elements: [{ type: 'user', user_id: 'U1' }, { type: 'text', text: ' check ' }, { type: 'text', text: 'db', style: { code: true } }, { type: 'emoji', name: 'eyes' }] },
            { type: 'rich_text_list', style: 'bullet', elements: [{ type: 'rich_text_section', elements: [{ type: 'link', url: 'https://x.example', text: 'dash' }] }] },
            { type: 'rich_text_preformatted', elements: [{ type: 'text', text: 'kubectl get pods' }] },
            { type: 'rich_text_quote', elements: [{ type: 'text', text: 'quoted' }] },
          ],
        },
      ],
    });
    expect(text.split('\n')).toEqual(['@U1 check `db`:eyes:', '• dash (https://x.example)', '```', 'kubectl get pods', '```', '> quoted']);
  });

  it('renders text-only messages and legacy attachments (Alertmanager post)', () => {
    expect(renderBlocksAsText({ text: '*hi* <@U1> &amp; co' })).toBe('hi @U1 & co');
    const fixture = JSON.parse(readFileSync(new URL('../../fixtures/alerts/alertmanager-firing-1.json', import.meta.url), 'utf8')) as { payload: { attachments: unknown[] } };
    const text = renderBlocksAsText({ attachments: fixture.payload.attachments });
    expect(text).toBe('▌ [FIRING:1] KubePodCrashLooping (checkout kube-state-metrics shop checkout-7d9f8b6c5-x2x9z warning) (http://alertmanager.example:9093/#/alerts?receiver=vigil)');
    const grafana = renderBlocksAsText({
      attachments: [{ pretext: '<!subteam^S1|@sre>', title: 'High latency', text: '*p99* &gt; 2s', fields: [{ title: 'env', value: 'prod' }], footer: 'Grafana v10.4.0' }, { fallback: 'only fallback' }],
    });
    expect(grafana.split('\n')).toEqual(['@sre', '▌ High latency', '▌ p99 > 2s', '▌ env: prod', '▌ Grafana v10.4.0', '▌ only fallback']);
  });

  it('never throws on junk', () => {
    expect(renderBlocksAsText({ blocks: [null, 3, 'x', { type: 'section' }, { type: 'context', elements: 'no' }], attachments: [null] })).toBe('');
    expect(renderBlocksAsText({})).toBe('');
  });
});

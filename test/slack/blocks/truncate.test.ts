import { describe, expect, it } from 'vitest';
import { ELLIPSIS, truncateMrkdwn, truncatePlain } from '../../../src/slack/blocks/truncate.js';
import { codeSpan, escapeMrkdwn, mention, mrkdwnLink } from '../../../src/slack/blocks/mrkdwn.js';
import { LONE_SURROGATE } from './valid.js';

describe('truncatePlain', () => {
  it('leaves short text alone and cuts long text with a visible ellipsis', () => {
    expect(truncatePlain('short', 10)).toBe('short');
    expect(truncatePlain('abcdefghij', 5)).toBe('abcd…');
  });

  it('never splits a surrogate pair or an emoji sequence', () => {
    const family = '👨‍👩‍👧';
    for (let max = 1; max <= 12; max++) {
      const out = truncatePlain(`ab😀cd${family}ef`, max);
      expect(out.length).toBeLessThanOrEqual(max);
      expect(out).not.toMatch(LONE_SURROGATE);
      expect(out.endsWith(ELLIPSIS)).toBe(true);
      // The family emoji is either whole or absent.
      expect(out.includes('👨') === out.includes('👧')).toBe(true);
    }
  });
});

describe('truncateMrkdwn', () => {
  it('closes bold, italic and code spans that the cut went through', () => {
    expect(truncateMrkdwn('*bold text that is long* rest', 12)).toBe('*bold text…*');
    expect(truncateMrkdwn('see `kubectl scale deployment/checkout` now', 18)).toBe('see `kubectl sca…`');
    expect(truncateMrkdwn('_italic words here_', 10)).toBe('_italic…_');
    expect(truncateMrkdwn('```\nline one\nline two\n```', 16)).toBe('```\nline one…```');
  });

  it('keeps `<url|label>` links and mentions whole or drops them whole', () => {
    const text = 'see <https://example.com/a/very/long/path|the dashboard> and <@U123ABC> now';
    for (let max = 1; max < text.length; max++) {
      const out = truncateMrkdwn(text, max);
      expect(out.length).toBeLessThanOrEqual(max);
      const opens = (out.match(/</g) ?? []).length;
      const closes = (out.match(/>/g) ?? []).length;
      expect(opens).toBe(closes);
      for (const token of out.match(/<[^>]*>/g) ?? []) expect(text).toContain(token);
    }
  });

  it('never cuts inside an entity', () => {
    const text = escapeMrkdwn('a < b && c > d & e');
    for (let max = 1; max < text.length; max++) {
      const out = truncateMrkdwn(text, max);
      expect(out.replace(/&(amp|lt|gt);/g, '')).not.toContain('&');
    }
  });

  it('leaves literal (unpaired) markers alone', () => {
    expect(truncateMrkdwn('2 * 3 = 6 and a_b_c is fine, long tail here', 20)).toBe('2 * 3 = 6 and a_b_c…');
  });

  it('holds its guarantees on random mrkdwn', () => {
    let seed = 42;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const pieces = ['word ', '*bold* ', '_it_ ', '`code x` ', '<https://x.example/q?a=1&b=2|link> ', '<@U12345> ', '&amp; ', '😀', '👍🏽 ', '\n', '~s~ ', '*', '`'];
    for (let round = 0; round < 300; round++) {
      let text = '';
      let strayTick = false;
      for (let i = 0; i < 5 + rand(40); i++) {
        const piece = pieces[rand(pieces.length)] ?? '';
        strayTick ||= piece === '`';
        text += piece;
      }
      const max = 1 + rand(text.length + 5);
      const out = truncateMrkdwn(text, max);
      expect(out.length).toBeLessThanOrEqual(Math.max(max, 0));
      expect(out).not.toMatch(LONE_SURROGATE);
      if (text.length <= max) expect(out).toBe(text);
      else expect(out).toContain(ELLIPSIS);
      for (const token of out.match(/<[^<>]*>/g) ?? []) expect(text).toContain(token);
      expect((out.match(/</g) ?? []).length).toBe((out.match(/>/g) ?? []).length);
      // Outside link URLs (where `&` is kept as typed) every `&` starts a whole entity.
      expect(out.replace(/<[^<>]*>/g, '').replace(/&(amp|lt|gt);/g, '')).not.toContain('&');
      // Code spans stay balanced: with only whole spans in the input, the output never has a half-open one.
      if (!strayTick) expect((out.match(/`/g) ?? []).length % 2, JSON.stringify({ text, max, out })).toBe(0);
    }
  });
});

describe('mrkdwn helpers', () => {
  it('escapes only &, < and > as Slack requires', () => {
    expect(escapeMrkdwn('a<b>&c *d* _e_')).toBe('a&lt;b&gt;&amp;c *d* _e_');
  });

  it('builds links that cannot be broken by their URL or label', () => {
    expect(mrkdwnLink('https://x.example/a|b>c', 'a <b> & c')).toBe('<https://x.example/a%7Cb%3Ec|a &lt;b&gt; &amp; c>');
    expect(mrkdwnLink('javascript:alert(1)', 'label')).toBe('label');
    expect(mrkdwnLink(undefined, 'label')).toBe('label');
  });

  it('keeps a code span one span', () => {
    expect(codeSpan('echo `id`\nrm <x>')).toBe('`echo ˋidˋ rm &lt;x&gt;`');
    const long = codeSpan('x'.repeat(500), 50);
    expect(long.length).toBeLessThanOrEqual(50);
    expect(long.startsWith('`') && long.endsWith('`')).toBe(true);
  });

  it('mentions users and groups by id, anything else as text', () => {
    expect(mention('U0BOB')).toBe('<@U0BOB>');
    expect(mention('S0TEAM')).toBe('<!subteam^S0TEAM>');
    expect(mention('@team-<checkout>')).toBe('@team-&lt;checkout&gt;');
  });
});

describe('truncateMrkdwn and long links', () => {
  const url = `https://grafana.example.com/d/checkout?${'var-pod=checkout-7d9f&'.repeat(60)}from=now-1h`;
  const link = `<${url}|dashboard>`;

  it('drops a link longer than the scan window whole instead of leaving `<https://…` dangling', () => {
    expect(link.length).toBeGreaterThan(1000);
    for (const max of [20, 100, 600]) {
      const out = truncateMrkdwn(`see the ${link} for the spike`, max);
      expect(out).toBe('see the…');
      expect(out).not.toContain('<');
    }
  });

  it('keeps a long link whole when it fits, and cuts the text after it', () => {
    const text = `${link} ${'and then a long explanation '.repeat(10)}`;
    const out = truncateMrkdwn(text, link.length + 20);
    expect(out.startsWith(link)).toBe(true);
    expect(out.length).toBeLessThanOrEqual(link.length + 20);
    expect(out.endsWith(ELLIPSIS)).toBe(true);
  });
});

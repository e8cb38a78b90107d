import { describe, expect, it } from 'vitest';
import { parseInvestigateText } from '../../src/alerts/manual.js';

const NOW = new Date('2026-03-01T10:00:00Z');

function manualAlert(text: string) {
  const result = parseInvestigateText(text, NOW);
  if (!('alert' in result)) throw new Error(`expected an alert for ${text}: ${JSON.stringify(result)}`);
  return result.alert;
}

describe('parseInvestigateText: Slack links', () => {
  it('a message permalink → channel and ts', () => {
    expect(parseInvestigateText('https://acme.slack.com/archives/C0123ABCD/p1764430000000100')).toEqual({
      slackLink: { channel: 'C0123ABCD', ts: '1764430000.000100' },
    });
  });

  it('a thread reply permalink keeps thread_ts; Slack-formatted <link> works', () => {
    expect(
      parseInvestigateText('<https://acme.slack.com/archives/C0123ABCD/p1764430000000100?thread_ts=1764429999.000200&cid=C0123ABCD>'),
    ).toEqual({ slackLink: { channel: 'C0123ABCD', ts: '1764430000.000100', threadTs: '1764429999.000200' } });
  });

  it('a Slack link that is not a message → error with usage', () => {
    const result = parseInvestigateText('https://acme.slack.com/archives/C0123ABCD');
    expect('error' in result && result.error).toMatch(/Usage/);
  });
});

describe('parseInvestigateText: free text', () => {
  it.each([
    ['deployment/checkout -n shop is crashlooping', { deployment: 'checkout', namespace: 'shop' }],
    ['svc/checkout 5xx in namespace shop', { service: 'checkout', namespace: 'shop' }],
    ['namespace=shop latency on checkout', { namespace: 'shop' }],
    ['checkout errors --namespace=shop', { namespace: 'shop' }],
    ['sts/kafka disk full in the payments namespace', { statefulset: 'kafka', namespace: 'payments' }],
    ['shop/checkout returning 503', { namespace: 'shop' }],
    ['pod checkout-7d9f8b6c5-x2x9z OOMKilled ns shop', { pod: 'checkout-7d9f8b6c5-x2x9z', namespace: 'shop' }],
  ])('%s', (text, labels) => {
    const alert = manualAlert(text);
    expect(alert).toMatchObject({ source: 'manual', status: 'firing', title: text, labels, count: 1, startsAt: NOW, text });
  });

  it('keeps the remaining significant words as labelValues, names without a kind first', () => {
    expect(manualAlert('shop/checkout returning 503').labelValues).toEqual(['checkout', 'returning', '503']);
    expect(manualAlert('why is checkout slow in namespace shop?').labelValues).toEqual(['checkout', 'slow']);
    expect(manualAlert('why is checkout slow in namespace shop?').labels).toEqual({ namespace: 'shop' });
  });

  it('does not read filler after "namespace" as a namespace', () => {
    expect(manualAlert('the namespace is out of quota for checkout').labels).toEqual({});
  });

  it('empty or filler-only text → error with usage', () => {
    for (const text of ['', '   ', 'please investigate']) {
      const result = parseInvestigateText(text);
      expect('error' in result && result.error).toMatch(/Usage: `\/sre investigate/);
    }
  });
});

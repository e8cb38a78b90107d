import { describe, expect, it } from 'vitest';
import { factCorpus, unsupportedFacts } from '../../src/postmortem/prose-check.js';

const corpus = factCorpus([
  'Deployment shop/checkout: KubeDeploymentReplicasMismatch (critical)',
  '2026-11-29 14:02:11 UTC',
  '95%',
  'Bob Responder (U0BOB)',
  'kubectl scale deployment/checkout -n shop --replicas=3',
  'H1 supported by triage; H2 ruled out: last Helm change 3 days ago, rev 7',
  'see https://github.com/acme/shop/commit/4f2a9c1 for 1,250 requests',
  '1 h 4 min',
  'checkout-db-replica lagged; 2026-11-30 09:37:45 UTC',
  'where the channel sent everyone home',
]);

describe('unsupportedFacts', () => {
  it('accepts prose that restates the facts in other words', () => {
    const prose =
      'At 14:02 UTC on 2026-11-29 the checkout Deployment in shop/checkout went down. H1 holds with 95% confidence; ' +
      'Bob Responder (U0BOB) ruled nothing out, H2 fell because Helm last changed 3 days ago. The fix was `kubectl scale deployment/checkout -n shop --replicas=3`, ' +
      "see https://github.com/acme/shop/commit/4f2a9c1. About 1250 requests, e.g. storefront's, failed over 1 hour 4 minutes. " +
      'The cause: checkout-db-replica lagged; it set --replicas=3 on deployment/checkout.';
    expect(unsupportedFacts(prose, corpus)).toEqual([]);
  });

  it.each([
    ['a number', 'The errors peaked at 42% for 3 days.', ['42']],
    ['a time', 'It started at 14:07:00 UTC.', ['14:07:00']],
    ['a hypothesis label', 'H9 was ruled out.', ['H9']],
    ['a service name', 'The payments-api was also down.', ['payments-api']],
    ['a product name', 'Then Postgres failed over.', ['Postgres']],
    ['an acronym', 'OOM kills followed.', ['OOM']],
    ['a mention', 'Then ask <@U0EVE> and @carol.', ['<@U0EVE>', '@carol']],
    ['a URL', 'See https://grafana.example.com/d/x.', ['https://grafana.example.com/d/x']],
    ['a sha', 'The commit 9e8d7c6 caused it.', ['9e8d7c6']],
    ['a command', 'Someone ran `kubectl delete pod checkout-1`.', ['`kubectl delete pod checkout-1`']],
  ])('flags %s not in the facts', (_what, prose, expected) => {
    expect(unsupportedFacts(prose, corpus)).toEqual(expected);
  });

  describe('capitalised words are checked wherever they stand', () => {
    it.each([
      ['after a colon and a semicolon', 'The cause: Redis exhausted memory; Kafka lagged.', ['Redis', 'Kafka']],
      ['at the start of the prose', 'Mallory deleted the deployment.', ['Mallory']],
      ['at the start of a later sentence', 'The pods went away. Kubernetes said so.', ['Kubernetes']],
      ['after a dash', 'It failed — Cloudflare was down.', ['Cloudflare']],
    ])('%s', (_where, prose, expected) => {
      expect(unsupportedFacts(prose, corpus)).toEqual(expected);
    });

    it('lets ordinary sentence starters through, and any word the facts hold', () => {
      expect(unsupportedFacts('The pods went away. Then it stopped. After that, nothing. Because of it, Helm and Deployment and Bob were fine.', corpus)).toEqual([]);
    });
  });

  describe('numbers must be whole tokens of the facts', () => {
    it('rejects the parts of a date, a time or a duration standing alone', () => {
      // 2026-11-29 gives 29, 09:37:45 gives 45, 1 h 4 min gives 1 and 4, 2026-11-30 gives 11: none is a count.
      expect(unsupportedFacts('29 customers and 45 merchants lost 11 orders; 4 teams helped.', corpus)).toEqual(['29', '45', '11', '4']);
    });

    it('accepts a whole date, time, a shorter form of a time and the duration in other units', () => {
      expect(unsupportedFacts('It began at 2026-11-30 09:37 UTC, 09:37:45 exactly, and lasted 1h 4min.', corpus)).toEqual([]);
    });

    it.each([
      ['cardinals', 'Two pods and twenty requests failed.', ['Two', 'twenty']],
      ['plural quantities', 'Thousands of users and dozens of orders were lost.', ['Thousands', 'dozens']],
      ['fractions and multiples', 'It doubled and half the traffic failed twice.', ['half', 'twice']],
    ])('rejects number words: %s', (_what, prose, expected) => {
      expect(unsupportedFacts(prose, corpus)).toEqual(expected);
    });

    it('accepts a number word the facts hold', () => {
      expect(unsupportedFacts('Only two replicas were left.', factCorpus(['two replicas']))).toEqual([]);
    });
  });

  describe('identifiers and mentions match whole tokens only', () => {
    it.each([
      ['a prefix of a longer name', 'The checkout-db was slow.', ['checkout-db']],
      ['a suffix of a longer name', 'Its db-replica lagged.', ['db-replica']],
      ['a shorter URL', 'See https://github.com/acme/shop/commit/4f2.', ['https://github.com/acme/shop/commit/4f2']],
      ['a code span cut mid-token', 'It ran `kubectl scale deployment/check`.', ['`kubectl scale deployment/check`']],
      ['a name inside a word', 'Then Bo rolled back.', ['Bo']],
    ])('%s', (_what, prose, expected) => {
      expect(unsupportedFacts(prose, corpus)).toEqual(expected);
    });

    it('rejects broadcast mentions even where the facts hold the word', () => {
      expect(unsupportedFacts('Then page @here, @channel and @everyone.', corpus)).toEqual(['@here', '@channel', '@everyone']);
    });

    it('rejects every Slack control sequence, even one naming a user in the facts', () => {
      expect(unsupportedFacts('See <!channel>, <!here>, <@U0BOB>, <#C0123> and <https://github.com/acme/shop/commit/4f2a9c1|the fix>.', corpus)).toEqual([
        '<!channel>',
        '<!here>',
        '<@U0BOB>',
        '<#C0123>',
        '<https://github.com/acme/shop/commit/4f2a9c1|the fix>',
      ]);
    });
  });
});

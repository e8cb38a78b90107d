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
]);

describe('unsupportedFacts', () => {
  it('accepts prose that restates the facts in other words', () => {
    const prose =
      'At 14:02 UTC on 2026-11-29 the checkout Deployment in shop/checkout went to zero. H1 holds with 95% confidence; ' +
      'Bob Responder (U0BOB) ruled nothing out, H2 fell because Helm last changed 3 days ago. The fix was `kubectl scale deployment/checkout -n shop --replicas=3`, ' +
      "see https://github.com/acme/shop/commit/4f2a9c1. About 1250 requests, e.g. storefront's, failed. Kubernetes said so.";
    expect(unsupportedFacts(prose, corpus)).toEqual([]);
  });

  it.each([
    ['a number', 'Errors peaked at 42% for 3 days.', ['42']],
    ['a time', 'It started at 14:07:00 UTC.', ['14:07:00']],
    ['a hypothesis label', 'H9 was ruled out.', ['H9']],
    ['a service name', 'The payments-api was also down.', ['payments-api']],
    ['a product name', 'Then Postgres failed over.', ['Postgres']],
    ['an acronym', 'OOM kills followed.', ['OOM']],
    ['a mention', 'Ask <@U0EVE> and @carol.', ['<@U0EVE>', '@carol']],
    ['a URL', 'See https://grafana.example.com/d/x.', ['https://grafana.example.com/d/x']],
    ['a sha', 'Commit 9e8d7c6 caused it.', ['9e8d7c6']],
    ['a command', 'Someone ran `kubectl delete pod checkout-1`.', ['`kubectl delete pod checkout-1`']],
  ])('flags %s not in the facts', (_what, prose, expected) => {
    expect(unsupportedFacts(prose, corpus)).toEqual(expected);
  });
});

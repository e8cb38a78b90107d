/**
 * Two rules of the model's input and output: the brief is redacted field by field BEFORE fields are cut
 * to length (a cut can leave a secret too short for its detector), and only data a tool actually returned
 * (or triage found) counts as support — a query the model wrote that matched nothing proves nothing.
 */
import { describe, expect, it } from 'vitest';
import { diagnosisToFindings, type Diagnosis } from '../../src/agent/output.js';
import { buildBrief } from '../../src/agent/prompt.js';
import { CitationBook, type SeenCitation } from '../../src/agent/toolbox.js';
import { emptyKubeEvidence } from '../../src/evidence/kubernetes/gather.js';
import { createRedactor } from '../../src/redact/index.js';
import type { TriageInput } from '../../src/triage/analyzer.js';
import type { Finding } from '../../src/triage/types.js';

const onset = new Date('2024-01-15T10:00:00Z');
// Split so repository secret scanners do not flag the fixture.
const TOKEN = 'gh' + 'p_' + 'Zq7Rk2Lm9Xw4Tb6Yc1Vn8Hd3Jf5Gs0Pa2Qe4';

function input(description: string): TriageInput {
  return {
    alert: { source: 'alertmanager', status: 'firing', title: 'CheckoutErrors', alertName: 'CheckoutErrors', labels: {}, labelValues: [], annotations: { description }, count: 1, text: '' },
    onset,
    kube: emptyKubeEvidence(onset, 'http://127.0.0.1', []),
    changes: [],
  };
}

describe('the brief is redacted before it is cut', () => {
  it('a token that straddles a field limit leaves no piece behind', () => {
    const redactor = createRedactor({ salt: 'brief' });
    // The alert description is cut at 300 characters: right inside the token.
    const description = `${'checkout returns 5xx for card payments; '.repeat(7).slice(0, 280)} push with ${TOKEN} failed`;
    const finding: Finding = {
      key: 'k',
      analyzer: 'crash-loop',
      status: 'supported',
      confidence: 0.8,
      title: 'checkout crash-looping',
      mechanism: `${'x'.repeat(285)} token ${TOKEN}`,
      supporting: [{ kind: 'log', summary: `${'y'.repeat(185)} ${TOKEN}`, citation: { source: 'kubernetes', ref: 'api/v1/namespaces/shop/pods/checkout-1/log' } }],
      refuting: [],
    };
    const brief = buildBrief({ input: input(description), findings: [finding], gaps: [`${'z'.repeat(190)} ${TOKEN}`], redactor, citations: new CitationBook() });
    // Any 12 characters of the token's body would be a leak.
    const body = TOKEN.slice(4);
    for (let i = 0; i + 12 <= body.length; i++) expect(brief).not.toContain(body.slice(i, i + 12));
    expect(brief).toContain('[REDACTE');
  });
});

describe('what counts as support', () => {
  const diagnosis = (citation: string): Diagnosis => ({
    summary: 's',
    hypotheses: [
      {
        title: 'checkout logs show the card processor timing out',
        status: 'supported',
        confidence: 0.9,
        component: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
        category: 'dependency-timeout',
        mechanism: 'm',
        facts: {},
        scope: 's',
        affected: [],
        evidence: [{ stance: 'supports', summary: 'no timeouts logged', citation }],
      },
    ],
  });
  const QUERY = '{namespace="shop", app="checkout"} |= "card processor timeout"';
  const seen = (origin: SeenCitation['origin']): SeenCitation => ({ citation: { source: 'loki', ref: QUERY }, kind: 'log', origin });

  it('a tool result that matched nothing does not make a hypothesis supported', () => {
    const book = new CitationBook();
    book.add(seen('tool_no_data'));
    const [f] = diagnosisToFindings(diagnosis(QUERY), book, createRedactor());
    expect(f).toMatchObject({ status: 'inconclusive', confidence: 0.5 });
  });

  it('the same ref read with data later does (the stronger sighting wins)', () => {
    const book = new CitationBook();
    book.add(seen('tool_no_data'));
    book.add(seen('tool_success'));
    expect(book.get(QUERY)?.origin).toBe('tool_success');
    const [f] = diagnosisToFindings(diagnosis(QUERY), book, createRedactor());
    expect(f).toMatchObject({ status: 'supported', confidence: 0.9 });
  });

  it('a finding or a change stays strong; a failed read never upgrades one', () => {
    for (const origin of ['finding', 'change'] as const) {
      const book = new CitationBook();
      book.add(seen(origin));
      book.add(seen('tool_error'));
      book.add(seen('tool_no_data'));
      expect(book.get(QUERY)?.origin).toBe(origin);
      expect(diagnosisToFindings(diagnosis(QUERY), book, createRedactor())[0]).toMatchObject({ status: 'supported' });
    }
  });
});

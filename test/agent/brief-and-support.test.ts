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

describe('the brief says each thing once', () => {
  const redactor = createRedactor({ salt: 'brief' });
  const at = (min: number) => new Date(onset.getTime() + min * 60_000);
  const noise = (key: string, kind: string, name: string, ref: string): Finding => ({
    key, analyzer: 'background-noise', status: 'unrelated', confidence: 0.1,
    title: `${name}: Failed`, mechanism: 'm', reason: 'no path from deployment/checkout to it; failing since 3 h before the alert',
    component: { kind, namespace: 'platform', name },
    supporting: [], refuting: [{ kind: 'object', summary: 'failed', citation: { source: 'kubernetes', ref } }],
  });
  const cause: Finding = {
    key: 'db', analyzer: 'database-degraded', status: 'supported', confidence: 0.86,
    title: 'orders-db (database) is degraded: queries wait on locks', mechanism: 'locks', component: { kind: 'StatefulSet', namespace: 'shop', name: 'orders-db' },
    supporting: [{ kind: 'log', summary: 'still waiting for AccessShareLock', citation: { source: 'kubernetes', ref: 'api/v1/namespaces/shop/pods/orders-db-0#log' } }], refuting: [],
  };
  const victim: Finding = {
    key: 'pool', analyzer: 'dependency-degraded', status: 'ruled_out', confidence: 0.25,
    title: "checkout's DB pool is exhausted", mechanism: 'a long mechanism that the ruled-out line leaves out',
    reason: `a consequence, not the cause: explained further down the path: ${cause.title}`,
    component: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
    supporting: [{ kind: 'metric', summary: 'pool 20/20', citation: { source: 'prometheus', ref: 'hikaricp_connections_active' } }, { kind: 'log', summary: 'Connection is not available', citation: { source: 'kubernetes', ref: 'api/v1/namespaces/shop/pods/checkout-1/log' } }],
    refuting: [{ kind: 'note', summary: `statefulset/orders-db: ${cause.title}`, citation: cause.supporting[0]!.citation }],
  };
  const findings = [cause, victim, noise('n1', 'CronJob', 'pg-backup', 'cronjobs/pg-backup'), noise('n2', 'Job', 'pg-backup-2943', 'jobs/pg-backup-2943'), noise('n3', 'Pod', 'pg-backup-2943-bq7tx', 'pods/pg-backup-2943-bq7tx')];
  const change = (actor: string, summary: string, ref: string, min: number) => ({
    at: at(min), kind: 'image' as const, source: 'kubernetes', target: { kind: 'Deployment', namespace: 'search', name: 'indexer' }, actor, summary, citation: { source: 'kubernetes' as const, ref }, score: 0.1, why: ['no known relation'],
  });

  it('a CronJob, its Job and its Pod cleared as noise are one line; a consequence names its cause by label', () => {
    const citations = new CitationBook();
    const brief = buildBrief({ input: input('d'), findings, redactor, citations });
    expect(brief).toMatch(/^H3, H4, H5 \[unrelated\] pg-backup: Failed/m);
    expect(brief).not.toContain('pg-backup-2943-bq7tx: Failed');
    // Every grouped finding's cite stays citable.
    for (const ref of ['cronjobs/pg-backup', 'jobs/pg-backup-2943', 'pods/pg-backup-2943-bq7tx']) expect(citations.get(ref)).toBeDefined();
    expect(brief).toContain('reason: a consequence, not the cause: explained further down the path: H1');
    expect(brief).not.toContain('a long mechanism');
    expect(brief).toContain('pool 20/20');
    expect(brief).not.toContain('Connection is not available');
  });

  it('one rollout seen by two sources is one timeline line, both cites valid', () => {
    const citations = new CitationBook();
    const changes = [change('deployment-controller', 'rollout of indexer to revision 39', 'replicasets/indexer-5b7', -19), change('argocd-controller', 'argocd-controller updated deployment/indexer (template)', 'deployments/indexer#managedFields', -19), change('ci', 'rollout of indexer to revision 38', 'replicasets/indexer-4a1', -300)];
    const brief = buildBrief({ input: { ...input('d'), changes }, findings: [], redactor, citations });
    expect(brief).toMatch(/^C1 -19m image search\/deployment\/indexer by deployment-controller, argocd-controller: rollout of indexer to revision 39 \(also seen as: argocd-controller updated/m);
    expect(brief).toMatch(/^C2 -5h /m);
    expect(citations.get('deployments/indexer#managedFields')).toBeDefined();
  });
});

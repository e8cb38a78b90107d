import type { Evidence } from '../evidence/types.js';
import type { Redactor } from '../redact/index.js';
import { sealedWrite, type SealedWriter } from '../audit/records.js';
import type { DbTx } from '../store/tx.js';
import type { Finding } from '../triage/types.js';

const MAX_DETAIL_CHARS = 2000;

function evidenceRow(investigationId: string, hypothesisId: string, stance: 'supports' | 'refutes', e: Evidence, redactor: Redactor) {
  const detail = e.detail ? JSON.stringify(redactor.redactValue(e.detail)) : null;
  return {
    investigationId,
    hypothesisId,
    stance,
    kind: e.kind,
    summary: redactor.redactText(e.summary),
    citationSource: e.citation.source,
    citationRef: redactor.redactText(e.citation.ref),
    citationUrl: e.citation.url ?? null,
    rangeFrom: e.citation.range?.from ?? null,
    rangeTo: e.citation.range?.to ?? null,
    observedAt: e.observedAt ?? null,
    detail: detail && detail.length > MAX_DETAIL_CHARS ? JSON.stringify({ truncated: detail.slice(0, MAX_DETAIL_CHARS) }) : detail,
  };
}

/**
 * Store findings as hypotheses (upsert by key, so a re-run after a restart updates rather than
 * duplicates) with their evidence replaced. Labels H1, H2, … follow first appearance and never change.
 * Each hypothesis written is sealed in the audit chain with its evidence (src/audit/records.ts), once
 * all of them are written.
 */
export async function storeFindings(tx: DbTx, investigationId: string, findings: Finding[], redactor: Redactor): Promise<void> {
  await sealedWrite(tx, (w) => writeFindings(w, investigationId, findings, redactor));
}

async function writeFindings(w: SealedWriter, investigationId: string, findings: Finding[], redactor: Redactor): Promise<void> {
  const existing = await w.tx.hypothesis.findMany({ where: { investigationId }, select: { key: true, ordinal: true, steeredBy: true } });
  let next = existing.reduce((m, h) => Math.max(m, h.ordinal), 0);
  const byKey = new Map(existing.map((h) => [h.key, h]));
  // Supported first, so the likely cause is H1 on a fresh board.
  const order = { supported: 0, open: 1, inconclusive: 2, ruled_out: 3, unrelated: 4 } as const;
  for (const f of [...findings].sort((a, b) => order[a.status] - order[b.status])) {
    const ordinal = byKey.get(f.key)?.ordinal ?? ++next;
    const data = {
      analyzer: f.analyzer,
      status: f.status,
      confidence: f.confidence,
      title: redactor.redactText(f.title),
      componentKind: f.component?.kind ?? null,
      componentNs: f.component?.namespace ?? null,
      componentName: f.component?.name ?? null,
      mechanism: redactor.redactText(f.mechanism),
      scope: f.scope ? redactor.redactText(f.scope) : null,
      reason: f.reason ? redactor.redactText(f.reason) : null,
      mitigation: f.mitigation ? JSON.stringify(redactor.redactValue(f.mitigation)) : null,
      facts: f.facts ? JSON.stringify(redactFacts(redactor, f.facts)) : null,
      affected: f.affected ? JSON.stringify(f.affected) : null,
      family: f.family ?? null,
      role: f.role ?? null,
      path: f.path ? redactor.redactText(f.path) : null,
    };
    // A responder's verdict (rule out / confirm) stands until a responder changes it: re-runs refresh the
    // evidence but never overwrite what a person decided.
    const { status: _status, reason: _reason, confidence: _confidence, ...refreshed } = data;
    const h = await w.upsertHypothesis({
      where: { investigationId_key: { investigationId, key: f.key } },
      create: { investigationId, key: f.key, label: `H${ordinal}`, ordinal, ...data },
      update: byKey.get(f.key)?.steeredBy ? refreshed : data,
    });
    await w.replaceEvidence(h.id, [
      ...f.supporting.map((e) => evidenceRow(investigationId, h.id, 'supports', e, redactor)),
      ...f.refuting.map((e) => evidenceRow(investigationId, h.id, 'refutes', e, redactor)),
    ]);
  }
}

/**
 * Fact keys that hold an object's name an analyzer read from metadata (`secret`: the Secret a workload
 * reads, never its data), so a key named like a secret must not blank them: they are scanned as text.
 */
const NAME_FACT_KEYS = new Set(['secret']);

/** Facts, redacted: every value by the usual walk, object-name facts by the text detectors only. */
export function redactFacts(redactor: Redactor, facts: Record<string, unknown>): Record<string, unknown> {
  const names = Object.entries(facts).filter((e): e is [string, string] => NAME_FACT_KEYS.has(e[0]) && typeof e[1] === 'string');
  return { ...redactor.redactValue(facts), ...Object.fromEntries(names.map(([k, v]) => [k, redactor.redactText(v)])) };
}

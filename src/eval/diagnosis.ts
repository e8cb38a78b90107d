import type { Db } from '../store/db.js';
import type { GradedHypothesis, Ref } from './questions.js';

/** Read an incident's stored hypotheses in the shape the grader answers from. */
export async function storedDiagnosis(db: Db, incidentId: string): Promise<GradedHypothesis[]> {
  const hs = await db.hypothesis.findMany({ where: { investigation: { incidentId } }, include: { evidence: true }, orderBy: { ordinal: 'asc' } });
  return hs.map((h) => ({
    label: h.label,
    analyzer: h.analyzer,
    ...(h.family ? { family: h.family } : {}),
    ...(h.role ? { role: h.role } : {}),
    ...(h.path ? { path: h.path } : {}),
    status: h.status,
    confidence: h.confidence,
    title: h.title,
    component: h.componentKind && h.componentName ? { kind: h.componentKind, ...(h.componentNs ? { namespace: h.componentNs } : {}), name: h.componentName } : undefined,
    facts: h.facts ? (JSON.parse(h.facts) as Record<string, unknown>) : {},
    affected: h.affected ? (JSON.parse(h.affected) as Ref[]) : [],
    mitigation: h.mitigation ? (JSON.parse(h.mitigation) as { action: string; params: Record<string, unknown>; target?: { kind?: string; namespace?: string; name?: string } }) : undefined,
    supportingCitations: h.evidence.filter((e) => e.stance === 'supports').map((e) => e.citationRef),
  }));
}

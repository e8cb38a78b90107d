import type { ComponentRef, Evidence } from '../evidence/types.js';

/**
 * - `supported`: evidence for it and none against (never without cited evidence)
 * - `open`: plausible, not yet decided
 * - `inconclusive`: evidence both ways or too weak ("not sure")
 * - `ruled_out`: considered and refuted by evidence
 * - `unrelated`: a real problem that is not this incident's cause (noise)
 */
export type HypothesisStatus = 'supported' | 'open' | 'inconclusive' | 'ruled_out' | 'unrelated';

export type HypothesisRole = 'origin' | 'victim' | 'unrelated';

/** A proposed mitigation, shown on the card; proposals are never executed without an approval. */
export interface MitigationProposal {
  /** Catalog action id, e.g. `scale`. */
  action: string;
  target: ComponentRef;
  /** Action parameters, e.g. `{ replicas: 3 }`. */
  params: Record<string, unknown>;
  /** The equivalent command, for humans: `kubectl scale deployment/checkout -n shop --replicas=3`. */
  command: string;
  rationale: string;
}

/** What an analyzer (or later the model) concludes; stored as a Hypothesis row keyed by `key`. */
export interface Finding {
  /** Stable identity across re-runs, e.g. `scaled-to-zero:shop/deployment/checkout`. */
  key: string;
  /** Which analyzer produced it. */
  analyzer: string;
  /** The fault family it claims (src/triage/families.ts); runTriage fills the analyzer's default. */
  family?: string;
  /**
   * Where its component stands between the alert and the fault (set by the topology reconcile):
   * `origin` (the fault is here), `victim` (it fails because of an origin further down the path),
   * `unrelated` (no path to what the alert names, or trouble that predates it).
   */
  role?: HypothesisRole;
  /** The path from the alerted component to this one, as people read it: `edge → frontend → quotes`. */
  path?: string;
  status: HypothesisStatus;
  /** 0..1 */
  confidence: number;
  /** One line: what happened. */
  title: string;
  /** Localisation: the faulty component. */
  component?: ComponentRef;
  /** Characterisation: what is wrong and why. */
  mechanism: string;
  /** Scope: who/what is affected, as a sentence for people. */
  scope?: string;
  /** Scope, structured: the components affected (the faulty one first, then callers, endpoints as Service/Ingress). */
  affected?: ComponentRef[];
  /**
   * Components this origin overloads or disturbs without depending on it (the cluster DNS a lookup storm
   * throttles): their own findings are its consequences, not causes, and are ruled out as such.
   */
  consequences?: ComponentRef[];
  /**
   * Characterisation, structured: the concrete details a grader or a responder checks — the key, value,
   * port, image tag or limit that changed (e.g. `{ memoryLimit: '256Mi', previousMemoryLimit: '512Mi' }`).
   * Keys are camelCase and documented by each analyzer.
   */
  facts?: Record<string, string | number | boolean>;
  /** Why it is ruled out / unrelated, when it is. */
  reason?: string;
  supporting: Evidence[];
  refuting: Evidence[];
  mitigation?: MitigationProposal;
}

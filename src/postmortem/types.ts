/**
 * The postmortem draft: a structured document built only from stored rows. Every statement carries the
 * rows it came from (`Source`), so a reader (or a test) can trace each fact back to the store.
 */

export type SourceTable =
  | 'Incident'
  | 'Alert'
  | 'Investigation'
  | 'Hypothesis'
  | 'Evidence'
  | 'SteeringMessage'
  | 'SlackPost'
  | 'AuditEvent'
  | 'ApprovalRequest'
  | 'ApprovalDecision';

/** One stored row (and optionally the field inside it) a statement rests on. */
export interface Source {
  table: SourceTable;
  id: string;
  field?: string;
}

/** An evidence line with the citation it was recorded with. */
export interface EvidenceLine {
  summary: string;
  stance: 'supports' | 'refutes' | 'context';
  kind: string;
  citation: { source: string; ref: string; url?: string };
  observedAt?: Date;
  source: Source;
}

export type TimelineKind =
  | 'alert'
  | 'change'
  | 'investigation'
  | 'card'
  | 'hypothesis'
  | 'steering'
  | 'approval'
  | 'execution'
  | 'escalation'
  | 'resolution';

export interface TimelineEntry {
  at: Date;
  kind: TimelineKind;
  /** Plain text (no markup); renderers escape it. */
  text: string;
  /** Slack user id, `vigil`, or an executor identity, when someone in particular did it. */
  actor?: string;
  sources: Source[];
}

export interface PostmortemSummary {
  whatBroke: string;
  /** The cause in one sentence; says so plainly when none was supported. */
  cause: string;
  status: 'resolved' | 'mitigated' | 'open';
  startedAt: Date;
  /** Resolution time, or when the draft was made for an open incident. */
  endedAt: Date;
  ongoing: boolean;
  durationMs: number;
  mitigatedAt?: Date;
  sources: Source[];
}

export interface PostmortemImpact {
  scope?: string;
  /** Affected components as `kind ns/name`. */
  affected: string[];
  /** Firing notifications received. */
  alertCount: number;
  durationMs: number;
  sources: Source[];
}

export interface RootCause {
  label: string;
  title: string;
  /** `Deployment shop/checkout`. */
  component?: string;
  mechanism: string;
  facts: Record<string, unknown>;
  confidence: number;
  steeredBy?: string;
  evidence: EvidenceLine[];
  source: Source;
}

export interface RuledOut {
  label: string;
  title: string;
  status: 'ruled_out' | 'unrelated';
  reason?: string;
  steeredBy?: string;
  evidence: EvidenceLine[];
  source: Source;
}

export interface ActionDecision {
  userId: string;
  userName?: string;
  decision: 'approve' | 'reject';
  reason?: string;
  at: Date;
  source: Source;
}

export interface ActionTaken {
  requestId: string;
  action: string;
  /** `deployment/checkout in shop`. */
  target: string;
  title: string;
  command?: string;
  risk?: number;
  status: string;
  statusReason?: string;
  requestedBy: string;
  requestedAt: Date;
  decisions: ActionDecision[];
  execution?: { identity?: string; at?: Date; status?: string; writes: number };
  verification?: { ok: boolean; checks: string[] };
  rollback?: { command?: string; rationale?: string };
  sources: Source[];
}

export interface FollowUp {
  text: string;
  why: string;
  sources: Source[];
}

export interface Postmortem {
  incidentId: string;
  title: string;
  alertName: string;
  severity?: string;
  /** `shop/checkout`. */
  target?: string;
  owner?: string;
  generatedAt: Date;
  summary: PostmortemSummary;
  impact: PostmortemImpact;
  timeline: TimelineEntry[];
  rootCause?: RootCause;
  ruledOut: RuledOut[];
  actions: ActionTaken[];
  followUps: FollowUp[];
  /** Reads the investigation could not make. */
  gaps: string[];
  /** Display names known from the record, by Slack user id. */
  people: Record<string, string>;
  /**
   * Present when the stored record fails verification against the audit chain (src/audit/integrity.ts):
   * each problem names the row, the field, its current value and the value the chain recorded. The
   * renderers show it first, as a warning that the draft rests on edited rows.
   */
  integrity?: { ok: false; problems: string[] };
}

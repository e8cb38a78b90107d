/** What is paged when Vigil hands an incident over, whichever service carries the page. */
export interface PageRequest {
  /** The incident id: the page's dedup key (PagerDuty `dedup_key`, Opsgenie `alias`), so one page per incident. */
  dedupKey: string;
  /** One line: the incident's title and why Vigil needs a human. */
  summary: string;
  /** The affected system, e.g. `shop/checkout` (PagerDuty `payload.source`, Opsgenie `entity`). */
  source: string;
  severity: PageSeverity;
  /** The incident thread in Slack, when Slack gave its permalink. */
  threadLink?: string;
  /** Key facts for the responder (redacted): what was checked, ruled out, not accessible. */
  details: Record<string, string>;
}

/** PagerDuty's severities (Events API v2 `payload.severity`); Opsgenie priorities are mapped from them. */
export type PageSeverity = 'critical' | 'error' | 'warning' | 'info';

export interface Pager {
  /** `pagerduty` | `opsgenie`: shown on the card and in the audit record. */
  readonly name: 'pagerduty' | 'opsgenie';
  /** Shown on the card: `PagerDuty`, `Opsgenie`. */
  readonly label: string;
  trigger(page: PageRequest): Promise<void>;
  resolve(dedupKey: string, note: string): Promise<void>;
}

/** An alert severity word (critical, P1, high, sev2, warning, …) as a page severity; unknown → error. */
export function pageSeverity(severity: string | null | undefined): PageSeverity {
  const s = (severity ?? '').trim().toLowerCase();
  if (['critical', 'crit', 'fatal', 'emergency', 'p1', 'sev1', 'sev-1', 'high', 'page'].includes(s)) return 'critical';
  if (['warning', 'warn', 'p3', 'sev3', 'sev-3', 'medium', 'moderate', 'minor', 'low'].includes(s)) return 'warning';
  if (['info', 'informational', 'notice', 'p4', 'p5', 'sev4', 'sev5', 'sev-4', 'sev-5', 'none', 'debug'].includes(s)) return 'info';
  return 'error';
}

/**
 * Run order of queued investigations: by severity, so a critical page is not stuck behind a storm of warnings.
 * Higher runs first (p-queue's `priority`); equal priorities keep their arrival order.
 */
export const PRIORITY = { info: 0, warning: 1, critical: 2, /** A responder asked and is waiting for it. */ person: 3 } as const;
export type Priority = (typeof PRIORITY)[keyof typeof PRIORITY];

const CRITICAL = new Set(['critical', 'crit', 'fatal', 'emergency', 'alert', 'page', 'high', 'major', 'severe', 'error', 'p1', 'p2', 'sev1', 'sev2', 'sev-1', 'sev-2', 'sev0', 'sev-0', 'p0']);
const INFO = new Set(['info', 'informational', 'notice', 'none', 'debug', 'low', 'p4', 'p5', 'sev4', 'sev5', 'sev-4', 'sev-5']);

/** An alert's severity word (severity.ts' vocabulary) as a priority; unknown or missing severities rank as warnings. */
export function priorityOf(severity: string | null | undefined): Priority {
  const s = severity?.trim().toLowerCase();
  if (s && CRITICAL.has(s)) return PRIORITY.critical;
  if (s && INFO.has(s)) return PRIORITY.info;
  return PRIORITY.warning;
}

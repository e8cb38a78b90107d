import type { Alert } from '../alerts/types.js';
import type { KubeEvidence } from '../evidence/kubernetes/gather.js';
import type { Finding } from './types.js';

/** What every analyzer sees: the alert, its onset and the evidence read so far. */
export interface TriageInput {
  alert: Alert;
  onset: Date;
  kube: KubeEvidence;
}

/** A deterministic analyzer: evidence in, findings (with evidence for and against) out. No I/O, no model. */
export interface Analyzer {
  name: string;
  analyze(input: TriageInput): Finding[];
}

/** A change this long before the onset can still explain it; older changes are background. */
export const CHANGE_WINDOW_MS = 60 * 60_000;

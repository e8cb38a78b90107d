import type { Alert } from '../alerts/types.js';
import type { RankedChange } from '../changes/types.js';
import type { KubeEvidence } from '../evidence/kubernetes/gather.js';
import type { LogsEvidence } from '../evidence/loki/types.js';
import type { MetricsEvidence } from '../evidence/prometheus/types.js';
import type { ServiceEntry } from '../knowledge/catalog.js';
import type { Finding } from './types.js';

/**
 * What every analyzer sees: the alert, its onset and the evidence read so far. Sources that are not
 * configured or failed are absent/empty (and listed in gaps); an analyzer never assumes they passed.
 */
export interface TriageInput {
  alert: Alert;
  onset: Date;
  kube: KubeEvidence;
  /** Prometheus summaries for the target (and its dependencies), if Prometheus is configured. */
  metrics?: MetricsEvidence;
  /** Loki log templates for the target (and its dependencies), if Loki is configured. */
  logs?: LogsEvidence;
  /** Every source's changes, ranked against the alert (newest-relevant first). */
  changes: RankedChange[];
  /** The service catalog entry of the target, when the catalog knows it. */
  service?: ServiceEntry;
}

/** A deterministic analyzer: evidence in, findings (with evidence for and against) out. No I/O, no model. */
export interface Analyzer {
  name: string;
  analyze(input: TriageInput): Finding[];
}

/** A change this long before the onset can still explain it; older changes are background. */
export const CHANGE_WINDOW_MS = 60 * 60_000;

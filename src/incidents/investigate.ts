import type { Alert } from '../alerts/types.js';
import type { KubeReader } from '../evidence/kubernetes/client.js';
import { gatherKubeEvidence, type KubeEvidence } from '../evidence/kubernetes/gather.js';
import { runTriage } from '../triage/index.js';
import type { Finding } from '../triage/types.js';

export interface InvestigationOutcome {
  findings: Finding[];
  target?: { namespace: string; kind: string; name: string };
  gaps: string[];
}

/** The evidence sources an investigation may use; absent ones are reported as gaps. */
export interface EvidenceSources {
  kube?: KubeReader;
}

const EMPTY_KUBE = (onset: Date): KubeEvidence => ({
  onset,
  replicaSets: [],
  pods: [],
  services: [],
  events: [],
  related: [],
  dependents: [],
  unhealthyPods: [],
  warningEvents: [],
  gaps: ['kubernetes: not configured (set KUBECONFIG or run in-cluster)'],
  server: '',
});

/** Deterministic investigation: gather evidence, run the analyzers. No model involved. */
export async function investigateDeterministically(alert: Alert, onset: Date, sources: EvidenceSources): Promise<InvestigationOutcome> {
  const kube = sources.kube ? await gatherKubeEvidence(sources.kube, alert, onset) : EMPTY_KUBE(onset);
  const triage = runTriage({ alert, onset, kube });
  return { findings: triage.findings, target: kube.target, gaps: [...kube.gaps, ...triage.errors] };
}
